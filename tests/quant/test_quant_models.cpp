// Our reference quantizers against llama.cpp's bytes: every synth-<family>-<type>.gguf in
// $EDGEINFER_DATA/models was made by `llama-quantize <family>-f32.gguf OUT TYPE` without an
// imatrix, which runs GGML's quantize_row_*_ref on each tensor. Quantizing the F32 tensors with
// from_float_ref must give the same bytes, block for block. Dequantized tensors must also stay
// within a per-type relative RMS error budget of the F32 originals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "quant/type_traits.h"
#include "util/data_path.h"

namespace edgeinfer {
namespace {

namespace fs = std::filesystem;

// Relative RMS error of dequantize(quantize(w)) against w, per type, for these N(0, sigma)
// weights: 1.25x the values measured on the shared synth models (f16 2.08e-4, q8_0 5.36e-3,
// q6_K 1.77e-2, q5_K 3.61e-2, q5_1 3.78e-2, q5_0 4.25e-2, q4_K 7.13e-2, q4_1 7.82e-2, q4_0 8.58e-2,
// q3_K 1.51e-1, q2_K 2.95e-1). A wrong scale choice or bit layout gives errors of order 1.
double rms_budget(TensorType t) {
  switch (t) {
    case TensorType::F16: return 2.6e-4;
    case TensorType::BF16: return 2.1e-3;
    case TensorType::Q8_0: return 6.7e-3;
    case TensorType::Q6_K: return 2.2e-2;
    case TensorType::Q5_K: return 4.5e-2;
    case TensorType::Q5_1: return 4.7e-2;
    case TensorType::Q5_0: return 5.3e-2;
    case TensorType::Q4_K: return 8.9e-2;
    case TensorType::Q4_1: return 9.8e-2;
    case TensorType::Q4_0: return 1.07e-1;
    case TensorType::Q3_K: return 1.9e-1;
    case TensorType::Q2_K: return 3.7e-1;
    default: return 0.0;
  }
}

struct Pair {
  std::string family;  // "synth-llama"
  std::string type;    // "q4_k_m"
  fs::path quant, f32;
};

std::vector<Pair> model_pairs() {
  const fs::path dir = fs::path(data_dir()) / "models";
  std::vector<Pair> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("synth-", 0) != 0 || e.path().extension() != ".gguf") continue;
    const std::string stem = e.path().stem().string();
    const size_t dash = stem.rfind('-');
    const std::string family = stem.substr(0, dash), type = stem.substr(dash + 1);
    if (type == "f32") continue;
    const fs::path f32 = dir / (family + "-f32.gguf");
    if (!fs::exists(f32)) continue;
    out.push_back({family, type, e.path(), f32});
  }
  std::sort(out.begin(), out.end(), [](const Pair& a, const Pair& b) { return a.quant < b.quant; });
  return out;
}

TEST(QuantModels, SharedModelsArePresent) {
  const auto pairs = model_pairs();
  // synth-llama alone ships f16, q8_0, q6_k, q5_k_m, q5_1, q5_0, q4_k_m, q4_1, q4_0, q3_k_m, q2_k.
  ASSERT_GE(pairs.size(), 11u) << "expected the synth-* models under " << data_dir() << "/models";
  std::map<std::string, int> types;
  for (const auto& p : pairs) types[p.type]++;
  for (const char* t : {"f16", "q8_0", "q6_k", "q5_k_m", "q5_1", "q5_0", "q4_k_m", "q4_1", "q4_0", "q3_k_m", "q2_k"}) {
    EXPECT_GE(types[t], 1) << "missing synth-llama-" << t << ".gguf";
  }
}

struct TypeStats {
  int tensors = 0;
  int64_t blocks = 0, bad_blocks = 0;
  double err2 = 0, ref2 = 0;
};

