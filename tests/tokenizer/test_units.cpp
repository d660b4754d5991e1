// Unit tests that need no golden file: pre-tokenizer splits for families not shipped as
// vocabularies, synthetic vocabularies (load errors, ignore_merges, special tokens), WPM rules,
// the byte-level alphabet, and a throughput figure.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "gguf/gguf_writer.h"
#include "test_helpers.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/utf8.h"

namespace edgeinfer {
namespace {

std::vector<std::string> split(const std::string& pre, const std::string& text) {
  const PreTokenizerSpec* spec = find_pre_tokenizer(pre);
  if (!spec) throw std::runtime_error("no spec " + pre);
  PreTokenizer p(spec->regexes, "test", pre);
  std::vector<TextSpan> spans;
  p.split(text, spans);
  std::vector<std::string> out;
  for (const TextSpan& s : spans) out.push_back(text.substr(s.offset, s.length));
  return out;
}

using Pieces = std::vector<std::string>;

TEST(PreTokenizer, Gpt2) {
  EXPECT_EQ(split("gpt-2", "Hello world's 123  x"), (Pieces{"Hello", " world", "'s", " 123", " ", " x"}));
  // A newline run before a word: "\s+(?!\S)" takes all but the last; the last is left between
  // matches and kept as its own piece.
  EXPECT_EQ(split("gpt-2", "a\n\nb  "), (Pieces{"a", "\n", "\n", "b", "  "}));
}

TEST(PreTokenizer, Llama3) {
  EXPECT_EQ(split("llama-bpe", "3333 apples"), (Pieces{"333", "3", " apples"}));
  EXPECT_EQ(split("llama3", "Hello\n\nworld"), (Pieces{"Hello", "\n\n", "world"}));
  EXPECT_EQ(split("llama3", "I'VE it's"), (Pieces{"I", "'VE", " it", "'s"}));
  EXPECT_EQ(split("llama3", "x  !!\n"), (Pieces{"x", " ", " !!\n"}));
}

TEST(PreTokenizer, Qwen2SingleDigits) {
  EXPECT_EQ(split("qwen2", "a 1234"), (Pieces{"a", " ", "1", "2", "3", "4"}));
}

TEST(PreTokenizer, StarcoderDigitsIsolated) {
  EXPECT_EQ(split("starcoder", "abc 123"), (Pieces{"abc", " ", "1", "2", "3"}));
  EXPECT_EQ(split("refact", "x=42"), (Pieces{"x", "=", "4", "2"}));
}

TEST(PreTokenizer, DeepseekCoder) {
  EXPECT_EQ(split("deepseek-coder", "a\nb 12"), (Pieces{"a", "\n", "b", " ", "1", "2"}));
}

TEST(PreTokenizer, Falcon) {
  EXPECT_EQ(split("falcon", "1234567 x"), (Pieces{"123", "456", "7", " x"}));
}

TEST(PreTokenizer, EveryKnownNameCompilesAndCoversText) {
  const std::string text =
      "Hello, y'all! 3333 \xF0\x9F\xA6\x99 \xE6\x88\x91\xE6\x83\xB3 \xD0\xBD\xD0\xB5\xD1\x89\xD0\xBE\n\n  \t x\r\n"
      "\xFF\xFE bad bytes <sentinel:1> IMGIMGAZ";
  const auto names = known_pre_tokenizers();
  EXPECT_GE(names.size(), 40u);
  for (const std::string& name : names) {
    const Pieces pieces = split(name, text);
    std::string joined;
    for (const std::string& p : pieces) {
      EXPECT_FALSE(p.empty()) << name;
      joined += p;
    }
    EXPECT_EQ(joined, text) << name;
  }
}

TEST(PreTokenizer, LongInputsDoNotExhaustTheJitStack) {
  const std::string spaces(200000, ' ');
  const std::string letters(200000, 'a');
  for (const char* name : {"gpt-2", "llama3", "qwen2", "tekken", "deepseek-llm"}) {
    EXPECT_EQ(split(name, letters + spaces + letters).size(), 3u) << name;
  }
}

TEST(ByteLevel, AlphabetRoundTrips) {
  EXPECT_EQ(byte_level::byte_to_utf8(' '), "\xC4\xA0");  // Ġ
  EXPECT_EQ(byte_level::byte_to_utf8('\n'), "\xC4\x8A");  // Ċ
  EXPECT_EQ(byte_level::byte_to_utf8('A'), "A");
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  std::string enc, dec;
  byte_level::encode(all, enc);
  EXPECT_TRUE(utf8::is_valid(enc));
  byte_level::decode(enc, dec);
  EXPECT_EQ(dec, all);
}

TEST(Utf8, Classify) {
  size_t len = 0;
  auto cls = [&](std::string_view s) {
    return utf8::classify(reinterpret_cast<const unsigned char*>(s.data()), s.size(), len);
  };
  EXPECT_EQ(cls("\xE6\x88\x91"), utf8::SeqStatus::Valid);
  EXPECT_EQ(len, 3u);
  EXPECT_EQ(cls("\xE6\x88"), utf8::SeqStatus::Incomplete);
  EXPECT_EQ(cls("\xC0\x80"), utf8::SeqStatus::Invalid);      // overlong
  EXPECT_EQ(cls("\xED\xA0\x80"), utf8::SeqStatus::Invalid);  // surrogate
  EXPECT_EQ(cls("\xF4\x90\x80\x80"), utf8::SeqStatus::Invalid);
  EXPECT_EQ(cls("\x80"), utf8::SeqStatus::Invalid);
}

// --- synthetic vocabularies ------------------------------------------------------------------

struct SyntheticVocab {
  std::vector<std::string> tokens;
  std::vector<int64_t> types;
  std::vector<std::string> merges;
  std::vector<double> scores;
  std::string model = "gpt2";
  std::string pre = "gpt-2";
  bool with_model = true;
  bool with_pre = true;
};

// A byte-level BPE vocabulary: the 256 byte characters, then `extra` tokens.
SyntheticVocab byte_level_vocab(const std::vector<std::string>& extra, const std::vector<std::string>& merges) {
  SyntheticVocab v;
  for (int b = 0; b < 256; ++b) v.tokens.emplace_back(byte_level::byte_to_utf8(static_cast<uint8_t>(b)));
  for (const auto& e : extra) v.tokens.push_back(e);
  v.types.assign(v.tokens.size(), 1);
  v.merges = merges;
  return v;
}

struct Loaded {
  std::vector<uint8_t> bytes;
  GgufFile file;
};

Tokenizer load_synthetic(const SyntheticVocab& v) {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  if (v.with_model) w.add_string("tokenizer.ggml.model", v.model);
  if (v.with_pre) w.add_string("tokenizer.ggml.pre", v.pre);
  w.add("tokenizer.ggml.tokens", GgufValue::from_string_array(v.tokens));
  w.add("tokenizer.ggml.token_type", GgufValue::from_int_array(GgufValueType::INT32, v.types));
  if (!v.merges.empty()) w.add("tokenizer.ggml.merges", GgufValue::from_string_array(v.merges));
  if (!v.scores.empty()) w.add("tokenizer.ggml.scores", GgufValue::from_float_array(GgufValueType::FLOAT32, v.scores));
  const std::vector<uint8_t> bytes = w.write_to_memory();
  GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "synthetic.gguf");
  return Tokenizer::from_gguf(f);  // the tokenizer copies what it needs
}

int32_t id_of(const SyntheticVocab& v, const std::string& t) {
  for (size_t i = 0; i < v.tokens.size(); ++i)
    if (v.tokens[i] == t) return static_cast<int32_t>(i);
  return -1;
}

TEST(SyntheticVocab, MergesByRank) {
  // "h e" then "l l" then "he ll" then "hell o": "hello" -> one token; "hell" -> "hell".
  const auto v = byte_level_vocab({"he", "ll", "hell", "hello"}, {"h e", "l l", "he ll", "hell o"});
  Tokenizer tok = load_synthetic(v);
  EXPECT_EQ(tok.encode("hello", false), (std::vector<int32_t>{id_of(v, "hello")}));
  EXPECT_EQ(tok.encode("hell", false), (std::vector<int32_t>{id_of(v, "hell")}));
  EXPECT_EQ(tok.encode("lhe", false), (std::vector<int32_t>{'l', id_of(v, "he")}));
  EXPECT_EQ(tok.decode(tok.encode("hello hell", false)), "hello hell");
}

TEST(SyntheticVocab, IgnoreMergesForLlama3) {
  // "ab" is a token no merge produces: llama3-style vocabularies emit a whole-token word as is.
  auto v = byte_level_vocab({"ab"}, {"x y"});
  v.tokens.push_back("xy");
  v.types.push_back(1);
  v.pre = "llama3";
  Tokenizer l3 = load_synthetic(v);
  EXPECT_EQ(l3.encode("ab", false), (std::vector<int32_t>{id_of(v, "ab")}));
  EXPECT_TRUE(l3.add_bos());  // llama3 family default; BPE's default BOS id is 11
  EXPECT_EQ(l3.bos(), 11);
  v.pre = "gpt-2";
  Tokenizer g2 = load_synthetic(v);
  EXPECT_EQ(g2.encode("ab", false), (std::vector<int32_t>{'a', 'b'}));
}

TEST(SyntheticVocab, UnknownPreTokenizerIsALoadError) {
  auto v = byte_level_vocab({}, {"a b"});
  v.pre = "no-such-pre";
  try {
    load_synthetic(v);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("synthetic.gguf"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown pre-tokenizer 'no-such-pre'"), std::string::npos) << msg;
  }
}

TEST(SyntheticVocab, MissingOrUnsupportedModelIsALoadError) {
  auto v = byte_level_vocab({}, {"a b"});
  v.with_model = false;
  EXPECT_THROW(load_synthetic(v), Error);
  v.with_model = true;
  v.model = "t5x";
  try {
    load_synthetic(v);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported tokenizer model 't5x'"), std::string::npos) << e.what();
  }
  v.model = "gpt2";
  v.merges.clear();
  EXPECT_THROW(load_synthetic(v), Error);  // BPE without merges
}

TEST(SyntheticVocab, MissingPreMeansDefault) {
  auto v = byte_level_vocab({}, {"a b"});
  v.with_pre = false;
  Tokenizer tok = load_synthetic(v);
  EXPECT_EQ(tok.pre_tokenizer(), "");
  EXPECT_EQ(tok.decode(tok.encode("x 1234!", false)), "x 1234!");
}

TEST(SyntheticVocab, ControlAndUserDefinedTokens) {
  auto v = byte_level_vocab({"<|im_start|>", "<|im_end|>", "<tool>"}, {"a b"});
  v.types[256] = 3;  // control
  v.types[257] = 3;
  v.types[258] = 4;  // user-defined
  v.pre = "qwen2";
  Tokenizer tok = load_synthetic(v);
  const int32_t start = 256, end = 257, tool = 258;
  EXPECT_TRUE(tok.is_eog(end));  // <|im_end|> ends generation
  EXPECT_FALSE(tok.is_eog(start));
  EXPECT_EQ(tok.eot(), end);
  const std::string text = "<|im_start|>hi<tool><|im_end|>";
  const auto plain = tok.encode(text, false);
  // Control text stays text; the user-defined token is always matched.
  EXPECT_EQ(std::count(plain.begin(), plain.end(), start), 0);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), tool), 1);
  EXPECT_EQ(tok.decode(plain), text);
  const auto parsed = tok.encode(text, false, true);
  EXPECT_EQ(parsed, (std::vector<int32_t>{start, 'h', 'i', tool, end}));
  EXPECT_EQ(tok.decode(parsed), "hi<tool>");
  EXPECT_EQ(tok.decode(parsed, true), text);
}

