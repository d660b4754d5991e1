// Splits input text into raw-text fragments and whole special tokens.
//
// Semantics (the reference engine's): special tokens are taken longest first; each one claims,
// left to right, every occurrence that does not overlap text already claimed by a longer (or
// earlier-ranked) token. Implemented as one scan that collects candidate occurrences by first
// byte, then claims them in rank order with a coverage mask: O(text + occurrences).
#include <algorithm>
#include <cstring>

#include "tokenizer/tokenizer_impl.h"

namespace edgeinfer {

namespace {

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

struct Occurrence {
  int32_t rank;
  int32_t token;
  size_t pos;
};

}  // namespace

void Tokenizer::Impl::partition(std::string_view text, bool parse_special, std::vector<Fragment>& out) const {
  out.clear();
  if (text.empty()) return;
  const auto& table = special_by_byte[parse_special ? 1 : 0];

  std::vector<Occurrence> occ;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    const auto& cands = table[static_cast<unsigned char>(text[pos])];
    for (int32_t id : cands) {
      const std::string& t = vocab.text[static_cast<size_t>(id)];
      if (t.size() <= text.size() - pos && std::memcmp(text.data() + pos, t.data(), t.size()) == 0)
        occ.push_back({special_rank[static_cast<size_t>(id)], id, pos});
    }
  }
  if (occ.empty()) {
    out.push_back({-1, 0, text.size()});
    return;
  }

  std::sort(occ.begin(), occ.end(), [](const Occurrence& a, const Occurrence& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos;
  });
  std::vector<uint8_t> claimed(text.size(), 0);
  std::vector<Occurrence> taken;
  for (const Occurrence& o : occ) {
    const size_t len = vocab.text[static_cast<size_t>(o.token)].size();
    if (std::find(claimed.begin() + static_cast<std::ptrdiff_t>(o.pos),
                  claimed.begin() + static_cast<std::ptrdiff_t>(o.pos + len), 1) !=
        claimed.begin() + static_cast<std::ptrdiff_t>(o.pos + len))
      continue;
    std::fill(claimed.begin() + static_cast<std::ptrdiff_t>(o.pos),
              claimed.begin() + static_cast<std::ptrdiff_t>(o.pos + len), 1);
    taken.push_back(o);
  }
  std::sort(taken.begin(), taken.end(), [](const Occurrence& a, const Occurrence& b) { return a.pos < b.pos; });

  size_t cursor = 0;    // start of the raw text not yet emitted
  bool rstrip = false;  // the previous token swallows whitespace on its right
  for (const Occurrence& o : taken) {
    size_t begin = cursor, end = o.pos;
    if (rstrip)
      while (begin < end && is_ascii_space(text[begin])) ++begin;
    if (vocab.attr[static_cast<size_t>(o.token)] & kAttrLstrip)
      while (end > begin && is_ascii_space(text[end - 1])) --end;
    if (end > begin) out.push_back({-1, begin, end - begin});
    out.push_back({o.token, o.pos, vocab.text[static_cast<size_t>(o.token)].size()});
    cursor = o.pos + vocab.text[static_cast<size_t>(o.token)].size();
    rstrip = (vocab.attr[static_cast<size_t>(o.token)] & kAttrRstrip) != 0;
  }
  size_t begin = cursor;
  if (rstrip)
    while (begin < text.size() && is_ascii_space(text[begin])) ++begin;
  if (begin < text.size()) out.push_back({-1, begin, text.size() - begin});
}

}  // namespace edgeinfer
