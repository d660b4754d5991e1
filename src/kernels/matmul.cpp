#include "kernels/matmul.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace edgeinfer {

namespace {

// Output rows a thread handles per step; a chunk of weight rows is reused across all tokens
// before moving on, so prefill reads each weight row from cache, not memory, per token.
constexpr int64_t kRowChunk = 16;
// Tokens per gemm tile call: bounds the activation working set.
constexpr int64_t kTokenChunk = 64;
// Below this many multiply-adds a matmul runs on the calling thread alone: the hand-off to the
// pool costs more than the work (tiny models, the last rows of a batch).
constexpr int64_t kMinParallelMacs = 1 << 16;

size_t row_bytes_or_throw(TensorType t, int64_t n) {
  auto b = tensor_row_bytes(t, n);
  if (!b) {
    throw Error("matmul: row of " + std::to_string(n) + " elements is not a whole number of " +
                std::string(tensor_type_name(t)) + " blocks");
  }
  return static_cast<size_t>(*b);
}

}  // namespace

void convert_activations(const Kernels& k, ThreadPool& pool, TensorType vdt, int64_t n_in,
                         const float* x, int64_t n_tokens, MatmulScratch& scratch) {
  const size_t rb = row_bytes_or_throw(vdt, n_in);
  if (scratch.act.size() < rb * n_tokens) scratch.act.resize(rb * n_tokens);
  FromFloatFn conv = k.from_float[static_cast<uint32_t>(vdt)];
  if (!conv) throw Error("matmul: no conversion to " + std::string(tensor_type_name(vdt)));
  uint8_t* dst = scratch.act.data();
  pool.parallel_for(
      n_tokens, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) conv(x + t * n_in, dst + t * rb, n_in);
      },
      std::max<int64_t>(1, 16384 / n_in));
}

void matmul_converted(const Kernels& k, ThreadPool& pool, const WeightMatrix& w,
                      const MatmulScratch& converted, int64_t n_tokens, float* y,
                      std::span<const uint8_t> decode_rows) {
  const TypeTraits& tr = type_traits(w.type);
  const size_t xb = row_bytes_or_throw(tr.vec_dot_type, w.n_in);
  const uint8_t* x = converted.act.data();
  const int64_t n_out = w.n_out;
  const uint32_t tid = static_cast<uint32_t>(w.type);
  GemmTileFn tile = k.gemm_tile[tid];
  VecDotFn dot = k.vec_dot[tid];
  if (!dot) throw Error("matmul: no dot product for " + std::string(tensor_type_name(w.type)));
  if (!decode_rows.empty() && static_cast<int64_t>(decode_rows.size()) != n_tokens) {
    throw Error("matmul: " + std::to_string(decode_rows.size()) + " kernel choices for " + std::to_string(n_tokens) +
                " rows");
  }
  // With a GEMV that reproduces the tile, every row gets the tile's bits whichever of the two
  // runs it: one row takes the GEMV, several the tile, and the caller's choice is moot.
  GemvFn gemv = tile ? k.gemv[tid] : nullptr;
  // Row t goes through vec_dot when this says so (always when the type has no tile).
  auto by_dot = [&](int64_t t) {
    if (!tile) return true;
    if (gemv) return false;
    if (decode_rows.empty()) return n_tokens == 1;
    return decode_rows[static_cast<size_t>(t)] != 0;
  };

  const int64_t n_chunks = (n_out + kRowChunk - 1) / kRowChunk;
  auto work = [&](int ith, int nth) {
    // Contiguous chunk ranges per thread: each thread streams its own slice of the weights.
    const int64_t c0 = n_chunks * ith / nth, c1 = n_chunks * (ith + 1) / nth;
    const int64_t r0 = c0 * kRowChunk, r1 = std::min(n_out, c1 * kRowChunk);
    if (r0 >= r1) return;
    if (gemv && n_tokens == 1) {
      gemv(w.n_in, r1 - r0, w.data + r0 * w.row_bytes, w.row_bytes, x, y + r0);
      return;
    }
    // Prefill rows: one tile call per run of consecutive tile rows (at most kTokenChunk) over
    // the thread's whole row range; the tiles block rows, columns and K themselves and share
    // per-column work (activation sums) across all the rows they are given (Q4_0/Q8_0 prefill
    // ~30% faster than 16-row calls, bench_kernels).
    bool any_dot = false;
    for (int64_t t0 = 0; t0 < n_tokens;) {
      if (by_dot(t0)) {
        any_dot = true;
        ++t0;
        continue;
      }
      int64_t t1 = t0 + 1;
      while (t1 < n_tokens && t1 - t0 < kTokenChunk && !by_dot(t1)) ++t1;
      tile(w.n_in, r1 - r0, t1 - t0, w.data + r0 * w.row_bytes, w.row_bytes, x + t0 * xb, xb, y + t0 * n_out + r0,
           static_cast<size_t>(n_out));
      t0 = t1;
    }
    if (!any_dot) return;
    // Decode rows: a chunk of weight rows is reused across all of them before moving on, so
    // the weights come from memory once per call, not once per row.
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t q0 = c * kRowChunk, q1 = std::min(n_out, q0 + kRowChunk);
      for (int64_t t = 0; t < n_tokens; ++t) {
        if (!by_dot(t)) continue;
        const uint8_t* xr = x + t * xb;
        float* yr = y + t * n_out;
        for (int64_t r = q0; r < q1; ++r) dot(w.n_in, &yr[r], w.data + r * w.row_bytes, xr);
      }
    }
  };
  if (pool.size() == 1 || n_out * w.n_in * n_tokens < kMinParallelMacs) {
    work(0, 1);
  } else {
    pool.run(work);
  }
}

void matmul(const Kernels& k, ThreadPool& pool, const WeightMatrix& w, const float* x,
            int64_t n_tokens, float* y, MatmulScratch& scratch, std::span<const uint8_t> decode_rows) {
  convert_activations(k, pool, type_traits(w.type).vec_dot_type, w.n_in, x, n_tokens, scratch);
  matmul_converted(k, pool, w, scratch, n_tokens, y, decode_rows);
}

}  // namespace edgeinfer