TEST(SyntheticVocab, LongestSpecialTokenWins) {
  auto v = byte_level_vocab({"<a>", "<a><b>", "<b>"}, {"x y"});
  v.types[256] = v.types[257] = v.types[258] = 3;
  Tokenizer tok = load_synthetic(v);
  EXPECT_EQ(tok.encode("<a><b><b><a>", false, true), (std::vector<int32_t>{257, 258, 256}));
}

// An SPM vocabulary where one token spans a word boundary ("a▁b"): word-by-word merging must
// not split there (it would give "▁a" "▁b").
TEST(SyntheticVocab, SpmTokenAcrossWordBoundary) {
  SyntheticVocab v;
  v.model = "llama";
  v.with_pre = false;
  const std::string sp = "\xE2\x96\x81";
  v.tokens = {"<unk>", "<s>", "</s>", "a", "b", "c", sp, sp + "b", sp + "a", "a" + sp + "b", sp + "c"};
  v.scores = {0, 0, 0, -5, -5, -5, -5, -1, -2, 0, -1};
  v.types = {2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  Tokenizer tok = load_synthetic(v);
  EXPECT_EQ(tok.encode("a b", false), (std::vector<int32_t>{6, 9}));  // "▁" "a▁b"
  EXPECT_EQ(tok.encode("c b", false), (std::vector<int32_t>{10, 7}));  // "▁c" "▁b"
  EXPECT_EQ(tok.encode("a b", true), (std::vector<int32_t>{1, 6, 9}));
  EXPECT_EQ(tok.decode(tok.encode("a b c a b", false)), "a b c a b");
}

// --- vocabulary rules on shipped files --------------------------------------------------------

TEST(Wpm, NormalizationAndSpecials) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("bert-bge"));
  EXPECT_EQ(tok.type(), VocabType::Wpm);
  EXPECT_EQ(tok.bos(), 101);
  EXPECT_EQ(tok.sep(), 102);
  EXPECT_EQ(tok.unk(), 100);
  EXPECT_EQ(tok.encode("caf\xC3\xA9 CAFE", false), tok.encode("cafe cafe", false));  // accents and case
  const auto ids = tok.encode("hello", true);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.front(), 101);
  EXPECT_EQ(ids.back(), 102);
  // Every word piece starts with a space (no clean-up of spaces before punctuation).
  EXPECT_EQ(tok.decode(tok.encode("Hello, world!", false)), "hello , world !");
  EXPECT_EQ(tok.encode("[CLS]", false, true), (std::vector<int32_t>{101}));
  EXPECT_NE(tok.encode("[CLS]", false), (std::vector<int32_t>{101}));
  EXPECT_EQ(tok.encode(std::string(101, 'a'), false), (std::vector<int32_t>{100}));  // too long for a word
}

