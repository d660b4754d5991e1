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
};

// Reusable buffer for converted activations; grows on demand, never shrinks.
struct MatmulScratch {
  std::vector<uint8_t> act;
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

}  // namespace edgeinfer
