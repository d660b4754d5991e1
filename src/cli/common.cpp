#include "cli/common.h"

#include <sys/stat.h>

#include "util/data_path.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer::cli {

std::unique_ptr<Model> load_model_checked(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) {
    throw Error("model file not found: '" + path +
                "'\n  Put a GGUF model there, or pass another with -m PATH. The reference models are read from\n"
                "  $EDGEINFER_DATA/models (EDGEINFER_DATA is now '" + data_dir() +
                "'; it defaults to ../shared/data).");
  }
  return Model::load(path);
}

TensorType parse_kv_type(const std::string& s) {
  if (s == "f16") return TensorType::F16;
  if (s == "f32") return TensorType::F32;
  if (s == "q8_0") return TensorType::Q8_0;
  throw Error("unknown KV cache type '" + s + "' (expected f16, f32 or q8_0)");
}

int default_threads() { return ThreadPool::hardware_threads(); }

}  // namespace edgeinfer::cli
