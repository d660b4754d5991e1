#pragma once
// Hyperparameters of a llama-like model, read from GGUF metadata ("<arch>.*" keys) and
// validated for consistency. Shapes of tensors are checked against these in model.cpp.
#include <cstdint>
#include <string>

#include "model/arch.h"

namespace edgeinfer {

class GgufFile;

struct ModelConfig {
  std::string arch;
  std::string name;  // general.name, may be empty
  RopeStyle rope_style = RopeStyle::Norm;
  int64_t n_vocab = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;     // attention.key_length (= value_length), default n_embd / n_head
  int64_t n_rot = 0;        // rope.dimension_count, default head_dim
  int64_t n_ff = 0;
  int64_t n_ctx_train = 0;  // context_length
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / rope.scaling.factor for linear scaling
  float rms_eps = 1e-5f;

  int64_t n_gqa() const { return n_head / n_head_kv; }
  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }
};

// Throws Error("<path>: ...") for a missing key, a wrong value type or inconsistent values.
ModelConfig read_model_config(const GgufFile& f, const ArchDesc& arch);

}  // namespace edgeinfer
