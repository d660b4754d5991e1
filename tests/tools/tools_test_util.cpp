#include "tools_test_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/sequence_runner.h"
#include "kernels/kernels.h"
#include "util/data_path.h"
#include "util/thread_pool.h"

namespace edgeinfer::test {

std::string data_file(const std::string& rel) {
  const std::string p = data_dir() + "/" + rel;
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) {
    ADD_FAILURE() << "reference data missing: " << p << " (set EDGEINFER_DATA)";
  }
  return p;
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  return nlohmann::json::parse(in);
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<float> read_f32_file(const std::string& path) {
  const std::vector<uint8_t> b = read_bytes(path);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "edgeinfer_tools_" + std::to_string(::getpid()) + "_" + name;
}

double rel_rms_diff(const float* a, const float* b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::vector<float> batch_logits(const Model& m, const std::vector<int32_t>& tokens) {
  ThreadPool pool(1);
  RunnerOptions ro;
  ro.n_ctx = static_cast<int64_t>(tokens.size());
  ro.n_batch = ro.n_ctx;
  ro.kv_type = TensorType::F16;
  SequenceRunner r(m, kernels_for(select_isa()), pool, ro);
  const float* l = r.eval(tokens, true);
  return std::vector<float>(l, l + tokens.size() * static_cast<size_t>(m.config().n_vocab));
}

}  // namespace edgeinfer::test
