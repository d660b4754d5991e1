#include "tokenizer/spm.h"

#include <algorithm>

#include "tokenizer/utf8.h"

namespace edgeinfer {

namespace {

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t start;  // byte offset into the text
  uint32_t len;    // bytes; 0 once merged into its left neighbour
};

struct Bigram {
  int32_t left;
  int32_t right;
  float score;
  uint32_t size;  // bytes of left + right when queued; a mismatch later means it is stale
};

struct BigramOrder {
  // Max-heap order: highest score first, then the leftmost pair.
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

namespace {

// Reused across the words of one call.
struct SpmScratch {
  std::vector<Symbol> symbols;
  std::vector<Bigram> heap;
};

void spm_encode_piece(const Vocab& vocab, std::string_view text, SpmScratch& sc, std::vector<int32_t>& out) {
  auto& symbols = sc.symbols;
  auto& heap = sc.heap;
  symbols.clear();
  heap.clear();
  for (size_t off = 0; off < text.size();) {
    const size_t len = utf8::unit_len(text, off);
    const auto idx = static_cast<int32_t>(symbols.size());
    symbols.push_back({idx - 1, off + len == text.size() ? -1 : idx + 1, static_cast<uint32_t>(off),
                       static_cast<uint32_t>(len)});
    off += len;
  }

  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const Symbol& r = symbols[static_cast<size_t>(right)];
    const uint32_t size = l.len + r.len;
    const int32_t id = vocab.find(text.substr(l.start, size));
    if (id < 0) return;
    heap.push_back({left, right, vocab.score[static_cast<size_t>(id)], size});
    std::push_heap(heap.begin(), heap.end(), BigramOrder{});
  };

  for (size_t i = 1; i < symbols.size(); ++i) try_add(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), BigramOrder{});
    const Bigram b = heap.back();
    heap.pop_back();
    Symbol& l = symbols[static_cast<size_t>(b.left)];
    Symbol& r = symbols[static_cast<size_t>(b.right)];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.size) continue;  // stale entry
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  for (int32_t i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    const std::string_view piece = text.substr(s.start, s.len);
    const int32_t id = vocab.find(piece);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    // Not a token: fall back to one token per byte.
    for (unsigned char c : piece) {
      const int32_t bt = vocab.byte_token[c];
      if (bt >= 0) out.push_back(bt);
      else if (vocab.unk >= 0) out.push_back(vocab.unk);
    }
  }
}

}  // namespace

void spm_encode(const Vocab& vocab, std::string_view text, WordCache& cache, std::vector<int32_t>& out) {
  if (text.empty()) return;
  SpmScratch sc;
  auto word = [&](std::string_view w) {
    const bool cacheable = cache.cacheable(w);
    if (cacheable && cache.lookup(w, out)) return;
    const size_t start = out.size();
    spm_encode_piece(vocab, w, sc, out);
    if (cacheable) cache.store(w, out.data() + start, out.size() - start);
  };
  // Word starts: a "▁" whose previous character is neither "▁" nor a joiner (see Vocab).
  static constexpr std::string_view kSpace = "\xE2\x96\x81";
  size_t begin = 0;
  size_t pos = text.find(kSpace, 1);
  while (pos != std::string_view::npos) {
    bool boundary = pos > begin;
    if (boundary) {
      size_t start = pos - 1;  // the previous character
      while (start > 0 && pos - start < 4 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
      size_t p = start;
      const uint32_t prev = utf8::decode(text, p);
      boundary = p == pos && prev != 0x2581 &&
                 !std::binary_search(vocab.spm_joiners.begin(), vocab.spm_joiners.end(), prev);
    }
    if (boundary) {
      word(text.substr(begin, pos - begin));
      begin = pos;
    }
    pos = text.find(kSpace, pos + kSpace.size());
  }
  word(text.substr(begin));
}

}  // namespace edgeinfer
