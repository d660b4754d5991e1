// SPM (stories260K, llama-spm): the reference sequences from the data README and basic rules.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_helpers.h"

namespace edgeinfer {
namespace {

TEST(TokenizerSpm, Stories260KOnceUponATime) {
  Tokenizer tok = test::load_tokenizer(test::stories_path());
  EXPECT_EQ(tok.type(), VocabType::Spm);
  EXPECT_EQ(tok.n_vocab(), 512);
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 2);
  EXPECT_EQ(tok.unk(), 0);
  EXPECT_TRUE(tok.add_bos());
  EXPECT_FALSE(tok.add_eos());
  EXPECT_EQ(tok.encode("Once upon a time", true), (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_EQ(tok.encode("The little dog", true), (std::vector<int32_t>{1, 291, 376, 400, 428}));
  EXPECT_EQ(tok.encode("Lily wanted to", true), (std::vector<int32_t>{1, 317, 391, 266, 267}));
  EXPECT_EQ(tok.encode("Once upon a time", false), (std::vector<int32_t>{403, 407, 261, 378}));
}

TEST(TokenizerSpm, Stories260KReferenceSentence) {
  Tokenizer tok = test::load_tokenizer(test::stories_path());
  const std::string text =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her dog "
      "Max.";
  const std::vector<int32_t> expected = {1,   403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421,
                                         395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292, 411,
                                         322, 265, 282, 295, 433, 335, 311, 400, 428, 392, 412, 444, 426};
  const std::vector<int32_t> ids = tok.encode(text, true);
  EXPECT_EQ(ids.size(), 39u);
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(tok.decode(ids), text);
  // The BOS is hidden unless asked for; then the first word keeps its space, as in "<s> Once".
  EXPECT_EQ(tok.decode(ids, true).substr(0, 8), "<s> Once");
}

TEST(TokenizerSpm, Stories260KGreedyContinuationDecodes) {
  Tokenizer tok = test::load_tokenizer(test::stories_path());
  // A continuation keeps its leading space when decoded as such.
  const std::vector<int32_t> ids = tok.encode(" was a little girl", false);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(tok.decode(ids, false, /*at_text_start=*/false), "  was a little girl");
  const std::vector<int32_t> was = tok.encode("The little dog was", false);
  const std::vector<int32_t> prompt = tok.encode("The little dog", false);
  ASSERT_GT(was.size(), prompt.size());
  const std::span<const int32_t> tail(was.data() + prompt.size(), was.size() - prompt.size());
  EXPECT_EQ(tok.decode(tail, false, false), " was");
  EXPECT_EQ(tok.decode(tail), "was");
}

TEST(TokenizerSpm, PiecesAndBytes) {
  Tokenizer tok = test::load_tokenizer(test::stories_path());
  EXPECT_EQ(tok.token_to_piece(403), " Once");
  EXPECT_EQ(tok.token_text(403), "\xE2\x96\x81Once");
  EXPECT_EQ(tok.token_to_piece(1), "");
  EXPECT_EQ(tok.token_to_piece(1, true), "<s>");
  // Byte fallback: <0x0A> is the newline byte.
  const int32_t nl = 3 + 0x0A;
  EXPECT_EQ(tok.token_text(nl), "<0x0A>");
  EXPECT_TRUE(tok.is_byte(nl));
  EXPECT_EQ(tok.token_to_piece(nl), "\n");
  EXPECT_TRUE(tok.is_eog(2));
  EXPECT_FALSE(tok.is_eog(403));
  EXPECT_THROW(tok.token_to_piece(512), Error);
  EXPECT_THROW(tok.token_to_piece(-1), Error);
}

TEST(TokenizerSpm, SpecialTextIsPlainUnlessAsked) {
  Tokenizer tok = test::load_tokenizer(test::stories_path());
  const std::vector<int32_t> plain = tok.encode("</s>", false);
  EXPECT_TRUE(std::find(plain.begin(), plain.end(), 2) == plain.end());
  EXPECT_EQ(tok.decode(plain), "</s>");
  const std::vector<int32_t> parsed = tok.encode("Once</s>", false, true);
  ASSERT_FALSE(parsed.empty());
  EXPECT_EQ(parsed.back(), 2);
}

TEST(TokenizerSpm, RoundTripsArbitraryText) {
  Tokenizer tok = test::load_tokenizer(test::stories_path());
  for (const std::string text : {"", " ", "  two spaces", "tab\tand\nnewline\n", "\xC3\xA9t\xC3\xA9 \xF0\x9F\xA6\x99!",
                                 "Ends with space ", "\xFF\xFE invalid bytes \x80"}) {
    EXPECT_EQ(tok.decode(tok.encode(text, false)), text) << text;
    EXPECT_EQ(tok.decode(tok.encode(text, true)), text) << text;
  }
}

}  // namespace
}  // namespace edgeinfer
