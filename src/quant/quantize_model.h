#pragma once
// Whole-model quantization (`edgeinfer quantize`): which type each tensor gets, and the rewrite
// of an F32/F16/BF16 GGUF into that mix.
//
// Type choice follows the reference engine's quantizer (llama.cpp's llama-quantize, without an
// importance matrix) so that a file we write has the same tensor types as one it writes:
//  - only tensors of 2+ dimensions whose name ends in "weight" (and is not a norm) are converted;
//    1-D tensors (norms, biases, rope factors) keep their type;
//  - for quantized targets, output.weight (or token_embd.weight when the output is tied to it)
//    becomes Q6_K (Q8_0 when its rows are not a multiple of the target's block, or when the
//    target is Q8_0);
//  - the K mixes give more bits to attn_v / ffn_down / attn_output in some layers, exactly as the
//    reference chooses them (use_more_bits(): the first and last eighth of the layers and every
//    third layer in between);
//  - a K-quant chosen for a tensor whose row length is not a multiple of 256 falls back: Q4_K →
//    Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, Q2_K/Q3_K → Q4_0 (the reference uses IQ4_NL there, a type we
//    do not implement), and to F16 if even that block does not divide the row.
// With `pure`, every convertible tensor gets the base type (then only the fallback applies).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quant/tensor_type.h"

namespace edgeinfer {

class GgufFile;
class ThreadPool;

// llama.cpp's llama_ftype numbering, stored as general.file_type.
enum class FileType : uint32_t {
  AllF32 = 0,
  MostlyF16 = 1,
  MostlyQ4_0 = 2,
  MostlyQ4_1 = 3,
  MostlyQ8_0 = 7,
  MostlyQ5_0 = 8,
  MostlyQ5_1 = 9,
  MostlyQ2_K = 10,
  MostlyQ3_K_S = 11,
  MostlyQ3_K_M = 12,
  MostlyQ3_K_L = 13,
  MostlyQ4_K_S = 14,
  MostlyQ4_K_M = 15,
  MostlyQ5_K_S = 16,
  MostlyQ5_K_M = 17,
  MostlyQ6_K = 18,
  MostlyQ2_K_S = 21,
  MostlyBF16 = 32,
};

// A quantization target as the user names it.
struct QuantTarget {
  std::string_view name;  // canonical lower-case name: "q4_k_m", "q8_0", "f16", ...
  FileType file_type;
  TensorType base;        // the type most tensors get
};

// Parses a target name case-insensitively: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q2_k_s
// q3_k_s q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m q6_k, and the reference's aliases q3_k, q4_k,
// q5_k (= the _m mixes). Throws Error listing the accepted names for anything else.
QuantTarget parse_quant_target(std::string_view name);
std::optional<QuantTarget> find_quant_target(std::string_view name);
// "f32, f16, bf16, q8_0, ..." for help texts and error messages.
std::string quant_target_names();
// The target whose file_type this is (e.g. to label a synth model); nullopt when unknown.
std::optional<QuantTarget> quant_target_for_file_type(FileType ft);

// What the planner needs to know about one tensor.
struct TensorDesc {
  std::string name;
  std::vector<int64_t> ne;  // ne[0] = row length
  TensorType type = TensorType::F32;  // current type
};

// Model facts the mixes depend on.
struct QuantModelInfo {
  std::string arch;       // general.architecture (the reference special-cases "falcon")
  int64_t n_layer = 0;    // block_count
  int64_t n_head = 0;     // attention.head_count
  int64_t n_head_kv = 0;  // attention.head_count_kv
};

struct TensorPlan {
  TensorType type;   // type to write
  bool converted;    // false: kept as is (not a convertible tensor)
  std::string note;  // e.g. "row length 896 not a multiple of 256: q4_K -> q5_0"
};

// The order the reference quantizer visits (and writes) tensors: tensors outside layers first,
// by name, then layer by layer, by name within a layer. Returns indices into `tensors`.
std::vector<size_t> quantization_order(const std::vector<TensorDesc>& tensors);

// Chooses the type of every tensor (result[i] is for tensors[i]); tensors are visited in
// quantization_order(), which matters for the per-layer rules.
std::vector<TensorPlan> plan_tensor_types(const std::vector<TensorDesc>& tensors, const QuantModelInfo& info,
                                          const QuantTarget& target, bool pure = false);

// Tensors and model facts of an opened GGUF (arch keys read from its metadata).
std::vector<TensorDesc> tensor_descs(const GgufFile& f);
QuantModelInfo quant_model_info(const GgufFile& f);

struct QuantizeOptions {
  bool pure = false;
};

struct QuantizeProgress {
  size_t tensor_index = 0;  // in write order
  size_t n_tensors = 0;
  std::string_view name;
  TensorType type;          // type being written
  uint64_t bytes_done = 0;  // source tensor bytes processed so far, all tensors
  uint64_t bytes_total = 0;
};
using QuantizeProgressFn = std::function<void(const QuantizeProgress&)>;

struct QuantizedTensor {
  std::string name;
  std::vector<int64_t> ne;
  TensorType src_type;
  TensorType dst_type;
  uint64_t src_bytes;
  uint64_t dst_bytes;
  std::string note;
};

struct QuantizeReport {
  std::vector<QuantizedTensor> tensors;  // in write order
  uint64_t in_bytes = 0;   // tensor data bytes of the input
  uint64_t out_bytes = 0;  // tensor data bytes of the output
  uint64_t out_file_bytes = 0;
};

// Rewrites `in_path` as `out_path` with the target's types. Metadata is copied in order, then
// general.quantization_version (2) and general.file_type are (re)placed at the end, as the
// reference does. Source tensors that must change type must be F32, F16 or BF16 (requantizing is
// refused with an Error naming the tensor). Rows are converted in parallel on `pool` and streamed
// to the file, so memory stays at a few MiB beyond the mapped input. Returns what was written.
QuantizeReport quantize_model(const std::string& in_path, const std::string& out_path, const QuantTarget& target,
                              ThreadPool& pool, const QuantizeOptions& opt = {},
                              const QuantizeProgressFn& progress = {});

// Converts n_rows rows of `row_len` elements from `src_type` to `dst_type` (reference
// quantizers, rows split across the pool). Used by quantize_model and the synthetic writer.
void convert_rows(ThreadPool& pool, TensorType src_type, const void* src, TensorType dst_type, void* dst,
                  int64_t row_len, int64_t n_rows);

}  // namespace edgeinfer
