// Kernel throughput per ISA path and weight type, one thread:
//   gemv/<isa>/<type>/<rows>x<n>      decode: one activation row against every weight row, as
//                                     matmul runs decode rows (vec_dot per row); the weights are
//                                     cycled through several copies totalling > 256 MiB so they
//                                     come from DRAM, as in decode
//   gemv_l2/<isa>/<type>/<rows>x<n>   same on one copy (cache-resident: kernel speed alone)
//   gemv_tile1[_l2]/...               the same through gemm_tile with one column, where the path
//                                     has a tile (why decode rows do not take the tile)
//   gemv_exact[_l2]/...               the same through Kernels::gemv (the tile's arithmetic),
//                                     where the path has one: what a lone decode row runs
//   gemv8/..., gemv8_tile/...         batched decode: 8 activation rows, weights from DRAM,
//                                     through vec_dot per row / through the tile
//   gemv_x16[_l2]/..., gemv8_x16[_l2]/... the same over the x16 layout (quant/x16_layout.h),
//                                     where the path reads it: Kernels::gemv_x16 for one row,
//                                     gemm_tile_x16 for 8
//   gemv_{intel,amd}/..., gemv_x16_{intel,amd}/... gemv / gemv_x16 from DRAM with each CPU
//                                     maker's variant, where the makers' tables differ
//                                     (kernels.h build_kernels)
//   gemm_x16/<isa>/<type>/<rows>x<n>/512 prefill over the x16 layout (gemm_tile_x16, one call
//                                     for all rows and 512 columns), weights from DRAM as in a
//                                     prompt's pass over a matrix that is not cached
//   gemm_x16_cols/<isa>/<type>/<rows>x<n>/<cols> the x16 tile on 2..16 columns (small batches; with
//                                     gemv8_x16 for 8), weights from DRAM
//   gemm/<isa>/<type>/<rows>x<n>/512  prefill: 512 activation rows; gemm_tile when the path has
//                                     one (called once for all rows and columns), else vec_dot
//   gemm_tiles{16,128,512}x64/...     gemm_tile called on 16-, 128- and 512-row x 64-column
//                                     tiles; the last two are the calls matmul makes in prefill
//                                     (a part of a thread's rows, kTokenChunk columns)
//   from_float/<isa>/<type>/<n>       activation conversion
//   qkv_separate/<isa>/<type>/<tok>   TinyLlama's Q, K and V projections (2048, 256 and 256 rows
//                                     of 2048) of <tok> activation rows on a 2-thread pool, as
//                                     three matmul calls (three conversions, three pool runs)
//   qkv_many/<isa>/<type>/<tok>       the same as one matmul_many call (one of each); weights
//                                     cache-resident, so the difference is the calls' overhead
//   attn_head/<isa>/<kv type>/<ctx>   decode attention of one token, TinyLlama's shape (32 query
//                                     heads, 4 KV heads, head_dim 64) over ctx cached positions,
//                                     head by head (attend_head)
//   attn_group/<isa>/<kv type>/<ctx>  the same, the 8 heads of a GQA group at once (attend_group)
//   attn_shared8/<isa>/<kv type>/<ctx> the same for 8 decoding sequences whose whole context is
//                                     one shared prefix (attend_tokens: each block read once
//                                     for all 8 tokens' 64 heads)
//   attn_prefill8/<isa>/<kv type>/<ctx> 8 neighbouring tokens of one prompt, the last at position
//                                     ctx - 1, as the engine's prefill attends them (attend_tokens;
//                                     each token up to its own position)
//   attn_agent8/<isa>/<kv type>/<shared>+<tail> one decode step of 8 sequences over 22 layers'
//                                     caches (from DRAM, as in the engine): a shared prefix and
//                                     each sequence's own tail (tail + 8 * i positions, blocks
//                                     interleaved); counters positions/s and ns per head-position
//   attn_rowwise/<isa>/<kv type>/<ctx> head by head with the path's dot_rows / mad_rows removed
//                                     from its table (vec_dot and vec_mad per cached row)
// Counters: bytes_per_second = weight bytes read per second; ops = multiply-adds x 2 per
// second (GOPS when shown with the G suffix).
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "quant/type_traits.h"
#include "quant/x16_layout.h"
#include "util/thread_pool.h"

