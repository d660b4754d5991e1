#include "quant/quantize_model.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <utility>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "quant/type_traits.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer {

namespace {

using FT = FileType;
using TT = TensorType;

constexpr std::array<QuantTarget, 18> kTargets = {{
    {"f32", FT::AllF32, TT::F32},
    {"f16", FT::MostlyF16, TT::F16},
    {"bf16", FT::MostlyBF16, TT::BF16},
    {"q8_0", FT::MostlyQ8_0, TT::Q8_0},
    {"q4_0", FT::MostlyQ4_0, TT::Q4_0},
    {"q4_1", FT::MostlyQ4_1, TT::Q4_1},
    {"q5_0", FT::MostlyQ5_0, TT::Q5_0},
    {"q5_1", FT::MostlyQ5_1, TT::Q5_1},
    {"q2_k", FT::MostlyQ2_K, TT::Q2_K},
    {"q2_k_s", FT::MostlyQ2_K_S, TT::Q2_K},
    {"q3_k_s", FT::MostlyQ3_K_S, TT::Q3_K},
    {"q3_k_m", FT::MostlyQ3_K_M, TT::Q3_K},
    {"q3_k_l", FT::MostlyQ3_K_L, TT::Q3_K},
    {"q4_k_s", FT::MostlyQ4_K_S, TT::Q4_K},
    {"q4_k_m", FT::MostlyQ4_K_M, TT::Q4_K},
    {"q5_k_s", FT::MostlyQ5_K_S, TT::Q5_K},
    {"q5_k_m", FT::MostlyQ5_K_M, TT::Q5_K},
    {"q6_k", FT::MostlyQ6_K, TT::Q6_K},
}};

// The reference quantizer's short names for the medium mixes.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kAliases = {{
    {"q3_k", "q3_k_m"},
    {"q4_k", "q4_k_m"},
    {"q5_k", "q5_k_m"},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Layer index of "blk.N.*", -1 for tensors outside the layers.
int layer_of(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return -1;
  int v = 0;
  size_t i = 4;
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) {
    v = v * 10 + (name[i] - '0');
    if (v > 1000000) return -1;
    ++i;
  }
  return (i < name.size() && name[i] == '.') ? v : -1;
}

// Dimensions counted as the reference does: trailing dimensions of size 1 do not count.
int n_dims(const std::vector<int64_t>& ne) {
  int n = static_cast<int>(ne.size());
  while (n > 1 && ne[n - 1] == 1) --n;
  return n;
}

// Which tensors a quantizer may convert at all: 2-D+ weights that are not norms, nor the few
// small tables the reference always keeps (position embeddings, MoE routers, conv kernels).
bool convertible(const TensorDesc& t) {
  if (n_dims(t.ne) < 2) return false;
  const std::string_view n = t.name;
  if (!ends_with(n, "weight")) return false;
  if (contains(n, "_norm.weight")) return false;
  if (contains(n, "ffn_gate_inp.weight")) return false;
  if (n == "position_embd.weight" || n == "token_types.weight") return false;
  if (contains(n, "ssm_conv1d") || contains(n, "attn_rel_b.weight")) return false;
  return true;
}

bool is_attn_v(std::string_view n) {
  return contains(n, "attn_v.weight") || contains(n, "attn_qkv.weight") || contains(n, "attn_kv_b.weight");
}

// More bits for the first and last eighth of the layers and every third layer in between.
bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

struct MixState {
  int n_attention_wv = 0;
  int n_ffn_down = 0;
  int i_attention_wv = 0;
  int i_ffn_down = 0;
  bool has_output = false;
};

