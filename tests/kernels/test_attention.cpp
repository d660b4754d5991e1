// Attention of one token over paged KV rows (kernels/attention.h), on every path:
//  - attend_head against a double-precision two-pass softmax reference that sees what the
//    kernels see (the query converted to the cache type's vec_dot_type, the rows dequantized):
//    the one-pass online softmax differs only by float rounding, for several cache block sizes
//    (spans of one or several blocks, contexts ending inside a block and a span);
//  - attend_group (the heads of a GQA group reading each row once) bit-identical to
//    attend_head per head, for whole and partial cache blocks and blocks in scattered order;
//  - attend_tokens (several tokens reading the blocks they share once) bit-identical to
//    attend_group per token: a prompt chunk, sequences sharing a prefix, tokens sharing nothing,
//    in any order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "kernel_test_data.h"
#include "kernels/attention.h"
#include "quant/type_traits.h"
#include "util/error.h"

namespace edgeinfer::kernel_test {
namespace {

// A layer's K and V cache of n_blocks blocks, random rows, the sequence's blocks in a shuffled
// order (so a wrong block-table lookup cannot pass).
struct PagedCache {
  PagedCache(TensorType type, int64_t kv_dim, int32_t block_size, int64_t n_ctx, std::mt19937& rng)
      : type(type), kv_dim(kv_dim), block_size(block_size) {
    row_bytes = edgeinfer::kernel_test::row_bytes(type, kv_dim);
    const int32_t n_blocks = static_cast<int32_t>((n_ctx + block_size - 1) / block_size) + 2;
    block_stride = row_bytes * static_cast<size_t>(block_size);
    k.assign(block_stride * static_cast<size_t>(n_blocks), 0);
    v = k;
    std::vector<int32_t> order(static_cast<size_t>(n_blocks));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    table.assign(order.begin(), order.begin() + (n_blocks - 2));
    for (int32_t b = 0; b < n_blocks; ++b) {
      for (int32_t s = 0; s < block_size; ++s) {
        const size_t off = static_cast<size_t>(b) * block_stride + static_cast<size_t>(s) * row_bytes;
        const auto kr = activation_row(type, random_floats(kv_dim, 1.0f, rng));
        const auto vr = activation_row(type, random_floats(kv_dim, 1.0f, rng));
        std::memcpy(&k[off], kr.data(), row_bytes);
        std::memcpy(&v[off], vr.data(), row_bytes);
      }
    }
  }
  PagedKvView view() const {
    PagedKvView w;
    w.k_base = k.data();
    w.v_base = v.data();
    w.block_stride = block_stride;
    w.row_bytes = row_bytes;
    w.block_size = block_size;
    w.type = type;
    w.block_table = table.data();
    return w;
  }
  std::vector<float> dequantized(const std::vector<uint8_t>& rows, int64_t pos) const {
    const PagedKvView w = view();
    const uint8_t* base = &rows[0] + (w.k_row(pos) - w.k_base);
    std::vector<float> out(static_cast<size_t>(kv_dim));
    type_traits(type).to_float(base, out.data(), kv_dim);
    return out;
  }