namespace edgeinfer {
namespace {

size_t row_bytes(TensorType t, int64_t n) { return static_cast<size_t>(*tensor_row_bytes(t, n)); }

std::vector<float> random_floats(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = g(rng);
  return v;
}

// Weight rows: one row of random floats through the reference quantizer, repeated (the kernels'
// speed does not depend on the values; the K-quant reference quantizers are too slow for whole
// matrices).
std::vector<uint8_t> random_weights(TensorType t, int64_t rows, int64_t n, std::mt19937& rng) {
  const TypeTraits& tr = type_traits(t);
  const size_t rb = row_bytes(t, n);
  std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
  if (!tr.is_quantized) {
    const auto x = random_floats(static_cast<size_t>(n), rng);
    for (int64_t r = 0; r < rows; ++r) tr.from_float_ref(x.data(), w.data() + rb * static_cast<size_t>(r), n);
    return w;
  }
  std::vector<uint8_t> proto(rb);
  const auto x = random_floats(static_cast<size_t>(n), rng);
  tr.from_float_ref(x.data(), proto.data(), n);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(w.data() + rb * static_cast<size_t>(r), proto.data(), rb);
  return w;
}

std::vector<uint8_t> activations(TensorType t, int64_t cols, int64_t n, std::mt19937& rng) {
  const size_t rb = row_bytes(t, n);
  std::vector<uint8_t> a(rb * static_cast<size_t>(cols));
  const auto x = random_floats(static_cast<size_t>(n * cols), rng);
  for (int64_t c = 0; c < cols; ++c) type_traits(t).from_float_ref(x.data() + c * n, a.data() + rb * static_cast<size_t>(c), n);
  return a;
}

// Which kernel a gemv benchmark runs: vec_dot per row (as matmul's decode rows where the path
// has no tile-exact GEMV), gemm_tile, or Kernels::gemv.
enum class Via { VecDot, Tile, Gemv, X16Tile, X16Gemv };

// maker: time the table built for that CPU maker (kernels.h build_kernels) instead of this one's.
void gemv_with(benchmark::State& st, Isa isa, TensorType t, int64_t rows, int64_t n, bool dram, Via via, int64_t cols,
               std::optional<CpuVendor> maker) {
  const Kernels k = maker ? build_kernels(isa, *maker) : kernels_for(isa);
  const TypeTraits& tr = type_traits(t);
  std::mt19937 rng(1);
  const size_t rb = row_bytes(t, n), mb = rb * static_cast<size_t>(rows);
  const auto proto = random_weights(t, rows, n, rng);
  const size_t copies = dram ? (size_t{256} << 20) / mb + 1 : 1;
  const bool x16 = via == Via::X16Tile || via == Via::X16Gemv;
  const size_t pb = x16 ? x16_matrix_bytes(t, n, rows) : mb;  // bytes of one copy as stored
  std::vector<uint8_t> w(pb * copies);
  for (size_t i = 0; i < copies; ++i) {
    if (x16) {
      x16_pack(t, n, rows, proto.data(), rb, w.data() + i * pb);
    } else {
      std::memcpy(w.data() + i * mb, proto.data(), mb);
    }
  }
  const size_t gb = x16 ? x16_group_bytes(t, n) : 0;
  const auto a = activations(tr.vec_dot_type, cols, n, rng);
  const size_t xb = row_bytes(tr.vec_dot_type, n);
  std::vector<float> y(static_cast<size_t>(rows * cols));
  const VecDotFn dot = k.vec_dot[static_cast<size_t>(t)];
  const GemmTileFn tile = k.gemm_tile[static_cast<size_t>(t)];
  const GemvFn exact = k.gemv[static_cast<size_t>(t)];
  size_t copy = 0;
  for (auto _ : st) {
    const uint8_t* wm = w.data() + copy * pb;
    if (via == Via::X16Tile) {
      k.gemm_tile_x16[static_cast<size_t>(t)](n, rows, cols, wm, gb, a.data(), xb, y.data(), static_cast<size_t>(rows));
    } else if (via == Via::X16Gemv) {
      for (int64_t c = 0; c < cols; ++c) k.gemv_x16[static_cast<size_t>(t)](n, rows, wm, gb, a.data() + xb * c, y.data() + c * rows);
    } else if (via == Via::Tile) {
      tile(n, rows, cols, wm, rb, a.data(), xb, y.data(), static_cast<size_t>(rows));
    } else if (via == Via::Gemv) {
      for (int64_t c = 0; c < cols; ++c) exact(n, rows, wm, rb, a.data() + xb * c, y.data() + c * rows);
    } else {
      // As matmul's decode rows: 16 weight rows at a time, reused across the columns.
      for (int64_t r0 = 0; r0 < rows; r0 += 16) {
        for (int64_t c = 0; c < cols; ++c) {
          for (int64_t r = r0; r < std::min(rows, r0 + 16); ++r) {
            dot(n, &y[static_cast<size_t>(c * rows + r)], wm + rb * static_cast<size_t>(r), a.data() + xb * c);
          }
        }
      }
    }
    benchmark::DoNotOptimize(y.data());
    copy = copy + 1 == copies ? 0 : copy + 1;
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(mb));
  st.counters["ops"] = benchmark::Counter(2.0 * static_cast<double>(rows * n * cols),
                                          benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  const char* name = via == Via::Tile      ? "gemm_tile"
                     : via == Via::Gemv    ? "gemv (tile-exact)"
                     : via == Via::X16Tile ? "gemm_tile_x16"
                     : via == Via::X16Gemv ? "gemv_x16"
                                           : "vec_dot";
  st.SetLabel(std::string(name) + " x" + std::to_string(cols));
}

void gemv(benchmark::State& st, Isa isa, TensorType t, int64_t rows, int64_t n, bool dram, Via via, int64_t cols) {
  gemv_with(st, isa, t, rows, n, dram, via, cols, std::nullopt);
}

// One column from DRAM (via vec_dot or the x16 GEMV) with the kernels of the given maker's table.
void gemv_of(benchmark::State& st, Isa isa, TensorType t, int64_t rows, int64_t n, Via via, CpuVendor maker) {
  gemv_with(st, isa, t, rows, n, true, via, 1, maker);
}

void gemm(benchmark::State& st, Isa isa, TensorType t, int64_t rows, int64_t n, int64_t cols, int64_t tile_rows,
          int64_t tile_cols) {
  const Kernels& k = kernels_for(isa);
  const TypeTraits& tr = type_traits(t);
  std::mt19937 rng(2);
  const size_t rb = row_bytes(t, n), xb = row_bytes(tr.vec_dot_type, n);
  const auto w = random_weights(t, rows, n, rng);
  const auto a = activations(tr.vec_dot_type, cols, n, rng);
  std::vector<float> y(static_cast<size_t>(rows * cols));
  const GemmTileFn tile = k.gemm_tile[static_cast<size_t>(t)];
  const VecDotFn dot = k.vec_dot[static_cast<size_t>(t)];
  for (auto _ : st) {
    if (tile) {
      for (int64_t r0 = 0; r0 < rows; r0 += tile_rows) {
        for (int64_t c0 = 0; c0 < cols; c0 += tile_cols) {
          const int64_t nr = std::min(tile_rows, rows - r0), nc = std::min(tile_cols, cols - c0);
          tile(n, nr, nc, w.data() + rb * static_cast<size_t>(r0), rb, a.data() + xb * static_cast<size_t>(c0), xb,
               y.data() + c0 * rows + r0, static_cast<size_t>(rows));
        }
      }
    } else {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          dot(n, &y[static_cast<size_t>(c * rows + r)], w.data() + rb * static_cast<size_t>(r),
              a.data() + xb * static_cast<size_t>(c));
        }
      }
    }
    benchmark::DoNotOptimize(y.data());
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(w.size()));
  st.counters["ops"] = benchmark::Counter(2.0 * static_cast<double>(rows * n * cols),
                                          benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  st.SetLabel(tile ? "gemm_tile" : "vec_dot loop");
}

void from_float(benchmark::State& st, Isa isa, TensorType t, int64_t n) {
  std::mt19937 rng(3);
  const auto x = random_floats(static_cast<size_t>(n), rng);
  std::vector<uint8_t> out(row_bytes(t, n));
  const FromFloatFn f = kernels_for(isa).from_float[static_cast<size_t>(t)];
  for (auto _ : st) {
    f(x.data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * n * 4);
}

enum class Attn { RowWise, Head, Group, Shared8, Prefill8 };

void attention(benchmark::State& st, Isa isa, TensorType kv_type, int64_t n_ctx, Attn mode) {
  const AttentionShape s{32, 4, 64, 0.125f};
  const int64_t kv_dim = s.n_head_kv * s.head_dim;
  const int32_t block_size = 16;
  const int64_t n_blocks = (n_ctx + block_size - 1) / block_size;
  std::mt19937 rng(5);
  const size_t rb = row_bytes(kv_type, kv_dim);
  const auto k = random_weights(kv_type, n_blocks * block_size, kv_dim, rng);
  const auto v = random_weights(kv_type, n_blocks * block_size, kv_dim, rng);
  std::vector<int32_t> table(static_cast<size_t>(n_blocks));
  for (int64_t b = 0; b < n_blocks; ++b) table[static_cast<size_t>(b)] = static_cast<int32_t>((b * 7) % n_blocks);
  PagedKvView view;
  view.k_base = k.data();
  view.v_base = v.data();
  view.block_stride = rb * block_size;
  view.row_bytes = rb;
  view.block_size = block_size;
  view.type = kv_type;
  view.block_table = table.data();
  const bool eight_tokens = mode == Attn::Shared8 || mode == Attn::Prefill8;
  const int64_t n_tok = eight_tokens ? 8 : 1;
  const auto q = random_floats(static_cast<size_t>(n_tok * s.n_head * s.head_dim), rng);
  std::vector<float> out(q.size()), scratch(attention_tokens_scratch_floats(s, n_tok, block_size));
  Kernels kern = kernels_for(isa);
  if (mode == Attn::RowWise) {
    kern.dot_rows = {};
    kern.mad_rows = {};
    kern.dot_rows_group = {};
    kern.mad_rows_group = {};
  }
  const int64_t n_rep = s.n_head / s.n_head_kv;
  std::vector<AttnToken> toks(static_cast<size_t>(n_tok));
  for (auto _ : st) {
    if (eight_tokens) {
      for (int64_t h = 0; h < s.n_head; h += n_rep) {
        for (int64_t t = 0; t < n_tok; ++t) {
          const size_t at = static_cast<size_t>((t * s.n_head + h) * s.head_dim);
          const int64_t ctx = mode == Attn::Prefill8 ? n_ctx - (n_tok - 1) + t : n_ctx;
          toks[static_cast<size_t>(t)] = AttnToken{q.data() + at, out.data() + at, ctx, table.data()};
        }
        attend_tokens(kern, view, s, h, n_rep, toks, scratch.data());
      }
    } else if (mode == Attn::Group) {
      for (int64_t h = 0; h < s.n_head; h += n_rep) {
        attend_group(kern, view, s, h, n_rep, q.data() + h * s.head_dim, n_ctx, out.data() + h * s.head_dim, scratch.data());
      }
    } else {
      for (int64_t h = 0; h < s.n_head; ++h) {
        attend_head(kern, view, s, h, q.data() + h * s.head_dim, n_ctx, out.data() + h * s.head_dim, scratch.data());
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  // K and V bytes of the sequence (each read once per KV head when grouped, once per query head
  // otherwise, from cache after the first).
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * 2 * n_ctx * static_cast<int64_t>(rb));
  st.counters["positions"] = benchmark::Counter(static_cast<double>(st.iterations() * n_tok * n_ctx), benchmark::Counter::kIsRate);
}

// The agent workload's decode step, one thread: 8 sequences sharing a prefix of `shared`
// positions, each with its own tail of tail + 8 * t positions (its blocks interleaved with the
// others' in the pool, as when they decode together), over 22 layers' caches in turn (TinyLlama's
// count, so the blocks come from DRAM as in the engine, not from a cache-resident layer).
void attention_agent8(benchmark::State& st, Isa isa, TensorType kv_type, int64_t shared, int64_t tail) {
  const AttentionShape s{32, 4, 64, 0.125f};
  const int64_t kv_dim = s.n_head_kv * s.head_dim, n_layer = 22, n_tok = 8, n_rep = s.n_head / s.n_head_kv;
  const int32_t block_size = 16;
  const int64_t shared_blocks = shared / block_size;
  const int64_t tail_blocks = (tail + 8 * (n_tok - 1) + block_size - 1) / block_size;
  const int64_t n_blocks = shared_blocks + n_tok * tail_blocks;
  std::mt19937 rng(5);
  const size_t rb = row_bytes(kv_type, kv_dim);
  const auto k = random_weights(kv_type, n_layer * n_blocks * block_size, kv_dim, rng);
  const auto v = random_weights(kv_type, n_layer * n_blocks * block_size, kv_dim, rng);
  std::vector<std::vector<int32_t>> tables(static_cast<size_t>(n_tok));
  for (int64_t t = 0; t < n_tok; ++t) {
    auto& tb = tables[static_cast<size_t>(t)];
    for (int64_t b = 0; b < shared_blocks; ++b) tb.push_back(static_cast<int32_t>(b));
    for (int64_t b = 0; b < tail_blocks; ++b) tb.push_back(static_cast<int32_t>(shared_blocks + b * n_tok + t));
  }
  const auto q = random_floats(static_cast<size_t>(n_tok * s.n_head * s.head_dim), rng);
  std::vector<float> out(q.size()), scratch(attention_tokens_scratch_floats(s, n_tok, block_size));
  const Kernels& kern = kernels_for(isa);
  std::vector<AttnToken> toks(static_cast<size_t>(n_tok));
  int64_t positions = 0;
  for (int64_t t = 0; t < n_tok; ++t) positions += shared + tail + 8 * t;
  const size_t layer_bytes = static_cast<size_t>(n_blocks * block_size) * rb;
  for (auto _ : st) {
    for (int64_t il = 0; il < n_layer; ++il) {
      PagedKvView view;
      view.k_base = k.data() + static_cast<size_t>(il) * layer_bytes;
      view.v_base = v.data() + static_cast<size_t>(il) * layer_bytes;
      view.block_stride = rb * block_size;
      view.row_bytes = rb;
      view.block_size = block_size;
      view.type = kv_type;
      for (int64_t h = 0; h < s.n_head; h += n_rep) {
        for (int64_t t = 0; t < n_tok; ++t) {
          const size_t at = static_cast<size_t>((t * s.n_head + h) * s.head_dim);
          toks[static_cast<size_t>(t)] = AttnToken{q.data() + at, out.data() + at, shared + tail + 8 * t, tables[static_cast<size_t>(t)].data()};
        }
        attend_tokens(kern, view, s, h, n_rep, toks, scratch.data());
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  st.counters["positions"] = benchmark::Counter(static_cast<double>(st.iterations() * n_layer * positions), benchmark::Counter::kIsRate);
  st.counters["ns_per_head_pos"] = benchmark::Counter(static_cast<double>(st.iterations() * n_layer * positions * s.n_head),
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Q, K and V of one input: three matmul calls or one matmul_many call, on 2 threads.
void qkv(benchmark::State& st, Isa isa, TensorType t, int64_t n_tok, bool many) {
  const Kernels& k = kernels_for(isa);
  std::mt19937 rng(9);
  const int64_t n = 2048;
  const int64_t rows[3] = {2048, 256, 256};
  std::vector<uint8_t> wd[3];
  WeightMatrix w[3];
  std::vector<float> y[3];
  for (int i = 0; i < 3; ++i) {
    wd[i] = random_weights(t, rows[i], n, rng);
    w[i] = WeightMatrix{t, n, rows[i], wd[i].data(), row_bytes(t, n)};
    y[i].resize(static_cast<size_t>(rows[i] * n_tok));
  }
  const auto x = random_floats(static_cast<size_t>(n * n_tok), rng);
  ThreadPool pool(2);
  MatmulScratch scratch;
  const MatmulOutput outs[] = {{&w[0], y[0].data()}, {&w[1], y[1].data()}, {&w[2], y[2].data()}};
  for (auto _ : st) {
    if (many) {
      matmul_many(k, pool, outs, x.data(), n_tok, scratch);
    } else {
      for (int i = 0; i < 3; ++i) matmul(k, pool, w[i], x.data(), n_tok, y[i].data(), scratch);
    }
    benchmark::DoNotOptimize(y[2].data());
  }
  st.counters["ops"] = benchmark::Counter(2.0 * n * (rows[0] + rows[1] + rows[2]) * n_tok *
                                              static_cast<double>(st.iterations()),
                                          benchmark::Counter::kIsRate);
}

void register_all() {
  using T = TensorType;
  const T types[] = {T::Q4_0, T::Q8_0, T::Q4_K, T::Q6_K, T::F16, T::Q4_1, T::Q5_0, T::Q5_1,
                     T::Q2_K, T::Q3_K, T::Q5_K, T::BF16, T::F32};
  const std::pair<int64_t, int64_t> shapes[] = {{2048, 2048}, {5632, 2048}};
  for (Isa isa : supported_isas()) {
    const std::string in = std::string(isa_name(isa));
    // Where the makers' tables take different kernels, each maker's variant on this machine.
    const Kernels intel = build_kernels(isa, CpuVendor::Intel), amd = build_kernels(isa, CpuVendor::Amd);
    for (T t : types) {
      if (!find_type_traits(t)) continue;
      const std::string tn = std::string(tensor_type_name(t));
      const size_t id = static_cast<size_t>(t);
      auto register_makers = [&](const std::string& prefix, Via via, int64_t rows, int64_t n,
                                 const std::string& shape) {
        for (CpuVendor v : {CpuVendor::Intel, CpuVendor::Amd}) {
          const std::string vn = v == CpuVendor::Intel ? "intel" : "amd";
          benchmark::RegisterBenchmark((prefix + vn + "/" + in + "/" + tn + "/" + shape).c_str(), gemv_of, isa, t, rows,
                                       n, via, v)
              ->Unit(benchmark::kMicrosecond);
        }
      };
      for (auto [rows, n] : shapes) {
        const std::string shape = std::to_string(rows) + "x" + std::to_string(n);
        benchmark::RegisterBenchmark(("gemv/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t, rows, n, true,
                                     Via::VecDot, int64_t{1})
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("gemv_l2/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t, rows, n, false,
                                     Via::VecDot, int64_t{1})
            ->Unit(benchmark::kMicrosecond);
        if (intel.vec_dot[id] != amd.vec_dot[id]) register_makers("gemv_", Via::VecDot, rows, n, shape);
        if (kernels_for(isa).gemm_tile[static_cast<size_t>(t)]) {
          benchmark::RegisterBenchmark(("gemv_tile1/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t, rows, n,
                                       true, Via::Tile, int64_t{1})
              ->Unit(benchmark::kMicrosecond);
          benchmark::RegisterBenchmark(("gemv_tile1_l2/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t, rows,
                                       n, false, Via::Tile, int64_t{1})
              ->Unit(benchmark::kMicrosecond);
        }
        if (kernels_for(isa).gemv[static_cast<size_t>(t)]) {
          benchmark::RegisterBenchmark(("gemv_exact/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t, rows, n,
                                       true, Via::Gemv, int64_t{1})
              ->Unit(benchmark::kMicrosecond);
          benchmark::RegisterBenchmark(("gemv_exact_l2/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t, rows,
                                       n, false, Via::Gemv, int64_t{1})
              ->Unit(benchmark::kMicrosecond);
        }
        if (kernels_for(isa).gemv_x16[static_cast<size_t>(t)]) {
          for (bool dram : {true, false}) {
            const std::string l2 = dram ? "" : "_l2";
            benchmark::RegisterBenchmark(("gemv_x16" + l2 + "/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t,
                                         rows, n, dram, Via::X16Gemv, int64_t{1})
                ->Unit(benchmark::kMicrosecond);
            benchmark::RegisterBenchmark(("gemv8_x16" + l2 + "/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t,
                                         rows, n, dram, Via::X16Tile, int64_t{8})
                ->Unit(benchmark::kMicrosecond);
          }
          // (Both makers reading the layout: Intel's table alone reads F16 in it.)
          if (intel.gemv_x16[id] && amd.gemv_x16[id] && intel.gemv_x16[id] != amd.gemv_x16[id]) {
            register_makers("gemv_x16_", Via::X16Gemv, rows, n, shape);
          }
          benchmark::RegisterBenchmark(("gemm_x16/" + in + "/" + tn + "/" + shape + "/512").c_str(), gemv, isa, t, rows,
                                       n, true, Via::X16Tile, int64_t{512})
              ->Unit(benchmark::kMillisecond);
          // Small batches (decoding streams plus a few prompt or draft rows), weights from DRAM.
          for (int64_t cols : {2, 4, 9, 12, 16}) {
            benchmark::RegisterBenchmark(("gemm_x16_cols/" + in + "/" + tn + "/" + shape + "/" + std::to_string(cols)).c_str(),
                                         gemv, isa, t, rows, n, true, Via::X16Tile, cols)
                ->Unit(benchmark::kMicrosecond);
          }
        }
        if (isa == Isa::Scalar) continue;  // scalar GEMM takes seconds per iteration
        // Batched decode: 8 activation rows, weights from DRAM.
        benchmark::RegisterBenchmark(("gemv8/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t, rows, n, true,
                                     Via::VecDot, int64_t{8})
            ->Unit(benchmark::kMicrosecond);
        if (kernels_for(isa).gemm_tile[static_cast<size_t>(t)]) {
          benchmark::RegisterBenchmark(("gemv8_tile/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t, rows, n,
                                       true, Via::Tile, int64_t{8})
              ->Unit(benchmark::kMicrosecond);
          benchmark::RegisterBenchmark(("gemv8_tile_l2/" + in + "/" + tn + "/" + shape).c_str(), gemv, isa, t, rows,
                                       n, false, Via::Tile, int64_t{8})
              ->Unit(benchmark::kMicrosecond);
        }
        benchmark::RegisterBenchmark(("gemm/" + in + "/" + tn + "/" + shape + "/512").c_str(), gemm, isa, t, rows, n,
                                     int64_t{512}, rows, int64_t{512})
            ->Unit(benchmark::kMillisecond);
        for (int64_t tr : {int64_t{16}, int64_t{128}, int64_t{512}}) {
          benchmark::RegisterBenchmark(
              ("gemm_tiles" + std::to_string(tr) + "x64/" + in + "/" + tn + "/" + shape + "/512").c_str(), gemm, isa,
              t, rows, n, int64_t{512}, tr, int64_t{64})
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
    for (T t : {T::F16, T::Q8_0}) {
      for (int64_t ctx : {int64_t{1024}, int64_t{4096}}) {
        const std::string name = in + "/" + std::string(tensor_type_name(t)) + "/" + std::to_string(ctx);
        benchmark::RegisterBenchmark(("attn_rowwise/" + name).c_str(), attention, isa, t, ctx, Attn::RowWise)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("attn_head/" + name).c_str(), attention, isa, t, ctx, Attn::Head)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("attn_group/" + name).c_str(), attention, isa, t, ctx, Attn::Group)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("attn_shared8/" + name).c_str(), attention, isa, t, ctx, Attn::Shared8)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("attn_prefill8/" + name).c_str(), attention, isa, t, ctx, Attn::Prefill8)
            ->Unit(benchmark::kMicrosecond);
      }
      for (auto [shared, tail] : {std::pair<int64_t, int64_t>{992, 0}, {992, 160}, {0, 1024}}) {
        const std::string name = in + "/" + std::string(tensor_type_name(t)) + "/" + std::to_string(shared) + "+" +
                                 std::to_string(tail);
        benchmark::RegisterBenchmark(("attn_agent8/" + name).c_str(), attention_agent8, isa, t, shared, tail)
            ->Unit(benchmark::kMicrosecond);
      }
    }
    for (T t : {T::Q4_0, T::Q4_K}) {
      for (int64_t tok : {1, 64}) {
        const std::string name = in + "/" + std::string(tensor_type_name(t)) + "/" + std::to_string(tok);
        benchmark::RegisterBenchmark(("qkv_separate/" + name).c_str(), qkv, isa, t, tok, false)->UseRealTime();
        benchmark::RegisterBenchmark(("qkv_many/" + name).c_str(), qkv, isa, t, tok, true)->UseRealTime();
      }
    }
    for (T t : {T::Q8_0, T::Q8_1, T::Q8_K, T::F16, T::BF16}) {
      benchmark::RegisterBenchmark(("from_float/" + in + "/" + std::string(tensor_type_name(t)) + "/4096").c_str(),
                                   from_float, isa, t, int64_t{4096});
    }
  }
}

}  // namespace
}  // namespace edgeinfer

int main(int argc, char** argv) {
  edgeinfer::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