// The reference's per-tensor rule for one mix (no imatrix, dense model).
TT mix_type(MixState& qs, const TensorDesc& t, const QuantModelInfo& info, FT ftype, TT new_type) {
  const std::string_view name = t.name;
  const bool falcon = info.arch == "falcon";
  const int64_t n_gqa = info.n_head_kv > 0 ? info.n_head / info.n_head_kv : 1;

  if (name == "output.weight" || (!qs.has_output && name == "token_embd.weight")) {
    const int64_t qk = tensor_type_info(new_type).block_size;
    if (falcon || t.ne[0] % qk != 0) {
      new_type = TT::Q8_0;
    } else if (new_type != TT::Q8_0) {
      new_type = TT::Q6_K;
    }
  } else if (is_attn_v(name)) {
    if (ftype == FT::MostlyQ2_K) {
      new_type = n_gqa >= 4 ? TT::Q4_K : TT::Q3_K;
    } else if (ftype == FT::MostlyQ2_K_S && n_gqa >= 4) {
      new_type = TT::Q4_K;
    } else if (ftype == FT::MostlyQ3_K_M) {
      new_type = qs.i_attention_wv < 2 ? TT::Q5_K : TT::Q4_K;
    } else if (ftype == FT::MostlyQ3_K_L) {
      new_type = TT::Q5_K;
    } else if ((ftype == FT::MostlyQ4_K_M || ftype == FT::MostlyQ5_K_M) &&
               use_more_bits(qs.i_attention_wv, qs.n_attention_wv)) {
      new_type = TT::Q6_K;
    } else if (ftype == FT::MostlyQ4_K_S && qs.i_attention_wv < 4) {
      new_type = TT::Q5_K;
    }
    ++qs.i_attention_wv;
  } else if (contains(name, "ffn_down")) {
    const int i_layer = qs.i_ffn_down, n_layer = qs.n_ffn_down;
    if (ftype == FT::MostlyQ2_K) {
      new_type = TT::Q3_K;
    } else if (ftype == FT::MostlyQ2_K_S) {
      if (i_layer < n_layer / 8) new_type = TT::Q4_K;
    } else if (ftype == FT::MostlyQ3_K_M) {
      new_type = i_layer < n_layer / 16                        ? TT::Q5_K
                 : !falcon || use_more_bits(i_layer, n_layer) ? TT::Q4_K
                                                                : TT::Q3_K;
    } else if (ftype == FT::MostlyQ3_K_L) {
      new_type = falcon ? TT::Q4_K : TT::Q5_K;
    } else if (ftype == FT::MostlyQ4_K_M) {
      if (falcon) {
        new_type = i_layer < n_layer / 16 ? TT::Q6_K : use_more_bits(i_layer, n_layer) ? TT::Q5_K : TT::Q4_K;
      } else if (use_more_bits(i_layer, n_layer)) {
        new_type = TT::Q6_K;
      }
    } else if (ftype == FT::MostlyQ5_K_M && use_more_bits(i_layer, n_layer)) {
      new_type = TT::Q6_K;
    } else if (ftype == FT::MostlyQ4_K_S && !falcon && i_layer < n_layer / 8) {
      new_type = TT::Q5_K;
    }
    ++qs.i_ffn_down;
  } else if (contains(name, "attn_output.weight")) {
    if (!falcon) {
      if (ftype == FT::MostlyQ2_K) new_type = TT::Q3_K;
      else if (ftype == FT::MostlyQ3_K_M) new_type = TT::Q4_K;
      else if (ftype == FT::MostlyQ3_K_L) new_type = TT::Q5_K;
    } else if (ftype == FT::MostlyQ3_K_L) {
      new_type = TT::Q4_K;
    }
  } else if (contains(name, "attn_qkv.weight")) {
    if (ftype == FT::MostlyQ3_K_M || ftype == FT::MostlyQ3_K_L) new_type = TT::Q4_K;
    else if (ftype == FT::MostlyQ4_K_M) new_type = TT::Q5_K;
    else if (ftype == FT::MostlyQ5_K_M) new_type = TT::Q6_K;
  }
  return new_type;
}

// A K-quant needs rows that are whole 256-blocks; otherwise take the nearest 32-block type.
TT fallback_type(const TensorDesc& t, TT type, std::string& note) {
  const int64_t bs = tensor_type_info(type).block_size;
  if (t.ne[0] % bs == 0) return type;
  TT fb = TT::F16;
  switch (type) {
    case TT::Q2_K:
    case TT::Q3_K: fb = TT::Q4_0; break;
    case TT::Q4_K: fb = TT::Q5_0; break;
    case TT::Q5_K: fb = TT::Q5_1; break;
    case TT::Q6_K: fb = TT::Q8_0; break;
    default: fb = TT::F16; break;
  }
  if (t.ne[0] % tensor_type_info(fb).block_size != 0) fb = TT::F16;
  note = "row length " + std::to_string(t.ne[0]) + " is not a multiple of " + std::to_string(bs) + ": " +
         std::string(tensor_type_name(type)) + " -> " + std::string(tensor_type_name(fb));
  return fb;
}

}  // namespace

std::optional<QuantTarget> find_quant_target(std::string_view name) {
  std::string n = lower(name);
  for (const auto& [alias, real] : kAliases) {
    if (n == alias) n = std::string(real);
  }
  for (const QuantTarget& t : kTargets) {
    if (t.name == n) return t;
  }
  return std::nullopt;
}

