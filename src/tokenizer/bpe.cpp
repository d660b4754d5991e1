#include "tokenizer/bpe.h"

#include <algorithm>

namespace edgeinfer {

void BpeMerges::build(const Vocab& vocab, const std::vector<std::string>& merges) {
  size_t cap = 16;
  while (cap < merges.size() * 2) cap <<= 1;
  slots_.assign(cap, Slot{kEmpty, 0, 0});
  mask_ = cap - 1;
  n_ = 0;
  skipped_ = 0;
  std::string joined;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& m = merges[rank];
    // Split at the first space after position 0, so a part may itself start with a space.
    const size_t pos = m.find(' ', 1);
    if (pos == std::string::npos) {
      ++skipped_;
      continue;
    }
    const std::string_view left(m.data(), pos);
    const std::string_view right(m.data() + pos + 1, m.size() - pos - 1);
    const int32_t a = vocab.find(left);
    const int32_t b = vocab.find(right);
    joined.assign(left);
    joined.append(right);
    const int32_t merged = vocab.find(joined);
    if (a < 0 || b < 0 || merged < 0) {
      ++skipped_;
      continue;
    }
    const uint64_t key = pack(a, b);
    uint64_t h = mix(key) & mask_;
    while (slots_[h].key != kEmpty && slots_[h].key != key) h = (h + 1) & mask_;
    if (slots_[h].key == key) continue;  // the first (lowest) rank wins
    slots_[h] = Slot{key, static_cast<int32_t>(rank), merged};
    ++n_;
  }
}

namespace {

// Min-heap order: lowest rank first, then leftmost.
struct PairAfter {
  bool operator()(const BpeScratch::Pair& a, const BpeScratch::Pair& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

void bpe_merge(const BpeMerges& merges, const int32_t* ids, size_t n, BpeScratch& scratch,
               std::vector<int32_t>& out) {
  if (n == 0) return;
  if (n == 1) {
    if (ids[0] >= 0) out.push_back(ids[0]);
    return;
  }
  auto& sym = scratch.symbols;
  auto& heap = scratch.heap;
  sym.resize(n);
  heap.clear();
  for (size_t i = 0; i < n; ++i)
    sym[i] = {ids[i], static_cast<int32_t>(i) - 1, i + 1 == n ? -1 : static_cast<int32_t>(i + 1)};

  auto add_pair = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const int32_t a = sym[static_cast<size_t>(l)].id;
    const int32_t b = sym[static_cast<size_t>(r)].id;
    if (a < 0 || b < 0) return;
    int32_t rank = 0, merged = 0;
    if (!merges.find(a, b, rank, merged)) return;
    heap.push_back({rank, l, r, a, b, merged});
    std::push_heap(heap.begin(), heap.end(), PairAfter{});
  };

  for (size_t i = 1; i < n; ++i) add_pair(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), PairAfter{});
    const BpeScratch::Pair p = heap.back();
    heap.pop_back();
    auto& l = sym[static_cast<size_t>(p.left)];
    auto& r = sym[static_cast<size_t>(p.right)];
    // Stale when either side has merged since the pair was queued (ids only ever change by
    // merging, and a merged symbol's id differs from both parts).
    if (l.id != p.left_id || r.id != p.right_id || l.next != p.right) continue;
    l.id = p.merged;
    r.id = -2;  // removed
    l.next = r.next;
    if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = p.left;
    add_pair(l.prev, p.left);
    add_pair(p.left, l.next);
  }

  for (int32_t i = 0; i != -1; i = sym[static_cast<size_t>(i)].next) {
    if (sym[static_cast<size_t>(i)].id >= 0) out.push_back(sym[static_cast<size_t>(i)].id);
  }
}

}  // namespace edgeinfer
