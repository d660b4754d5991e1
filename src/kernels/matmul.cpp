#include "kernels/matmul.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "quant/x16_layout.h"
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
// A pool run hands out parts of 1 / (kGuidedShare · threads) of the row chunks left, of at least
// kMinChunksPerPart chunks, kMinChunksPerPrefillPart when the products have more than
// kFewTokens rows (see run_jobs).
constexpr int64_t kGuidedShare = 2;
constexpr int64_t kMinChunksPerPart = 2;
constexpr int64_t kMinChunksPerPrefillPart = 8;
constexpr int64_t kFewTokens = 16;
// Most matrices one pool run takes (matmul_many's limit).
constexpr size_t kMaxJobs = 8;

size_t row_bytes_or_throw(TensorType t, int64_t n) {
  auto b = tensor_row_bytes(t, n);
  if (!b) {
    throw Error("matmul: row of " + std::to_string(n) + " elements is not a whole number of " +
                std::string(tensor_type_name(t)) + " blocks");
  }
  return static_cast<size_t>(*b);
}

void convert_into(const Kernels& k, ThreadPool& pool, TensorType vdt, int64_t n_in, const float* x,
                  int64_t n_tokens, std::vector<uint8_t>& buf) {
  const size_t rb = row_bytes_or_throw(vdt, n_in);
  if (buf.size() < rb * n_tokens) buf.resize(rb * n_tokens);
  FromFloatFn conv = k.from_float[static_cast<uint32_t>(vdt)];
  if (!conv) throw Error("matmul: no conversion to " + std::string(tensor_type_name(vdt)));
  uint8_t* dst = buf.data();
  pool.parallel_for(
      n_tokens, [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) conv(x + t * n_in, dst + t * rb, n_in);
      },
      std::max<int64_t>(1, 16384 / n_in));
}

// One weight's product over already-converted activations, computed in parts of whole row chunks.
class MatmulJob {
 public:
  MatmulJob() = default;
  MatmulJob(const Kernels& k, const WeightMatrix& w, const uint8_t* x, int64_t n_tokens, float* y,
            std::span<const uint8_t> decode_rows)
      : w_(&w), x_(x), n_tokens_(n_tokens), y_(y), decode_rows_(decode_rows) {
    const TypeTraits& tr = type_traits(w.type);
    xb_ = row_bytes_or_throw(tr.vec_dot_type, w.n_in);
    const uint32_t tid = static_cast<uint32_t>(w.type);
    tile_ = k.gemm_tile[tid];
    dot_ = k.vec_dot[tid];
    dot_cols_ = k.vec_dot_cols[tid];
    wdata_ = w.data;
    wstride_ = w.row_bytes;
    if (w.x16 && k.gemm_tile_x16[tid] && k.gemv_x16[tid]) {
      // The repacked matrix: one stream per 16 rows; kRowChunk is a whole number of groups.
      static_assert(kRowChunk % kX16Rows == 0);
      tile_ = k.gemm_tile_x16[tid];
      wdata_ = w.x16;
      wstride_ = w.x16_group_bytes;
      rows_per_stride_ = kX16Rows;
    }
    if (!dot_) throw Error("matmul: no dot product for " + std::string(tensor_type_name(w.type)));
    if (!decode_rows.empty() && static_cast<int64_t>(decode_rows.size()) != n_tokens) {
      throw Error("matmul: " + std::to_string(decode_rows.size()) + " kernel choices for " +
                  std::to_string(n_tokens) + " rows");
    }
    // With a GEMV that reproduces the tile, every row gets the tile's bits whichever of the two
    // runs it: one row takes the GEMV, several the tile, and the caller's choice is moot.
    gemv_ = rows_per_stride_ > 1 ? k.gemv_x16[tid] : tile_ ? k.gemv[tid] : nullptr;
  }

  int64_t macs() const { return w_->n_out * w_->n_in * n_tokens_; }
  int64_t n_tokens() const { return n_tokens_; }
  int64_t n_chunks() const { return (w_->n_out + kRowChunk - 1) / kRowChunk; }

