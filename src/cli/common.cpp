#include "cli/common.h"

#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <string>

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

namespace {

// A number's check: `ok` on the parsed value, else "must be <what>, got <text>". Text that is
// not wholly a number is left to the option's conversion, which names the option and the text.
CLI::Validator number_check(bool (*ok)(double), const char* what, const char* name) {
  return CLI::Validator(
      [ok, what](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return {};
        if (ok(v)) return {};
        return std::string("must be ") + what + ", got " + text;
      },
      name, name);
}

}  // namespace

CLI::Validator non_negative() {
  return number_check([](double v) { return v >= 0; }, "0 or more", "NONNEGATIVE");
}

CLI::Validator positive() {
  return number_check([](double v) { return v > 0; }, "more than 0", "POSITIVE");
}

int default_threads() { return ThreadPool::hardware_threads(); }

uint64_t parse_byte_size(const std::string& s, const char* flag) {
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (const std::exception&) {
    throw Error(std::string(flag) + ": expected a size such as 512M or 2G, got '" + s + "'");
  }
  std::string unit = s.substr(pos);
  for (auto& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  double mult = 1;
  if (unit == "k" || unit == "ki") {
    mult = 1024.0;
  } else if (unit == "m" || unit == "mi") {
    mult = 1024.0 * 1024;
  } else if (unit == "g" || unit == "gi") {
    mult = 1024.0 * 1024 * 1024;
  } else if (!unit.empty()) {
    throw Error(std::string(flag) + ": unknown unit in '" + s + "' (use K, M or G)");
  }
  if (!(v > 0)) throw Error(std::string(flag) + ": must be positive, got '" + s + "'");
  return static_cast<uint64_t>(v * mult);
}

}  // namespace edgeinfer::cli