// Quantizes every tensor of `p.f32` into the type that tensor has in `p.quant`; counts blocks
// whose bytes differ and accumulates dequantization error.
void check_pair(const Pair& p, std::map<TensorType, TypeStats>& stats) {
  const GgufFile q = GgufFile::open(p.quant.string());
  const GgufFile f = GgufFile::open(p.f32.string());
  ASSERT_EQ(q.tensors().size(), f.tensors().size()) << p.quant;
  for (const auto& tq : q.tensors()) {
    const GgufTensorInfo* tf = f.find_tensor(tq.name);
    ASSERT_NE(tf, nullptr) << p.quant << ": " << tq.name << " not in " << p.f32;
    ASSERT_EQ(tf->type, TensorType::F32) << tq.name;
    ASSERT_EQ(tf->ne, tq.ne) << tq.name;
    const float* src = reinterpret_cast<const float*>(tf->data);
    const int64_t n = tf->n_elements();
    if (tq.type == TensorType::F32) {  // kept as is (norms, 1-D tensors)
      ASSERT_EQ(std::memcmp(tq.data, tf->data, tf->n_bytes), 0) << tq.name;
      continue;
    }
    const TypeTraits* tr = find_type_traits(tq.type);
    ASSERT_NE(tr, nullptr) << tq.name << " has type " << tensor_type_name(tq.type);
    ASSERT_NE(tr->from_float_ref, nullptr);
    ASSERT_EQ(n % tr->block_size, 0);
    const int64_t n_blocks = n / tr->block_size;
    ASSERT_EQ(static_cast<uint64_t>(n_blocks) * tr->type_size, tq.n_bytes) << tq.name;

    std::vector<uint8_t> mine(tq.n_bytes);
    const int64_t row = tq.ne[0];
    for (int64_t r = 0; r < n / row; ++r) {
      tr->from_float_ref(src + r * row, mine.data() + (r * row / tr->block_size) * tr->type_size, row);
    }
    TypeStats& st = stats[tq.type];
    st.tensors++;
    st.blocks += n_blocks;
    int64_t first_bad = -1;
    for (int64_t b = 0; b < n_blocks; ++b) {
      if (std::memcmp(mine.data() + b * tr->type_size, tq.data + b * tr->type_size, tr->type_size) != 0) {
        st.bad_blocks++;
        if (first_bad < 0) first_bad = b;
      }
    }
    EXPECT_EQ(first_bad, -1) << p.quant.filename() << ": " << tq.name << " (" << tensor_type_name(tq.type)
                             << ") first differing block " << first_bad;

    std::vector<float> deq(static_cast<size_t>(n));
    tr->to_float(tq.data, deq.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(deq[i]) - src[i];
      st.err2 += d * d;
      st.ref2 += static_cast<double>(src[i]) * src[i];
    }
  }
}

TEST(QuantModels, ReferenceQuantizersReproduceLlamaCppBytes) {
  std::map<TensorType, TypeStats> stats;
  const auto pairs = model_pairs();
  ASSERT_FALSE(pairs.empty());
  for (const auto& p : pairs) {
    SCOPED_TRACE(p.quant.filename().string());
    check_pair(p, stats);
  }
  // Every type the shared files hold must have been checked.
  for (TensorType t : {TensorType::F16, TensorType::Q8_0, TensorType::Q6_K, TensorType::Q5_K, TensorType::Q5_1,
                       TensorType::Q5_0, TensorType::Q4_K, TensorType::Q4_1, TensorType::Q4_0, TensorType::Q3_K,
                       TensorType::Q2_K}) {
    EXPECT_GT(stats[t].blocks, 0) << tensor_type_name(t);
  }
  for (const auto& [t, st] : stats) {
    const double rel = std::sqrt(st.err2 / st.ref2);
    std::printf("  %-5s tensors %3d blocks %7lld differing %lld  dequant rel RMS %.3e (budget %.1e)\n",
                std::string(tensor_type_name(t)).c_str(), st.tensors, static_cast<long long>(st.blocks),
                static_cast<long long>(st.bad_blocks), rel, rms_budget(t));
    EXPECT_EQ(st.bad_blocks, 0) << tensor_type_name(t);
    EXPECT_LE(rel, rms_budget(t)) << tensor_type_name(t);
  }
}

}  // namespace
}  // namespace edgeinfer
