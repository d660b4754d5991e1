#include "kv/prefix_cache.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace edgeinfer {

namespace {

int32_t checked_block_size(int32_t block_size) {
  if (block_size < 1) throw Error("prefix cache: block_size = " + std::to_string(block_size) + " must be >= 1");
  return block_size;
}

}  // namespace

PrefixCache::PrefixCache(int32_t n_blocks, int32_t block_size)
    : block_size_(checked_block_size(block_size)),
      pool_(n_blocks),
      table_(n_blocks),
      hash_(static_cast<size_t>(n_blocks), 0),
      parent_(static_cast<size_t>(n_blocks), 0),
      cached_(static_cast<size_t>(n_blocks), 0) {}

void PrefixCache::check(BlockId block, const char* what) const {
  if (block < 0 || block >= pool_.n_blocks())
    throw Error(std::string("prefix cache: ") + what + " of block " + std::to_string(block) +
                ", outside the pool [0, " + std::to_string(pool_.n_blocks()) + ")");
}

bool PrefixCache::is_cached(BlockId block) const {
  check(block, "is_cached");
  return cached_[static_cast<size_t>(block)] != 0;
}

std::optional<BlockHash> PrefixCache::hash_of(BlockId block) const {
  if (!is_cached(block)) return std::nullopt;
  return hash_[static_cast<size_t>(block)];
}

int32_t PrefixCache::match_prefix(std::span<const BlockHash> hashes, std::vector<BlockId>& blocks) {
  int32_t n = 0;
  for (BlockHash h : hashes) {
    const BlockId b = table_.find(h);
    if (b == BlockHashTable::kAbsent) break;
    pool_.retain(b);
    blocks.push_back(b);
    ++n;
  }
  ++stats_.n_queries;
  stats_.n_query_blocks += hashes.size();
  stats_.n_hit_blocks += static_cast<uint64_t>(n);
  stats_.n_miss_blocks += hashes.size() - static_cast<uint64_t>(n);
  return n;
}

std::vector<BlockId> PrefixCache::match_prefix(std::span<const int32_t> tokens, BlockHash root, uint64_t extra_key) {
  std::vector<BlockHash> hashes;
  extend_block_hashes(tokens, block_size_, root, extra_key, hashes);
  std::vector<BlockId> blocks;
  match_prefix(hashes, blocks);
  return blocks;
}

PrefixPeek PrefixCache::peek_prefix(std::span<const BlockHash> hashes) const {
  PrefixPeek peek;
  for (BlockHash h : hashes) {
    const BlockId b = table_.find(h);
    if (b == BlockHashTable::kAbsent) break;
    ++peek.n_blocks;
    if (pool_.is_free(b)) ++peek.n_free;
  }
  return peek;
}

void PrefixCache::evict(BlockId block) {
  const auto b = static_cast<size_t>(block);
  if (!cached_[b]) return;
  table_.erase(hash_[b]);
  cached_[b] = 0;
  ++stats_.n_evicted;
}

bool PrefixCache::allocate(int32_t n, std::span<BlockId> out) {
  if (!pool_.allocate(n, out)) return false;
  for (int32_t k = 0; k < n; ++k) evict(out[static_cast<size_t>(k)]);
  return true;
}

std::optional<std::vector<BlockId>> PrefixCache::allocate(int32_t n) {
  auto ids = pool_.allocate(n);
  if (ids)
    for (BlockId b : *ids) evict(b);
  return ids;
}

int32_t PrefixCache::insert(std::span<const BlockHash> hashes, std::span<const BlockId> blocks, BlockHash parent) {
  if (hashes.size() != blocks.size())
    throw Error("prefix cache: insert of " + std::to_string(hashes.size()) + " hashes for " +
                std::to_string(blocks.size()) + " blocks");
  // Validate everything first so that a bad call changes nothing.
  for (size_t k = 0; k < hashes.size(); ++k) {
    const BlockId block = blocks[k];
    check(block, "insert");
    if (pool_.is_free(block))
      throw Error("prefix cache: insert of block " + std::to_string(block) + ", which no sequence holds");
    const auto b = static_cast<size_t>(block);
    if (cached_[b] && hash_[b] != hashes[k])
      throw Error("prefix cache: block " + std::to_string(block) + " already caches a different hash");
  }
  int32_t n_new = 0;
  for (size_t k = 0; k < hashes.size(); ++k) {
    const auto b = static_cast<size_t>(blocks[k]);
    if (cached_[b]) continue;
    if (!table_.insert(hashes[k], blocks[k])) continue;  // duplicate content: the first block keeps the entry
    cached_[b] = 1;
    hash_[b] = hashes[k];
    parent_[b] = k == 0 ? parent : hashes[k - 1];
    ++n_new;
  }
  stats_.n_inserted += static_cast<uint64_t>(n_new);
  return n_new;
}

void PrefixCache::release(std::span<const BlockId> table) {
  for (size_t k = table.size(); k-- > 0;) {
    const BlockId block = table[k];
    check(block, "release");
    pool_.release(block, cached_[static_cast<size_t>(block)] ? BlockPool::Requeue::kTail : BlockPool::Requeue::kHead);
  }
}

std::vector<CachedBlock> PrefixCache::hot_blocks(int32_t max_blocks) const {
  std::vector<CachedBlock> out;
  if (max_blocks <= 0) return out;
  const auto limit = static_cast<size_t>(max_blocks);
  for (BlockId b = 0; b < pool_.n_blocks() && out.size() < limit; ++b) {
    const auto u = static_cast<size_t>(b);
    const int32_t ref = pool_.ref_count(b);
    if (cached_[u] && ref > 0) out.push_back({hash_[u], parent_[u], b, ref});
  }
  pool_.for_each_free_newest_first([&](BlockId b) {
    const auto u = static_cast<size_t>(b);
    if (out.size() < limit && cached_[u]) out.push_back({hash_[u], parent_[u], b, 0});
  });
  return out;
}

bool PrefixCache::clear() {
  if (pool_.n_used() > 0) return false;
  table_.clear();
  std::fill(cached_.begin(), cached_.end(), uint8_t{0});
  return true;
}

}  // namespace edgeinfer
