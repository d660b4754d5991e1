#include "kernel_test_data.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "quant/blocks.h"
#include "quant/type_traits.h"

namespace edgeinfer::kernel_test {

using T = TensorType;

const std::vector<TensorType>& dot_types() {
  static const std::vector<TensorType> types = [] {
    std::vector<TensorType> v;
    for (T t : {T::F32, T::F16, T::BF16, T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1, T::Q8_0, T::Q2_K, T::Q3_K,
                T::Q4_K, T::Q5_K, T::Q6_K}) {
      const TypeTraits* tr = find_type_traits(t);
      if (tr && tr->vec_dot_ref) v.push_back(t);
    }
    return v;
  }();
  return types;
}

const std::vector<TensorType>& activation_types() {
  static const std::vector<TensorType> types = {T::F16, T::BF16, T::Q8_0, T::Q8_1, T::Q8_K};
  return types;
}

std::vector<Isa> simd_isas() {
  std::vector<Isa> out;
  for (Isa i : supported_isas()) {
    if (i != Isa::Scalar) out.push_back(i);
  }
  return out;
}

std::string isa_label(Isa isa) { return std::string(isa_name(isa)); }

size_t row_bytes(TensorType t, int64_t n) {
  auto b = tensor_row_bytes(t, n);
  if (!b) throw std::runtime_error("bad row length " + std::to_string(n));
  return static_cast<size_t>(*b);
}

std::vector<float> random_floats(int64_t n, float scale, std::mt19937& rng) {
  std::normal_distribution<float> g(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = g(rng);
  for (size_t i = 0; i < v.size(); i += 97) v[i] *= 6.0f;
  return v;
}

namespace {

// Offsets of the f16 scale fields of a block: "scale" fields multiply the quants, "min" fields
// the affine offsets. Random-byte rows get sane values there.
struct ScaleFields {
  std::vector<size_t> scale;
  std::vector<size_t> min;
};

ScaleFields scale_fields(T t) {
  switch (t) {
    case T::Q4_0: return {{offsetof(BlockQ4_0, d)}, {}};
    case T::Q4_1: return {{offsetof(BlockQ4_1, d)}, {offsetof(BlockQ4_1, m)}};
    case T::Q5_0: return {{offsetof(BlockQ5_0, d)}, {}};
    case T::Q5_1: return {{offsetof(BlockQ5_1, d)}, {offsetof(BlockQ5_1, m)}};
    case T::Q8_0: return {{offsetof(BlockQ8_0, d)}, {}};
    case T::Q2_K: return {{offsetof(BlockQ2_K, d)}, {offsetof(BlockQ2_K, dmin)}};
    case T::Q3_K: return {{offsetof(BlockQ3_K, d)}, {}};
    case T::Q4_K: return {{offsetof(BlockQ4_K, d)}, {offsetof(BlockQ4_K, dmin)}};
    case T::Q5_K: return {{offsetof(BlockQ5_K, d)}, {offsetof(BlockQ5_K, dmin)}};
    case T::Q6_K: return {{offsetof(BlockQ6_K, d)}, {}};
    default: return {};
  }
}

void put_f16(uint8_t* p, float v) {
  const uint16_t h = fp32_to_fp16(v);
  std::memcpy(p, &h, 2);
}

std::vector<float> to_float(T t, const void* row, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  type_traits(t).to_float(row, out.data(), n);
  return out;
}

}  // namespace

std::vector<uint8_t> random_weight_rows(TensorType t, int64_t n, int64_t rows, std::mt19937& rng) {
  const size_t rb = row_bytes(t, n);
  std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const auto row = random_weight_row(t, n, rng);
    std::memcpy(&w[static_cast<size_t>(r) * rb], row.data(), rb);
  }
  return w;
}

std::vector<uint8_t> random_weight_row(TensorType t, int64_t n, std::mt19937& rng) {
  const TypeTraits& tr = type_traits(t);
  if (!tr.is_quantized || (rng() & 1u)) {
    std::vector<uint8_t> row(row_bytes(t, n));
    const auto x = random_floats(n, 0.05f, rng);
    tr.from_float_ref(x.data(), row.data(), n);
    return row;
  }
  std::vector<uint8_t> row(row_bytes(t, n));
  for (auto& b : row) b = static_cast<uint8_t>(rng());
  const ScaleFields f = scale_fields(t);
  std::uniform_real_distribution<float> mag(1e-4f, 2e-2f);
  for (size_t off = 0; off < row.size(); off += tr.type_size) {
    for (size_t s : f.scale) put_f16(&row[off + s], (rng() & 1u ? -1.0f : 1.0f) * mag(rng));
    for (size_t s : f.min) put_f16(&row[off + s], (rng() & 1u ? -1.0f : 1.0f) * mag(rng));
  }
  return row;
}

std::vector<uint8_t> activation_row(TensorType t, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> row(row_bytes(t, n));
  type_traits(t).from_float_ref(x.data(), row.data(), n);
  return row;
}

std::vector<double> weight_magnitudes(TensorType t, int64_t n, const void* w) {
  const TypeTraits& tr = type_traits(t);
  // Split the weight into its scale part and its min part by zeroing the other field.
  std::vector<float> part_scale, part_min;
  const ScaleFields f = scale_fields(t);
  if (f.min.empty()) {
    part_scale = to_float(t, w, n);
    part_min.assign(static_cast<size_t>(n), 0.0f);
  } else {
    const size_t bytes = row_bytes(t, n);
    std::vector<uint8_t> only_scale(static_cast<const uint8_t*>(w), static_cast<const uint8_t*>(w) + bytes);
    std::vector<uint8_t> only_min = only_scale;
    for (size_t off = 0; off < bytes; off += tr.type_size) {
      for (size_t s : f.min) put_f16(&only_scale[off + s], 0.0f);
      for (size_t s : f.scale) put_f16(&only_min[off + s], 0.0f);
    }
    part_scale = to_float(t, only_scale.data(), n);
    part_min = to_float(t, only_min.data(), n);
  }
  std::vector<double> m(static_cast<size_t>(n));
  for (size_t i = 0; i < m.size(); ++i) {
    m[i] = std::fabs(static_cast<double>(part_scale[i])) + std::fabs(static_cast<double>(part_min[i]));
  }
  return m;
}

std::vector<double> activation_magnitudes(TensorType t, int64_t n, const void* a) {
  const auto av = to_float(type_traits(t).vec_dot_type, a, n);
  std::vector<double> m(av.size());
  for (size_t i = 0; i < m.size(); ++i) m[i] = std::fabs(static_cast<double>(av[i]));
  return m;
}

double dot_budget(TensorType t, int64_t n, const std::vector<double>& wm, const std::vector<double>& am) {
  const TypeTraits& tr = type_traits(t);
  double m = 0.0;
  for (size_t i = 0; i < wm.size(); ++i) m += wm[i] * am[i];
  const double u = std::ldexp(1.0, -24);
  const double factor = tr.is_quantized ? 2.0 * static_cast<double>(n / tr.block_size) + 16.0
                                        : static_cast<double>(n) / 16.0 + 16.0;
  return factor * u * m + 1e-30;
}

double dot_budget(TensorType t, int64_t n, const void* w, const void* a) {
  return dot_budget(t, n, weight_magnitudes(t, n, w), activation_magnitudes(t, n, a));
}

}  // namespace edgeinfer::kernel_test
