#pragma once
// A loaded model: the mmapped GGUF, its validated config, and views of every weight (no copy,
// but for the x16 copies of repacked matrices and, with them, the 1-D tensors: see repack).
// The model is immutable after load and owns no per-sequence state: the forward pass
// (model/forward.h) takes a batch and a KV cache from the caller.
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "model/arch.h"
#include "model/model_config.h"

namespace edgeinfer {

// A 1-D F32 tensor (norm weights, biases, rope factors); nullptr data when absent.
struct VectorView {
  const float* data = nullptr;
  int64_t n = 0;
  explicit operator bool() const { return data != nullptr; }
};

struct LayerWeights {
  VectorView attn_norm;        // [n_embd]
  WeightMatrix wq, wk, wv;     // [q_dim][n_embd], [kv_dim][n_embd], [kv_dim][n_embd]
  VectorView bq, bk, bv;       // optional biases [q_dim], [kv_dim], [kv_dim]
  WeightMatrix wo;             // [n_embd][q_dim]
  VectorView ffn_norm;         // [n_embd]
  WeightMatrix w_gate, w_up;   // [n_ff][n_embd]
  WeightMatrix w_down;         // [n_embd][n_ff]
};

struct ModelWeights {
  WeightMatrix token_embd;  // [n_vocab][n_embd], rows are looked up (dequantized per token)
  VectorView output_norm;   // [n_embd]
  WeightMatrix output;      // [n_vocab][n_embd]; = token_embd when tied
  bool output_tied = false;
  VectorView rope_freqs;    // [n_rot/2] frequency divisors, optional
  std::vector<LayerWeights> layers;
};

struct ModelLoadOptions {
  // Matrices whose type these kernels read faster in the x16 layout (quant/x16_layout.h) are
  // repacked into one aligned buffer; each repacked matrix's file pages are then released (the
  // mapping reads them back if the rows are used again), so resident memory stays about the
  // file's size. nullptr: no repacking, every matrix read from the mapping.
  const Kernels* repack_for = nullptr;
};

class Model {
 public:
  // Loads and validates a GGUF model. Throws Error naming the file and the problem:
  // unsupported architecture, missing metadata key, missing tensor, wrong shape or type.
  // The one-argument form repacks for the machine's kernels (kernels_for(select_isa())) unless
  // the environment sets EDGEINFER_REPACK=0.
  static std::unique_ptr<Model> load(const std::string& path);
  static std::unique_ptr<Model> load(const std::string& path, const ModelLoadOptions& options);
  // Binds a model to an already-parsed file (takes ownership).
  static std::unique_ptr<Model> from_gguf(GgufFile file);

  const GgufFile& gguf() const { return file_; }
  const ModelConfig& config() const { return config_; }
  const ArchDesc& arch() const { return *arch_; }
  const ModelWeights& weights() const { return weights_; }
  // Bytes of tensor data (what decoding streams per token, roughly).
  uint64_t weight_bytes() const { return weight_bytes_; }
  // The repacked copies: bytes held, and how many matrices (0 without repacking).
  uint64_t repacked_bytes() const { return x16_bytes_; }
  int repacked_matrices() const { return x16_matrices_; }

 private:
  explicit Model(GgufFile file) : file_(std::move(file)) {}
  void bind();
  void repack(const Kernels& k);
  // Copies the 1-D tensors (norms, biases, rope factors) out of the mapping. They sit between
  // the matrices in the file, and where the page cache holds the file in huge folios (ext4 on
  // recent kernels: 2 MiB), reading one maps its whole folio back, neighbouring matrices'
  // released rows included: ~55 MiB of resident memory on tiny1b Q4_K_M, whose every matrix is
  // repacked. A few hundred KiB copied before the release keeps the mapping out of decoding.
  void own_vectors();

  struct FreeAligned {
    void operator()(uint8_t* p) const;
  };
  GgufFile file_;
  std::unique_ptr<uint8_t, FreeAligned> x16_arena_;
  std::vector<float> vectors_;  // own_vectors' copies
  uint64_t x16_bytes_ = 0;
  int x16_matrices_ = 0;
  const ArchDesc* arch_ = nullptr;
  ModelConfig config_;
  ModelWeights weights_;
  uint64_t weight_bytes_ = 0;
};

}  // namespace edgeinfer
