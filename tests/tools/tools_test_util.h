#pragma once
// Helpers for the tools tests: reference data paths, JSON, logits and temporary files.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/model.h"

namespace edgeinfer::test {

std::string data_file(const std::string& rel);  // $EDGEINFER_DATA/rel; fails the test when missing
nlohmann::json read_json_file(const std::string& path);
std::vector<float> read_f32_file(const std::string& path);
std::vector<uint8_t> read_bytes(const std::string& path);
// A fresh path in the test's temporary folder (removed by the caller or left for inspection).
std::string temp_path(const std::string& name);
// sqrt(sum((a-b)^2) / sum(b^2))
double rel_rms_diff(const float* a, const float* b, size_t n);
// Logits of every position of `tokens` decoded as one batch (F16 KV cache, 2 threads).
std::vector<float> batch_logits(const Model& m, const std::vector<int32_t>& tokens);

}  // namespace edgeinfer::test
