// The edgeinfer binary with bad option values: exit status 2 and one plain line naming the
// option, the rule and the value (not CLI11's "Value -1 not in range 0.000000 to " + DBL_MAX
// in full); values that keep the rules get past parsing to the next check (the model file).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_test_util.h"

namespace edgeinfer::test {
namespace {

// `args` must fail parsing with exactly `message` on one line.
void expect_rejected(const std::vector<std::string>& args, const std::string& message) {
  std::string cmd;
  for (const std::string& a : args) cmd += " " + a;
  SCOPED_TRACE("edgeinfer" + cmd);
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("error: " + message + "\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("179769313"), std::string::npos) << "DBL_MAX printed: " << r.output;
}

TEST(CliOptions, NegativeCountsAreRejectedByName) {
  expect_rejected({"bench", "-m", "m.gguf", "-p", "-5"}, "--n-prompt: must be 0 or more, got -5");
  expect_rejected({"bench", "-m", "m.gguf", "-n", "128,-1"}, "--n-gen: must be 0 or more, got -1");
  expect_rejected({"bench", "-m", "m.gguf", "-d", "-1"}, "--depth: must be 0 or more, got -1");
  expect_rejected({"run", "-m", "m.gguf", "-n", "-5"}, "--n-predict: must be 0 or more, got -5");
  expect_rejected({"run", "-m", "m.gguf", "-t", "-2"}, "--threads: must be 0 or more, got -2");
  expect_rejected({"perplexity", "-m", "m.gguf", "-f", "t.txt", "-b", "-1"}, "--batch-size: must be 0 or more, got -1");
  expect_rejected({"quantize", "-t", "-1", "in.gguf", "out.gguf", "q4_0"}, "--threads: must be 0 or more, got -1");
}

TEST(CliOptions, ZeroIsRejectedWhereAPositiveValueIsNeeded) {
  expect_rejected({"bench", "-m", "m.gguf", "-r", "0"}, "--repetitions: must be more than 0, got 0");
  expect_rejected({"bench", "-m", "m.gguf", "-t", "2,0"}, "--threads: must be more than 0, got 0");
  expect_rejected({"bench", "-m", "m.gguf", "--probe-mib", "0"}, "--probe-mib: must be more than 0, got 0");
}

TEST(CliOptions, FloatsIncludingNanAreChecked) {
  expect_rejected({"run", "-m", "m.gguf", "--temp", "-0.5"}, "--temp: must be 0 or more, got -0.5");
  expect_rejected({"run", "-m", "m.gguf", "--temp", "nan"}, "--temp: must be 0 or more, got nan");
}

TEST(CliOptions, TextThatIsNotANumberIsLeftToTheConversion) {
  const CliResult r = run_cli({"run", "-m", "m.gguf", "-n", "abc"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--n-predict"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("abc"), std::string::npos) << r.output;
}

TEST(CliOptions, ValuesWithinTheRulesGetPastParsing) {
  // Every value keeps its rule, so the run gets as far as the model file, which is missing.
  const CliResult r = run_cli({"bench", "-m", "/nonexistent/m.gguf", "-p", "0", "-n", "1,0", "-t", "1", "-r", "1",
                               "-d", "0", "--probe-mib", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("model file not found: '/nonexistent/m.gguf'"), std::string::npos) << r.output;
  const CliResult g = run_cli({"run", "-m", "/nonexistent/m.gguf", "-p", "hi", "-n", "0", "--temp", "0.7"});
  EXPECT_EQ(g.exit_code, 1) << g.output;
  EXPECT_NE(g.output.find("model file not found"), std::string::npos) << g.output;
}

}  // namespace
}  // namespace edgeinfer::test
