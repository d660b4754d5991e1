#pragma once
// Machine probes for roofline figures (`edgeinfer bench`): how fast this machine can stream
// memory and how many int8 dot-product / FP32 FMA operations per second it can do, on a given
// number of threads. Decode speed is compared with the first, prefill with the others.
// Each probe runs the instruction-set path the kernels use (select_isa(): the best the CPU
// supports, or EDGEINFER_ISA), so a forced path is compared with its own peak.
#include <cstddef>
#include <cstdint>
#include <string>

namespace edgeinfer {

class ThreadPool;

struct ProbeOptions {
  size_t read_bytes = size_t{512} << 20;  // buffer streamed by the bandwidth probe (beyond the caches)
  int read_passes = 5;                    // best pass counts
  double compute_seconds = 0.05;          // per compute measurement, best of 3
};

struct ProbeResult {
  int threads = 1;
  std::string isa;            // path the probes ran
  double read_bytes_per_s = 0;
  double int8_ops_per_s = 0;  // multiply + add = 2 ops
  double fma_flops = 0;       // FP32, multiply + add = 2 flops
};

// Every thread of `pool` streams its share of one buffer; the best of read_passes passes.
double probe_read_bandwidth(ThreadPool& pool, const ProbeOptions& opt = {});
// Every thread runs the register-only loop; ops of all threads / wall time, best of 3.
double probe_int8_peak(ThreadPool& pool, const ProbeOptions& opt = {});
double probe_fma_peak(ThreadPool& pool, const ProbeOptions& opt = {});
// All three on `pool`'s threads.
ProbeResult run_probes(ThreadPool& pool, const ProbeOptions& opt = {});

}  // namespace edgeinfer
