#include "model/model.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "kernels/kernels.h"
#include "quant/type_traits.h"
#include "quant/blocks.h"
#include "quant/x16_layout.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

std::string shape_str(const std::vector<int64_t>& ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

class Binder {
 public:
  Binder(const GgufFile& f) : f_(f) {}

  const GgufTensorInfo* find(TensorRole role, int layer, Presence presence) {
    std::string name = tensor_name(role, layer);
    const GgufTensorInfo* t = f_.find_tensor(name);
    if (!t && presence == Presence::Required) throw Error(f_.path() + ": missing tensor '" + name + "'");
    if (t && presence == Presence::Absent) throw Error(f_.path() + ": unexpected tensor '" + name + "'");
    if (t) ++bound_;
    return t;
  }

  void check_shape(const GgufTensorInfo& t, std::vector<int64_t> want) {
    if (t.ne != want) {
      throw Error(f_.path() + ": tensor '" + t.name + "' has shape " + shape_str(t.ne) + ", expected " +
                  shape_str(want));
    }
  }

  WeightMatrix matrix(TensorRole role, int layer, int64_t n_in, int64_t n_out,
                      Presence presence = Presence::Required) {
    const GgufTensorInfo* t = find(role, layer, presence);
    if (!t) return {};
    check_shape(*t, {n_in, n_out});
    const TypeTraits* tr = find_type_traits(t->type);
    if (!tr || !tr->vec_dot_ref) {
      throw Error(f_.path() + ": tensor '" + t->name + "' has type " + std::string(tensor_type_name(t->type)) +
                  ", which edgeinfer cannot compute with");
    }
    WeightMatrix w;
    w.type = t->type;
    w.n_in = n_in;
    w.n_out = n_out;
    w.data = t->data;
    w.row_bytes = static_cast<size_t>(*tensor_row_bytes(t->type, n_in));
    return w;
  }

  VectorView vec(TensorRole role, int layer, int64_t n, Presence presence = Presence::Required) {
    const GgufTensorInfo* t = find(role, layer, presence);
    if (!t) return {};
    check_shape(*t, {n});
    if (t->type != TensorType::F32) {
      throw Error(f_.path() + ": tensor '" + t->name + "' must be f32, found " +
                  std::string(tensor_type_name(t->type)));
    }
    if (reinterpret_cast<uintptr_t>(t->data) % alignof(float) != 0) {
      throw Error(f_.path() + ": tensor '" + t->name + "' is not 4-byte aligned");
    }
    return {reinterpret_cast<const float*>(t->data), n};
  }

  size_t bound() const { return bound_; }

 private:
  const GgufFile& f_;
  size_t bound_ = 0;
};

}  // namespace

std::unique_ptr<Model> Model::load(const std::string& path) {
  ModelLoadOptions o;
  const char* env = std::getenv("EDGEINFER_REPACK");
  if (!env || std::string(env) != "0") o.repack_for = &kernels_for(select_isa());
  return load(path, o);
}

std::unique_ptr<Model> Model::load(const std::string& path, const ModelLoadOptions& options) {
  std::unique_ptr<Model> m = from_gguf(GgufFile::open(path));
  if (options.repack_for) m->repack(*options.repack_for);
  return m;
}

void Model::FreeAligned::operator()(uint8_t* p) const { std::free(p); }

void Model::own_vectors() {
  std::vector<VectorView*> views;
  for (LayerWeights& L : weights_.layers) {
    for (VectorView* v : {&L.attn_norm, &L.bq, &L.bk, &L.bv, &L.ffn_norm}) views.push_back(v);
  }
  views.push_back(&weights_.output_norm);
  views.push_back(&weights_.rope_freqs);
  size_t total = 0;
  for (const VectorView* v : views) total += v->data ? static_cast<size_t>(v->n) : 0;
  vectors_.resize(total);  // sized once: the views below point into it
  size_t at = 0;
  for (VectorView* v : views) {
    if (!v->data) continue;
    std::copy(v->data, v->data + v->n, vectors_.data() + at);
    v->data = vectors_.data() + at;
    at += static_cast<size_t>(v->n);
  }
}