TEST(Spm, Phi3SpecialTokensSwallowFollowingSpace) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("phi-3"));
  EXPECT_EQ(tok.eos(), 32000);
  EXPECT_TRUE(tok.is_eog(32007));  // <|end|>
  std::vector<int32_t> want = {32010};
  const auto hi = tok.encode("hi", false);
  want.insert(want.end(), hi.begin(), hi.end());
  EXPECT_EQ(tok.encode("<|user|> hi", false, true), want);
}

TEST(Bpe, ParseSpecialOnlyWhenAsked) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("gpt-2"));
  EXPECT_EQ(tok.encode("<|endoftext|>", false, true), (std::vector<int32_t>{50256}));
  EXPECT_GT(tok.encode("<|endoftext|>", false).size(), 1u);
  EXPECT_TRUE(tok.is_eog(50256));
  EXPECT_FALSE(tok.add_bos());
}

TEST(Bpe, UserDefinedSpaceRuns) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("gpt-neox"));
  const std::string text = "a" + std::string(30, ' ') + "b";
  const auto ids = tok.encode(text, false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 50254), 1);  // the 24-space token
  EXPECT_EQ(tok.decode(ids), text);
}

// Invalid UTF-8 sequences (maximal subparts) replaced by U+FFFD.
std::string sanitize(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    if (utf8::classify(reinterpret_cast<const unsigned char*>(s.data()) + i, s.size() - i, len) ==
        utf8::SeqStatus::Valid)
      out.append(s.substr(i, len));
    else
      out.append("\xEF\xBF\xBD");
    i += len;
  }
  return out;
}

