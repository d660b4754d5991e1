#pragma once
// Shared by the kernel tests: random rows of every computable type, the error budget of a dot
// product, and the instruction-set paths to test (every path this machine supports).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace edgeinfer::kernel_test {

// Weight types with a dot product, in the order the tests report them.
const std::vector<TensorType>& dot_types();
// Activation types (targets of from_float that the SIMD paths specialize).
const std::vector<TensorType>& activation_types();
// Every supported path except scalar (the yardstick).
std::vector<Isa> simd_isas();
std::string isa_label(Isa isa);

size_t row_bytes(TensorType t, int64_t n);

// n floats ~ N(0, scale^2), with every 97th element 6x larger.
std::vector<float> random_floats(int64_t n, float scale, std::mt19937& rng);

// A random row of type t: half the time the reference quantization of random floats, half the
// time random bytes with sane scale fields (so every quant bit pattern occurs, e.g. int8 -128,
// negative Q6_K scales, all Q4_K 6-bit scale combinations).
std::vector<uint8_t> random_weight_row(TensorType t, int64_t n, std::mt19937& rng);
// `rows` such rows back to back (a weight matrix, rows row_bytes(t, n) apart).
std::vector<uint8_t> random_weight_rows(TensorType t, int64_t n, int64_t rows, std::mt19937& rng);
// n activations converted to t with the reference quantizer.
std::vector<uint8_t> activation_row(TensorType t, const std::vector<float>& x);

// Error budget of dot(w, a) with w of type t and a in t's vec_dot_type, both n long:
// |kernel - reference| <= budget. Both sides compute exact integer block sums and differ only
// in float rounding: each block term is rounded a few times (scale products, conversion of
// the sum) and the terms are accumulated in a different order. With u = 2^-24 and M the sum
// over elements of |a_i| * (|w scale part_i| + |w min part_i|) (the magnitudes of the terms
// actually added, computed from the dequantized rows), the bound used is
//   float types: (n / 16 + 16) * u * M   (lane-wise float accumulation vs a double reference)
//   quant types: (2 * n_blocks + 16) * u * M  (block terms accumulated in float on both sides)
// plus 1e-30 for rows that dequantize to (near) zero.
double dot_budget(TensorType t, int64_t n, const void* w, const void* a);
// The same in two steps, for many pairs of rows: per-element magnitudes of a weight row
// (|scale part| + |min part|) and of an activation row (|a|), then the budget of a pair.
std::vector<double> weight_magnitudes(TensorType t, int64_t n, const void* w);
std::vector<double> activation_magnitudes(TensorType t, int64_t n, const void* a);
double dot_budget(TensorType t, int64_t n, const std::vector<double>& wm, const std::vector<double>& am);

}  // namespace edgeinfer::kernel_test
