// Prefix-cache policy on a simulated cache (no KV memory): exact eviction orders pinned to block
// ids, in the spirit of vLLM's tests/v1/core/test_prefix_caching.py. Block size 4 throughout.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "kv/prefix_cache.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

using Ids = std::vector<BlockId>;
constexpr int32_t kBlockSize = 4;

std::vector<int32_t> iota_tokens(int32_t n, int32_t first = 0) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<BlockHash> hashes_of(const std::vector<int32_t>& tokens) {
  std::vector<BlockHash> h;
  extend_block_hashes(tokens, kBlockSize, kDefaultRootBlockHash, 0, h);
  return h;
}

// What the scheduler does for a new request: take the cached prefix, allocate the rest, cache
// the full blocks it will fill. Returns the block table, or nothing when the pool is short
// (then the matched blocks are given back).
std::optional<Ids> admit(PrefixCache& cache, const std::vector<int32_t>& tokens) {
  const auto hashes = hashes_of(tokens);
  Ids table;
  const int32_t n_hit = cache.match_prefix(hashes, table);
  const auto n_needed = static_cast<int32_t>((tokens.size() + kBlockSize - 1) / kBlockSize);
  auto fresh = cache.allocate(n_needed - n_hit);
  if (!fresh) {
    cache.release(table);
    return std::nullopt;
  }
  table.insert(table.end(), fresh->begin(), fresh->end());
  const size_t n_full = hashes.size();
  if (n_full > static_cast<size_t>(n_hit)) {
    const BlockHash parent = n_hit == 0 ? kDefaultRootBlockHash : hashes[static_cast<size_t>(n_hit) - 1];
    cache.insert(std::span(hashes).subspan(static_cast<size_t>(n_hit)),
                 std::span<const BlockId>(table).subspan(static_cast<size_t>(n_hit), n_full - static_cast<size_t>(n_hit)),
                 parent);
  }
  return table;
}

TEST(PrefixCache, SharedPrefixAcrossRequests) {
  PrefixCache cache(10, kBlockSize);
  const auto a_tokens = iota_tokens(14);  // 3 full blocks + 2 tokens
  const Ids a = *admit(cache, a_tokens);
  EXPECT_EQ(a, (Ids{0, 1, 2, 3}));
  EXPECT_EQ(cache.n_cached(), 3);
  EXPECT_FALSE(cache.is_cached(3));  // the partial block

  // B shares A's first 12 tokens, then goes its own way.
  const auto b_tokens = concat(iota_tokens(12), iota_tokens(6, 100));
  const Ids b = *admit(cache, b_tokens);
  EXPECT_EQ(b, (Ids{0, 1, 2, 4, 5}));
  for (BlockId s : {0, 1, 2}) EXPECT_EQ(cache.pool().ref_count(s), 2);
  for (BlockId s : {3, 4, 5}) EXPECT_EQ(cache.pool().ref_count(s), 1);
  EXPECT_TRUE(cache.is_cached(4));
  EXPECT_FALSE(cache.is_cached(5));
  EXPECT_EQ(cache.pool().free_list(), (Ids{6, 7, 8, 9}));

  const PrefixCacheStats& st = cache.stats();
  EXPECT_EQ(st.n_queries, 2u);
  EXPECT_EQ(st.n_query_blocks, 7u);
  EXPECT_EQ(st.n_hit_blocks, 3u);
  EXPECT_EQ(st.n_miss_blocks, 4u);
  EXPECT_EQ(st.n_inserted, 4u);
  EXPECT_EQ(st.n_evicted, 0u);
  EXPECT_DOUBLE_EQ(st.hit_rate(), 3.0 / 7.0);

  // A ends: only its private partial block becomes free, at the head (nothing to keep).
  cache.release(a);
  EXPECT_EQ(cache.pool().free_list(), (Ids{3, 6, 7, 8, 9}));
  // B ends: partial block 5 to the head, cached 4, 2, 1, 0 to the tail, chain tail first.
  cache.release(b);
  EXPECT_EQ(cache.pool().free_list(), (Ids{5, 3, 6, 7, 8, 9, 4, 2, 1, 0}));

  // Uncached blocks are used up before any cached block is evicted...
  EXPECT_EQ(cache.allocate(6), (Ids{5, 3, 6, 7, 8, 9}));
  EXPECT_EQ(cache.stats().n_evicted, 0u);
  // ...then the deepest block of the least recently released chain goes first.
  EXPECT_EQ(cache.allocate(1), (Ids{4}));
  EXPECT_EQ(cache.stats().n_evicted, 1u);
  EXPECT_EQ(cache.n_cached(), 3);
  EXPECT_EQ(cache.peek_prefix(hashes_of(b_tokens)).n_blocks, 3);
}