// Random byte strings (ASCII, spaces, newlines, multi-byte characters, invalid bytes, special
// token look-alikes) encode to in-range ids and decode back exactly on lossless vocabularies.
TEST(Robustness, RandomBytesRoundTrip) {
  const std::vector<std::string> alphabet = {
      "a", "b", "Z", "0", "7", " ", " ", "  ", "\n", "\t", "\r", ".", "'s", "!", "<", ">", "|", "<s>", "</s>",
      "<|endoftext|>", "\xC3\xA9", "\xE6\x88\x91", "\xF0\x9F\xA6\x99", "\xE2\x96\x81", "\xFF", "\x80", "\xE6\x88",
      "\xF0", "\x00", "\xEF\xBF\xBD", "\xD0\xBD"};
  uint64_t state = 0x9E3779B97F4A7C15ULL;  // fixed seed: deterministic cases
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (const char* name : {"llama-spm", "phi-3", "baichuan", "gpt-2", "starcoder", "deepseek-coder", "deepseek-llm",
                           "gpt-neox", "bert-bge"}) {
    Tokenizer tok = test::load_tokenizer(test::vocab_path(name));
    const bool lossless = tok.type() != VocabType::Wpm;
    for (int i = 0; i < 150; ++i) {
      std::string text;
      const size_t n = next() % 24;
      for (size_t k = 0; k < n; ++k) text += alphabet[next() % alphabet.size()];
      for (bool parse_special : {false, true}) {
        const auto ids = tok.encode(text, true, parse_special);
        for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok.n_vocab()) << name;
        if (lossless && !parse_special) {
          // phi-3's "</s>" is a user-defined token that swallows the spaces after it.
          if (std::string(name) == "phi-3" && text.find("</s>") != std::string::npos) continue;
          // SPM writes spaces as "▁", so a "▁" in the input decodes as a space (as in
          // SentencePiece itself).
          if (tok.type() == VocabType::Spm && text.find("\xE2\x96\x81") != std::string::npos) continue;
          // Valid text always round-trips exactly; invalid bytes do with byte fallback (SPM) and a
          // full byte alphabet (gpt-2). Other byte-level vocabularies lack tokens for bytes that
          // cannot occur in UTF-8 (encoded as U+FFFD), or hold them as user-defined characters
          // (deepseek: byte 0xFF -> "ÿ"), as in the reference engine.
          const bool exact_bytes = tok.type() == VocabType::Spm || std::string(name) == "gpt-2";
          if (utf8::is_valid(text) || exact_bytes) {
            EXPECT_EQ(tok.decode(ids), text) << name << " case " << i;
          } else {
            EXPECT_TRUE(utf8::is_valid(sanitize(tok.decode(ids)))) << name << " case " << i;
          }
          StreamDecoder dec(tok, false, true);
          std::string streamed;
          for (int32_t id : ids) streamed += dec.push(id);
          streamed += dec.flush();
          if (utf8::is_valid(text)) {
            EXPECT_EQ(streamed, text) << name << " case " << i;
          }
          EXPECT_TRUE(utf8::is_valid(streamed)) << name << " case " << i;
        }
      }
    }
  }
}

