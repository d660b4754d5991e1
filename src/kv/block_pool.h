#pragma once
// Which KV blocks are in use. Blocks are the ids 0..n_blocks-1 of a pool whose memory someone
// else owns (kv/kv_storage.h for a model; nothing at all in policy tests). The pool keeps, for
// each block, a reference count (how many sequences' block tables hold it) and, for the blocks
// nobody holds, one free list that is also the eviction order.
//
// Free list: an index-linked doubly linked list with a head and a tail sentinel, stored in two
// int32 arrays of n_blocks + 2 entries. allocate pops from the head; a block whose count drops to
// zero is appended at the tail (or, when it holds nothing worth keeping, pushed at the head);
// retain() on a free block unlinks it from the middle. All O(1), nothing allocated after the
// constructor. At construction the list is 0, 1, ..., n_blocks-1, so a fresh pool hands out the
// lowest ids first.
//
// Eviction order (vLLM's, the contract the prefix cache and its tests rely on):
//  * allocate always takes the head, i.e. the block that became free longest ago: LRU.
//  * release_table(table) drops one reference from each block of a sequence's block table and
//    queues the ones that became free in REVERSE table order. A sequence's last blocks are the
//    least likely to be shared by a later request, and a cached child is useless without its
//    parent, so among blocks freed together the chain's tail is evicted first and its root last.
//  * Requeue::kHead is for a block whose contents nobody can reuse (not in the prefix cache: a
//    partial last block, or a duplicate); it is handed out again before any cached block is
//    evicted.
//
// Running out is not an error: allocate reports failure and changes nothing, so the scheduler
// can preempt. Misuse (an id outside the pool, releasing a free block) throws Error.
// Not thread-safe: like all engine state, it belongs to the engine's one scheduler thread.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace edgeinfer {

using BlockId = int32_t;

class BlockPool {
 public:
  // Where release() puts a block whose count reached zero.
  enum class Requeue {
    kTail,  // evicted after every block freed before it (worth keeping: it is cached)
    kHead,  // handed out first (nothing to keep)
  };

  explicit BlockPool(int32_t n_blocks);  // n_blocks >= 1, else Error

  int32_t n_blocks() const { return n_blocks_; }
  int32_t n_free() const { return n_free_; }  // blocks with ref count 0 (the free list's length)
  int32_t n_used() const { return n_blocks_ - n_free_; }
  int32_t ref_count(BlockId id) const;
  bool is_free(BlockId id) const { return ref_count(id) == 0; }

  // Takes n blocks from the head of the free list, each with ref count 1, into out[0, n).
  // Returns false and changes nothing when fewer than n are free. n == 0 succeeds.
  bool allocate(int32_t n, std::span<BlockId> out);
  // Convenience for callers off the hot path (allocates the vector).
  std::optional<std::vector<BlockId>> allocate(int32_t n);

  // Adds a reference; a free block is unlinked from the free list (it is in use again).
  void retain(BlockId id);

  // Drops a reference. Returns true when the count reached zero; the block is then queued at
  // the tail or the head of the free list as `where` says.
  bool release(BlockId id, Requeue where = Requeue::kTail);

  // Drops one reference from each block of a block table, queueing freed ones at the tail in
  // reverse table order (see the eviction order above).
  void release_table(std::span<const BlockId> table);

  // The free list from head (next to be handed out) to tail. For tests and debugging.
  std::vector<BlockId> free_list() const;

  // Calls fn(id) for each free block from tail (most recently freed) to head.
  template <class F>
  void for_each_free_newest_first(F&& fn) const {
    for (int32_t i = prev_[tail()]; i != head(); i = prev_[i]) fn(static_cast<BlockId>(i));
  }

 private:
  int32_t head() const { return n_blocks_; }  // sentinel indices
  int32_t tail() const { return n_blocks_ + 1; }
  void check(BlockId id, const char* what) const;
  void unlink(int32_t i);
  void link_before(int32_t i, int32_t next);

  int32_t n_blocks_;
  int32_t n_free_;
  std::vector<int32_t> ref_;   // [n_blocks]
  std::vector<int32_t> prev_;  // [n_blocks + 2]; free-list links, sentinels at n_blocks, n_blocks+1
  std::vector<int32_t> next_;  // [n_blocks + 2]
};

}  // namespace edgeinfer