  // Computes row chunks [c0, c1) (16 rows each), so whoever runs it streams one slice of the
  // weights.
  void run_chunks(int64_t c0, int64_t c1) const {
    const int64_t n_out = w_->n_out;
    const int64_t r0 = c0 * kRowChunk, r1 = std::min(n_out, c1 * kRowChunk);
    if (r0 >= r1) return;
    const uint8_t* wr = wdata_ + static_cast<size_t>(r0 / rows_per_stride_) * wstride_;
    if (gemv_ && n_tokens_ == 1) {
      gemv_(w_->n_in, r1 - r0, wr, wstride_, x_, y_ + r0);
      return;
    }
    // Prefill rows: one tile call per run of consecutive tile rows (at most kTokenChunk) over
    // the thread's whole row range; the tiles block rows, columns and K themselves and share
    // per-column work (activation sums) across all the rows they are given (Q4_0/Q8_0 prefill
    // ~30% faster than 16-row calls, bench_kernels).
    bool any_dot = false;
    for (int64_t t0 = 0; t0 < n_tokens_;) {
      if (by_dot(t0)) {
        any_dot = true;
        ++t0;
        continue;
      }
      int64_t t1 = t0 + 1;
      while (t1 < n_tokens_ && t1 - t0 < kTokenChunk && !by_dot(t1)) ++t1;
      tile_(w_->n_in, r1 - r0, t1 - t0, wr, wstride_, x_ + t0 * xb_, xb_, y_ + t0 * n_out + r0,
            static_cast<size_t>(n_out));
      t0 = t1;
    }
    if (!any_dot) return;
    // Decode rows: a chunk of weight rows is reused across all of them before moving on, so
    // the weights come from memory once per call, not once per row.
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t q0 = c * kRowChunk, q1 = std::min(n_out, q0 + kRowChunk);
      if (dot_cols_) {
        // Each weight row unpacked once for every run of consecutive decode rows.
        for (int64_t t0 = 0; t0 < n_tokens_;) {
          if (!by_dot(t0)) {
            ++t0;
            continue;
          }
          int64_t t1 = t0 + 1;
          while (t1 < n_tokens_ && by_dot(t1)) ++t1;
          for (int64_t r = q0; r < q1; ++r) {
            dot_cols_(w_->n_in, w_->data + r * w_->row_bytes, t1 - t0, x_ + t0 * xb_, xb_, y_ + t0 * n_out + r,
                      static_cast<size_t>(n_out));
          }
          t0 = t1;
        }
        continue;
      }
      for (int64_t t = 0; t < n_tokens_; ++t) {
        if (!by_dot(t)) continue;
        const uint8_t* xr = x_ + t * xb_;
        float* yr = y_ + t * n_out;
        for (int64_t r = q0; r < q1; ++r) dot_(w_->n_in, &yr[r], w_->data + r * w_->row_bytes, xr);
      }
    }
  }

 private:
  // Row t goes through vec_dot when this says so (always when the type has no tile).
  bool by_dot(int64_t t) const {
    if (!tile_) return true;
    if (gemv_) return false;
    if (decode_rows_.empty()) return n_tokens_ == 1;
    return decode_rows_[static_cast<size_t>(t)] != 0;
  }

  const WeightMatrix* w_ = nullptr;
  const uint8_t* x_ = nullptr;
  int64_t n_tokens_ = 0;
  float* y_ = nullptr;
  std::span<const uint8_t> decode_rows_;
  size_t xb_ = 0;
  GemmTileFn tile_ = nullptr;
  VecDotFn dot_ = nullptr;
  VecDotColsFn dot_cols_ = nullptr;
  GemvFn gemv_ = nullptr;
  // What tile_ and gemv_ read: the rows (one per stride) or the x16 groups (16 per stride).
  // vec_dot always reads the rows.
  const uint8_t* wdata_ = nullptr;
  size_t wstride_ = 0;
  int64_t rows_per_stride_ = 1;
};

