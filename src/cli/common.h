#pragma once
// Helpers shared by the subcommands: model path checks with a helpful message, thread and KV
// options, and timing.
#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "model/model.h"
#include "quant/tensor_type.h"

namespace edgeinfer::cli {

// Loads a model; a missing file gives a message saying where models are expected.
std::unique_ptr<Model> load_model_checked(const std::string& path);

// Parses "f16" / "f32" / "q8_0" (throws Error otherwise).
TensorType parse_kv_type(const std::string& s);

// "100000", "512K", "64M", "1.5GiB" (binary units, any case, optional B) → bytes; `flag` names
// the option in errors. Throws Error for a malformed, unknown-unit or non-positive size.
uint64_t parse_byte_size(const std::string& s, const char* flag);

// Numeric option checks whose errors read "--depth: must be 0 or more, got -1" (CLI11's own
// NonNegativeNumber / PositiveNumber print "Value -1 not in range 0.000000 to " and DBL_MAX in
// full). A value that is not a number passes them and is rejected by the option's conversion.
CLI::Validator non_negative();  // >= 0
CLI::Validator positive();      // > 0

// Number of threads to use for -t 0 / default.
int default_threads();

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace edgeinfer::cli
