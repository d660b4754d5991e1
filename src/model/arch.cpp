#include "model/arch.h"

#include <array>
#include <string>

#include "util/error.h"

namespace edgeinfer {

namespace {

constexpr std::array<TensorSpec, 16> kTensorSpecs{{
    {TensorRole::TokenEmbd, "token_embd.weight", false},
    {TensorRole::OutputNorm, "output_norm.weight", false},
    {TensorRole::Output, "output.weight", false},
    {TensorRole::RopeFreqs, "rope_freqs.weight", false},
    {TensorRole::AttnNorm, "blk.{}.attn_norm.weight", true},
    {TensorRole::AttnQ, "blk.{}.attn_q.weight", true},
    {TensorRole::AttnK, "blk.{}.attn_k.weight", true},
    {TensorRole::AttnV, "blk.{}.attn_v.weight", true},
    {TensorRole::AttnQBias, "blk.{}.attn_q.bias", true},
    {TensorRole::AttnKBias, "blk.{}.attn_k.bias", true},
    {TensorRole::AttnVBias, "blk.{}.attn_v.bias", true},
    {TensorRole::AttnOut, "blk.{}.attn_output.weight", true},
    {TensorRole::FfnNorm, "blk.{}.ffn_norm.weight", true},
    {TensorRole::FfnGate, "blk.{}.ffn_gate.weight", true},
    {TensorRole::FfnUp, "blk.{}.ffn_up.weight", true},
    {TensorRole::FfnDown, "blk.{}.ffn_down.weight", true},
}};

constexpr std::array<ArchDesc, 2> kArchs{{
    // Llama 1/2/3, Mistral, TinyLlama, ...: NORM rope, optional biases (some fine-tunes carry
    // them), separate or tied output, optional long-context frequency factors.
    {"llama", RopeStyle::Norm, Presence::Optional, Presence::Optional, Presence::Optional},
    // Qwen2 / Qwen2.5: NEOX rope, q/k/v biases, usually tied output.
    {"qwen2", RopeStyle::Neox, Presence::Required, Presence::Optional, Presence::Optional},
}};

}  // namespace

std::span<const TensorSpec> tensor_specs() { return kTensorSpecs; }

const TensorSpec& tensor_spec(TensorRole role) {
  for (const auto& s : kTensorSpecs) {
    if (s.role == role) return s;
  }
  throw Error("internal: unknown tensor role");
}

std::string tensor_name(TensorRole role, int layer) {
  const TensorSpec& s = tensor_spec(role);
  std::string name(s.name);
  if (s.per_layer) {
    auto at = name.find("{}");
    name.replace(at, 2, std::to_string(layer));
  }
  return name;
}

const ArchDesc* find_arch(std::string_view name) {
  for (const auto& a : kArchs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string supported_arch_names() {
  std::string out;
  for (const auto& a : kArchs) {
    if (!out.empty()) out += ", ";
    out += a.name;
  }
  return out;
}

}  // namespace edgeinfer
