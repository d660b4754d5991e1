#include "tokenizer/fim.h"

#include "util/error.h"

namespace edgeinfer {

bool has_fim(const Tokenizer& tok) {
  const Tokenizer::Fim& f = tok.fim();
  return f.pre >= 0 && f.suf >= 0 && f.mid >= 0;
}

bool has_fim_repo(const Tokenizer& tok) { return has_fim(tok) && tok.fim().sep >= 0; }

namespace {

void append(std::vector<int32_t>& dst, const std::vector<int32_t>& src) { dst.insert(dst.end(), src.begin(), src.end()); }

std::string missing_fim(const Tokenizer& tok) {
  const Tokenizer::Fim& f = tok.fim();
  std::string m;
  if (f.pre < 0) m += " prefix";
  if (f.suf < 0) m += " suffix";
  if (f.mid < 0) m += " middle";
  return m;
}

}  // namespace

std::vector<int32_t> build_fim_prompt(const Tokenizer& tok, const FimRequest& req) {
  if (!has_fim(tok))
    throw Error(tok.name() + ": vocabulary has no fill-in-the-middle tokens (missing:" + missing_fim(tok) +
                "); this model cannot do infill");
  const Tokenizer::Fim& f = tok.fim();

  std::vector<int32_t> extra;
  if (!req.extra.empty()) {
    if (f.sep >= 0) {
      if (f.rep >= 0) {
        extra.push_back(f.rep);
        append(extra, tok.encode(std::string(req.repo_name) + "\n", false));
      }
      for (const FimChunk& c : req.extra) {
        extra.push_back(f.sep);
        append(extra, tok.encode(c.filename + "\n", false));
        append(extra, tok.encode(c.text, false));
      }
      extra.push_back(f.sep);
      append(extra, tok.encode(std::string(req.filename) + "\n", false));
    } else {
      const std::vector<int32_t> snippet = tok.encode("\n\n--- snippet ---\n\n", false);
      for (const FimChunk& c : req.extra) {
        append(extra, snippet);
        append(extra, tok.encode(c.text, false));
      }
    }
    if (req.max_extra_tokens && extra.size() > req.max_extra_tokens)
      extra.erase(extra.begin(), extra.end() - static_cast<std::ptrdiff_t>(req.max_extra_tokens));
  }

  std::vector<int32_t> prefix = tok.encode(req.prefix, false);
  if (req.max_prefix_tokens && prefix.size() > req.max_prefix_tokens)
    prefix.erase(prefix.begin(), prefix.end() - static_cast<std::ptrdiff_t>(req.max_prefix_tokens));
  std::vector<int32_t> suffix = tok.encode(req.suffix, false);
  if (req.max_suffix_tokens && suffix.size() > req.max_suffix_tokens) suffix.resize(req.max_suffix_tokens);
  const std::vector<int32_t> prompt = tok.encode(req.prompt, false);

  std::vector<int32_t> out;
  out.reserve(extra.size() + prefix.size() + suffix.size() + prompt.size() + 4);
  if (tok.add_bos()) out.push_back(tok.bos());
  append(out, extra);
  auto put_prefix = [&] {
    out.push_back(f.pre);
    append(out, prefix);
    append(out, prompt);
  };
  auto put_suffix = [&] {
    out.push_back(f.suf);
    append(out, suffix);
  };
  if (req.order == FimOrder::PrefixSuffixMiddle) {
    put_prefix();
    put_suffix();
  } else {
    put_suffix();
    put_prefix();
  }
  out.push_back(f.mid);
  return out;
}

}  // namespace edgeinfer
