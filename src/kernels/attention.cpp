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
// headers), as attend_head and attend_blocks lay them out.
int64_t query_floats(const AttentionShape& s) { return s.head_dim + 32; }

// Positions one online-softmax step covers: whole cache blocks, at least 64 positions (a block
// of 16 positions alone would pay the step's reductions for every 16 scores).
int64_t span_of(int64_t block_size) {
  constexpr int64_t kMinSpan = 64;
  return block_size * ((kMinSpan + block_size - 1) / block_size);
}

int64_t block_size_or_throw(int64_t block_size) {
  if (block_size < 1) throw Error("attention: cache block size " + std::to_string(block_size));
  return block_size;
}

// Online-softmax state of one head: the running maximum and denominator (Kernels::softmax_step).
struct SoftmaxState {
  float max = -INFINITY;
  float sum = 0.0f;
};
constexpr int64_t kStateFloats = 2;
static_assert(sizeof(SoftmaxState) == kStateFloats * sizeof(float));

// A head's weighted sum so far times c (the softmax step moved the maximum). Not for the first
// span, whose sum is still zero; c == 1 leaves it as it is.
void rescale(float* sum, int64_t n, float c) {
  if (c == 1.0f) return;
  for (int64_t i = 0; i < n; ++i) sum[i] *= c;
}

void finish(const float* sum, float denominator, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = sum[i] / denominator;
}

}  // namespace

size_t attention_scratch_floats(const AttentionShape& s, int64_t block_size) {
  const size_t span = static_cast<size_t>(span_of(block_size_or_throw(block_size)));
  const size_t hd = static_cast<size_t>(s.head_dim);
  // attend_head: a span of scores + the converted query + a dequantized V row + one dequantized
  // KV row of all heads (heads narrower than the KV type's block).
  const size_t one = span + static_cast<size_t>(query_floats(s)) + hd + static_cast<size_t>(s.n_head_kv) * hd;
  // attend_group's grouped path: per head a span of scores, its converted query, its state.
  const size_t n_rep = static_cast<size_t>(std::max<int64_t>(1, s.n_head / std::max<int64_t>(1, s.n_head_kv)));
  const size_t group = n_rep * (span + static_cast<size_t>(query_floats(s) + kStateFloats));
  return std::max(one, group);
}

size_t attention_tokens_scratch_floats(const AttentionShape& s, int64_t n_tokens, int64_t block_size) {
  // Per token and head: a span of scores, the converted query, the weighted sum and the state.
  const size_t span = static_cast<size_t>(span_of(block_size_or_throw(block_size)));
  const size_t n_rep = static_cast<size_t>(std::max<int64_t>(1, s.n_head / std::max<int64_t>(1, s.n_head_kv)));
  const size_t per = n_rep * (span + static_cast<size_t>(query_floats(s) + s.head_dim + kStateFloats));
  return std::max(attention_scratch_floats(s, block_size), static_cast<size_t>(std::max<int64_t>(1, n_tokens)) * per);
}

