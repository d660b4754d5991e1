#pragma once
// The sampler's random number generator: xoshiro256** (Blackman & Vigna) seeded through
// splitmix64. Both are fixed, fully specified integer algorithms, so a given seed yields the same
// stream on every compiler, standard library and CPU — unlike std::uniform_*_distribution, whose
// output is implementation-defined. That is what makes "same seed + same input → same output"
// hold across machines.
#include <cstdint>

namespace edgeinfer {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }

  // splitmix64 spreads a (possibly low-entropy) 64-bit seed over the 256-bit state; it never
  // yields the all-zero state xoshiro must avoid.
  void reseed(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& word : s_) word = splitmix64(x);
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits (every value is an exact multiple of 2^-53).
  double next_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // splitmix64 step: advances `state` and returns the mixed value.
  static uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace edgeinfer
