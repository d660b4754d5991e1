// Golden vectors: every vocabulary in $EDGEINFER_DATA/tokenizer with a .out file must tokenize
// every .inp case (add_special = false, parse_special = false) into exactly the expected ids,
// and decode back to the input where the vocabulary is lossless.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "test_helpers.h"

namespace edgeinfer {
namespace {

struct GoldenCase {
  const char* vocab;
  VocabType type;
  bool lossless;  // decode(encode(x)) == x for every case
};

const GoldenCase kGolden[] = {
    {"llama-spm", VocabType::Spm, true},     {"phi-3", VocabType::Spm, true},
    {"baichuan", VocabType::Spm, true},      {"gpt-2", VocabType::Bpe, true},
    {"starcoder", VocabType::Bpe, true},     {"deepseek-coder", VocabType::Bpe, true},
    {"deepseek-llm", VocabType::Bpe, true},  {"bert-bge", VocabType::Wpm, false},
};

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, MatchesExpectedIds) {
  const GoldenCase& g = GetParam();
  const std::string base = test::vocab_path(g.vocab);
  Tokenizer tok = test::load_tokenizer(base);
  EXPECT_EQ(tok.type(), g.type);
  const auto inputs = test::read_inputs(base + ".inp");
  const auto expected = test::read_outputs(base + ".out");
  ASSERT_EQ(inputs.size(), 46u) << base << ".inp";
  ASSERT_EQ(expected.size(), inputs.size()) << base << ".out";

  size_t pass = 0, round_trip = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int32_t> ids = tok.encode(inputs[i], false, false);
    if (ids == expected[i]) ++pass;
    else
      ADD_FAILURE() << g.vocab << " case " << i << " input '" << inputs[i] << "'\n  expected: "
                    << test::ids_to_string(expected[i]) << "\n  got:      " << test::ids_to_string(ids);
    if (g.lossless) {
      const std::string back = tok.decode(ids);
      if (back == inputs[i]) ++round_trip;
      else ADD_FAILURE() << g.vocab << " case " << i << " round trip: '" << back << "' != '" << inputs[i] << "'";
    }
  }
  std::printf("[golden] %-15s %zu/%zu ids match", g.vocab, pass, inputs.size());
  if (g.lossless) std::printf(", %zu/%zu round-trip", round_trip, inputs.size());
  std::printf("\n");
}

INSTANTIATE_TEST_SUITE_P(Vocabs, Golden, ::testing::ValuesIn(kGolden),
                         [](const ::testing::TestParamInfo<GoldenCase>& p) {
                           std::string n = p.param.vocab;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// Every shipped vocabulary with a .out file is in the list above (a new file must not be skipped).
TEST(Golden, EveryShippedVocabIsCovered) {
  size_t n_out = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::tokenizer_dir())) {
    const std::string name = e.path().filename().string();
    if (name.size() < 9 || name.substr(name.size() - 9) != ".gguf.out") continue;
    ++n_out;
    bool listed = false;
    for (const GoldenCase& g : kGolden)
      if (name == "ggml-vocab-" + std::string(g.vocab) + ".gguf.out") listed = true;
    EXPECT_TRUE(listed) << name << " has no golden test";
  }
  EXPECT_EQ(n_out, std::size(kGolden));
}

// gpt-neox has no .out (its GGUF lacks tokenizer.ggml.pre): it must load with the default
// pre-tokenizer and round-trip every input.
TEST(Golden, GptNeoxLoadsAndRoundTrips) {
  const std::string base = test::vocab_path("gpt-neox");
  Tokenizer tok = test::load_tokenizer(base);
  EXPECT_EQ(tok.type(), VocabType::Bpe);
  EXPECT_EQ(tok.n_vocab(), 50432);
  EXPECT_EQ(tok.pre_tokenizer(), "");
  EXPECT_EQ(tok.eos(), 0);
  EXPECT_TRUE(tok.is_eog(0));
  const auto inputs = test::read_inputs(test::vocab_path("gpt-2") + ".inp");
  size_t ok = 0;
  for (const std::string& in : inputs) {
    const std::vector<int32_t> ids = tok.encode(in, false);
    for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok.n_vocab());
    if (tok.decode(ids) == in) ++ok;
    else ADD_FAILURE() << "gpt-neox round trip of '" << in << "'";
  }
  // "Hello world" with GPT-NeoX-20B's vocabulary.
  EXPECT_EQ(tok.encode("Hello world", false), (std::vector<int32_t>{12092, 1533}));
  std::printf("[golden] %-15s loads, %zu/%zu round-trip\n", "gpt-neox", ok, inputs.size());
}

}  // namespace
}  // namespace edgeinfer