  TensorType type;
  int64_t kv_dim;
  int32_t block_size;
  size_t row_bytes = 0, block_stride = 0;
  std::vector<uint8_t> k, v;
  std::vector<int32_t> table;
};

class Attention : public ::testing::TestWithParam<Isa> {};

// A cache type and head layout for the group and token tests.
struct Case {
  TensorType t;
  int64_t n_head, n_head_kv, hd;
  AttentionShape shape() const { return {n_head, n_head_kv, hd, 1.0f / std::sqrt(static_cast<float>(hd))}; }
};

TEST_P(Attention, HeadMatchesDoubleReference) {
  const Kernels& kern = kernels_for(GetParam());
  std::mt19937 rng(31);
  for (TensorType t : {TensorType::F16, TensorType::F32, TensorType::Q8_0}) {
    for (int64_t hd : {64, 32, 128}) {
      const AttentionShape s{8, 2, hd, 1.0f / std::sqrt(static_cast<float>(hd))};
      for (auto [n_ctx, bs] : {std::pair{1, 16}, {16, 16}, {37, 16}, {300, 16}, {300, 1}, {130, 48}, {300, 128}}) {
        PagedCache c(t, s.n_head_kv * hd, bs, n_ctx, rng);
        std::vector<float> scratch(attention_scratch_floats(s, bs));
        const TypeTraits& tr = type_traits(t);
        const TypeTraits& qtr = type_traits(tr.vec_dot_type);
        for (int64_t h : {0L, 3L, 4L, 7L}) {
          const auto q = random_floats(hd, 1.0f, rng);
          std::vector<float> out(static_cast<size_t>(hd));
          attend_head(kern, c.view(), s, h, q.data(), n_ctx, out.data(), scratch.data());
          // The query as the kernels see it.
          const auto qc = activation_row(tr.vec_dot_type, q);
          std::vector<float> qd(static_cast<size_t>(hd));
          qtr.to_float(qc.data(), qd.data(), hd);
          const int64_t off = h / (s.n_head / s.n_head_kv) * hd;
          std::vector<double> sc(static_cast<size_t>(n_ctx));
          double mx = -1e300;
          for (int64_t p = 0; p < n_ctx; ++p) {
            const auto kr = c.dequantized(c.k, p);
            double d = 0;
            for (int64_t i = 0; i < hd; ++i) d += static_cast<double>(qd[i]) * kr[static_cast<size_t>(off + i)];
            sc[static_cast<size_t>(p)] = d * s.scale;
            mx = std::max(mx, sc[static_cast<size_t>(p)]);
          }
          double z = 0;
          for (double& x : sc) z += (x = std::exp(x - mx));
          std::vector<double> want(static_cast<size_t>(hd), 0.0), mag(static_cast<size_t>(hd), 0.0);
          for (int64_t p = 0; p < n_ctx; ++p) {
            const auto vr = c.dequantized(c.v, p);
            const double w = sc[static_cast<size_t>(p)] / z;
            for (int64_t i = 0; i < hd; ++i) {
              want[static_cast<size_t>(i)] += w * vr[static_cast<size_t>(off + i)];
              mag[static_cast<size_t>(i)] += w * std::fabs(vr[static_cast<size_t>(off + i)]);
            }
          }
          // Float scores, exponentials (a few ulp), rescaled sums and the final division: a few
          // 2^-24 per term, relative to the sum of magnitudes.
          const double rel = 2e-5;
          for (int64_t i = 0; i < hd; ++i) {
            ASSERT_NEAR(out[static_cast<size_t>(i)], want[static_cast<size_t>(i)], rel * mag[static_cast<size_t>(i)] + 1e-6)
                << isa_label(GetParam()) << " " << tensor_type_name(t) << " hd=" << hd << " n_ctx=" << n_ctx << " block " << bs
                << " head " << h << " i=" << i;
          }
        }
      }
    }
  }
}

TEST_P(Attention, GroupEqualsHeadByHead) {
  const Kernels& kern = kernels_for(GetParam());
  std::mt19937 rng(37);
  // Q8_0 with head_dim 8: heads narrower than the type's block (the dequantize-whole-row path).
  for (const Case& cs : {Case{TensorType::F16, 32, 4, 64}, Case{TensorType::F16, 8, 2, 128}, Case{TensorType::F16, 6, 2, 48},
                         Case{TensorType::F32, 8, 2, 64}, Case{TensorType::Q8_0, 8, 2, 64}, Case{TensorType::Q8_0, 8, 4, 8}}) {
    const AttentionShape s = cs.shape();
    const int64_t n_rep = s.n_head / s.n_head_kv;
    for (auto [n_ctx, bs] : {std::pair{1, 16}, {15, 16}, {16, 16}, {17, 16}, {64, 16}, {65, 16}, {250, 16}, {250, 48}, {70, 1}}) {
      PagedCache c(cs.t, s.n_head_kv * cs.hd, bs, n_ctx, rng);
      std::vector<float> scratch(attention_scratch_floats(s, bs));
      const auto q = random_floats(s.n_head * cs.hd, 1.0f, rng);
      std::vector<float> want(static_cast<size_t>(s.n_head * cs.hd));
      for (int64_t h = 0; h < s.n_head; ++h) {
        attend_head(kern, c.view(), s, h, q.data() + h * cs.hd, n_ctx, want.data() + h * cs.hd, scratch.data());
      }
      for (int64_t group = n_rep; group >= 1; group /= 2) {
        if (n_rep % group != 0) continue;
        std::vector<float> got(want.size(), -9.0f);
        for (int64_t h0 = 0; h0 < s.n_head; h0 += group) {
          attend_group(kern, c.view(), s, h0, group, q.data() + h0 * cs.hd, n_ctx, got.data() + h0 * cs.hd, scratch.data());
        }
        ASSERT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * want.size()), 0)
            << isa_label(GetParam()) << " " << tensor_type_name(cs.t) << " heads " << s.n_head << "/" << s.n_head_kv
            << " hd=" << cs.hd << " n_ctx=" << n_ctx << " block " << bs << " group " << group;
      }
    }
  }
}

