#include "kv/block_hash_table.h"

#include <bit>
#include <string>

#include "util/error.h"

namespace edgeinfer {

BlockHashTable::BlockHashTable(int32_t max_entries) : max_entries_(max_entries) {
  if (max_entries < 1) throw Error("block hash table: max_entries = " + std::to_string(max_entries) + " must be >= 1");
  const size_t capacity = std::bit_ceil(static_cast<size_t>(max_entries) * 2);
  shift_ = 64 - std::countr_zero(capacity);
  mask_ = capacity - 1;
  slots_.assign(capacity, Slot{0, kAbsent});
}

size_t BlockHashTable::probe(BlockHash hash) const {
  size_t i = home(hash);
  while (slots_[i].block != kAbsent && slots_[i].hash != hash) i = (i + 1) & mask_;
  return i;
}

BlockId BlockHashTable::find(BlockHash hash) const { return slots_[probe(hash)].block; }

bool BlockHashTable::insert(BlockHash hash, BlockId block) {
  const size_t i = probe(hash);
  if (slots_[i].block != kAbsent) return false;
  if (size_ == max_entries_)
    throw Error("block hash table: full (" + std::to_string(max_entries_) + " entries)");
  slots_[i] = Slot{hash, block};
  ++size_;
  return true;
}

bool BlockHashTable::erase(BlockHash hash) {
  size_t hole = probe(hash);
  if (slots_[hole].block == kAbsent) return false;
  // Backward shift: pull later members of the probe run into the hole when their home slot does
  // not lie cyclically in (hole, j] — i.e. when the hole sits on their probe path.
  for (size_t j = (hole + 1) & mask_; slots_[j].block != kAbsent; j = (j + 1) & mask_) {
    const size_t k = home(slots_[j].hash);
    const bool home_in_range = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
    if (home_in_range) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = Slot{0, kAbsent};
  --size_;
  return true;
}

void BlockHashTable::clear() {
  for (Slot& s : slots_) s = Slot{0, kAbsent};
  size_ = 0;
}

}  // namespace edgeinfer