TEST(PrefixCache, EvictsTheLeastRecentlyReleasedChainTailFirst) {
  PrefixCache cache(8, kBlockSize);
  const auto a_tokens = iota_tokens(12);
  const Ids a = *admit(cache, a_tokens);
  EXPECT_EQ(a, (Ids{0, 1, 2}));
  cache.release(a);
  EXPECT_EQ(cache.pool().free_list(), (Ids{3, 4, 5, 6, 7, 2, 1, 0}));

  const auto c_tokens = iota_tokens(12, 1000);
  const Ids c = *admit(cache, c_tokens);
  EXPECT_EQ(c, (Ids{3, 4, 5}));
  cache.release(c);
  EXPECT_EQ(cache.pool().free_list(), (Ids{6, 7, 2, 1, 0, 5, 4, 3}));

  // Four blocks: the two never-used ones, then A's chain from its tail.
  EXPECT_EQ(cache.allocate(4), (Ids{6, 7, 2, 1}));
  EXPECT_EQ(cache.stats().n_evicted, 2u);
  EXPECT_FALSE(cache.is_cached(2));
  EXPECT_FALSE(cache.is_cached(1));
  EXPECT_TRUE(cache.is_cached(0));

  // A's root block survived and still matches; C, released later, is intact.
  const PrefixPeek pa = cache.peek_prefix(hashes_of(a_tokens));
  EXPECT_EQ(pa.n_blocks, 1);
  EXPECT_EQ(pa.n_free, 1);
  const PrefixPeek pc = cache.peek_prefix(hashes_of(c_tokens));
  EXPECT_EQ(pc.n_blocks, 3);
  EXPECT_EQ(pc.n_free, 3);
  EXPECT_EQ(cache.stats().n_queries, 2u);  // peeks are not queries
}

TEST(PrefixCache, RefCountKeepsBlocksAlive) {
  PrefixCache cache(4, kBlockSize);
  const auto tokens = iota_tokens(8);
  const Ids a = *admit(cache, tokens);
  const Ids b = *admit(cache, tokens);
  EXPECT_EQ(a, (Ids{0, 1}));
  EXPECT_EQ(b, (Ids{0, 1}));
  cache.release(a);
  EXPECT_EQ(cache.pool().ref_count(0), 1);
  EXPECT_EQ(cache.pool().free_list(), (Ids{2, 3}));

  // Everything else can be taken, but not B's blocks.
  EXPECT_EQ(cache.allocate(2), (Ids{2, 3}));
  EXPECT_EQ(cache.allocate(1), std::nullopt);
  EXPECT_EQ(cache.stats().n_evicted, 0u);
  EXPECT_TRUE(cache.is_cached(0));
  EXPECT_TRUE(cache.is_cached(1));
  EXPECT_EQ(cache.peek_prefix(hashes_of(tokens)).n_blocks, 2);
}

TEST(PrefixCache, ReHitAfterFreeResurrectsTheBlock) {
  PrefixCache cache(6, kBlockSize);
  const auto tokens = iota_tokens(10);  // 2 full blocks + 2
  const Ids a = *admit(cache, tokens);
  EXPECT_EQ(a, (Ids{0, 1, 2}));
  cache.release(a);
  EXPECT_EQ(cache.pool().free_list(), (Ids{2, 3, 4, 5, 1, 0}));
  EXPECT_EQ(cache.n_free(), 6);

  // Same prefix, new request: the same block ids come back off the free list, KV intact.
  Ids table;
  EXPECT_EQ(cache.match_prefix(hashes_of(concat(iota_tokens(8), {77, 78, 79})), table), 2);
  EXPECT_EQ(table, (Ids{0, 1}));
  EXPECT_EQ(cache.pool().ref_count(0), 1);
  EXPECT_EQ(cache.pool().ref_count(1), 1);
  EXPECT_EQ(cache.pool().free_list(), (Ids{2, 3, 4, 5}));
  EXPECT_EQ(cache.n_free(), 4);
  EXPECT_EQ(cache.stats().n_hit_blocks, 2u);
  EXPECT_EQ(cache.stats().n_evicted, 0u);
}

