#pragma once
// Byte-level BPE with merge ranks: within one pre-token, repeatedly apply the adjacent merge of
// lowest rank (leftmost on ties) until none applies. Works on token ids: the pair table maps
// (left id, right id) to (rank, merged id).
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/vocab.h"

namespace edgeinfer {

class BpeMerges {
 public:
  // Parses "left right" merge strings (rank = index). Merges whose parts or result are not
  // tokens are skipped (they cannot apply to symbols that are tokens) and counted.
  void build(const Vocab& vocab, const std::vector<std::string>& merges);
  size_t size() const { return n_; }
  size_t skipped() const { return skipped_; }

  // Rank and merged token of (a, b); false when the pair does not merge.
  bool find(int32_t a, int32_t b, int32_t& rank, int32_t& merged) const {
    if (slots_.empty()) return false;
    const uint64_t key = pack(a, b);
    uint64_t h = mix(key) & mask_;
    while (true) {
      const Slot& s = slots_[h];
      if (s.key == kEmpty) return false;
      if (s.key == key) {
        rank = s.rank;
        merged = s.merged;
        return true;
      }
      h = (h + 1) & mask_;
    }
  }

 private:
  struct Slot {
    uint64_t key;
    int32_t rank;
    int32_t merged;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t pack(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
  static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
  }
  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  size_t n_ = 0;
  size_t skipped_ = 0;
};

// Scratch buffers reused across the words of one encode() call.
struct BpeScratch {
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
  };
  struct Pair {
    int32_t rank;
    int32_t left;
    int32_t right;
    int32_t left_id;
    int32_t right_id;
    int32_t merged;
  };
  std::vector<Symbol> symbols;
  std::vector<Pair> heap;
};

// Merges the initial symbol ids (one per byte-level character; -1 for a character that is not
// a token, which never merges and is dropped) and appends the result to out.
void bpe_merge(const BpeMerges& merges, const int32_t* ids, size_t n, BpeScratch& scratch,
               std::vector<int32_t>& out);

}  // namespace edgeinfer