// --- speed --------------------------------------------------------------------------------------

std::string mixed_text(size_t bytes) {
  const std::string inputs = test::read_file(test::vocab_path("gpt-2") + ".inp");
  const std::string prose = test::read_file(data_dir() + "/text/stories-ppl.txt");
  const std::string code =
      "for (int i = 0; i < n; ++i) {\n    sum += values[i] * 3.14159;\n}\nreturn {\"key\": [1, 2, 3]};\n";
  std::string out;
  while (out.size() < bytes) out += prose + code + inputs;
  out.resize(bytes);
  while (!out.empty() && !utf8::is_valid(out)) out.pop_back();  // do not end inside a code point
  return out;
}

TEST(Speed, OneMegabyteMixedText) {
  const std::string text = mixed_text(1 << 20);
  for (const char* name : {"llama-spm", "gpt-2", "deepseek-llm", "starcoder", "gpt-neox", "bert-bge"}) {
    Tokenizer tok = test::load_tokenizer(test::vocab_path(name));
    const auto t0 = std::chrono::steady_clock::now();
    const auto ids = tok.encode(text, false);
    const auto t1 = std::chrono::steady_clock::now();
    const std::string back = tok.decode(ids);
    const auto t2 = std::chrono::steady_clock::now();
    const double enc = std::chrono::duration<double>(t1 - t0).count();
    const double dec = std::chrono::duration<double>(t2 - t1).count();
    std::printf("[speed] %-14s encode %7.2f MB/s (%zu tokens), decode %8.1f MB/s\n", name,
                text.size() / 1e6 / enc, ids.size(), back.size() / 1e6 / dec);
    EXPECT_GT(ids.size(), text.size() / 10);
    if (std::string(name) != "bert-bge") {
      EXPECT_EQ(back, text) << name;
    }
  }
}

}  // namespace
}  // namespace edgeinfer