void Model::repack(const Kernels& k) {
  std::vector<WeightMatrix*> todo;
  auto consider = [&](WeightMatrix& w) {
    const auto tid = static_cast<uint32_t>(w.type);
    if (w.data && !w.x16 && x16_row_fits(w.type, w.n_in) && k.gemm_tile_x16[tid] && k.gemv_x16[tid]) {
      todo.push_back(&w);
    }
  };
  for (LayerWeights& L : weights_.layers) {
    for (WeightMatrix* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) consider(*w);
  }
  consider(weights_.output);
  if (todo.empty()) return;
  if (file_.is_file_mapped()) own_vectors();
  constexpr size_t kAlign = 64;
  auto padded = [](size_t n) { return (n + kAlign - 1) / kAlign * kAlign; };
  size_t total = 0;
  for (const WeightMatrix* w : todo) total += padded(x16_matrix_bytes(w->type, w->n_in, w->n_out));
  // 2 MiB-aligned and advised for huge pages: a few hundred page faults to fill it, not ~150k.
  constexpr size_t kHuge = size_t{2} << 20;
  total = (total + kHuge - 1) / kHuge * kHuge;
  auto* arena = static_cast<uint8_t*>(std::aligned_alloc(kHuge, total));
  if (!arena) throw Error(file_.path() + ": cannot allocate " + std::to_string(total >> 20) + " MiB to repack the weights");
  x16_arena_.reset(arena);
  ::madvise(arena, total, MADV_HUGEPAGE);  // advice only: without it the buffer is still correct
  // Each matrix is packed by every hardware thread (a slice of its groups each), then its rows'
  // pages leave resident memory (whole pages inside the matrix only; reading a row again maps
  // it back from the file), so resident memory grows by at most one matrix over the file.
  const unsigned n_threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  const long page = sysconf(_SC_PAGESIZE);
  size_t off = 0;
  for (WeightMatrix* w : todo) {
    uint8_t* dst = arena + off;
    off += padded(x16_matrix_bytes(w->type, w->n_in, w->n_out));
    const int64_t groups = (w->n_out + kX16Rows - 1) / kX16Rows;
    auto slice = [&, w](unsigned t) {
      x16_pack_groups(w->type, w->n_in, w->n_out, w->data, w->row_bytes, dst, groups * t / n_threads,
                      groups * (t + 1) / n_threads);
    };
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < n_threads; ++t) threads.emplace_back(slice, t);
    slice(0);
    for (std::thread& t : threads) t.join();
    w->x16 = dst;
    w->x16_group_bytes = x16_group_bytes(w->type, w->n_in);
    if (file_.is_file_mapped() && page > 0) {
      const auto ps = static_cast<uintptr_t>(page);
      const auto b = reinterpret_cast<uintptr_t>(w->data), e = b + w->row_bytes * static_cast<size_t>(w->n_out);
      const uintptr_t pb = (b + ps - 1) / ps * ps, pe = e / ps * ps;
      if (pe > pb) ::madvise(reinterpret_cast<void*>(pb), pe - pb, MADV_DONTNEED);
    }
  }
  x16_bytes_ = total;
  x16_matrices_ = static_cast<int>(todo.size());
}

std::unique_ptr<Model> Model::from_gguf(GgufFile file) {
  std::unique_ptr<Model> m(new Model(std::move(file)));
  m->bind();
  return m;
}

void Model::bind() {
  const GgufFile& f = file_;
  auto arch_name = f.get_string_opt("general.architecture");
  if (!arch_name) throw Error(f.path() + ": missing metadata key 'general.architecture'");
  arch_ = find_arch(*arch_name);
  if (!arch_) {
    throw Error(f.path() + ": architecture '" + *arch_name + "' is not supported (supported: " +
                supported_arch_names() + ")");
  }
  config_ = read_model_config(f, *arch_);
  ModelConfig& c = config_;

  Binder b(f);
  const GgufTensorInfo* embd = b.find(TensorRole::TokenEmbd, -1, Presence::Required);
  if (embd->ne.size() != 2 || embd->ne[0] != c.n_embd) {
    throw Error(f.path() + ": tensor 'token_embd.weight' has shape " + shape_str(embd->ne) +
                ", expected [" + std::to_string(c.n_embd) + ", n_vocab]");
  }
  c.n_vocab = embd->ne[1];
  // token_embd rows are dequantized one at a time; any type with a reference to_float will do.
  const TypeTraits* et = find_type_traits(embd->type);
  if (!et || !et->to_float) {
    throw Error(f.path() + ": token_embd.weight type " + std::string(tensor_type_name(embd->type)) +
                " is not supported");
  }
  weights_.token_embd = {embd->type, c.n_embd, c.n_vocab, embd->data,
                         static_cast<size_t>(*tensor_row_bytes(embd->type, c.n_embd))};
  weights_.output_norm = b.vec(TensorRole::OutputNorm, -1, c.n_embd);
  weights_.output = b.matrix(TensorRole::Output, -1, c.n_embd, c.n_vocab, arch_->output);
  if (!weights_.output.data) {
    // Tied embeddings: the output projection is the embedding matrix.
    weights_.output = b.matrix(TensorRole::TokenEmbd, -1, c.n_embd, c.n_vocab);
    weights_.output_tied = true;
  }
  weights_.rope_freqs = b.vec(TensorRole::RopeFreqs, -1, c.n_rot / 2, arch_->rope_freqs);

  const int64_t q = c.q_dim(), kv = c.kv_dim();
  weights_.layers.resize(c.n_layer);
  for (int il = 0; il < c.n_layer; ++il) {
    LayerWeights& l = weights_.layers[il];
    l.attn_norm = b.vec(TensorRole::AttnNorm, il, c.n_embd);
    l.wq = b.matrix(TensorRole::AttnQ, il, c.n_embd, q);
    l.wk = b.matrix(TensorRole::AttnK, il, c.n_embd, kv);
    l.wv = b.matrix(TensorRole::AttnV, il, c.n_embd, kv);
    l.bq = b.vec(TensorRole::AttnQBias, il, q, arch_->qkv_bias);
    l.bk = b.vec(TensorRole::AttnKBias, il, kv, arch_->qkv_bias);
    l.bv = b.vec(TensorRole::AttnVBias, il, kv, arch_->qkv_bias);
    l.wo = b.matrix(TensorRole::AttnOut, il, q, c.n_embd);
    l.ffn_norm = b.vec(TensorRole::FfnNorm, il, c.n_embd);
    l.w_gate = b.matrix(TensorRole::FfnGate, il, c.n_embd, c.n_ff);
    l.w_up = b.matrix(TensorRole::FfnUp, il, c.n_embd, c.n_ff);
    l.w_down = b.matrix(TensorRole::FfnDown, il, c.n_ff, c.n_embd);
  }
  for (const auto& t : f.tensors()) weight_bytes_ += t.n_bytes;
}

}  // namespace edgeinfer
