#include "model/synth_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "quant/type_traits.h"
#include "sampling/rng.h"
#include "util/data_path.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer {

namespace {

constexpr std::array<SynthPreset, 4> kPresets = {{
    {"tiny1b", "llama", "TinyLlama-1.1B shapes", 2048, 22, 32, 4, 5632, 32000, 2048, 10000.0f, 1e-5f, false, false,
     false, 1.0f, "tokenizer/ggml-vocab-llama-spm.gguf"},
    {"llama3-1b", "llama", "Llama-3.2-1B shapes (tied output, rope_freqs)", 2048, 16, 32, 8, 8192, 128256, 131072,
     500000.0f, 1e-5f, false, true, true, 32.0f, ""},
    {"qwen2.5-0.5b", "qwen2", "Qwen2.5-0.5B shapes (q/k/v biases, tied output)", 896, 24, 14, 2, 4864, 151936, 32768,
     1000000.0f, 1e-6f, true, true, false, 1.0f, ""},
    {"small", "llama", "like the shared synth-llama (stories260K vocabulary)", 256, 4, 8, 2, 768, 512, 1024, 10000.0f,
     1e-5f, false, false, false, 1.0f, "models/stories260K.gguf"},
}};

// How a tensor's values are drawn.
enum class Draw { Normal, Norm, Bias, RopeFreqs };

struct SynthTensor {
  TensorDesc desc;
  Draw draw;
  float stddev;  // Normal and Bias
};

std::vector<SynthTensor> synth_tensors(const SynthPreset& p, int64_t n_vocab) {
  const int64_t E = p.n_embd, hd = p.n_embd / p.n_head, QD = p.n_head * hd, KVD = p.n_head_kv * hd, F = p.n_ff;
  const auto inv_sqrt = [](int64_t n) { return 1.0f / std::sqrt(static_cast<float>(n)); };
  std::vector<SynthTensor> t;
  auto add = [&](std::string name, std::vector<int64_t> ne, Draw d, float sd) {
    t.push_back(SynthTensor{TensorDesc{std::move(name), std::move(ne), TensorType::F32}, d, sd});
  };
  add("token_embd.weight", {E, n_vocab}, Draw::Normal, p.tied_output ? inv_sqrt(E) : 1.0f);
  if (p.llama3_rope_freqs) add("rope_freqs.weight", {hd / 2}, Draw::RopeFreqs, 0.0f);
  for (int64_t l = 0; l < p.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", {E}, Draw::Norm, 0.0f);
    add(b + "attn_q.weight", {E, QD}, Draw::Normal, inv_sqrt(E));
    add(b + "attn_k.weight", {E, KVD}, Draw::Normal, inv_sqrt(E));
    add(b + "attn_v.weight", {E, KVD}, Draw::Normal, inv_sqrt(E));
    if (p.qkv_bias) {
      add(b + "attn_q.bias", {QD}, Draw::Bias, 0.1f);
      add(b + "attn_k.bias", {KVD}, Draw::Bias, 0.1f);
      add(b + "attn_v.bias", {KVD}, Draw::Bias, 0.1f);
    }
    add(b + "attn_output.weight", {QD, E}, Draw::Normal, inv_sqrt(QD));
    add(b + "ffn_norm.weight", {E}, Draw::Norm, 0.0f);
    add(b + "ffn_gate.weight", {E, F}, Draw::Normal, inv_sqrt(E));
    add(b + "ffn_up.weight", {E, F}, Draw::Normal, inv_sqrt(E));
    add(b + "ffn_down.weight", {F, E}, Draw::Normal, inv_sqrt(F));
  }
  add("output_norm.weight", {E}, Draw::Norm, 0.0f);
  if (!p.tied_output) add("output.weight", {E, n_vocab}, Draw::Normal, inv_sqrt(E));
  return t;
}

// Standard normals by Box–Muller from one row's own generator.
void fill_normal(Rng& rng, float* out, int64_t n, float mean, float sd) {
  for (int64_t i = 0; i < n; i += 2) {
    double u1 = rng.next_double();
    const double u2 = rng.next_double();
    if (u1 < 1e-300) u1 = 1e-300;
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 6.283185307179586 * u2;
    out[i] = static_cast<float>(mean + sd * r * std::cos(a));
    if (i + 1 < n) out[i + 1] = static_cast<float>(mean + sd * r * std::sin(a));
  }
}

uint64_t row_seed(uint64_t seed, uint64_t tensor, uint64_t row) {
  uint64_t s = seed ^ (tensor * 0x9E3779B97F4A7C15ull);
  const uint64_t a = Rng::splitmix64(s);
  uint64_t s2 = a ^ (row * 0xD1B54A32D192ED03ull);
  return Rng::splitmix64(s2);
}

// The GPT-2 byte-to-character map used by byte-level BPE vocabularies: printable bytes map to
// themselves, the others to U+0100 and up, in byte order.
std::string byte_token(int b) {
  const bool printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  uint32_t cp = static_cast<uint32_t>(b);
  if (!printable) {
    int k = 0;
    for (int x = 0; x < b; ++x) {
      const bool pr = (x >= 0x21 && x <= 0x7e) || (x >= 0xa1 && x <= 0xac) || (x >= 0xae && x <= 0xff);
      if (!pr) ++k;
    }
    cp = 256 + static_cast<uint32_t>(k);
  }
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

struct Special {
  int64_t id;
  const char* text;
};

}  // namespace

void add_standin_vocab(GgufWriter& w, std::string_view arch, int64_t n_vocab) {
  const bool qwen = arch == "qwen2";
  std::vector<Special> specials;
  if (qwen) {
    specials = {{151643, "<|endoftext|>"}, {151644, "<|im_start|>"}, {151645, "<|im_end|>"},
                {151659, "<|fim_prefix|>"}, {151660, "<|fim_middle|>"}, {151661, "<|fim_suffix|>"},
                {151662, "<|fim_pad|>"}};
  } else {
    specials = {{128000, "<|begin_of_text|>"}, {128001, "<|end_of_text|>"}, {128006, "<|start_header_id|>"},
                {128007, "<|end_header_id|>"}, {128009, "<|eot_id|>"}};
  }
  std::vector<std::string> tokens;
  std::vector<int64_t> types;  // 1 normal, 3 control
  std::vector<std::string> merges;
  tokens.reserve(static_cast<size_t>(n_vocab));
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(byte_token(b));
    types.push_back(1);
  }
  const std::string space = byte_token(' ');  // "Ġ"
  for (char a = 'a'; a <= 'z' && static_cast<int64_t>(tokens.size()) + 27 < n_vocab; ++a) {
    merges.push_back(space + " " + std::string(1, a));
    tokens.push_back(space + std::string(1, a));
    types.push_back(1);
    for (char c = 'a'; c <= 'z'; ++c) {
      merges.push_back(std::string(1, a) + " " + std::string(1, c));
      tokens.push_back(std::string(1, a) + std::string(1, c));
      types.push_back(1);
    }
  }
  while (static_cast<int64_t>(tokens.size()) < n_vocab) {
    tokens.push_back("<filler_" + std::to_string(tokens.size()) + ">");
    types.push_back(1);
  }
  int64_t bos = -1, eos = -1;
  for (const Special& s : specials) {
    if (s.id >= n_vocab) continue;
    tokens[static_cast<size_t>(s.id)] = s.text;
    types[static_cast<size_t>(s.id)] = 3;
  }
  if (qwen) {
    bos = 151643;
    eos = 151645;
  } else {
    bos = 128000;
    eos = 128001;
  }
  if (bos >= n_vocab) bos = 1;
  if (eos >= n_vocab) eos = 2;
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", qwen ? "qwen2" : "llama-bpe");
  w.add("tokenizer.ggml.tokens", GgufValue::from_string_array(std::move(tokens)));
  w.add("tokenizer.ggml.token_type", GgufValue::from_int_array(GgufValueType::INT32, std::move(types)));
  w.add("tokenizer.ggml.merges", GgufValue::from_string_array(std::move(merges)));
  w.add_uint32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(bos));
  w.add_uint32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(eos));
  if (qwen) w.add_uint32("tokenizer.ggml.padding_token_id", 151643);
  w.add_bool("tokenizer.ggml.add_bos_token", !qwen);
}

