#include "kv/block_pool.h"

#include <string>

#include "util/error.h"

namespace edgeinfer {

BlockPool::BlockPool(int32_t n_blocks) : n_blocks_(n_blocks), n_free_(n_blocks) {
  if (n_blocks < 1) throw Error("block pool: n_blocks = " + std::to_string(n_blocks) + " must be >= 1");
  const auto n = static_cast<size_t>(n_blocks);
  ref_.assign(n, 0);
  prev_.resize(n + 2);
  next_.resize(n + 2);
  // head → 0 → 1 → ... → n-1 → tail
  for (int32_t i = 0; i < n_blocks; ++i) {
    prev_[static_cast<size_t>(i)] = i == 0 ? head() : i - 1;
    next_[static_cast<size_t>(i)] = i == n_blocks - 1 ? tail() : i + 1;
  }
  next_[static_cast<size_t>(head())] = 0;
  prev_[static_cast<size_t>(tail())] = n_blocks - 1;
  prev_[static_cast<size_t>(head())] = -1;
  next_[static_cast<size_t>(tail())] = -1;
}

void BlockPool::check(BlockId id, const char* what) const {
  if (id < 0 || id >= n_blocks_)
    throw Error(std::string("block pool: ") + what + " of block " + std::to_string(id) +
                ", outside the pool [0, " + std::to_string(n_blocks_) + ")");
}

int32_t BlockPool::ref_count(BlockId id) const {
  check(id, "ref_count");
  return ref_[static_cast<size_t>(id)];
}

void BlockPool::unlink(int32_t i) {
  const auto u = static_cast<size_t>(i);
  next_[static_cast<size_t>(prev_[u])] = next_[u];
  prev_[static_cast<size_t>(next_[u])] = prev_[u];
  prev_[u] = next_[u] = -1;
  --n_free_;
}

void BlockPool::link_before(int32_t i, int32_t next) {
  const auto u = static_cast<size_t>(i);
  const int32_t prev = prev_[static_cast<size_t>(next)];
  prev_[u] = prev;
  next_[u] = next;
  next_[static_cast<size_t>(prev)] = i;
  prev_[static_cast<size_t>(next)] = i;
  ++n_free_;
}

bool BlockPool::allocate(int32_t n, std::span<BlockId> out) {
  if (n < 0 || static_cast<size_t>(n) > out.size())
    throw Error("block pool: allocate(" + std::to_string(n) + ") with room for " +
                std::to_string(out.size()) + " ids");
  if (n > n_free_) return false;
  for (int32_t k = 0; k < n; ++k) {
    const int32_t i = next_[static_cast<size_t>(head())];
    unlink(i);
    ref_[static_cast<size_t>(i)] = 1;
    out[static_cast<size_t>(k)] = i;
  }
  return true;
}

std::optional<std::vector<BlockId>> BlockPool::allocate(int32_t n) {
  if (n < 0) throw Error("block pool: allocate(" + std::to_string(n) + ")");
  if (n > n_free_) return std::nullopt;
  std::vector<BlockId> ids(static_cast<size_t>(n));
  allocate(n, ids);
  return ids;
}

void BlockPool::retain(BlockId id) {
  check(id, "retain");
  int32_t& ref = ref_[static_cast<size_t>(id)];
  if (ref == 0) unlink(id);
  ++ref;
}

bool BlockPool::release(BlockId id, Requeue where) {
  check(id, "release");
  int32_t& ref = ref_[static_cast<size_t>(id)];
  if (ref == 0) throw Error("block pool: release of block " + std::to_string(id) + ", which is already free");
  if (--ref > 0) return false;
  link_before(id, where == Requeue::kTail ? tail() : next_[static_cast<size_t>(head())]);
  return true;
}

void BlockPool::release_table(std::span<const BlockId> table) {
  for (size_t k = table.size(); k-- > 0;) release(table[k], Requeue::kTail);
}

std::vector<BlockId> BlockPool::free_list() const {
  std::vector<BlockId> ids;
  ids.reserve(static_cast<size_t>(n_free_));
  for (int32_t i = next_[static_cast<size_t>(head())]; i != tail(); i = next_[static_cast<size_t>(i)]) ids.push_back(i);
  return ids;
}

}  // namespace edgeinfer
