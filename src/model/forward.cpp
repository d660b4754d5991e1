#include "model/forward.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <compare>
#include <string>

#include "kernels/attention.h"
#include "kernels/ops.h"
#include "quant/type_traits.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

template <class T>
void grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

void add_bias(float* y, const VectorView& b, int64_t n_tokens, int64_t width) {
  if (!b) return;
  for (int64_t t = 0; t < n_tokens; ++t) add_inplace(y + t * width, b.data, width);
}

// Writes one f32 row into the KV cache's element type.
void store_row(const Kernels& k, TensorType type, const float* src, uint8_t* dst, int64_t n) {
  k.from_float[static_cast<uint32_t>(type)](src, dst, n);
}

// Tokens attended together at most (attend_tokens), and the scratch a thread may take for them.
constexpr int64_t kAttnTokens = 8;
constexpr size_t kAttnScratchBytes = size_t{4} << 20;

}  // namespace

ForwardPass::ForwardPass(const Model& model, const Kernels& kernels, ThreadPool& pool)
    : model_(model), kernels_(kernels), pool_(pool) {}

int64_t ForwardPass::attention_tokens(int64_t block_size) const {
  const ModelConfig& c = model_.config();
  const AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, 0.0f};
  int64_t t = kAttnTokens;
  while (t > 1 && attention_tokens_scratch_floats(shape, t, block_size) * sizeof(float) > kAttnScratchBytes) t /= 2;
  return t;
}

void ForwardPass::plan_attention(std::span<const SeqBatch> seqs, int64_t max_tokens) {
  // Sequences in the order of their block tables, so that those sharing a cached prefix (the
  // same first blocks) are neighbours; then runs of at most max_tokens tokens whose tables start
  // with the same block (nothing is shared otherwise), the costliest first.
  std::vector<int64_t>& first = attn_seq_first_;
  first.assign(seqs.size() + 1, 0);
  attn_seq_order_.clear();
  for (size_t s = 0; s < seqs.size(); ++s) {
    first[s + 1] = first[s] + static_cast<int64_t>(seqs[s].tokens.size());
    if (!seqs[s].tokens.empty()) attn_seq_order_.push_back(static_cast<int32_t>(s));
  }
  // (std::sort with the index as tie-break: stable_sort would take a buffer every step.)
  std::sort(attn_seq_order_.begin(), attn_seq_order_.end(), [&](int32_t a, int32_t b) {
    const auto& ta = seqs[a].block_table;
    const auto& tb = seqs[b].block_table;
    const auto order = std::lexicographical_compare_three_way(ta.begin(), ta.end(), tb.begin(), tb.end());
    return order != 0 ? order < 0 : a < b;
  });
  attn_tokens_.clear();
  attn_clusters_.clear();
  int32_t cluster_block = -1;
  for (int32_t s : attn_seq_order_) {
    const int32_t b0 = seqs[s].block_table[0];
    for (int64_t t = first[s]; t < first[s + 1]; ++t) {
      if (attn_clusters_.empty() || attn_clusters_.back().size == max_tokens || b0 != cluster_block) {
        attn_clusters_.push_back({static_cast<int64_t>(attn_tokens_.size()), 0, 0});
        cluster_block = b0;
      }
      attn_tokens_.push_back(t);
      attn_clusters_.back().size += 1;
      attn_clusters_.back().cost += tok_pos_[t] + 1;
    }
  }
  std::sort(attn_clusters_.begin(), attn_clusters_.end(), [](const AttnCluster& a, const AttnCluster& b) {
    return a.cost != b.cost ? a.cost > b.cost : a.begin < b.begin;
  });
}

void ForwardPass::reserve(int64_t n, int64_t block_size, int64_t attn_tokens) {
  const ModelConfig& c = model_.config();
  grow(x_, n * c.n_embd);
  grow(xb_, n * std::max(c.n_embd, c.q_dim()));
  grow(q_, n * c.q_dim());
  grow(k_, n * c.kv_dim());
  grow(v_, n * c.kv_dim());
  grow(attn_, n * c.q_dim());
  grow(gate_, n * c.n_ff);
  grow(up_, n * c.n_ff);
  AttentionShape shape{c.n_head, c.n_head_kv, c.head_dim, 0.0f};
  attn_scratch_per_thread_ = attention_tokens_scratch_floats(shape, attn_tokens, block_size);
  grow(attn_scratch_, attn_scratch_per_thread_ * pool_.size());
}