std::span<const SynthPreset> synth_presets() { return kPresets; }

std::string synth_preset_names() {
  std::string s;
  for (const SynthPreset& p : kPresets) {
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

const SynthPreset& synth_preset(std::string_view name) {
  for (const SynthPreset& p : kPresets) {
    if (p.name == name) return p;
  }
  throw Error("unknown synth preset '" + std::string(name) + "' (expected one of " + synth_preset_names() + ")");
}

std::vector<TensorDesc> synth_tensor_descs(const SynthPreset& p, int64_t n_vocab) {
  std::vector<TensorDesc> out;
  for (SynthTensor& t : synth_tensors(p, n_vocab)) out.push_back(std::move(t.desc));
  return out;
}

std::vector<float> llama3_rope_factors(int64_t head_dim, float theta, float factor) {
  const double low_freq_factor = 1.0, high_freq_factor = 4.0, old_ctx = 8192.0;
  const double low_wavelen = old_ctx / low_freq_factor, high_wavelen = old_ctx / high_freq_factor;
  std::vector<float> f;
  for (int64_t i = 0; i < head_dim; i += 2) {
    const double freq = 1.0 / std::pow(static_cast<double>(theta), static_cast<double>(i) / head_dim);
    const double wavelen = 2.0 * 3.141592653589793 / freq;
    if (wavelen < high_wavelen) {
      f.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      f.push_back(factor);
    } else {
      const double smooth = (old_ctx / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      f.push_back(static_cast<float>(1.0 / ((1.0 - smooth) / factor + smooth)));
    }
  }
  return f;
}

SynthReport write_synth_model(const std::string& out_path, const SynthOptions& opt, ThreadPool& pool,
                              const QuantizeProgressFn& progress) {
  const SynthPreset& p = synth_preset(opt.preset);
  const QuantTarget target = parse_quant_target(opt.type);
  SynthReport report;

  // Vocabulary first: it decides n_vocab.
  std::string vocab_path = opt.vocab_from;
  if (vocab_path.empty() && !p.default_vocab.empty()) vocab_path = data_dir() + "/" + std::string(p.default_vocab);
  std::unique_ptr<GgufFile> vocab;
  int64_t n_vocab = p.n_vocab;
  if (!vocab_path.empty()) {
    vocab = std::make_unique<GgufFile>(GgufFile::open(vocab_path));
    const GgufValue* toks = vocab->find("tokenizer.ggml.tokens");
    if (!toks || !toks->is_array()) throw Error(vocab_path + ": no tokenizer.ggml.tokens array (not a vocabulary)");
    n_vocab = static_cast<int64_t>(toks->array_size());
    report.vocab_source = vocab_path;
  } else {
    report.vocab_source = "byte-level stand-in";
  }
  report.n_vocab = n_vocab;

  const std::string a(p.arch);
  const int64_t head_dim = p.n_embd / p.n_head;
  GgufWriter w;
  w.add_string("general.architecture", a);
  w.add_string("general.name", "synth-" + std::string(p.name));
  w.add_uint32(a + ".context_length", static_cast<uint32_t>(p.n_ctx_train));
  w.add_uint32(a + ".embedding_length", static_cast<uint32_t>(p.n_embd));
  w.add_uint32(a + ".block_count", static_cast<uint32_t>(p.n_layer));
  w.add_uint32(a + ".feed_forward_length", static_cast<uint32_t>(p.n_ff));
  w.add_uint32(a + ".attention.head_count", static_cast<uint32_t>(p.n_head));
  w.add_uint32(a + ".attention.head_count_kv", static_cast<uint32_t>(p.n_head_kv));
  w.add_float32(a + ".rope.freq_base", p.rope_theta);
  w.add_float32(a + ".attention.layer_norm_rms_epsilon", p.rms_eps);
  if (p.arch == "llama") w.add_uint32(a + ".rope.dimension_count", static_cast<uint32_t>(head_dim));
  w.add_uint32(a + ".vocab_size", static_cast<uint32_t>(n_vocab));
  w.add_uint32("general.file_type", static_cast<uint32_t>(target.file_type));
  if (type_traits(target.base).is_quantized) w.add_uint32("general.quantization_version", 2);
  if (vocab) {
    for (const auto& [key, value] : vocab->metadata()) {
      if (key.rfind("tokenizer.", 0) == 0) w.add(key, value);
    }
  } else {
    add_standin_vocab(w, p.arch, n_vocab);
  }

  std::vector<SynthTensor> tensors = synth_tensors(p, n_vocab);
  std::vector<TensorDesc> descs;
  for (const SynthTensor& t : tensors) descs.push_back(t.desc);
  QuantModelInfo info{a, p.n_layer, p.n_head, p.n_head_kv};
  const std::vector<TensorPlan> plan = plan_tensor_types(descs, info, target, opt.pure);

  uint64_t total = 0;
  for (const SynthTensor& t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.desc.ne) n *= d;
    total += static_cast<uint64_t>(n) * 4;
    report.n_params += n;
  }
  const std::vector<float> rope_factors =
      p.llama3_rope_freqs ? llama3_rope_factors(head_dim, p.rope_theta, p.rope_scale_factor) : std::vector<float>{};

  uint64_t done = 0;
  const size_t n_tensors = tensors.size();
  for (size_t k = 0; k < n_tensors; ++k) {
    const SynthTensor* t = &tensors[k];
    const TensorType dst = plan[k].type;
    const int64_t row_len = t->desc.ne[0];
    int64_t n_rows = 1;
    for (size_t d = 1; d < t->desc.ne.size(); ++d) n_rows *= t->desc.ne[d];
    const uint64_t dst_row = tensor_row_bytes(dst, row_len).value_or(0);
    if (dst_row == 0) throw Error("synth: tensor '" + t->desc.name + "' rows do not fit " + std::string(tensor_type_name(dst)));
    report.tensors.push_back(QuantizedTensor{t->desc.name, t->desc.ne, TensorType::F32, dst,
                                             static_cast<uint64_t>(row_len * n_rows) * 4, dst_row * n_rows,
                                             plan[k].note});
    const uint64_t seed = opt.seed;
    w.add_tensor(t->desc.name, dst, t->desc.ne,
                 [&pool, &done, &rope_factors, &progress, t, k, n_tensors, total, dst, dst_row, row_len, n_rows,
                  seed](const GgufByteSink& sink) {
                   if (progress) progress(QuantizeProgress{k, n_tensors, t->desc.name, dst, done, total});
                   const TypeTraits& to = type_traits(dst);
                   // About 16 MiB of f32 values per chunk.
                   const int64_t chunk = std::max<int64_t>(1, (int64_t{4} << 20) / row_len);
                   std::vector<uint8_t> buf(static_cast<size_t>(dst_row * std::min(chunk, n_rows)));
                   for (int64_t r0 = 0; r0 < n_rows; r0 += chunk) {
                     const int64_t nr = std::min(chunk, n_rows - r0);
                     pool.run([&](int ith, int nth) {
                       const int64_t a0 = nr * ith / nth, a1 = nr * (ith + 1) / nth;
                       if (a0 >= a1) return;
                       std::vector<float> row(static_cast<size_t>(row_len));
                       for (int64_t i = a0; i < a1; ++i) {
                         const int64_t r = r0 + i;
                         Rng rng(row_seed(seed, k, static_cast<uint64_t>(r)));
                         switch (t->draw) {
                           case Draw::Normal: fill_normal(rng, row.data(), row_len, 0.0f, t->stddev); break;
                           case Draw::Bias: fill_normal(rng, row.data(), row_len, 0.0f, t->stddev); break;
                           case Draw::Norm: fill_normal(rng, row.data(), row_len, 1.0f, 0.1f); break;
                           case Draw::RopeFreqs: std::copy(rope_factors.begin(), rope_factors.end(), row.begin()); break;
                         }
                         to.from_float_ref(row.data(), buf.data() + static_cast<uint64_t>(i) * dst_row, row_len);
                       }
                     });
                     sink(buf.data(), static_cast<size_t>(dst_row * nr));
                     done += static_cast<uint64_t>(nr * row_len) * 4;
                     if (progress) progress(QuantizeProgress{k, n_tensors, t->desc.name, dst, done, total});
                   }
                 });
  }
  w.write(out_path);
  report.file_bytes = w.file_size();
  if (progress) progress(QuantizeProgress{n_tensors, n_tensors, {}, target.base, total, total});
  return report;
}

}  // namespace edgeinfer
