// SamplingParams::validate: every bad value is rejected with a message naming its field.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "sampling/sampler.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

void expect_rejected(const std::function<void(SamplingParams&)>& edit, const std::string& field) {
  SamplingParams p;
  edit(p);
  try {
    p.validate();
    ADD_FAILURE() << "validate() accepted a bad " << field;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
  // The Sampler validates too.
  EXPECT_THROW(Sampler(p, 10), Error) << field;
}

TEST(SamplingParams, DefaultsAreValid) {
  SamplingParams p;
  EXPECT_NO_THROW(p.validate());
  EXPECT_EQ(p.seed, SamplingParams::kRandomSeed);
  EXPECT_FALSE(p.penalties_enabled());
}

TEST(SamplingParams, EdgesThatAreValid) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.top_k = -5;
  p.repeat_last_n = -1;
  p.presence_penalty = -2.0f;  // OpenAI allows negative penalties (encourage repetition)
  p.frequency_penalty = 2.0f;
  EXPECT_NO_THROW(p.validate());
  p.min_p = 1.0f;
  p.top_p = 1e-6f;
  EXPECT_NO_THROW(p.validate());
}

TEST(SamplingParams, RejectsBadFields) {
  expect_rejected([](SamplingParams& p) { p.temperature = -0.1f; }, "temperature");
  expect_rejected([](SamplingParams& p) { p.temperature = kNaN; }, "temperature");
  expect_rejected([](SamplingParams& p) { p.temperature = kInf; }, "temperature");
  expect_rejected([](SamplingParams& p) { p.top_p = 0.0f; }, "top_p");
  expect_rejected([](SamplingParams& p) { p.top_p = 1.5f; }, "top_p");
  expect_rejected([](SamplingParams& p) { p.top_p = -0.5f; }, "top_p");
  expect_rejected([](SamplingParams& p) { p.top_p = kNaN; }, "top_p");
  expect_rejected([](SamplingParams& p) { p.min_p = -0.01f; }, "min_p");
  expect_rejected([](SamplingParams& p) { p.min_p = 1.01f; }, "min_p");
  expect_rejected([](SamplingParams& p) { p.min_p = kNaN; }, "min_p");
  expect_rejected([](SamplingParams& p) { p.repeat_penalty = 0.0f; }, "repeat_penalty");
  expect_rejected([](SamplingParams& p) { p.repeat_penalty = -1.1f; }, "repeat_penalty");
  expect_rejected([](SamplingParams& p) { p.repeat_penalty = kNaN; }, "repeat_penalty");
  expect_rejected([](SamplingParams& p) { p.repeat_penalty = kInf; }, "repeat_penalty");
  expect_rejected([](SamplingParams& p) { p.repeat_last_n = -2; }, "repeat_last_n");
  expect_rejected([](SamplingParams& p) { p.presence_penalty = kNaN; }, "presence_penalty");
  expect_rejected([](SamplingParams& p) { p.frequency_penalty = -kInf; }, "frequency_penalty");
}

TEST(Sampler, RejectsBadVocabAndTokens) {
  SamplingParams p;
  p.seed = 1;
  EXPECT_THROW(Sampler(p, 0), Error);
  Sampler s(p, 4);
  EXPECT_THROW(s.accept(4), Error);
  EXPECT_THROW(s.accept(-1), Error);
  EXPECT_NO_THROW(s.accept(3));
}

}  // namespace
}  // namespace edgeinfer
