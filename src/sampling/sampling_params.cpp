#include "sampling/sampling_params.h"

#include <cmath>
#include <string>

#include "util/error.h"

namespace edgeinfer {

namespace {

[[noreturn]] void bad(const char* field, float value, const char* expected) {
  throw Error(std::string("sampling parameter ") + field + " = " + std::to_string(value) +
              " is invalid: expected " + expected);
}

}  // namespace

void SamplingParams::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f)
    bad("temperature", temperature, "a finite value >= 0 (0 = greedy)");
  if (!(top_p > 0.0f && top_p <= 1.0f)) bad("top_p", top_p, "a value in (0, 1] (1 = disabled)");
  if (!(min_p >= 0.0f && min_p <= 1.0f)) bad("min_p", min_p, "a value in [0, 1] (0 = disabled)");
  if (!std::isfinite(repeat_penalty) || repeat_penalty <= 0.0f)
    bad("repeat_penalty", repeat_penalty, "a finite value > 0 (1 = disabled)");
  if (repeat_last_n < -1)
    throw Error("sampling parameter repeat_last_n = " + std::to_string(repeat_last_n) +
                " is invalid: expected -1 (all tokens), 0 (disabled) or a positive window");
  if (!std::isfinite(presence_penalty))
    bad("presence_penalty", presence_penalty, "a finite value (0 = disabled)");
  if (!std::isfinite(frequency_penalty))
    bad("frequency_penalty", frequency_penalty, "a finite value (0 = disabled)");
}

}  // namespace edgeinfer
