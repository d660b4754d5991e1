#pragma once
// Random-weight models with the shapes of real ones (`edgeinfer synth`), so performance can be
// measured without downloading weights. Weights are drawn as for the shared synth-* reference
// models (../shared/data/README.md, "How the synthetic models were made"):
//   matmul weights ~ N(0, 1/sqrt(n_in)); token_embd ~ N(0, 1), or N(0, 1/sqrt(n_embd)) when it is
//   also the output matrix (tied); norm weights 1 + 0.1·N(0, 1); biases ~ N(0, 0.1).
// Our generator is xoshiro256** seeded per (seed, tensor, row) with Box–Muller normals, not
// numpy's, so values differ from the shared files; distributions and shapes are the same, and a
// given seed gives the same file on every machine and thread count.
//
// The file is written as the target type directly: each tensor is generated and quantized in
// row chunks while the writer streams it out, so a 1B model never sits in memory as f32. Types
// per tensor come from the same planner as `edgeinfer quantize` (quant/quantize_model.h).
//
// Vocabularies: tiny1b copies every tokenizer.* key of
// $EDGEINFER_DATA/tokenizer/ggml-vocab-llama-spm.gguf, small those of
// $EDGEINFER_DATA/models/stories260K.gguf. llama3-1b and qwen2.5-0.5b have no such file in the
// reference data, so by default they get a byte-level BPE stand-in of the right size (256 byte
// tokens, a few hundred letter-pair merges, the family's special tokens at their real ids, and
// "<filler_N>" tokens elsewhere): tokenization works and is cheap, but ids differ from the real
// model's. --vocab-from FILE copies the tokenizer.* keys of any GGUF instead (and n_vocab follows
// that vocabulary).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quant/quantize_model.h"

namespace edgeinfer {

class ThreadPool;

struct SynthPreset {
  std::string_view name;
  std::string_view arch;  // general.architecture
  std::string_view description;
  int64_t n_embd;
  int64_t n_layer;
  int64_t n_head;
  int64_t n_head_kv;
  int64_t n_ff;
  int64_t n_vocab;
  int64_t n_ctx_train;
  float rope_theta;
  float rms_eps;
  bool qkv_bias;
  bool tied_output;       // no output.weight: token_embd is the output matrix
  bool llama3_rope_freqs; // rope_freqs.weight with Llama-3 scaling factors
  float rope_scale_factor;  // Llama-3 "factor" (8 for 3.1, 32 for 3.2) when llama3_rope_freqs
  std::string_view default_vocab;  // relative to $EDGEINFER_DATA; "" = byte-level stand-in
};

std::span<const SynthPreset> synth_presets();
// Throws Error listing the presets when the name is unknown.
const SynthPreset& synth_preset(std::string_view name);
std::string synth_preset_names();  // "tiny1b, llama3-1b, qwen2.5-0.5b, small"

struct SynthOptions {
  std::string preset = "small";
  std::string type = "f32";  // any quantize target name (quant/quantize_model.h)
  std::string vocab_from;    // GGUF whose tokenizer.* keys to copy; "" = the preset's default
  uint64_t seed = 1;
  bool pure = false;         // same as quantize --pure
};

struct SynthReport {
  std::string vocab_source;  // path copied from, or "byte-level stand-in"
  int64_t n_vocab = 0;
  int64_t n_params = 0;
  uint64_t file_bytes = 0;
  std::vector<QuantizedTensor> tensors;  // in file order (src_type = F32)
};

// The tensors the preset has, in file order, with their F32 shapes (for planning and tests).
std::vector<TensorDesc> synth_tensor_descs(const SynthPreset& p, int64_t n_vocab);

// Writes the model to `out_path` (temporary file + rename). Throws Error for an unknown preset or
// type, or a vocabulary file that is missing or has no tokenizer.ggml.tokens.
SynthReport write_synth_model(const std::string& out_path, const SynthOptions& opt, ThreadPool& pool,
                              const QuantizeProgressFn& progress = {});

class GgufWriter;
// Adds the byte-level BPE stand-in vocabulary (tokenizer.* keys) of n_vocab tokens for a llama
// ("llama-bpe" pre-tokenizer, Llama-3 special ids) or qwen2 ("qwen2", Qwen2 special ids) model;
// special tokens whose id is >= n_vocab are left out.
void add_standin_vocab(GgufWriter& w, std::string_view arch, int64_t n_vocab);

// Llama-3 rope frequency divisors ([head_dim/2]) as the reference converter computes them
// (low_freq_factor 1, high_freq_factor 4, original context 8192).
std::vector<float> llama3_rope_factors(int64_t head_dim, float theta, float factor);

}  // namespace edgeinfer
