#pragma once
// Reading the reference data of ../shared/data/ref for the model tests.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace edgeinfer::test {

std::string data_path(const std::string& rel);  // $EDGEINFER_DATA/rel; fails the test if the folder is missing
nlohmann::json read_json(const std::string& path);
std::vector<float> read_f32(const std::string& path);
std::vector<std::string> ref_jsons();  // every ref/*.json, sorted

// sqrt(sum((a-b)^2) / sum(b^2))
double rel_rms(const float* a, const float* b, size_t n);
// Fraction of rows whose argmax agrees.
double top1_agreement(const float* a, const float* b, size_t rows, size_t cols);
int argmax(const float* row, size_t n);

}  // namespace edgeinfer::test