std::string quant_target_names() {
  std::string s;
  for (const QuantTarget& t : kTargets) {
    if (!s.empty()) s += ", ";
    s += t.name;
  }
  s += " (q3_k, q4_k, q5_k = the _m mixes)";
  return s;
}

QuantTarget parse_quant_target(std::string_view name) {
  if (auto t = find_quant_target(name)) return *t;
  throw Error("unknown quantization type '" + std::string(name) + "' (expected one of " + quant_target_names() + ")");
}

std::optional<QuantTarget> quant_target_for_file_type(FileType ft) {
  for (const QuantTarget& t : kTargets) {
    if (t.file_type == ft) return t;
  }
  return std::nullopt;
}

std::vector<size_t> quantization_order(const std::vector<TensorDesc>& tensors) {
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = layer_of(tensors[a].name), lb = layer_of(tensors[b].name);
    if (la != lb) return la < lb;
    return tensors[a].name < tensors[b].name;
  });
  return order;
}

std::vector<TensorPlan> plan_tensor_types(const std::vector<TensorDesc>& tensors, const QuantModelInfo& info,
                                          const QuantTarget& target, bool pure) {
  MixState qs;
  for (const TensorDesc& t : tensors) {
    if (is_attn_v(t.name)) ++qs.n_attention_wv;
    if (t.name == "output.weight") qs.has_output = true;
  }
  qs.n_ffn_down = static_cast<int>(info.n_layer);

  const bool quantized_target = type_traits(target.base).is_quantized;
  std::vector<TensorPlan> plan(tensors.size());
  for (size_t idx : quantization_order(tensors)) {
    const TensorDesc& t = tensors[idx];
    TensorPlan& p = plan[idx];
    if (!convertible(t)) {
      p = TensorPlan{t.type, false, {}};
      continue;
    }
    TT type = target.base;
    if (quantized_target) {
      if (!pure) type = mix_type(qs, t, info, target.file_type, type);
      type = fallback_type(t, type, p.note);
    }
    p.type = type;
    p.converted = true;
  }
  return plan;
}

std::vector<TensorDesc> tensor_descs(const GgufFile& f) {
  std::vector<TensorDesc> out;
  out.reserve(f.tensors().size());
  for (const GgufTensorInfo& t : f.tensors()) out.push_back(TensorDesc{t.name, t.ne, t.type});
  return out;
}

QuantModelInfo quant_model_info(const GgufFile& f) {
  QuantModelInfo info;
  info.arch = f.get_string("general.architecture");
  const std::string& a = info.arch;
  info.n_layer = f.get_int_opt(a + ".block_count").value_or(0);
  info.n_head = f.get_int_opt(a + ".attention.head_count").value_or(0);
  info.n_head_kv = f.get_int_opt(a + ".attention.head_count_kv").value_or(info.n_head);
  return info;
}

void convert_rows(ThreadPool& pool, TensorType src_type, const void* src, TensorType dst_type, void* dst,
                  int64_t row_len, int64_t n_rows) {
  const uint64_t src_row = tensor_row_bytes(src_type, row_len).value_or(0);
  const uint64_t dst_row = tensor_row_bytes(dst_type, row_len).value_or(0);
  if (src_row == 0 || dst_row == 0) {
    throw Error("cannot convert rows of " + std::to_string(row_len) + " elements from " +
                std::string(tensor_type_name(src_type)) + " to " + std::string(tensor_type_name(dst_type)));
  }
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  if (src_type == dst_type) {
    std::memcpy(d, s, src_row * static_cast<uint64_t>(n_rows));
    return;
  }
  const TypeTraits& from = type_traits(src_type);
  const TypeTraits& to = type_traits(dst_type);
  if (!from.to_float || !to.from_float_ref) {
    throw Error("no conversion from " + std::string(tensor_type_name(src_type)) + " to " +
                std::string(tensor_type_name(dst_type)));
  }
  pool.run([&](int ith, int nth) {
    const int64_t r0 = n_rows * ith / nth, r1 = n_rows * (ith + 1) / nth;
    if (r0 >= r1) return;
    std::vector<float> tmp;
    if (src_type != TT::F32) tmp.resize(static_cast<size_t>(row_len));
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* in = s + static_cast<uint64_t>(r) * src_row;
      const float* f;
      if (src_type == TT::F32) {
        f = reinterpret_cast<const float*>(in);
      } else {
        from.to_float(in, tmp.data(), row_len);
        f = tmp.data();
      }
      to.from_float_ref(f, d + static_cast<uint64_t>(r) * dst_row, row_len);
    }
  });
}