const float* ForwardPass::forward(std::span<const SeqBatch> seqs, KvStorage& kv) {
  const ModelConfig& c = model_.config();
  const ModelWeights& w = model_.weights();
  const Kernels& K = kernels_;
  ThreadPool& pool = pool_;

  if (kv.n_layer() != c.n_layer || kv.kv_dim() != c.kv_dim()) {
    throw Error("forward: KV cache shape does not match the model");
  }
  // Flatten the batch: sequence and position of every token; rows that want logits.
  int64_t n = 0;
  tok_seq_.clear();
  tok_pos_.clear();
  out_rows_.clear();
  tok_decode_.clear();
  out_decode_.clear();
  for (size_t s = 0; s < seqs.size(); ++s) {
    const SeqBatch& sb = seqs[s];
    const int64_t len = static_cast<int64_t>(sb.tokens.size());
    if (len == 0) continue;
    const int64_t end = sb.pos0 + len;
    if (sb.pos0 < 0 || static_cast<int64_t>(sb.block_table.size()) * kv.block_size() < end) {
      throw Error("forward: block table of sequence " + std::to_string(s) + " does not cover position " +
                  std::to_string(end - 1));
    }
    for (int32_t b : sb.block_table) {
      if (b < 0 || b >= kv.n_blocks()) throw Error("forward: block id " + std::to_string(b) + " out of range");
    }
    for (int64_t i = 0; i < len; ++i) {
      const int32_t tok = sb.tokens[i];
      if (tok < 0 || tok >= c.n_vocab) {
        throw Error("forward: token id " + std::to_string(tok) + " out of range [0, " + std::to_string(c.n_vocab) + ")");
      }
      tok_seq_.push_back(static_cast<int32_t>(s));
      tok_pos_.push_back(sb.pos0 + i);
      const bool decode = sb.decode_from < 0 ? len == 1 : sb.pos0 + i >= sb.decode_from;
      tok_decode_.push_back(decode ? 1 : 0);
      if (sb.logits == SeqBatch::Logits::All || (sb.logits == SeqBatch::Logits::Last && i == len - 1)) {
        out_rows_.push_back(n + i);
        out_decode_.push_back(decode ? 1 : 0);
      }
    }
    n += len;
  }
  n_out_rows_ = static_cast<int64_t>(out_rows_.size());
  attention_seconds_ = 0;
  attended_positions_ = 0;
  if (n == 0) return logits_.data();
  const int64_t attn_tokens = attention_tokens(kv.block_size());
  reserve(n, kv.block_size(), attn_tokens);
  plan_attention(seqs, attn_tokens);
  for (int64_t t = 0; t < n; ++t) attended_positions_ += tok_pos_[t] + 1;

  const int64_t E = c.n_embd, QD = c.q_dim(), KVD = c.kv_dim(), F = c.n_ff, HD = c.head_dim;
  // Per-token element-wise work is split across threads only when there is enough of it.
  const int64_t min_tokens_per_thread = std::max<int64_t>(1, 65536 / std::max(E, F));
  auto par_tokens = [&](auto&& fn) { pool.parallel_for(n, fn, min_tokens_per_thread); };
  float* x = x_.data();
  float* xb = xb_.data();
  float* q = q_.data();
  float* kk = k_.data();
  float* vv = v_.data();
  float* attn = attn_.data();
  ForwardProfile* const prof = profile_;
  auto lap = [prof](FwdOp op) {
    if (prof) prof->lap(op);
  };
  if (prof) prof->begin();

  // Embeddings: dequantize each token's row.
  {
    const TypeTraits& et = type_traits(w.token_embd.type);
    par_tokens([&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const SeqBatch& sb = seqs[tok_seq_[t]];
        const int32_t tok = sb.tokens[tok_pos_[t] - sb.pos0];
        et.to_float(w.token_embd.data + static_cast<size_t>(tok) * w.token_embd.row_bytes, x + t * E, E);
      }
    });
  }
  lap(FwdOp::Embed);

  const RopeParams rope_p{HD, c.n_rot, c.rope_freq_base, c.rope_freq_scale, w.rope_freqs.data,
                          c.rope_style == RopeStyle::Neox};
  // Each token's rotation angles, computed once for all layers.
  grow(rope_cs_, static_cast<size_t>(n * c.n_rot));
  par_tokens([&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) rope_angles(tok_pos_[t], rope_p, rope_cs_.data() + t * c.n_rot);
  });
  const AttentionShape shape{c.n_head, c.n_head_kv, HD, 1.0f / std::sqrt(static_cast<float>(HD))};
  const size_t block_stride = static_cast<size_t>(kv.block_size()) * kv.row_bytes();

  for (int64_t il = 0; il < c.n_layer; ++il) {
    const LayerWeights& L = w.layers[il];

    // --- attention ---
    par_tokens([&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) rms_norm(x + t * E, L.attn_norm.data, xb + t * E, E, c.rms_eps);
    });
    lap(FwdOp::AttnNorm);
    {
      // One input, one conversion and one wait on the pool for all three.
      const MatmulOutput qkv[] = {{&L.wq, q}, {&L.wk, kk}, {&L.wv, vv}};
      matmul_many(K, pool, qkv, xb, n, mm_, tok_decode_);
    }
    add_bias(q, L.bq, n, QD);
    add_bias(kk, L.bk, n, KVD);
    add_bias(vv, L.bv, n, KVD);
    lap(FwdOp::Qkv);

    par_tokens([&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const float* cs = rope_cs_.data() + t * c.n_rot;
        rope_rotate(q + t * QD, c.n_head, cs, rope_p);
        rope_rotate(kk + t * KVD, c.n_head_kv, cs, rope_p);
        const SeqBatch& sb = seqs[tok_seq_[t]];
        const int64_t p = tok_pos_[t];
        const int32_t block = sb.block_table[p / kv.block_size()];
        const int32_t slot = static_cast<int32_t>(p % kv.block_size());
        store_row(K, kv.type(), kk + t * KVD, kv.k_row(il, block, slot), KVD);
        store_row(K, kv.type(), vv + t * KVD, kv.v_row(il, block, slot), KVD);
      }
    });
    lap(FwdOp::RopeStore);

    // One task per (cluster of tokens sharing KV blocks, group of query heads sharing a KV
    // head); each reads the blocks its tokens hold once for all of them, up to each token's
    // position. Groups are split while there are too few tasks to keep every thread busy (one
    // decoding token, few KV heads). Threads take tasks in turn, the costliest first.
    const int64_t n_rep = c.n_head / c.n_head_kv;
    const int64_t n_clusters = static_cast<int64_t>(attn_clusters_.size());
    int64_t group = n_rep;
    while (group % 2 == 0 && n_clusters * (c.n_head / group) < 2 * static_cast<int64_t>(pool.size())) group /= 2;
    const int64_t groups_per_cluster = c.n_head / group;
    const int64_t n_tasks = n_clusters * groups_per_cluster;
    std::atomic<int64_t> next_task{0};
    auto attend = [&](int ith, int) {
      float* scratch = attn_scratch_.data() + ith * attn_scratch_per_thread_;
      PagedKvView view;
      view.k_base = kv.k_row(il, 0, 0);
      view.v_base = kv.v_row(il, 0, 0);
      view.block_stride = block_stride;
      view.row_bytes = kv.row_bytes();
      view.block_size = kv.block_size();
      view.type = kv.type();
      AttnToken toks[kAttnTokens];
      for (int64_t task = next_task.fetch_add(1, std::memory_order_relaxed); task < n_tasks;
           task = next_task.fetch_add(1, std::memory_order_relaxed)) {
        const AttnCluster& cl = attn_clusters_[static_cast<size_t>(task / groups_per_cluster)];
        const int64_t h = task % groups_per_cluster * group;
        for (int64_t i = 0; i < cl.size; ++i) {
          const int64_t t = attn_tokens_[static_cast<size_t>(cl.begin + i)];
          toks[i].q = q + t * QD + h * HD;
          toks[i].out = attn + t * QD + h * HD;
          toks[i].n_ctx = tok_pos_[t] + 1;
          toks[i].block_table = seqs[tok_seq_[t]].block_table.data();
        }
        attend_tokens(K, view, shape, h, group, std::span<const AttnToken>(toks, static_cast<size_t>(cl.size)), scratch);
      }
    };
    // Attention work grows with context; tiny workloads stay on the caller.
    const auto t_attn = std::chrono::steady_clock::now();
    if (attended_positions_ * QD < (1 << 15)) {
      attend(0, 1);
    } else {
      pool.run(attend);
    }
    attention_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_attn).count();
    lap(FwdOp::Attention);

    matmul(K, pool, L.wo, attn, n, xb, mm_, tok_decode_);
    par_tokens([&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) add_inplace(x + t * E, xb + t * E, E);
    });
    lap(FwdOp::AttnOut);

    // --- feed-forward ---
    par_tokens([&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) rms_norm(x + t * E, L.ffn_norm.data, xb + t * E, E, c.rms_eps);
    });
    lap(FwdOp::FfnNorm);
    {
      const MatmulOutput gate_up[] = {{&L.w_gate, gate_.data()}, {&L.w_up, up_.data()}};
      matmul_many(K, pool, gate_up, xb, n, mm_, tok_decode_);
    }
    lap(FwdOp::GateUp);
    // Element-wise over the whole [n][F] block (one exp per element): split by elements, not
    // tokens, so that a few decoding tokens still use every thread.
    pool.parallel_for(
        n * F, [&](int64_t i0, int64_t i1) { K.silu_mul(gate_.data() + i0, up_.data() + i0, gate_.data() + i0, i1 - i0); },
        16384);
    lap(FwdOp::Act);
    matmul(K, pool, L.w_down, gate_.data(), n, xb, mm_, tok_decode_);
    par_tokens([&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) add_inplace(x + t * E, xb + t * E, E);
    });
    lap(FwdOp::Down);
  }

  // --- output: only the rows asked for ---
  const int64_t R = n_out_rows_;
  if (R == 0) return logits_.data();
  for (int64_t r = 0; r < R; ++r) rms_norm(x + out_rows_[r] * E, w.output_norm.data, xb + r * E, E, c.rms_eps);
  grow(logits_, R * c.n_vocab);
  matmul(K, pool, w.output, xb, R, logits_.data(), mm_, out_decode_);
  lap(FwdOp::Output);
  return logits_.data();
}

}  // namespace edgeinfer