TEST_P(Attention, TokensEqualGroupPerToken) {
  const Kernels& kern = kernels_for(GetParam());
  std::mt19937 rng(43);
  for (const Case& cs : {Case{TensorType::F16, 32, 4, 64}, Case{TensorType::F16, 8, 2, 128}, Case{TensorType::F16, 6, 2, 48},
                         Case{TensorType::F32, 8, 2, 64}, Case{TensorType::Q8_0, 8, 2, 64}}) {
    const AttentionShape s = cs.shape();
    const int64_t n_rep = s.n_head / s.n_head_kv;
    PagedCache c(cs.t, s.n_head_kv * cs.hd, 16, 16 * 12, rng);  // 14 blocks, c.table holds 12
    // A: a prompt chunk over positions 28..37 (across a block boundary). B: A's first two blocks,
    // then its own, two tokens (a draft). C: no block in common. D: A's prefix, ending in a
    // partial shared block.
    const std::vector<int32_t> ta = c.table;
    std::vector<int32_t> tb = {ta[0], ta[1], 12, 13, ta[11]};
    std::vector<int32_t> tc(ta.rbegin(), ta.rend());
    std::swap(tc[0], tc[1]);
    struct Tok {
      const std::vector<int32_t>* table;
      int64_t n_ctx;
    };
    std::vector<Tok> toks;
    for (int64_t p = 28; p < 38; ++p) toks.push_back({&ta, p + 1});
    toks.push_back({&tb, 70});
    toks.push_back({&tb, 71});
    toks.push_back({&tc, 17});
    toks.push_back({&ta, 20});
    const int64_t n_tok = static_cast<int64_t>(toks.size());
    const auto q = random_floats(n_tok * s.n_head * cs.hd, 1.0f, rng);
    std::vector<float> want(q.size());
    std::vector<float> scratch(attention_tokens_scratch_floats(s, n_tok, 16));
    PagedKvView view = c.view();
    for (int64_t t = 0; t < n_tok; ++t) {
      view.block_table = toks[t].table->data();
      for (int64_t h0 = 0; h0 < s.n_head; h0 += n_rep) {
        const size_t off = static_cast<size_t>((t * s.n_head + h0) * cs.hd);
        attend_group(kern, view, s, h0, n_rep, q.data() + off, toks[t].n_ctx, want.data() + off, scratch.data());
      }
    }
    // In the listed order, reversed, and interleaved (sharing neighbours broken up).
    std::vector<std::vector<int64_t>> orders(3);
    for (int64_t t = 0; t < n_tok; ++t) orders[0].push_back(t);
    orders[1].assign(orders[0].rbegin(), orders[0].rend());
    for (int64_t t = 0; t < n_tok; t += 2) orders[2].push_back(t);
    for (int64_t t = 1; t < n_tok; t += 2) orders[2].push_back(t);
    for (int64_t group = n_rep; group >= 1; group /= 2) {
      if (n_rep % group != 0) continue;
      for (size_t o = 0; o < orders.size(); ++o) {
        std::vector<float> got(want.size(), -9.0f);
        for (int64_t h0 = 0; h0 < s.n_head; h0 += group) {
          std::vector<AttnToken> at;
          for (int64_t t : orders[o]) {
            const size_t off = static_cast<size_t>((t * s.n_head + h0) * cs.hd);
            at.push_back({q.data() + off, got.data() + off, toks[t].n_ctx, toks[t].table->data()});
          }
          attend_tokens(kern, c.view(), s, h0, group, at, scratch.data());
        }
        ASSERT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * want.size()), 0)
            << isa_label(GetParam()) << " " << tensor_type_name(cs.t) << " heads " << s.n_head << "/" << s.n_head_kv
            << " hd=" << cs.hd << " group " << group << " order " << o;
      }
    }
  }
}

TEST(AttentionGroup, HeadsOfDifferentKvHeadsAreRefused) {
  const Kernels& kern = kernels_for(Isa::Scalar);
  std::mt19937 rng(41);
  const AttentionShape s{8, 2, 16, 0.25f};
  PagedCache c(TensorType::F16, 32, 16, 4, rng);
  std::vector<float> scratch(attention_scratch_floats(s, 16)), q(8 * 16, 0.5f), out(8 * 16);
  EXPECT_THROW(attend_group(kern, c.view(), s, 2, 4, q.data(), 4, out.data(), scratch.data()), Error);
  EXPECT_THROW(attend_group(kern, c.view(), s, 6, 4, q.data(), 4, out.data(), scratch.data()), Error);
  EXPECT_THROW(attend_group(kern, c.view(), s, 0, 0, q.data(), 4, out.data(), scratch.data()), Error);
  EXPECT_NO_THROW(attend_group(kern, c.view(), s, 4, 4, q.data(), 4, out.data(), scratch.data()));
  const AttnToken toks[2] = {{q.data(), out.data(), 4, c.table.data()}, {q.data(), out.data(), 3, c.table.data()}};
  EXPECT_THROW(attend_tokens(kern, c.view(), s, 2, 4, toks, scratch.data()), Error);
}

INSTANTIATE_TEST_SUITE_P(Isas, Attention, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
