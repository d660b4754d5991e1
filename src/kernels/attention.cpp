#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/ops.h"
#include "quant/type_traits.h"
#include "util/error.h"

namespace edgeinfer {

namespace {
// Floats of one query converted to the cache type's vec_dot_type (at most f32 size, plus block
// headers), as attend_group lays them out.
int64_t query_floats(const AttentionShape& s) { return s.head_dim + 32; }
}  // namespace

size_t attention_scratch_floats(const AttentionShape& s, int64_t n_ctx) {
  // scores[n_ctx] + converted query (at most f32 size, plus block headers) + dequantized V row
  // + one dequantized KV row of all heads (for heads narrower than the KV type's block)
  const size_t one = static_cast<size_t>(n_ctx) + 3 * static_cast<size_t>(s.head_dim) + 64 +
                    static_cast<size_t>(s.n_head_kv * s.head_dim);
  // attend_group: per head its scores and its converted query (query_floats).
  const size_t n_rep = static_cast<size_t>(std::max<int64_t>(1, s.n_head / std::max<int64_t>(1, s.n_head_kv)));
  const size_t group = n_rep * (static_cast<size_t>(n_ctx) + static_cast<size_t>(query_floats(s)));
  return std::max(one, group);
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

// Blocks ahead of the one being computed whose rows are requested (prefetch_block).
constexpr int64_t kPrefetchBlocks = 2;

enum class KvPart { K, V };

// Requests into L2 the `bytes` used of each row of the cache block starting at position p (none
// when p >= n_ctx), `offset` bytes into the row, while an earlier block is computed: one
// block's rows of one head are a few short strided runs that the hardware prefetcher does not
// fetch ahead across blocks (a third of the score kernel's time sat on the first load of each K
// row in batched decode at depth 1024). L2, not L1: a burst of L1 requests fills the miss
// buffers and stalls the kernel.
void prefetch_block(const PagedKvView& kv, KvPart part, int64_t p, int64_t n_ctx, size_t offset, size_t bytes) {
  if (p >= n_ctx) return;
  const int64_t nr = std::min<int64_t>(kv.block_size, n_ctx - p);
  const uint8_t* first = (part == KvPart::K ? kv.k_row(p) : kv.v_row(p)) + offset;
  for (int64_t r = 0; r < nr; ++r) {
    const uint8_t* row = first + static_cast<size_t>(r) * kv.row_bytes;
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(row + o, 0, 1);
  }
}

void check_group(const AttentionShape& s, int64_t head0, int64_t n_group, const char* what) {
  const int64_t n_rep = s.n_head / s.n_head_kv;
  if (n_group < 1 || head0 < 0 || head0 + n_group > s.n_head || head0 / n_rep != (head0 + n_group - 1) / n_rep) {
    throw Error(std::string(what) + ": heads " + std::to_string(head0) + ".." + std::to_string(head0 + n_group - 1) +
                " do not share one KV head");
  }
}

int64_t padded_ctx(int64_t n_ctx, int64_t block_size) { return (n_ctx + block_size - 1) / block_size * block_size; }

}  // namespace

size_t attention_tokens_scratch_floats(const AttentionShape& s, int64_t n_tokens, int64_t n_ctx) {
  // Per token and head: scores over the padded context, the converted query and the output sum.
  // A block size of 1024 (the largest) bounds the padding.
  const size_t n_rep = static_cast<size_t>(std::max<int64_t>(1, s.n_head / std::max<int64_t>(1, s.n_head_kv)));
  const size_t per = n_rep * static_cast<size_t>(padded_ctx(n_ctx, 1024) + query_floats(s) + s.head_dim);
  return std::max(attention_scratch_floats(s, n_ctx), static_cast<size_t>(std::max<int64_t>(1, n_tokens)) * per);
}

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
      prefetch_block(kv, KvPart::K, p0 + kPrefetchBlocks * bs, n_ctx, head_offset, head_bytes);
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
        prefetch_block(kv, KvPart::V, p0 + kPrefetchBlocks * bs, n_ctx, head_offset, head_bytes);
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

namespace {

// attend_group's grouped path for one or more tokens (attend_group, attend_tokens): scores of
// every token's heads block by block, softmax per head, then the weighted sum of V block by
// block in order, each cache block read and converted once for every run of neighbouring
// tokens that hold it. Rows past a token's context in a block it shares with longer ones are
// scored and never used (a row's score depends only on that row and the query); the weighted
// sum takes exactly its rows. One token writes its sum straight to its out; several sum into
// scratch first (the group kernel wants one stride between all the heads it is given).
void attend_blocks(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head0, int64_t n_group,
                   std::span<const AttnToken> toks, float* scratch) {
  const uint32_t type = static_cast<uint32_t>(kv.type);
  const DotRowsGroupFn dots = k.dot_rows_group[type];
  const MadRowsGroupFn mads = k.mad_rows_group[type];
  const int64_t n_tok = static_cast<int64_t>(toks.size());
  const int64_t hd = s.head_dim, G = n_group, bs = kv.block_size;
  const int64_t n_rep = s.n_head / s.n_head_kv;
  const size_t head_bytes = static_cast<size_t>(*tensor_row_bytes(kv.type, hd));
  const size_t head_offset = static_cast<size_t>(head0 / n_rep) * head_bytes;
  int64_t max_ctx = 0;
  for (const AttnToken& a : toks) max_ctx = std::max(max_ctx, a.n_ctx);
  // Each head's score row: a lone token scores exactly its rows, several may score a shared
  // block's rows past the shorter ones' contexts.
  const int64_t ctx = n_tok == 1 ? max_ctx : padded_ctx(max_ctx, bs);
  const int64_t qf = query_floats(s);
  float* scores = scratch;                  // [n_tok][G][ctx]
  float* qconv = scores + n_tok * G * ctx;  // [n_tok][G][qf]
  float* sum = n_tok == 1 ? toks[0].out : qconv + n_tok * G * qf;  // [n_tok][G][hd]
  const FromFloatFn conv = k.from_float[static_cast<uint32_t>(type_traits(kv.type).vec_dot_type)];
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t g = 0; g < G; ++g) conv(toks[t].q + g * hd, qconv + (t * G + g) * qf, hd);
  }
  const uint8_t* const k_head = kv.k_base + head_offset;
  const uint8_t* const v_head = kv.v_base + head_offset;
  auto rows_in = [&](int64_t t, int64_t p0) { return std::min(bs, toks[t].n_ctx - p0); };
  // Calls fn(t0, t1, block, n_rows) for each run of neighbouring tokens that hold the same block
  // at position p0 (and, with same_rows, need as many of its rows); n_rows is the run's most.
  auto for_runs = [&](int64_t p0, bool same_rows, auto&& fn) {
    const int64_t i = p0 / bs;
    for (int64_t t0 = 0; t0 < n_tok;) {
      if (toks[t0].n_ctx <= p0) {
        ++t0;
        continue;
      }
      const int32_t b = toks[t0].block_table[i];
      int64_t nr = rows_in(t0, p0), t1 = t0 + 1;
      while (t1 < n_tok && toks[t1].n_ctx > p0 && toks[t1].block_table[i] == b && (!same_rows || rows_in(t1, p0) == nr)) {
        nr = std::max(nr, rows_in(t1, p0));
        ++t1;
      }
      fn(t0, t1, b, nr);
      t0 = t1;
    }
  };
  // The block at position pa for the last listed token that has it (tokens sharing blocks share
  // it; in a prompt chunk the last token has the most).
  auto prefetch_at = [&](KvPart part, int64_t pa) {
    for (int64_t t = n_tok; t-- > 0;) {
      if (toks[t].n_ctx > pa) {
        PagedKvView one = kv;
        one.block_table = toks[t].block_table;
        prefetch_block(one, part, pa, toks[t].n_ctx, head_offset, head_bytes);
        return;
      }
    }
  };
  const size_t q_stride = sizeof(float) * static_cast<size_t>(qf);
  for (int64_t p0 = 0; p0 < max_ctx; p0 += bs) {
    prefetch_at(KvPart::K, p0 + kPrefetchBlocks * bs);
    for_runs(p0, false, [&](int64_t t0, int64_t t1, int32_t b, int64_t nr) {
      dots(hd, nr, k_head + static_cast<size_t>(b) * kv.block_stride, kv.row_bytes, (t1 - t0) * G, qconv + t0 * G * qf,
           q_stride, scores + t0 * G * ctx + p0, static_cast<size_t>(ctx));
    });
  }
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t g = 0; g < G; ++g) {
      float* sc = scores + (t * G + g) * ctx;
      for (int64_t p = 0; p < toks[t].n_ctx; ++p) sc[p] *= s.scale;
      k.softmax(sc, toks[t].n_ctx, kv.type == TensorType::F16);
    }
  }
  std::fill(sum, sum + n_tok * G * hd, 0.0f);
  for (int64_t b = 0; b < kPrefetchBlocks; ++b) prefetch_at(KvPart::V, b * bs);  // V's first blocks, during softmax
  for (int64_t p0 = 0; p0 < max_ctx; p0 += bs) {
    prefetch_at(KvPart::V, p0 + kPrefetchBlocks * bs);
    for_runs(p0, true, [&](int64_t t0, int64_t t1, int32_t b, int64_t nr) {
      mads(hd, nr, v_head + static_cast<size_t>(b) * kv.block_stride, kv.row_bytes, (t1 - t0) * G, scores + t0 * G * ctx + p0,
           static_cast<size_t>(ctx), sum + t0 * G * hd, static_cast<size_t>(hd));
    });
  }
  if (n_tok > 1) {
    for (int64_t t = 0; t < n_tok; ++t) std::copy(sum + t * G * hd, sum + (t + 1) * G * hd, toks[t].out);
  }
}

