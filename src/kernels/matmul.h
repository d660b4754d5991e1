#pragma once
// y = W·x for a batch of activation rows: the one matmul the forward pass uses.
// W is [n_out][n_in] in any computable type; x is [n_tokens][n_in] f32; y is [n_tokens][n_out].
// Activations are converted once per call into W's vec_dot_type, then output rows are split
// across the thread pool.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/kernels.h"
#include "util/thread_pool.h"

namespace edgeinfer {

struct WeightMatrix {
  TensorType type = TensorType::F32;
  int64_t n_in = 0;   // row length (GGUF ne[0])
  int64_t n_out = 0;  // number of rows (GGUF ne[1])
  const uint8_t* data = nullptr;
  size_t row_bytes = 0;
  // The same matrix in the x16 layout (quant/x16_layout.h), when it was repacked at load; a
  // path with x16 kernels for the type reads this instead of the rows (same results, bit for
  // bit, except F16: kernels.h kF16X16SumBlock). nullptr: rows only.
  const uint8_t* x16 = nullptr;
  size_t x16_group_bytes = 0;
};

// Reusable buffers for converted activations; grow on demand, never shrink. `act` holds the
// input of matmul / matmul_converted; matmul_many also uses `more` when its weights want
// activations of more than one type.
struct MatmulScratch {
  std::vector<uint8_t> act;
  std::vector<std::vector<uint8_t>> more;
};

// One product of a matmul_many call: y = w·x, y being [n_tokens][w.n_out].
struct MatmulOutput {
  const WeightMatrix* w = nullptr;
  float* y = nullptr;
};

// Which kernel computes each activation row. The prefill kernel (gemm_tile, where the type has
// one) and the decode kernel (vec_dot per row) round differently, while each alone gives a row
// the same bits whatever else is in the call. So that a token's numbers do not depend on its
// batch-mates (batched decoding must equal decoding alone), the caller names the kernel per
// row: decode_rows[t] != 0 runs row t through vec_dot. Empty: vec_dot when n_tokens == 1,
// the tile otherwise. Where the path has a GEMV with the tile's arithmetic (Kernels::gemv)
// the choice is moot and ignored: one row takes that GEMV, several rows the tile.
void matmul(const Kernels& k, ThreadPool& pool, const WeightMatrix& w, const float* x,
            int64_t n_tokens, float* y, MatmulScratch& scratch, std::span<const uint8_t> decode_rows = {});

// Same as matmul, for one already-converted activation buffer shared by several weights of the
// same vec_dot_type and n_in (e.g. Q, K and V from one normalized input).
void convert_activations(const Kernels& k, ThreadPool& pool, TensorType vec_dot_type, int64_t n_in,
                         const float* x, int64_t n_tokens, MatmulScratch& scratch);
void matmul_converted(const Kernels& k, ThreadPool& pool, const WeightMatrix& w,
                      const MatmulScratch& converted, int64_t n_tokens, float* y,
                      std::span<const uint8_t> decode_rows = {});

// Several weights applied to one input (Q, K and V of a normalized row; gate and up): the input
// is converted once per activation type the weights want, and all products run in one hand-off
// to the pool (the threads take parts of every matrix from a shared counter), so the call waits
// on the threads once instead of once per weight. At most 8 weights. Every output has the bits matmul gives it alone. All weights
// must have the same n_in; decode_rows is as for matmul.
void matmul_many(const Kernels& k, ThreadPool& pool, std::span<const MatmulOutput> outs, const float* x,
                 int64_t n_tokens, MatmulScratch& scratch, std::span<const uint8_t> decode_rows = {});

}  // namespace edgeinfer
