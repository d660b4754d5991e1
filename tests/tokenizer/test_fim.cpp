// Fill-in-the-middle prompts with vocabularies that have FIM tokens (starcoder: prefix, suffix,
// middle, pad, repo name, file separator; deepseek-coder: prefix/hole/end) and one that has none.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_helpers.h"
#include "tokenizer/fim.h"

namespace edgeinfer {
namespace {

std::vector<int32_t> cat(std::initializer_list<std::vector<int32_t>> parts) {
  std::vector<int32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(Fim, StarcoderTokensDetected) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("starcoder"));
  const Tokenizer::Fim& f = tok.fim();
  EXPECT_EQ(f.pre, 1);  // <fim_prefix>
  EXPECT_EQ(f.mid, 2);  // <fim_middle>
  EXPECT_EQ(f.suf, 3);  // <fim_suffix>
  EXPECT_EQ(f.pad, 4);  // <fim_pad>
  EXPECT_EQ(f.rep, 5);  // <repo_name>
  EXPECT_EQ(f.sep, 6);  // <file_sep>
  EXPECT_TRUE(has_fim(tok));
  EXPECT_TRUE(has_fim_repo(tok));
  EXPECT_TRUE(tok.is_eog(0));
  EXPECT_TRUE(tok.is_eog(4));
  EXPECT_FALSE(tok.is_eog(1));
}

TEST(Fim, PrefixSuffixMiddleAndReverse) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("starcoder"));
  FimRequest req;
  req.prefix = "def add(a, b):\n    return ";
  req.suffix = "\n\nprint(add(1, 2))\n";
  const auto pre = tok.encode(req.prefix, false);
  const auto suf = tok.encode(req.suffix, false);
  EXPECT_FALSE(tok.add_bos());
  EXPECT_EQ(build_fim_prompt(tok, req), cat({{1}, pre, {3}, suf, {2}}));
  req.order = FimOrder::SuffixPrefixMiddle;
  EXPECT_EQ(build_fim_prompt(tok, req), cat({{3}, suf, {1}, pre, {2}}));
  // Text typed at the cursor follows the prefix.
  req.order = FimOrder::PrefixSuffixMiddle;
  req.prompt = "a +";
  EXPECT_EQ(build_fim_prompt(tok, req), cat({{1}, pre, tok.encode("a +", false), {3}, suf, {2}}));
}

TEST(Fim, RepoLevelLayout) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("starcoder"));
  const std::vector<FimChunk> extra = {{"utils.py", "def sub(a, b):\n    return a - b\n"},
                                       {"README.md", "# demo\n"}};
  FimRequest req;
  req.prefix = "import utils\n";
  req.suffix = "\n";
  req.extra = extra;
  req.repo_name = "demo";
  req.filename = "main.py";
  const auto got = build_fim_prompt(tok, req);
  const auto want = cat({{5}, tok.encode("demo\n", false), {6}, tok.encode("utils.py\n", false),
                         tok.encode(extra[0].text, false), {6}, tok.encode("README.md\n", false),
                         tok.encode(extra[1].text, false), {6}, tok.encode("main.py\n", false), {1},
                         tok.encode(req.prefix, false), {3}, tok.encode(req.suffix, false), {2}});
  EXPECT_EQ(got, want);
  // The decoded prompt shows the layout.
  EXPECT_EQ(tok.decode(got, true),
            "<repo_name>demo\n<file_sep>utils.py\ndef sub(a, b):\n    return a - b\n<file_sep>README.md\n# demo\n"
            "<file_sep>main.py\n<fim_prefix>import utils\n<fim_suffix>\n<fim_middle>");
}

TEST(Fim, Budgets) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("starcoder"));
  FimRequest req;
  req.prefix = "one two three four five six seven";
  req.suffix = "eight nine ten eleven twelve";
  req.max_prefix_tokens = 2;
  req.max_suffix_tokens = 3;
  const auto pre = tok.encode(req.prefix, false);
  const auto suf = tok.encode(req.suffix, false);
  ASSERT_GT(pre.size(), 2u);
  ASSERT_GT(suf.size(), 3u);
  const auto got = build_fim_prompt(tok, req);
  EXPECT_EQ(got, cat({{1}, {pre.end() - 2, pre.end()}, {3}, {suf.begin(), suf.begin() + 3}, {2}}));
}

TEST(Fim, DeepseekCoder) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("deepseek-coder"));
  const Tokenizer::Fim& f = tok.fim();
  EXPECT_EQ(f.pre, 32016);  // <｜fim▁begin｜>
  EXPECT_EQ(f.suf, 32015);  // <｜fim▁hole｜>
  EXPECT_EQ(f.mid, 32017);  // <｜fim▁end｜>
  EXPECT_FALSE(has_fim_repo(tok));
  EXPECT_TRUE(tok.add_bos());
  FimRequest req;
  req.prefix = "x = ";
  req.suffix = "\n";
  EXPECT_EQ(build_fim_prompt(tok, req),
            cat({{32013, 32016}, tok.encode("x = ", false), {32015}, tok.encode("\n", false), {32017}}));
  // FIM token text in user input stays text unless special parsing is asked for.
  const std::string text = tok.token_text(32016);
  const auto plain = tok.encode(text, false);
  EXPECT_TRUE(std::find(plain.begin(), plain.end(), 32016) == plain.end());
  EXPECT_EQ(tok.encode(text, false, true), (std::vector<int32_t>{32016}));
  // Without file separators, extra chunks are joined with a plain-text snippet marker.
  const std::vector<FimChunk> extra = {{"a.py", "y = 1\n"}};
  req.extra = extra;
  EXPECT_EQ(build_fim_prompt(tok, req),
            cat({{32013}, tok.encode("\n\n--- snippet ---\n\n", false), tok.encode("y = 1\n", false), {32016},
                 tok.encode("x = ", false), {32015}, tok.encode("\n", false), {32017}}));
}

TEST(Fim, VocabWithoutFimTokensIsAnError) {
  Tokenizer tok = test::load_tokenizer(test::vocab_path("gpt-2"));
  EXPECT_FALSE(has_fim(tok));
  FimRequest req;
  req.prefix = "a";
  try {
    build_fim_prompt(tok, req);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("ggml-vocab-gpt-2.gguf"), std::string::npos) << msg;
    EXPECT_NE(msg.find("fill-in-the-middle"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace edgeinfer