// Whether attend_blocks can take these heads: group kernels for the cache type, and heads
// addressable in its rows.
bool has_group_path(const Kernels& k, const PagedKvView& kv, const AttentionShape& s) {
  const uint32_t type = static_cast<uint32_t>(kv.type);
  return k.dot_rows_group[type] && k.mad_rows_group[type] && tensor_row_bytes(kv.type, s.head_dim).has_value();
}

}  // namespace

void attend_group(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head0, int64_t n_group,
                  const float* q, int64_t n_ctx, float* out, float* scratch) {
  check_group(s, head0, n_group, "attend_group");
  if (n_group == 1 || !has_group_path(k, kv, s)) {
    for (int64_t g = 0; g < n_group; ++g) {
      attend_head(k, kv, s, head0 + g, q + g * s.head_dim, n_ctx, out + g * s.head_dim, scratch);
    }
    return;
  }
  const AttnToken tok{q, out, n_ctx, kv.block_table};
  attend_blocks(k, kv, s, head0, n_group, std::span<const AttnToken>(&tok, 1), scratch);
}

void attend_tokens(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head0, int64_t n_group,
                   std::span<const AttnToken> toks, float* scratch) {
  check_group(s, head0, n_group, "attend_tokens");
  if (toks.size() <= 1 || n_group == 1 || !has_group_path(k, kv, s)) {
    // Nothing to share (or no group kernels): token by token.
    PagedKvView one = kv;
    for (const AttnToken& a : toks) {
      one.block_table = a.block_table;
      attend_group(k, one, s, head0, n_group, a.q, a.n_ctx, a.out, scratch);
    }
    return;
  }
  attend_blocks(k, kv, s, head0, n_group, toks, scratch);
}

}  // namespace edgeinfer