// Runs the jobs in one hand-off to the pool (or on the caller when the work is small). The jobs'
// 16-row chunks are taken in order from a shared position, in parts that shrink as the work
// runs out (guided scheduling): each part is 1 / (kGuidedShare · threads) of what is left, at
// least min_part chunks and never across two jobs. Large parts first keep the tile's
// per-call work (activation terms shared by all the rows of a call) small; small parts last
// leave little for the other threads to wait on when the step ends, and a thread that falls
// behind (a core shared with another process) leaves the rest to the others. Which thread
// computes a row does not change its bits.
void run_jobs(ThreadPool& pool, std::span<const MatmulJob> jobs) {
  int64_t macs = 0;
  for (const MatmulJob& j : jobs) macs += j.macs();
  if (pool.size() == 1 || macs < kMinParallelMacs) {
    for (const MatmulJob& j : jobs) j.run_chunks(0, j.n_chunks());
    return;
  }
  const int64_t nth = pool.size();
  int64_t first_chunk[kMaxJobs + 1];  // job i's chunks are [first_chunk[i], first_chunk[i + 1])
  first_chunk[0] = 0;
  for (size_t i = 0; i < jobs.size(); ++i) first_chunk[i + 1] = first_chunk[i] + jobs[i].n_chunks();
  const int64_t total = first_chunk[jobs.size()];
  const int64_t min_part = jobs[0].n_tokens() > kFewTokens ? kMinChunksPerPrefillPart : kMinChunksPerPart;
  std::atomic<int64_t> next{0};
  pool.run([&](int, int) {
    size_t i = 0;
    int64_t pos = next.load(std::memory_order_relaxed);
    while (pos < total) {
      while (pos >= first_chunk[i + 1]) ++i;
      const int64_t size = std::min(std::max(min_part, (total - pos) / (kGuidedShare * nth)), first_chunk[i + 1] - pos);
      if (next.compare_exchange_weak(pos, pos + size, std::memory_order_relaxed)) {
        jobs[i].run_chunks(pos - first_chunk[i], pos + size - first_chunk[i]);
        pos = next.load(std::memory_order_relaxed);
      }
    }
  });
}

}  // namespace

void convert_activations(const Kernels& k, ThreadPool& pool, TensorType vdt, int64_t n_in,
                         const float* x, int64_t n_tokens, MatmulScratch& scratch) {
  convert_into(k, pool, vdt, n_in, x, n_tokens, scratch.act);
}

void matmul_converted(const Kernels& k, ThreadPool& pool, const WeightMatrix& w,
                      const MatmulScratch& converted, int64_t n_tokens, float* y,
                      std::span<const uint8_t> decode_rows) {
  const MatmulJob job(k, w, converted.act.data(), n_tokens, y, decode_rows);
  run_jobs(pool, std::span<const MatmulJob>(&job, 1));
}

void matmul(const Kernels& k, ThreadPool& pool, const WeightMatrix& w, const float* x,
            int64_t n_tokens, float* y, MatmulScratch& scratch, std::span<const uint8_t> decode_rows) {
  convert_activations(k, pool, type_traits(w.type).vec_dot_type, w.n_in, x, n_tokens, scratch);
  matmul_converted(k, pool, w, scratch, n_tokens, y, decode_rows);
}

void matmul_many(const Kernels& k, ThreadPool& pool, std::span<const MatmulOutput> outs, const float* x,
                 int64_t n_tokens, MatmulScratch& scratch, std::span<const uint8_t> decode_rows) {
  if (outs.empty()) return;
  if (outs.size() > kMaxJobs) {
    throw Error("matmul: " + std::to_string(outs.size()) + " products in one call (at most " +
                std::to_string(kMaxJobs) + ")");
  }
  const int64_t n_in = outs[0].w->n_in;
  // One converted buffer per distinct activation type, converted at its first use.
  TensorType types[kMaxJobs];
  const uint8_t* converted[kMaxJobs];
  size_t n_types = 0;
  MatmulJob jobs[kMaxJobs];
  for (size_t j = 0; j < outs.size(); ++j) {
    const WeightMatrix& w = *outs[j].w;
    if (w.n_in != n_in) {
      throw Error("matmul: products of one input need one row length, got " + std::to_string(n_in) + " and " +
                  std::to_string(w.n_in));
    }
    const TensorType vdt = type_traits(w.type).vec_dot_type;
    size_t i = 0;
    while (i < n_types && types[i] != vdt) ++i;
    if (i == n_types) {
      std::vector<uint8_t>* buf = &scratch.act;
      if (i > 0) {
        if (scratch.more.size() < i) scratch.more.resize(i);
        buf = &scratch.more[i - 1];
      }
      convert_into(k, pool, vdt, n_in, x, n_tokens, *buf);
      types[i] = vdt;
      converted[i] = buf->data();
      ++n_types;
    }
    jobs[j] = MatmulJob(k, w, converted[i], n_tokens, outs[j].y, decode_rows);
  }
  run_jobs(pool, std::span<const MatmulJob>(jobs, outs.size()));
}

}  // namespace edgeinfer
