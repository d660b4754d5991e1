#pragma once
// Runs tests/jinja/render_reference.py (Python's jinja2, configured as Hugging Face renders
// chat templates) over a batch of cases in one process, so expected outputs are produced at
// test time from the reference implementation instead of being stored.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace edgeinfer::jinja_test {

struct ReferenceCase {
  std::string id;
  std::string source;
  nlohmann::ordered_json vars = nlohmann::ordered_json::object();
  bool transformers_tojson = false;  // transformers' tojson override instead of jinja2's
};

struct ReferenceResult {
  bool ok = false;
  std::string output;  // when ok
  std::string error;   // "ExceptionType: message" otherwise
};

// The fixed "now" both renderers use for strftime_now(): 2024-07-26 14:30:05.
inline constexpr int kNow[6] = {2024, 7, 26, 14, 30, 5};

// Throws std::runtime_error when Python or jinja2 is unavailable or the script fails.
std::vector<ReferenceResult> render_reference(const std::vector<ReferenceCase>& cases);

}  // namespace edgeinfer::jinja_test
