// BlockPool: free-list order pinned to block ids, ref counts, failure on exhaustion, misuse errors.
#include <gtest/gtest.h>

#include <vector>

#include "kv/block_pool.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

using Ids = std::vector<BlockId>;

TEST(BlockPool, FreshPoolHandsOutLowestIdsFirst) {
  BlockPool pool(5);
  EXPECT_EQ(pool.n_free(), 5);
  EXPECT_EQ(pool.free_list(), (Ids{0, 1, 2, 3, 4}));
  EXPECT_EQ(pool.allocate(2), (Ids{0, 1}));
  EXPECT_EQ(pool.allocate(1), (Ids{2}));
  EXPECT_EQ(pool.n_free(), 2);
  EXPECT_EQ(pool.n_used(), 3);
  EXPECT_EQ(pool.ref_count(0), 1);
  EXPECT_EQ(pool.ref_count(4), 0);
  EXPECT_EQ(pool.allocate(0), Ids{});
}

TEST(BlockPool, ExhaustionFailsWithoutChangingAnything) {
  BlockPool pool(3);
  EXPECT_EQ(pool.allocate(4), std::nullopt);
  EXPECT_EQ(pool.n_free(), 3);
  BlockId out[4] = {-7, -7, -7, -7};
  EXPECT_FALSE(pool.allocate(4, out));
  EXPECT_EQ(out[0], -7);
  EXPECT_TRUE(pool.allocate(3, out));
  EXPECT_EQ((Ids{out[0], out[1], out[2]}), (Ids{0, 1, 2}));
  EXPECT_EQ(pool.allocate(1), std::nullopt);
  EXPECT_FALSE(pool.allocate(1, out));
  EXPECT_EQ(pool.n_free(), 0);
  EXPECT_TRUE(pool.free_list().empty());
}

TEST(BlockPool, ReleaseTableQueuesTailFirst) {
  BlockPool pool(6);
  const Ids a = *pool.allocate(3);  // 0 1 2
  const Ids b = *pool.allocate(2);  // 3 4
  pool.release_table(a);
  EXPECT_EQ(pool.free_list(), (Ids{5, 2, 1, 0}));
  pool.release_table(b);
  EXPECT_EQ(pool.free_list(), (Ids{5, 2, 1, 0, 4, 3}));
  // LRU: the block freed longest ago is handed out first.
  EXPECT_EQ(pool.allocate(3), (Ids{5, 2, 1}));
}

TEST(BlockPool, RequeueAtHeadIsReusedFirst) {
  BlockPool pool(4);
  const Ids a = *pool.allocate(4);
  EXPECT_TRUE(pool.release(a[1], BlockPool::Requeue::kTail));
  EXPECT_TRUE(pool.release(a[3], BlockPool::Requeue::kHead));
  EXPECT_TRUE(pool.release(a[0], BlockPool::Requeue::kTail));
  EXPECT_TRUE(pool.release(a[2], BlockPool::Requeue::kHead));
  EXPECT_EQ(pool.free_list(), (Ids{2, 3, 1, 0}));
}

TEST(BlockPool, RefCountsKeepBlocksOffTheFreeList) {
  BlockPool pool(3);
  const Ids a = *pool.allocate(2);  // 0 1
  pool.retain(0);
  EXPECT_EQ(pool.ref_count(0), 2);
  pool.release_table(a);
  EXPECT_EQ(pool.ref_count(0), 1);
  EXPECT_EQ(pool.free_list(), (Ids{2, 1}));
  EXPECT_TRUE(pool.release(0));
  EXPECT_EQ(pool.free_list(), (Ids{2, 1, 0}));
}

TEST(BlockPool, ReleaseReportsWhenTheBlockBecomesFree) {
  BlockPool pool(2);
  pool.allocate(1);
  pool.retain(0);
  EXPECT_FALSE(pool.release(0));
  EXPECT_TRUE(pool.release(0));
  EXPECT_EQ(pool.free_list(), (Ids{1, 0}));
}

TEST(BlockPool, RetainUnlinksFromTheMiddleOfTheFreeList) {
  BlockPool pool(5);
  pool.retain(2);
  EXPECT_EQ(pool.free_list(), (Ids{0, 1, 3, 4}));
  pool.retain(0);
  pool.retain(4);
  EXPECT_EQ(pool.free_list(), (Ids{1, 3}));
  EXPECT_EQ(pool.n_free(), 2);
  pool.release(2);
  EXPECT_EQ(pool.free_list(), (Ids{1, 3, 2}));
  std::vector<BlockId> newest_first;
  pool.for_each_free_newest_first([&](BlockId b) { newest_first.push_back(b); });
  EXPECT_EQ(newest_first, (Ids{2, 3, 1}));
}

TEST(BlockPool, MisuseThrows) {
  EXPECT_THROW(BlockPool(0), Error);
  BlockPool pool(2);
  EXPECT_THROW(pool.release(0), Error);  // already free
  EXPECT_THROW(pool.retain(2), Error);
  EXPECT_THROW(pool.release(-1), Error);
  EXPECT_THROW(pool.ref_count(5), Error);
  EXPECT_THROW(pool.allocate(-1), Error);
  BlockId out[1];
  EXPECT_THROW(pool.allocate(2, out), Error);  // no room for the ids
}

}  // namespace
}  // namespace edgeinfer
