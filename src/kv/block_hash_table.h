#pragma once
// Fixed-capacity hash map BlockHash → BlockId for the prefix cache: open addressing with linear
// probing and backward-shift deletion (no tombstones, so lookups never degrade). Sized once for
// the most entries it can hold (one per block of the pool) at load factor <= 1/2; nothing is
// allocated after construction.
#include <cstdint>
#include <vector>

#include "kv/block_hash.h"
#include "kv/block_pool.h"

namespace edgeinfer {

class BlockHashTable {
 public:
  static constexpr BlockId kAbsent = -1;

  explicit BlockHashTable(int32_t max_entries);

  int32_t size() const { return size_; }
  int32_t max_entries() const { return max_entries_; }

  BlockId find(BlockHash hash) const;
  // false (and nothing changes) when the hash is already present. Throws Error when full.
  bool insert(BlockHash hash, BlockId block);
  // false when the hash is absent.
  bool erase(BlockHash hash);
  void clear();

 private:
  struct Slot {
    BlockHash hash;
    BlockId block;  // kAbsent: empty slot
  };
  // Fibonacci hashing: the top bits of hash * 2^64/phi, so keys that differ only in high bits
  // (or crafted low bits) still spread.
  size_t home(BlockHash hash) const { return static_cast<size_t>((hash * 0x9E3779B97F4A7C15ull) >> shift_); }
  size_t probe(BlockHash hash) const;  // the slot holding hash, or the empty slot ending its run

  int32_t max_entries_;
  int32_t size_ = 0;
  int shift_;
  size_t mask_;
  std::vector<Slot> slots_;  // [capacity], capacity a power of two >= 2 * max_entries
};

}  // namespace edgeinfer
