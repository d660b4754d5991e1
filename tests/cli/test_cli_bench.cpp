// `edgeinfer bench --profile` as printed and as JSON: the per-op time shares and each matmul op's
// rate (weights streamed for generation, ops for a prompt), on the small shared synth model.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "cli_test_util.h"

namespace edgeinfer::test {
namespace {

const std::string kModel = "models/synth-llama-q4_0.gguf";

TEST(CliBench, ProfilePrintsEachMatmulOpsRate) {
  const CliResult r =
      run_cli({"bench", "-m", data_file(kModel), "-p", "8", "-n", "2", "-r", "1", "-t", "1", "--no-probes", "--profile"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // One rate line per test, each naming the five matmul ops with a positive figure.
  const std::regex pp(R"(matmul G op/s: qkv [0-9.]+ attn_out [0-9.]+ gate\+up [0-9.]+ down [0-9.]+ output [0-9.]+\n)");
  const std::regex tg(R"(matmul weights GB/s: qkv [0-9.]+ attn_out [0-9.]+ gate\+up [0-9.]+ down [0-9.]+ output [0-9.]+\n)");
  EXPECT_TRUE(std::regex_search(r.output, pp)) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, tg)) << r.output;
  EXPECT_EQ(r.output.find(" 0.0 "), std::string::npos) << r.output;
}

TEST(CliBench, ProfileJsonCarriesTheRatesAndTheirUnit) {
  const CliResult r = run_cli(
      {"bench", "-m", data_file(kModel), "-p", "8", "-n", "2", "-r", "1", "-t", "1", "--no-probes", "--profile", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"matmul_rate_unit\": \"ops/s\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"matmul_rate_unit\": \"bytes/s\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"matmul_rate\": {"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"("gate\+up": [1-9][0-9.e+]*)"))) << r.output;
}

}  // namespace
}  // namespace edgeinfer::test
