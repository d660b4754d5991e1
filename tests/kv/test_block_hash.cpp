// Chained block hashes and the fixed-capacity hash table behind the prefix cache.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <unordered_map>
#include <vector>

#include "kv/block_hash.h"
#include "kv/block_hash_table.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

std::vector<int32_t> iota_tokens(int32_t n, int32_t first = 0) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

TEST(BlockHash, ChainingMakesTheParentPartOfTheKey) {
  const auto block = iota_tokens(4, 10);
  const BlockHash under_a = hash_block(1, block);
  const BlockHash under_b = hash_block(2, block);
  EXPECT_NE(under_a, under_b);                       // same tokens, different parent
  EXPECT_EQ(under_a, hash_block(1, block));          // deterministic
  EXPECT_NE(under_a, hash_block(1, block, 99));      // extra key
  EXPECT_NE(under_a, hash_block(1, iota_tokens(4, 11)));

  // Two sequences whose second blocks are equal but whose first blocks differ.
  std::vector<int32_t> s1 = {1, 2, 3, 4, 7, 7, 7, 7};
  std::vector<int32_t> s2 = {1, 2, 3, 5, 7, 7, 7, 7};
  std::vector<BlockHash> h1, h2;
  extend_block_hashes(s1, 4, kDefaultRootBlockHash, 0, h1);
  extend_block_hashes(s2, 4, kDefaultRootBlockHash, 0, h2);
  ASSERT_EQ(h1.size(), 2u);
  ASSERT_EQ(h2.size(), 2u);
  EXPECT_NE(h1[0], h2[0]);
  EXPECT_NE(h1[1], h2[1]);
  EXPECT_EQ(h1[1], hash_block(h1[0], std::span<const int32_t>(s1).subspan(4, 4)));

  // A different root (another model) changes every hash.
  std::vector<BlockHash> h3;
  extend_block_hashes(s1, 4, kDefaultRootBlockHash + 1, 0, h3);
  EXPECT_NE(h1[0], h3[0]);
  EXPECT_NE(h1[1], h3[1]);
}

TEST(BlockHash, ExtendHashesOnlyFullBlocksIncrementally) {
  const auto tokens = iota_tokens(23);
  std::vector<BlockHash> all;
  extend_block_hashes(tokens, 4, 5, 6, all);
  EXPECT_EQ(all.size(), 5u);  // 23 tokens = 5 full blocks + 3 (never hashed)

  std::vector<BlockHash> grown;
  for (size_t n = 0; n <= tokens.size(); ++n) extend_block_hashes(std::span(tokens).first(n), 4, 5, 6, grown);
  EXPECT_EQ(grown, all);
  EXPECT_THROW(extend_block_hashes(tokens, 0, 5, 6, grown), Error);
}

TEST(BlockHash, ValuesArePinned) {
  // Persisted caches are keyed by these values; changing the hash scheme must be deliberate.
  const auto block = iota_tokens(16);
  EXPECT_EQ(hash_block(0, block), 0xec3d2d1b6e0f3574ull);
  EXPECT_EQ(hash_block(kDefaultRootBlockHash, block, 42), 0x1bce4d07dca967fcull);
}

TEST(BlockHashTable, InsertFindErase) {
  BlockHashTable t(4);
  EXPECT_EQ(t.find(7), BlockHashTable::kAbsent);
  EXPECT_TRUE(t.insert(7, 0));
  EXPECT_FALSE(t.insert(7, 1));  // first insert wins
  EXPECT_EQ(t.find(7), 0);
  EXPECT_TRUE(t.insert(8, 1));
  EXPECT_TRUE(t.insert(9, 2));
  EXPECT_TRUE(t.insert(10, 3));
  EXPECT_THROW(t.insert(11, 4), Error);  // full
  EXPECT_TRUE(t.erase(8));
  EXPECT_FALSE(t.erase(8));
  EXPECT_EQ(t.find(8), BlockHashTable::kAbsent);
  EXPECT_EQ(t.find(9), 2);
  EXPECT_EQ(t.size(), 3);
  t.clear();
  EXPECT_EQ(t.size(), 0);
  EXPECT_EQ(t.find(7), BlockHashTable::kAbsent);
}

TEST(BlockHashTable, MatchesAReferenceMapUnderRandomChurn) {
  // A tiny table (capacity 16) over a small key universe: long probe runs and many wrap-arounds,
  // which is where backward-shift deletion can go wrong.
  const int32_t max_entries = 8;
  BlockHashTable t(max_entries);
  std::unordered_map<BlockHash, BlockId> ref;
  std::mt19937_64 rng(3);
  std::vector<BlockHash> keys;
  for (int i = 0; i < 24; ++i) keys.push_back(rng());
  for (int step = 0; step < 50000; ++step) {
    const BlockHash k = keys[rng() % keys.size()];
    if (rng() % 2 == 0) {
      const auto id = static_cast<BlockId>(step % 1000);
      if (ref.size() < static_cast<size_t>(max_entries) || ref.count(k)) {
        const bool fresh = ref.emplace(k, id).second;
        ASSERT_EQ(t.insert(k, id), fresh);
      }
    } else {
      ASSERT_EQ(t.erase(k), ref.erase(k) == 1);
    }
    ASSERT_EQ(t.size(), static_cast<int32_t>(ref.size()));
    for (BlockHash q : keys) {
      auto it = ref.find(q);
      ASSERT_EQ(t.find(q), it == ref.end() ? BlockHashTable::kAbsent : it->second) << "step " << step;
    }
  }
}

}  // namespace
}  // namespace edgeinfer
