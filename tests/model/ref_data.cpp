#include "ref_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "util/data_path.h"

namespace edgeinfer::test {

std::string data_path(const std::string& rel) {
  const std::string dir = data_dir();
  if (!std::filesystem::is_directory(dir)) {
    ADD_FAILURE() << "reference data folder '" << dir << "' not found (set EDGEINFER_DATA)";
  }
  return dir + "/" + rel;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  return nlohmann::json::parse(in);
}

std::vector<float> read_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return {};
  }
  in.seekg(0, std::ios::end);
  const size_t bytes = static_cast<size_t>(in.tellg());
  in.seekg(0);
  std::vector<float> v(bytes / sizeof(float));
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

std::vector<std::string> ref_jsons() {
  std::vector<std::string> out;
  const std::string dir = data_path("ref");
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

double rel_rms(const float* a, const float* b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

int argmax(const float* row, size_t n) {
  return static_cast<int>(std::max_element(row, row + n) - row);
}

double top1_agreement(const float* a, const float* b, size_t rows, size_t cols) {
  size_t agree = 0;
  for (size_t r = 0; r < rows; ++r) agree += argmax(a + r * cols, cols) == argmax(b + r * cols, cols);
  return rows ? static_cast<double>(agree) / rows : 1.0;
}

}  // namespace edgeinfer::test
