// Randomized check of the O(1) structures (index-linked free list, open-addressing table)
// against a deliberately naive model of the same policy: after every operation the free-list
// order, ref counts and cached set must agree exactly. Also shows the simulated cache's speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kv/prefix_cache.h"

namespace edgeinfer {
namespace {

constexpr int32_t kBlockSize = 4;

// The policy written as plainly as possible: vectors and maps, linear scans.
struct NaiveCache {
  explicit NaiveCache(int32_t n) : ref(static_cast<size_t>(n), 0) {
    for (int32_t i = 0; i < n; ++i) free.push_back(i);
  }
  std::vector<BlockId> free;  // head first
  std::vector<int32_t> ref;
  std::map<BlockHash, BlockId> by_hash;
  std::map<BlockId, BlockHash> hash_of;

  int32_t match(const std::vector<BlockHash>& hashes, std::vector<BlockId>& out) {
    int32_t n = 0;
    for (BlockHash h : hashes) {
      auto it = by_hash.find(h);
      if (it == by_hash.end()) break;
      const BlockId b = it->second;
      if (ref[static_cast<size_t>(b)]++ == 0) free.erase(std::find(free.begin(), free.end(), b));
      out.push_back(b);
      ++n;
    }
    return n;
  }
  bool allocate(int32_t n, std::vector<BlockId>& out) {
    if (static_cast<size_t>(n) > free.size()) return false;
    for (int32_t k = 0; k < n; ++k) {
      const BlockId b = free.front();
      free.erase(free.begin());
      ref[static_cast<size_t>(b)] = 1;
      if (auto it = hash_of.find(b); it != hash_of.end()) {
        by_hash.erase(it->second);
        hash_of.erase(it);
      }
      out.push_back(b);
    }
    return true;
  }
  void insert(const std::vector<BlockHash>& hashes, const std::vector<BlockId>& blocks) {
    for (size_t k = 0; k < hashes.size(); ++k) {
      if (hash_of.count(blocks[k]) || by_hash.count(hashes[k])) continue;
      by_hash[hashes[k]] = blocks[k];
      hash_of[blocks[k]] = hashes[k];
    }
  }
  void release(const std::vector<BlockId>& table) {
    for (size_t k = table.size(); k-- > 0;) {
      const BlockId b = table[k];
      if (--ref[static_cast<size_t>(b)] > 0) continue;
      if (hash_of.count(b)) free.push_back(b);
      else free.insert(free.begin(), b);
    }
  }
};

struct Request {
  std::vector<BlockId> table;
};

TEST(PrefixCacheStress, AgreesWithANaiveModelOfThePolicy) {
  const int32_t n_blocks = 24;
  PrefixCache cache(n_blocks, kBlockSize);
  NaiveCache naive(n_blocks);
  std::mt19937 rng(12345);

  // A few shared prefixes (system prompts) of 0..5 blocks; requests add a random tail.
  std::vector<std::vector<int32_t>> prefixes;
  for (int p = 0; p < 5; ++p) {
    std::vector<int32_t> t(static_cast<size_t>(kBlockSize * (p + 1) - (p == 0 ? kBlockSize : 0)));
    for (auto& x : t) x = static_cast<int32_t>(rng() % 50);
    prefixes.push_back(t);
  }
  std::vector<Request> active;
  int n_admitted = 0, n_rejected = 0;
  for (int step = 0; step < 20000; ++step) {
    if (active.size() < 6 && rng() % 3 != 0) {
      std::vector<int32_t> tokens = prefixes[rng() % prefixes.size()];
      const int tail = static_cast<int>(rng() % 10);
      for (int i = 0; i < tail; ++i) tokens.push_back(static_cast<int32_t>(rng() % 3));  // small alphabet: repeats
      std::vector<BlockHash> hashes;
      extend_block_hashes(tokens, kBlockSize, kDefaultRootBlockHash, 0, hashes);
      if (hashes.empty()) continue;

      Request r;
      std::vector<BlockId> naive_table;
      const int32_t hit = cache.match_prefix(hashes, r.table);
      ASSERT_EQ(naive.match(hashes, naive_table), hit);
      const auto need = static_cast<int32_t>((tokens.size() + kBlockSize - 1) / kBlockSize) - hit;
      auto fresh = cache.allocate(need);
      ASSERT_EQ(fresh.has_value(), naive.allocate(need, naive_table));
      if (!fresh) {
        cache.release(r.table);
        naive.release(naive_table);
        ++n_rejected;
      } else {
        r.table.insert(r.table.end(), fresh->begin(), fresh->end());
        ASSERT_EQ(r.table, naive_table);
        const std::vector<BlockHash> new_hashes(hashes.begin() + hit, hashes.end());
        const std::vector<BlockId> new_blocks(r.table.begin() + hit, r.table.begin() + static_cast<std::ptrdiff_t>(hashes.size()));
        cache.insert(new_hashes, new_blocks, hit == 0 ? kDefaultRootBlockHash : hashes[static_cast<size_t>(hit) - 1]);
        naive.insert(new_hashes, new_blocks);
        active.push_back(std::move(r));
        ++n_admitted;
      }
    } else if (!active.empty()) {
      const size_t i = rng() % active.size();
      cache.release(active[i].table);
      naive.release(active[i].table);
      active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
    }
    ASSERT_EQ(cache.pool().free_list(), naive.free) << "step " << step;
    ASSERT_EQ(cache.n_cached(), static_cast<int32_t>(naive.by_hash.size()));
    for (BlockId b = 0; b < n_blocks; ++b) {
      ASSERT_EQ(cache.pool().ref_count(b), naive.ref[static_cast<size_t>(b)]);
      ASSERT_EQ(cache.is_cached(b), naive.hash_of.count(b) == 1);
    }
  }
  EXPECT_GT(n_admitted, 1000);
  EXPECT_GT(n_rejected, 10);
  EXPECT_GT(cache.stats().n_evicted, 100u);
  EXPECT_GT(cache.stats().hit_rate(), 0.2);
}

TEST(PrefixCacheStress, SimulatedCacheIsFast) {
  // 20k requests over a 4096-block pool, no KV memory: the policy alone.
  const int32_t n_blocks = 4096;
  const int32_t block_size = 16;
  PrefixCache cache(n_blocks, block_size);
  std::mt19937 rng(7);
  std::vector<int32_t> system(1024);
  for (auto& x : system) x = static_cast<int32_t>(rng() % 32000);
  std::vector<BlockHash> hashes;
  std::vector<BlockId> table;
  std::deque<std::vector<BlockId>> held;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 20000; ++r) {
    std::vector<int32_t> tokens(system.begin(), system.begin() + (rng() % 64) * block_size);
    for (int i = 0; i < 40; ++i) tokens.push_back(static_cast<int32_t>(rng() % 32000));
    hashes.clear();
    table.clear();
    extend_block_hashes(tokens, block_size, kDefaultRootBlockHash, 0, hashes);
    const int32_t hit = cache.match_prefix(hashes, table);
    const auto need = static_cast<int32_t>((tokens.size() + block_size - 1) / block_size) - hit;
    while (cache.n_free() < need && !held.empty()) {
      cache.release(held.front());
      held.pop_front();
    }
    auto fresh = cache.allocate(need);
    ASSERT_TRUE(fresh.has_value());
    table.insert(table.end(), fresh->begin(), fresh->end());
    cache.insert(std::span(hashes).subspan(static_cast<size_t>(hit)),
                 std::span<const BlockId>(table).subspan(static_cast<size_t>(hit), hashes.size() - static_cast<size_t>(hit)),
                 hit == 0 ? kDefaultRootBlockHash : hashes[static_cast<size_t>(hit) - 1]);
    held.push_back(table);
    if (held.size() > 32) {
      cache.release(held.front());
      held.pop_front();
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The shared system prompt is found nearly every time.
  EXPECT_GT(cache.stats().hit_rate(), 0.85);
  RecordProperty("seconds", std::to_string(seconds));
  std::printf("20k simulated requests: %.3f s, hit rate %.3f, evictions %llu\n", seconds,
              cache.stats().hit_rate(), static_cast<unsigned long long>(cache.stats().n_evicted));
}

}  // namespace
}  // namespace edgeinfer
