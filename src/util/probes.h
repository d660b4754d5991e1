#pragma once
// Machine probes for roofline figures (`edgeinfer bench`): how fast this machine can stream
// memory and how many int8 dot-product / FP32 FMA operations per second it can do, on a given
// number of threads. Decode speed is compared with the first, prefill with the others.
// Each probe runs the instruction-set path the kernels use (select_isa(): the best the CPU
// supports, or EDGEINFER_ISA), so a forced path is compared with its own peak.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
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

// The read-bandwidth probe with its buffer kept, so that it can be taken again and again
// (bench measures it beside every decode repetition: these VMs' bandwidth drifts over seconds).
class ReadProbe {
 public:
  ReadProbe(ThreadPool& pool, size_t bytes);
  // Bytes/s: the best of `passes` passes over the whole buffer on all of the pool's threads.
  double measure(int passes);

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  ThreadPool& pool_;
  size_t per_thread_ = 0;
  std::unique_ptr<void, Free> buf_;
};

// All three on `pool`'s threads; the read bandwidth through `read` when given (its buffer,
// already touched, is reused), else through a buffer of opt.read_bytes made for the call.
ProbeResult run_probes(ThreadPool& pool, const ProbeOptions& opt = {}, ReadProbe* read = nullptr);
// Every thread runs the register-only loop; ops of all threads / wall time, best of 3.
double probe_int8_peak(ThreadPool& pool, const ProbeOptions& opt = {});
double probe_fma_peak(ThreadPool& pool, const ProbeOptions& opt = {});


}  // namespace edgeinfer