TEST(PrefixCache, PartialLastBlockIsNeverCachedUntilItFills) {
  PrefixCache cache(4, kBlockSize);
  auto tokens = iota_tokens(6);
  const Ids a = *admit(cache, tokens);
  EXPECT_EQ(a, (Ids{0, 1}));
  EXPECT_TRUE(cache.is_cached(0));
  EXPECT_FALSE(cache.is_cached(1));
  EXPECT_EQ(cache.match_prefix(tokens).size(), 1u);  // (and takes a reference)

  // Decoding fills the block: hash it incrementally and cache it under its parent.
  std::vector<BlockHash> hashes = hashes_of(tokens);
  tokens.push_back(50);
  tokens.push_back(51);
  extend_block_hashes(tokens, kBlockSize, kDefaultRootBlockHash, 0, hashes);
  ASSERT_EQ(hashes.size(), 2u);
  EXPECT_EQ(cache.insert(std::span(hashes).subspan(1), std::span(a).subspan(1, 1), hashes[0]), 1);
  EXPECT_TRUE(cache.is_cached(1));
  EXPECT_EQ(cache.insert(hashes, a, kDefaultRootBlockHash), 0);  // idempotent
  EXPECT_EQ(cache.peek_prefix(hashes).n_blocks, 2);
}

TEST(PrefixCache, PoolExhaustionReturnsFailure) {
  PrefixCache cache(3, kBlockSize);
  EXPECT_EQ(cache.allocate(4), std::nullopt);
  BlockId out[4] = {-1, -1, -1, -1};
  EXPECT_FALSE(cache.allocate(4, out));
  EXPECT_EQ(out[0], -1);
  EXPECT_TRUE(cache.allocate(3, out));
  EXPECT_EQ((Ids{out[0], out[1], out[2]}), (Ids{0, 1, 2}));
  EXPECT_EQ(cache.n_free(), 0);
  EXPECT_FALSE(admit(cache, iota_tokens(4)).has_value());
  EXPECT_EQ(cache.n_free(), 0);
}

TEST(PrefixCache, FailedAdmissionGivesMatchedBlocksBack) {
  PrefixCache cache(3, kBlockSize);
  const Ids a = *admit(cache, iota_tokens(8));  // 0 1, cached
  cache.release(a);
  EXPECT_EQ(cache.pool().free_list(), (Ids{2, 1, 0}));
  // Needs 2 cached + 2 fresh; only 1 other block exists.
  EXPECT_FALSE(admit(cache, iota_tokens(16)).has_value());
  EXPECT_EQ(cache.n_free(), 3);
  EXPECT_EQ(cache.n_cached(), 2);
  // The hit blocks went back to the tail: now the most recently released.
  EXPECT_EQ(cache.pool().free_list(), (Ids{2, 1, 0}));
}

TEST(PrefixCache, DuplicateContentFirstInsertWins) {
  PrefixCache cache(6, kBlockSize);
  const auto tokens = iota_tokens(8);
  const auto hashes = hashes_of(tokens);
  // Two requests prefill the same prompt concurrently: both miss.
  Ids a, b;
  EXPECT_EQ(cache.match_prefix(hashes, a), 0);
  EXPECT_EQ(cache.match_prefix(hashes, b), 0);
  a = *cache.allocate(2);
  b = *cache.allocate(2);
  EXPECT_EQ(cache.insert(hashes, a, kDefaultRootBlockHash), 2);
  EXPECT_EQ(cache.insert(hashes, b, kDefaultRootBlockHash), 0);
  EXPECT_FALSE(cache.is_cached(2));
  cache.release(b);  // duplicates hold nothing reusable: head
  EXPECT_EQ(cache.pool().free_list(), (Ids{2, 3, 4, 5}));
  cache.release(a);
  EXPECT_EQ(cache.pool().free_list(), (Ids{2, 3, 4, 5, 1, 0}));
  EXPECT_EQ(cache.match_prefix(tokens), (Ids{0, 1}));
}

