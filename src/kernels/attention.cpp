#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/ops.h"
#include "quant/type_traits.h"
#include "util/error.h"

namespace edgeinfer {

size_t attention_scratch_floats(const AttentionShape& s, int64_t n_ctx) {
  // scores[n_ctx] + converted query (at most f32 size, plus block headers) + dequantized V row
  // + one dequantized KV row of all heads (for heads narrower than the KV type's block)
  return static_cast<size_t>(n_ctx) + 3 * static_cast<size_t>(s.head_dim) + 64 +
         static_cast<size_t>(s.n_head_kv * s.head_dim);
}

namespace {

// A quantized KV cache whose blocks span several heads (head_dim smaller than, or not a multiple
// of, the type's block: e.g. Q8_0 with head_dim 8): the head's elements are not addressable in
// the quantized row, so each row is dequantized whole and the head's slice used in f32.
void attend_head_split_blocks(const PagedKvView& kv, const AttentionShape& s, int64_t head, const float* q,
                              int64_t n_ctx, float* out, float* scratch) {
  const int64_t hd = s.head_dim;
  const int64_t kv_dim = s.n_head_kv * hd;
  const int64_t off = head / (s.n_head / s.n_head_kv) * hd;
  const TypeTraits& tr = type_traits(kv.type);
  float* scores = scratch;
  float* row = scratch + n_ctx;  // [kv_dim]
  for (int64_t p = 0; p < n_ctx; ++p) {
    tr.to_float(kv.k_row(p), row, kv_dim);
    float d = 0;
    for (int64_t i = 0; i < hd; ++i) d += q[i] * row[off + i];
    scores[p] = d * s.scale;
  }
  softmax(scores, n_ctx);
  for (int64_t i = 0; i < hd; ++i) out[i] = 0.0f;
  for (int64_t p = 0; p < n_ctx; ++p) {
    tr.to_float(kv.v_row(p), row, kv_dim);
    const float w = scores[p];
    for (int64_t i = 0; i < hd; ++i) out[i] += w * row[off + i];
  }
}

}  // namespace

void attend_head(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head,
                 const float* q, int64_t n_ctx, float* out, float* scratch) {
  const int64_t hd = s.head_dim;
  const int64_t kv_head = head / (s.n_head / s.n_head_kv);
  const TypeTraits& tr = type_traits(kv.type);
  const auto head_bytes_opt = tensor_row_bytes(kv.type, hd);
  if (!head_bytes_opt) {
    attend_head_split_blocks(kv, s, head, q, n_ctx, out, scratch);
    return;
  }
  const size_t head_bytes = static_cast<size_t>(*head_bytes_opt);
  const size_t head_offset = static_cast<size_t>(kv_head) * head_bytes;

  float* scores = scratch;
  float* qconv_f = scratch + n_ctx;
  void* qconv = qconv_f;  // vec_dot_type row of hd elements; fits in hd floats for every KV type
  float* vtmp = qconv_f + hd + 32;
  k.from_float[static_cast<uint32_t>(tr.vec_dot_type)](q, qconv, hd);

  if (DotRowsFn rows = k.dot_rows[static_cast<uint32_t>(kv.type)]) {
    // A cache block's rows are contiguous: one call per block.
    const int64_t bs = kv.block_size;
    for (int64_t p0 = 0; p0 < n_ctx; p0 += bs) {
      const int64_t nr = std::min(bs, n_ctx - p0);
      rows(hd, nr, kv.k_row(p0) + head_offset, kv.row_bytes, qconv, scores + p0);
      for (int64_t p = p0; p < p0 + nr; ++p) scores[p] *= s.scale;
    }
  } else {
    VecDotFn dot = k.vec_dot[static_cast<uint32_t>(kv.type)];
    for (int64_t p = 0; p < n_ctx; ++p) {
      float d;
      dot(hd, &d, kv.k_row(p) + head_offset, qconv);
      scores[p] = d * s.scale;
    }
  }
  VecMadFn mad = k.vec_mad[static_cast<uint32_t>(kv.type)];
  // F32 / F16 cache: the SIMD weighted sum (an F16 cache's probabilities rounded to f16, as
  // the reference engine multiplies them in f16).
  k.softmax(scores, n_ctx, mad && kv.type == TensorType::F16);

  for (int64_t i = 0; i < hd; ++i) out[i] = 0.0f;
  if (mad) {
    if (MadRowsFn rows = k.mad_rows[static_cast<uint32_t>(kv.type)]) {
      // A cache block's rows are contiguous: one call per block, the sum kept in registers.
      const int64_t bs = kv.block_size;
      for (int64_t p0 = 0; p0 < n_ctx; p0 += bs) {
        rows(hd, std::min(bs, n_ctx - p0), kv.v_row(p0) + head_offset, kv.row_bytes, scores + p0, out);
      }
    } else {
      for (int64_t p = 0; p < n_ctx; ++p) mad(hd, out, kv.v_row(p) + head_offset, scores[p]);
    }
    return;
  }
  switch (kv.type) {
    case TensorType::F32:
      for (int64_t p = 0; p < n_ctx; ++p) {
        const float* v = reinterpret_cast<const float*>(kv.v_row(p) + head_offset);
        const float w = scores[p];
        for (int64_t i = 0; i < hd; ++i) out[i] += w * v[i];
      }
      break;
    case TensorType::F16:
      for (int64_t p = 0; p < n_ctx; ++p) {
        const uint16_t* v = reinterpret_cast<const uint16_t*>(kv.v_row(p) + head_offset);
        const float w = fp16_to_fp32(fp32_to_fp16(scores[p]));
        for (int64_t i = 0; i < hd; ++i) out[i] += w * fp16_to_fp32(v[i]);
      }
      break;
    default:
      for (int64_t p = 0; p < n_ctx; ++p) {
        tr.to_float(kv.v_row(p) + head_offset, vtmp, hd);
        const float w = scores[p];
        for (int64_t i = 0; i < hd; ++i) out[i] += w * vtmp[i];
      }
      break;
  }
}

}  // namespace edgeinfer
