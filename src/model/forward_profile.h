#pragma once
// Optional per-operation timing of the forward pass (`edgeinfer bench --profile`). The forward
// pass calls lap(op) after each step when a profile is attached (ForwardPass::set_profile), which
// charges the time since the previous lap to that op. Costs one clock read per step, nothing
// when no profile is attached.
#include <array>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace edgeinfer {

enum class FwdOp : int {
  Embed,       // token embedding lookup
  AttnNorm,    // RMSNorm before attention
  Qkv,         // Q, K, V matmuls (+ biases)
  RopeStore,   // RoPE and writing K/V into the cache
  Attention,   // scores, softmax, weighted V
  AttnOut,     // output projection + residual
  FfnNorm,     // RMSNorm before the FFN
  GateUp,      // gate and up matmuls
  Act,         // SiLU(gate) * up
  Down,        // down matmul + residual
  Output,      // final norm + output matmul
  Count
};

inline constexpr std::array<std::string_view, static_cast<int>(FwdOp::Count)> kFwdOpNames = {
    "embed", "attn_norm", "qkv", "rope+kv_store", "attention", "attn_out", "ffn_norm", "gate+up", "silu*mul",
    "down", "output"};

struct ForwardProfile {
  using Clock = std::chrono::steady_clock;
  std::array<double, static_cast<int>(FwdOp::Count)> seconds{};
  uint64_t forward_calls = 0;
  Clock::time_point last{};

  void begin() {
    ++forward_calls;
    last = Clock::now();
  }
  void lap(FwdOp op) {
    const Clock::time_point now = Clock::now();
    seconds[static_cast<int>(op)] += std::chrono::duration<double>(now - last).count();
    last = now;
  }
  double total() const {
    double s = 0;
    for (double v : seconds) s += v;
    return s;
  }
  void reset() { *this = ForwardProfile{}; }
  void add(const ForwardProfile& o) {
    for (size_t i = 0; i < seconds.size(); ++i) seconds[i] += o.seconds[i];
    forward_calls += o.forward_calls;
  }
};

}  // namespace edgeinfer
