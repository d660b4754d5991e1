#pragma once
// Architectures described as data: one table entry per architecture says which tensors exist,
// which are optional, how RoPE rotates, and where hyperparameters come from. Adding a llama-like
// architecture means adding a row here, not editing switch statements across the code.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace edgeinfer {

enum class RopeStyle {
  Norm,  // rotate adjacent pairs (2i, 2i+1) — llama
  Neox,  // rotate pairs (i, i + n_rot/2) — qwen2, gpt-neox
};

// Every tensor a supported architecture may have. Per-layer roles are formatted with the
// layer index ("blk.%d.attn_q.weight").
enum class TensorRole {
  TokenEmbd,
  OutputNorm,
  Output,
  RopeFreqs,
  AttnNorm,
  AttnQ,
  AttnK,
  AttnV,
  AttnQBias,
  AttnKBias,
  AttnVBias,
  AttnOut,
  FfnNorm,
  FfnGate,
  FfnUp,
  FfnDown,
};

enum class Presence { Required, Optional, Absent };

struct TensorSpec {
  TensorRole role;
  std::string_view name;  // GGUF name; per-layer names contain "{}" for the layer index
  bool per_layer;
};

struct ArchDesc {
  std::string_view name;  // general.architecture
  RopeStyle rope_style;
  Presence qkv_bias;       // attn_{q,k,v}.bias
  Presence output;         // output.weight (Optional: tied to token_embd when absent)
  Presence rope_freqs;     // rope_freqs.weight (long-context frequency factors)
};

// The tensor name table shared by the llama-like architectures.
std::span<const TensorSpec> tensor_specs();
const TensorSpec& tensor_spec(TensorRole role);
std::string tensor_name(TensorRole role, int layer = -1);

// nullptr when the architecture is not supported.
const ArchDesc* find_arch(std::string_view name);
// Comma-separated list for error messages.
std::string supported_arch_names();

}  // namespace edgeinfer