namespace {

// A quantized KV cache whose blocks span several heads (head_dim smaller than, or not a multiple
// of, the type's block: e.g. Q8_0 with head_dim 8): the head's elements are not addressable in
// the quantized row, so each row is dequantized whole and the head's slice used in f32.
void attend_head_split_blocks(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head,
                              const float* q, int64_t n_ctx, float* out, float* scratch) {
  const int64_t hd = s.head_dim;
  const int64_t kv_dim = s.n_head_kv * hd;
  const int64_t off = head / (s.n_head / s.n_head_kv) * hd;
  const int64_t span = span_of(kv.block_size);
  const TypeTraits& tr = type_traits(kv.type);
  float* scores = scratch;      // [span]
  float* row = scratch + span;  // [kv_dim]
  std::fill(out, out + hd, 0.0f);
  SoftmaxState st;
  for (int64_t c0 = 0; c0 < n_ctx; c0 += span) {
    const int64_t c1 = std::min(n_ctx, c0 + span);
    for (int64_t p = c0; p < c1; ++p) {
      tr.to_float(kv.k_row(p), row, kv_dim);
      float d = 0;
      for (int64_t i = 0; i < hd; ++i) d += q[i] * row[off + i];
      scores[p - c0] = d;
    }
    const float c = k.softmax_step(scores, c1 - c0, s.scale, &st.max, &st.sum);
    if (c0 > 0) rescale(out, hd, c);
    for (int64_t p = c0; p < c1; ++p) {
      tr.to_float(kv.v_row(p), row, kv_dim);
      const float w = scores[p - c0];
      for (int64_t i = 0; i < hd; ++i) out[i] += w * row[off + i];
    }
  }
  finish(out, st.sum, out, hd);
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

}  // namespace

void attend_head(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head,
                 const float* q, int64_t n_ctx, float* out, float* scratch) {
  const int64_t hd = s.head_dim;
  const int64_t kv_head = head / (s.n_head / s.n_head_kv);
  const TypeTraits& tr = type_traits(kv.type);
  const auto head_bytes_opt = tensor_row_bytes(kv.type, hd);
  if (!head_bytes_opt) {
    attend_head_split_blocks(k, kv, s, head, q, n_ctx, out, scratch);
    return;
  }
  const size_t head_bytes = static_cast<size_t>(*head_bytes_opt);
  const size_t head_offset = static_cast<size_t>(kv_head) * head_bytes;
  const int64_t bs = kv.block_size, span = span_of(bs);

  float* scores = scratch;                  // [span]
  float* qconv_f = scratch + span;          // [query_floats]
  void* qconv = qconv_f;                    // vec_dot_type row of hd elements; fits for every KV type
  float* vtmp = qconv_f + query_floats(s);  // [hd]
  k.from_float[static_cast<uint32_t>(tr.vec_dot_type)](q, qconv, hd);

  const uint32_t type = static_cast<uint32_t>(kv.type);
  const DotRowsFn dot_rows = k.dot_rows[type];
  const VecDotFn dot = k.vec_dot[type];
  const MadRowsFn mad_rows = k.mad_rows[type];
  const VecMadFn mad = k.vec_mad[type];
  std::fill(out, out + hd, 0.0f);
  SoftmaxState st;
  for (int64_t c0 = 0; c0 < n_ctx; c0 += span) {
    const int64_t c1 = std::min(n_ctx, c0 + span);
    for (int64_t p0 = c0; p0 < c1; p0 += bs) {
      const int64_t nr = std::min(bs, c1 - p0);
      prefetch_block(kv, KvPart::K, p0 + kPrefetchBlocks * bs, n_ctx, head_offset, head_bytes);
      prefetch_block(kv, KvPart::V, p0, n_ctx, head_offset, head_bytes);
      if (dot_rows) {
        // A cache block's rows are contiguous: one call per block.
        dot_rows(hd, nr, kv.k_row(p0) + head_offset, kv.row_bytes, qconv, scores + (p0 - c0));
      } else {
        for (int64_t p = p0; p < p0 + nr; ++p) dot(hd, &scores[p - c0], kv.k_row(p) + head_offset, qconv);
      }
    }
    const float c = k.softmax_step(scores, c1 - c0, s.scale, &st.max, &st.sum);
    if (c0 > 0) rescale(out, hd, c);
    for (int64_t p0 = c0; p0 < c1; p0 += bs) {
      const int64_t nr = std::min(bs, c1 - p0);
      const float* w = scores + (p0 - c0);
      if (mad_rows) {
        // One call per block, the sum kept in registers across its rows.
        mad_rows(hd, nr, kv.v_row(p0) + head_offset, kv.row_bytes, w, out);
      } else if (mad) {
        for (int64_t r = 0; r < nr; ++r) mad(hd, out, kv.v_row(p0 + r) + head_offset, w[r]);
      } else {
        for (int64_t r = 0; r < nr; ++r) {
          tr.to_float(kv.v_row(p0 + r) + head_offset, vtmp, hd);
          for (int64_t i = 0; i < hd; ++i) out[i] += w[r] * vtmp[i];
        }
      }
    }
  }
  finish(out, st.sum, out, hd);
}

namespace {

// attend_group's grouped path for one or more tokens (attend_group, attend_tokens): per span,
// the scores of every token's heads block by block, one softmax step per head, then the
// weighted sum of the span's V rows block by block in order, each cache block read and
// converted once for every run of neighbouring tokens that hold it. Rows past a token's context
// in a block it shares with longer ones are scored and never used (a row's score depends only on
// that row and the query); the softmax step and the weighted sum take exactly its rows. One token
// sums straight into its out; several sum into scratch first (the group kernel wants one stride
// between all the heads it is given). Every step is attend_head's for each head, with the group
// kernels' per-row contract, so every head's output has attend_head's bits.
void attend_blocks(const Kernels& k, const PagedKvView& kv, const AttentionShape& s, int64_t head0, int64_t n_group,
                   std::span<const AttnToken> toks, float* scratch) {
  const uint32_t type = static_cast<uint32_t>(kv.type);
  const DotRowsGroupFn dots = k.dot_rows_group[type];
  const MadRowsGroupFn mads = k.mad_rows_group[type];
  const int64_t n_tok = static_cast<int64_t>(toks.size());
  const int64_t hd = s.head_dim, G = n_group, bs = kv.block_size, span = span_of(bs);
  const int64_t n_rep = s.n_head / s.n_head_kv;
  const size_t head_bytes = static_cast<size_t>(*tensor_row_bytes(kv.type, hd));
  const size_t head_offset = static_cast<size_t>(head0 / n_rep) * head_bytes;
  int64_t max_ctx = 0;
  for (const AttnToken& a : toks) max_ctx = std::max(max_ctx, a.n_ctx);
  const int64_t qf = query_floats(s);
  float* scores = scratch;                    // [n_tok][G][span]
  float* qconv = scores + n_tok * G * span;   // [n_tok][G][qf]
  auto* state = reinterpret_cast<SoftmaxState*>(qconv + n_tok * G * qf);  // [n_tok][G]
  float* sum = n_tok == 1 ? toks[0].out : qconv + n_tok * G * (qf + kStateFloats);  // [n_tok][G][hd]
  const FromFloatFn conv = k.from_float[static_cast<uint32_t>(type_traits(kv.type).vec_dot_type)];
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t g = 0; g < G; ++g) {
      conv(toks[t].q + g * hd, qconv + (t * G + g) * qf, hd);
      state[t * G + g] = SoftmaxState{};
    }
  }
  std::fill(sum, sum + n_tok * G * hd, 0.0f);
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
  for (int64_t c0 = 0; c0 < max_ctx; c0 += span) {
    const int64_t c1 = std::min(max_ctx, c0 + span);
    for (int64_t p0 = c0; p0 < c1; p0 += bs) {
      prefetch_at(KvPart::K, p0 + kPrefetchBlocks * bs);
      prefetch_at(KvPart::V, p0);
      for_runs(p0, false, [&](int64_t t0, int64_t t1, int32_t b, int64_t nr) {
        dots(hd, nr, k_head + static_cast<size_t>(b) * kv.block_stride, kv.row_bytes, (t1 - t0) * G, qconv + t0 * G * qf,
             q_stride, scores + t0 * G * span + (p0 - c0), static_cast<size_t>(span));
      });
    }
    for (int64_t t = 0; t < n_tok; ++t) {
      if (toks[t].n_ctx <= c0) continue;
      const int64_t n = std::min(toks[t].n_ctx, c1) - c0;
      for (int64_t g = 0; g < G; ++g) {
        SoftmaxState& st = state[t * G + g];
        const float c = k.softmax_step(scores + (t * G + g) * span, n, s.scale, &st.max, &st.sum);
        if (c0 > 0) rescale(sum + (t * G + g) * hd, hd, c);
      }
    }
    for (int64_t p0 = c0; p0 < c1; p0 += bs) {
      for_runs(p0, true, [&](int64_t t0, int64_t t1, int32_t b, int64_t nr) {
        mads(hd, nr, v_head + static_cast<size_t>(b) * kv.block_stride, kv.row_bytes, (t1 - t0) * G,
             scores + t0 * G * span + (p0 - c0), static_cast<size_t>(span), sum + t0 * G * hd, static_cast<size_t>(hd));
      });
    }
  }
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t g = 0; g < G; ++g) {
      finish(sum + (t * G + g) * hd, state[t * G + g].sum, toks[t].out + g * hd, hd);
    }
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