TEST(PrefixCache, MatchStopsAtTheFirstMissingBlock) {
  PrefixCache cache(3, kBlockSize);
  const auto tokens = iota_tokens(12);
  const Ids a = *admit(cache, tokens);
  EXPECT_EQ(a, (Ids{0, 1, 2}));
  cache.release(std::span(a).first(2));  // free list 1 0
  cache.release(std::span(a).subspan(2));  // free list 1 0 2
  EXPECT_EQ(cache.pool().free_list(), (Ids{1, 0, 2}));
  EXPECT_EQ(cache.allocate(1), (Ids{1}));  // the middle of the chain is evicted
  EXPECT_TRUE(cache.is_cached(2));         // an orphan: cached but unreachable

  cache.reset_stats();
  Ids table;
  EXPECT_EQ(cache.match_prefix(hashes_of(tokens), table), 1);
  EXPECT_EQ(table, (Ids{0}));
  EXPECT_EQ(cache.stats().n_hit_blocks, 1u);
  EXPECT_EQ(cache.stats().n_miss_blocks, 2u);
}

TEST(PrefixCache, ExtraKeySeparatesNamespaces) {
  PrefixCache cache(8, kBlockSize);
  const auto tokens = iota_tokens(8);
  std::vector<BlockHash> salted;
  extend_block_hashes(tokens, kBlockSize, kDefaultRootBlockHash, 1234, salted);
  const Ids a = *cache.allocate(2);
  cache.insert(salted, a, kDefaultRootBlockHash);
  EXPECT_TRUE(cache.match_prefix(tokens).empty());
  EXPECT_EQ(cache.match_prefix(tokens, kDefaultRootBlockHash, 1234), (Ids{0, 1}));
}

TEST(PrefixCache, HotBlocksReferencedFirstThenMostRecentlyReleased) {
  PrefixCache cache(8, kBlockSize);
  const auto a_tokens = iota_tokens(8);
  const auto b_tokens = iota_tokens(8, 100);
  const auto c_tokens = iota_tokens(4, 200);
  cache.release(*admit(cache, a_tokens));  // 0 1
  cache.release(*admit(cache, c_tokens));  // 2
  const Ids b = *admit(cache, b_tokens);   // 3 4 (fresh blocks come before cached free ones)
  EXPECT_EQ(b, (Ids{3, 4}));

  const auto hot = cache.hot_blocks(100);
  std::vector<BlockId> order;
  for (const CachedBlock& cb : hot) order.push_back(cb.block);
  EXPECT_EQ(order, (Ids{3, 4, 2, 0, 1}));
  EXPECT_EQ(hot[0].ref_count, 1);
  EXPECT_EQ(hot[2].ref_count, 0);

  const auto ha = hashes_of(a_tokens);
  EXPECT_EQ(hot[3].hash, ha[0]);
  EXPECT_EQ(hot[3].parent, kDefaultRootBlockHash);
  EXPECT_EQ(hot[4].hash, ha[1]);
  EXPECT_EQ(hot[4].parent, ha[0]);
  EXPECT_EQ(cache.hot_blocks(2).size(), 2u);
  EXPECT_TRUE(cache.hot_blocks(0).empty());
}

TEST(PrefixCache, ClearOnlyWhenNothingIsReferenced) {
  PrefixCache cache(4, kBlockSize);
  const auto tokens = iota_tokens(8);
  const Ids a = *admit(cache, tokens);
  EXPECT_FALSE(cache.clear());
  EXPECT_EQ(cache.n_cached(), 2);
  cache.release(a);
  EXPECT_TRUE(cache.clear());
  EXPECT_EQ(cache.n_cached(), 0);
  EXPECT_FALSE(cache.is_cached(0));
  EXPECT_TRUE(cache.match_prefix(tokens).empty());
}

TEST(PrefixCache, MisuseThrows) {
  EXPECT_THROW(PrefixCache(0, 4), Error);
  EXPECT_THROW(PrefixCache(4, 0), Error);
  PrefixCache cache(4, kBlockSize);
  const auto h = hashes_of(iota_tokens(8));
  EXPECT_THROW(cache.insert(h, Ids{0, 1}, kDefaultRootBlockHash), Error);  // nobody holds them
  const Ids a = *cache.allocate(2);
  EXPECT_THROW(cache.insert(h, Ids{0}, kDefaultRootBlockHash), Error);  // length mismatch
  EXPECT_THROW(cache.insert(h, Ids{0, 9}, kDefaultRootBlockHash), Error);
  cache.insert(h, a, kDefaultRootBlockHash);
  EXPECT_THROW(cache.insert(std::span(h).subspan(1), Ids{0}, h[0]), Error);  // different hash
  cache.release(a);
  EXPECT_THROW(cache.release(a), Error);  // already free
  EXPECT_THROW(cache.is_cached(4), Error);
}

}  // namespace
}  // namespace edgeinfer