QuantizeReport quantize_model(const std::string& in_path, const std::string& out_path, const QuantTarget& target,
                              ThreadPool& pool, const QuantizeOptions& opt, const QuantizeProgressFn& progress) {
  GgufFile in = GgufFile::open(in_path);
  const std::vector<TensorDesc> descs = tensor_descs(in);
  const QuantModelInfo info = quant_model_info(in);
  const std::vector<TensorPlan> plan = plan_tensor_types(descs, info, target, opt.pure);
  const std::vector<size_t> order = quantization_order(descs);

  GgufWriter w;
  for (const auto& [key, value] : in.metadata()) {
    if (key == "general.file_type" || key == "general.quantization_version") continue;
    w.add(key, value);
  }
  w.add_uint32("general.quantization_version", 2);
  w.add_uint32("general.file_type", static_cast<uint32_t>(target.file_type));

  QuantizeReport report;
  uint64_t total = 0;
  for (const GgufTensorInfo& t : in.tensors()) total += t.n_bytes;
  report.in_bytes = total;

  // Shared by the producers, which the writer calls in tensor order on this thread.
  auto done = std::make_shared<uint64_t>(0);
  const size_t n_tensors = order.size();
  for (size_t k = 0; k < n_tensors; ++k) {
    const size_t idx = order[k];
    const GgufTensorInfo& t = in.tensors()[idx];
    const TensorPlan& p = plan[idx];
    const TT dst = p.type;
    if (t.type != dst) {
      const TypeTraits* tr = find_type_traits(t.type);
      if (t.type != TT::F32 && t.type != TT::F16 && t.type != TT::BF16) {
        throw Error(in_path + ": tensor '" + t.name + "' is " + std::string(tensor_type_name(t.type)) +
                    "; quantize reads F32, F16 or BF16 tensors (requantizing is not supported)");
      }
      if (!tr || !find_type_traits(dst)) {
        throw Error("tensor type " + std::string(tensor_type_name(dst)) + " cannot be written");
      }
    }
    const int64_t row_len = t.ne[0];
    const int64_t n_rows = t.n_rows();
    const uint64_t dst_row = tensor_row_bytes(dst, row_len).value_or(0);
    if (dst_row == 0) throw Error("tensor '" + t.name + "': row length " + std::to_string(row_len) + " does not fit " +
                                  std::string(tensor_type_name(dst)));
    report.tensors.push_back(QuantizedTensor{t.name, t.ne, t.type, dst, t.n_bytes, dst_row * n_rows, p.note});
    report.out_bytes += dst_row * n_rows;

    const GgufTensorInfo* tp = &t;
    w.add_tensor(t.name, dst, t.ne, [&pool, tp, dst, dst_row, k, n_tensors, total, done, progress](const GgufByteSink& sink) {
      const uint64_t src_row = tp->n_bytes / static_cast<uint64_t>(tp->n_rows());
      if (progress) progress(QuantizeProgress{k, n_tensors, tp->name, dst, *done, total});
      if (tp->type == dst) {
        sink(tp->data, tp->n_bytes);
        *done += tp->n_bytes;
      } else {
        // Chunks of about 16 MiB of source rows: enough work per pool.run, little memory.
        const int64_t rows = tp->n_rows();
        const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>((16u << 20) / std::max<uint64_t>(src_row, 1)));
        std::vector<uint8_t> buf(static_cast<size_t>(dst_row * std::min(chunk, rows)));
        for (int64_t r = 0; r < rows; r += chunk) {
          const int64_t nr = std::min(chunk, rows - r);
          convert_rows(pool, tp->type, tp->data + static_cast<uint64_t>(r) * src_row, dst, buf.data(), tp->ne[0], nr);
          sink(buf.data(), static_cast<size_t>(dst_row * nr));
          *done += src_row * nr;
          if (progress) progress(QuantizeProgress{k, n_tensors, tp->name, dst, *done, total});
        }
      }
    });
  }
  w.write(out_path);
  report.out_file_bytes = w.file_size();
  if (progress) progress(QuantizeProgress{n_tensors, n_tensors, {}, target.base, total, total});
  return report;
}

}  // namespace edgeinfer
