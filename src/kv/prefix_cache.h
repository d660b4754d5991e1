#pragma once
// The prefix cache: full KV blocks shared by every request whose tokens start the same way, on
// top of the block pool (which it owns, so no block can be handed out behind its back).
//
// Keys are chained block hashes (kv/block_hash.h), so a lookup walks a request's hashes from the
// first block and stops at the first one not cached: the match is always a prefix. A cached
// block is in one of two states:
//   * referenced (ref count > 0): part of some sequence's block table; never evicted;
//   * free (ref count 0): on the pool's free list, its KV still intact and still findable. A hit
//     takes it back off the free list ("resurrects" it) with no recomputation.
// Eviction happens only when allocate() needs a block: the pool hands out its free-list head and
// the cache drops that block's entry. With the pool's queueing (kv/block_pool.h) that means:
//   1. free blocks that are not cached (partial last blocks, duplicates, never-filled) go first;
//   2. then cached free blocks, least recently released first;
//   3. and among blocks released together, the chain's tail before its parents, so a surviving
//      block's parent tends to survive too.
// This is vLLM v1's policy (block_pool.py / kv_cache_manager.py) with one change: blocks holding
// nothing reusable are requeued at the head instead of the tail, so they never push a cached
// block out early.
//
// Duplicates: when two sequences fill blocks with the same hash without one hitting the other's
// (they ran concurrently), the first insert wins; the second block stays uncached and goes back
// to the pool's head when released.
//
// The cache knows nothing of tensors: blocks are ids into storage that the model owns
// (kv/kv_storage.h). With no storage at all it is the simulated cache that policy tests and the
// scheduler's tests drive, in microseconds.
// Not thread-safe: like all engine state, it belongs to the engine's one scheduler thread. Nothing here allocates after construction except the
// convenience overloads that return vectors.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kv/block_hash.h"
#include "kv/block_hash_table.h"
#include "kv/block_pool.h"

namespace edgeinfer {

struct PrefixCacheStats {
  uint64_t n_queries = 0;       // match_prefix calls
  uint64_t n_query_blocks = 0;  // full blocks looked up
  uint64_t n_hit_blocks = 0;    // of those, found cached
  uint64_t n_miss_blocks = 0;   // of those, not found (the first miss and everything after it)
  uint64_t n_inserted = 0;      // blocks newly cached by insert
  uint64_t n_evicted = 0;       // cached blocks dropped so that allocate could reuse them
  double hit_rate() const {
    return n_query_blocks == 0 ? 0.0 : static_cast<double>(n_hit_blocks) / static_cast<double>(n_query_blocks);
  }
};

// One cached block, as enumerated for persistence.
struct CachedBlock {
  BlockHash hash;
  BlockHash parent;  // the previous block's hash, or the chain's root
  BlockId block;
  int32_t ref_count;
};

// What a lookup would find, without taking anything.
struct PrefixPeek {
  int32_t n_blocks = 0;  // length of the cached prefix, in blocks
  int32_t n_free = 0;    // how many of those sit on the free list (taking them uses up free blocks)
};

class PrefixCache {
 public:
  PrefixCache(int32_t n_blocks, int32_t block_size);  // both >= 1, else Error

  int32_t block_size() const { return block_size_; }
  int32_t n_blocks() const { return pool_.n_blocks(); }
  // Blocks allocate() can hand out now: every free block, cached or not.
  int32_t n_free() const { return pool_.n_free(); }
  int32_t n_cached() const { return table_.size(); }
  const BlockPool& pool() const { return pool_; }

  // Longest cached prefix of a chain of block hashes. Each matched block gets one more
  // reference (free ones leave the free list) and is appended to `blocks`; returns how many.
  // A caller that needs logits for its last prompt token must leave at least that token
  // uncovered, i.e. pass only the hashes of blocks that end before it.
  int32_t match_prefix(std::span<const BlockHash> hashes, std::vector<BlockId>& blocks);
  // Convenience: hashes the full blocks of tokens from `root` and matches them.
  std::vector<BlockId> match_prefix(std::span<const int32_t> tokens, BlockHash root = kDefaultRootBlockHash,
                                    uint64_t extra_key = 0);
  // The same walk, with no references taken and no counters touched (for admission decisions).
  PrefixPeek peek_prefix(std::span<const BlockHash> hashes) const;

  // n fresh blocks (ref count 1) into out[0, n), evicting free cached blocks in the order above.
  // false, and nothing changes, when fewer than n blocks are free.
  bool allocate(int32_t n, std::span<BlockId> out);
  std::optional<std::vector<BlockId>> allocate(int32_t n);

  // Records that blocks[i] now holds the full block with hash hashes[i]; the hashes form a chain
  // whose first parent is `parent` (the hash of the block before blocks[0], or the root). Every
  // block must be referenced by the caller. Blocks already caching that hash are skipped; a hash
  // already cached in another block leaves blocks[i] uncached (first insert wins). Returns the
  // number of blocks newly cached. Throws Error on a length mismatch, a free or out-of-range
  // block, or a block already caching a different hash (a full block's contents never change).
  int32_t insert(std::span<const BlockHash> hashes, std::span<const BlockId> blocks, BlockHash parent);

  // Another reference to a block (e.g. a forked sequence sharing its parent's blocks).
  void retain(BlockId block) { pool_.retain(block); }
  // Drops one reference per block of a sequence's block table (in table order). Blocks that
  // become free go back to the pool: cached ones to the tail in reverse table order, the others
  // to the head.
  void release(std::span<const BlockId> table);

  bool is_cached(BlockId block) const;
  std::optional<BlockHash> hash_of(BlockId block) const;

  // Cached blocks hottest first: the referenced ones (ascending id), then the free ones from
  // most to least recently released (the reverse of eviction order). At most max_blocks.
  // Parents are not guaranteed to precede children; use CachedBlock::parent to rebuild chains.
  std::vector<CachedBlock> hot_blocks(int32_t max_blocks) const;

  // Forgets every cached hash, as when the weights change. Only when no block is referenced
  // (returns false, changing nothing, otherwise). Counters are kept.
  bool clear();

  const PrefixCacheStats& stats() const { return stats_; }
  void reset_stats() { stats_ = PrefixCacheStats{}; }

 private:
  void check(BlockId block, const char* what) const;
  void evict(BlockId block);

  int32_t block_size_;
  BlockPool pool_;
  BlockHashTable table_;
  std::vector<BlockHash> hash_;    // [n_blocks]; valid where cached_
  std::vector<BlockHash> parent_;  // [n_blocks]; valid where cached_
  std::vector<uint8_t> cached_;    // [n_blocks]
  PrefixCacheStats stats_;
};

}  // namespace edgeinfer
