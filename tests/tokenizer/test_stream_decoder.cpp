// StreamDecoder: never emits part of a code point, holds bytes back until complete, and its
// concatenated output equals Tokenizer::decode.
#include <gtest/gtest.h>

#include "test_helpers.h"
#include "tokenizer/utf8.h"

namespace edgeinfer {
namespace {

std::string stream_all(const Tokenizer& tok, const std::vector<int32_t>& ids, std::vector<std::string>* parts = nullptr,
                       bool show_special = false) {
  StreamDecoder dec(tok, show_special, /*at_text_start=*/true);
  std::string out;
  for (int32_t id : ids) {
    std::string p = dec.push(id);
    if (parts) parts->push_back(p);
    out += p;
  }
  out += dec.flush();
  return out;
}

TEST(StreamDecoder, HoldsBackSplitCodePointSpm) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("llama-spm"));
  // "🦙" is not a token: it is spelled with byte tokens <0xF0> <0x9F> <0xA6> <0x99>.
  const std::vector<int32_t> ids = tok.encode(" this is \xF0\x9F\xA6\x99.cpp", false);
  ASSERT_EQ(ids, (std::vector<int32_t>{29871, 445, 338, 29871, 243, 162, 169, 156, 29889, 8223}));
  StreamDecoder dec(tok, false, /*at_text_start=*/true);
  EXPECT_EQ(dec.push(29871), "");  // the added space prefix, stripped
  EXPECT_EQ(dec.push(445), " this");
  EXPECT_EQ(dec.push(338), " is");
  EXPECT_EQ(dec.push(29871), " ");
  EXPECT_EQ(dec.push(243), "");
  EXPECT_EQ(dec.push(162), "");
  EXPECT_EQ(dec.push(169), "");
  EXPECT_EQ(dec.push(156), "\xF0\x9F\xA6\x99");
  EXPECT_EQ(dec.push(29889), ".");
  EXPECT_EQ(dec.push(8223), "cpp");
  EXPECT_EQ(dec.flush(), "");
}

TEST(StreamDecoder, HoldsBackSplitCodePointByteLevelBpe) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("gpt-2"));
  const std::string text = "\xF0\x9F\xA6\x99 and \xE6\x88\x91\xE6\x83\xB3";  // 🦙 and 我想
  const std::vector<int32_t> ids = tok.encode(text, false);
  std::vector<std::string> parts;
  EXPECT_EQ(stream_all(tok, ids, &parts), text);
  bool held_back = false;
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_TRUE(utf8::is_valid(parts[i])) << "part " << i;
    if (parts[i].empty()) held_back = true;
  }
  EXPECT_TRUE(held_back) << "expected at least one token that ends inside a code point";
}

TEST(StreamDecoder, MatchesDecodeOnAllGoldenInputs) {
  const auto inputs = test::read_inputs(test::vocab_path("gpt-2") + ".inp");
  for (const char* name : {"llama-spm", "phi-3", "baichuan", "gpt-2", "starcoder", "deepseek-coder", "deepseek-llm",
                           "gpt-neox", "bert-bge"}) {
    Tokenizer tok = test::load_tokenizer(test::vocab_path(name));
    for (const std::string& in : inputs) {
      for (bool add_special : {false, true}) {
        const std::vector<int32_t> ids = tok.encode(in, add_special);
        std::vector<std::string> parts;
        const std::string streamed = stream_all(tok, ids, &parts);
        EXPECT_EQ(streamed, tok.decode(ids)) << name << ": '" << in << "'";
        for (const std::string& p : parts) EXPECT_TRUE(utf8::is_valid(p)) << name << ": '" << in << "'";
        std::vector<std::string> sparts;
        EXPECT_EQ(stream_all(tok, ids, &sparts, true), tok.decode(ids, true)) << name << ": '" << in << "'";
      }
    }
  }
}

TEST(StreamDecoder, InvalidBytesBecomeReplacementCharacters) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("llama-spm"));
  const int32_t b_ff = 3 + 0xFF, b_f0 = 3 + 0xF0, b_9f = 3 + 0x9F, b_41 = 3 + 0x41;
  StreamDecoder dec(tok, false, true);
  EXPECT_EQ(dec.push(b_ff), "\xEF\xBF\xBD");  // can never start a code point
  EXPECT_EQ(dec.push(b_f0), "");
  EXPECT_EQ(dec.push(b_9f), "");
  EXPECT_EQ(dec.push(b_41), "\xEF\xBF\xBD" "A");  // the sequence broke off: replaced, then 'A'
  EXPECT_EQ(dec.push(b_f0), "");
  EXPECT_EQ(dec.flush(), "\xEF\xBF\xBD");  // unfinished at the end
  EXPECT_EQ(dec.flush(), "");
}

TEST(StreamDecoder, SpecialTokensAndLeadingSpace) {
  Tokenizer tok = test::load_tokenizer(test::stories_path());
  const std::vector<int32_t> ids = tok.encode("Once upon a time", true);
  EXPECT_EQ(stream_all(tok, ids), "Once upon a time");
  EXPECT_EQ(stream_all(tok, ids, nullptr, true), "<s> Once upon a time");
  // By default the decoder streams a continuation after a prompt: pieces keep their space.
  StreamDecoder cont(tok);
  EXPECT_EQ(cont.push(ids[1]), " Once");
  StreamDecoder fresh(tok, false, /*at_text_start=*/true);
  EXPECT_EQ(fresh.push(ids[1]), "Once");
  fresh.reset();
  EXPECT_EQ(fresh.push(ids[2]), "upon");
  // The README's greedy continuation of "The little dog" starts with " was".
  const auto prompt = tok.encode("The little dog", true);
  const auto full = tok.encode("The little dog was a little girl", true);
  ASSERT_EQ(std::vector<int32_t>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(prompt.size())), prompt);
  StreamDecoder gen(tok);
  std::string text;
  for (size_t i = prompt.size(); i < full.size(); ++i) text += gen.push(full[i]);
  EXPECT_EQ(text, " was a little girl");
}

}  // namespace
}  // namespace edgeinfer
