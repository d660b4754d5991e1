#include "model/model_config.h"

#include <string>

#include "gguf/gguf_file.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

int64_t positive(const GgufFile& f, const std::string& key, int64_t v, int64_t max = (int64_t{1} << 24)) {
  if (v <= 0 || v > max) {
    throw Error(f.path() + ": metadata key '" + key + "' has invalid value " + std::to_string(v));
  }
  return v;
}

}  // namespace

ModelConfig read_model_config(const GgufFile& f, const ArchDesc& arch) {
  ModelConfig c;
  c.arch = std::string(arch.name);
  c.rope_style = arch.rope_style;
  c.name = f.get_string_opt("general.name").value_or("");
  const std::string p = c.arch + ".";

  auto req = [&](const char* k) {
    std::string key = p + k;
    return positive(f, key, f.get_int(key));
  };
  c.n_embd = req("embedding_length");
  c.n_layer = positive(f, p + "block_count", f.get_int(p + "block_count"), 4096);
  c.n_ff = req("feed_forward_length");
  c.n_head = req("attention.head_count");
  c.n_head_kv = positive(f, p + "attention.head_count_kv",
                         f.get_int_opt(p + "attention.head_count_kv").value_or(c.n_head));
  c.n_ctx_train = req("context_length");
  if (c.n_head % c.n_head_kv != 0) {
    throw Error(f.path() + ": attention.head_count " + std::to_string(c.n_head) +
                " is not a multiple of head_count_kv " + std::to_string(c.n_head_kv));
  }
  const int64_t default_hd = c.n_embd / c.n_head;
  c.head_dim = positive(f, p + "attention.key_length", f.get_int_opt(p + "attention.key_length").value_or(default_hd));
  int64_t vlen = positive(f, p + "attention.value_length",
                          f.get_int_opt(p + "attention.value_length").value_or(c.head_dim));
  if (vlen != c.head_dim) {
    throw Error(f.path() + ": attention.value_length " + std::to_string(vlen) +
                " differs from key_length " + std::to_string(c.head_dim) + " (not supported)");
  }
  if (c.head_dim % 2 != 0) throw Error(f.path() + ": head dimension must be even");
  c.n_rot = positive(f, p + "rope.dimension_count", f.get_int_opt(p + "rope.dimension_count").value_or(c.head_dim));
  if (c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
    throw Error(f.path() + ": rope.dimension_count " + std::to_string(c.n_rot) + " invalid for head dimension " +
                std::to_string(c.head_dim));
  }
  c.rope_freq_base = static_cast<float>(f.get_float_opt(p + "rope.freq_base").value_or(10000.0));
  if (!(c.rope_freq_base > 0)) throw Error(f.path() + ": rope.freq_base must be positive");
  c.rms_eps = static_cast<float>(f.get_float(p + "attention.layer_norm_rms_epsilon"));
  if (!(c.rms_eps > 0) || c.rms_eps > 1) throw Error(f.path() + ": attention.layer_norm_rms_epsilon out of range");

  if (auto type = f.get_string_opt(p + "rope.scaling.type")) {
    if (*type == "linear") {
      double factor = f.get_float_opt(p + "rope.scaling.factor").value_or(1.0);
      if (!(factor > 0)) throw Error(f.path() + ": rope.scaling.factor must be positive");
      c.rope_freq_scale = static_cast<float>(1.0 / factor);
    } else if (*type != "none") {
      throw Error(f.path() + ": rope scaling type '" + *type + "' is not supported (supported: none, linear)");
    }
  } else if (auto factor = f.get_float_opt(p + "rope.scale_linear")) {
    if (!(*factor > 0)) throw Error(f.path() + ": rope.scale_linear must be positive");
    c.rope_freq_scale = static_cast<float>(1.0 / *factor);
  }
  return c;
}

}  // namespace edgeinfer
