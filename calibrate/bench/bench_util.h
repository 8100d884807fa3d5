#pragma once
// Shared helpers of traincast-bench: CUDA/cuBLAS error checks that throw, the time budget, the stop
// flag set by SIGINT/SIGTERM, progress lines on stderr, medians.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/bench/measurement_text.h"

namespace traincast::bench {

/// A failed CUDA/cuBLAS/NCCL/NVML call: "file:line: call: what".
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* call, const char* file, int line) {
  throw BenchError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + cudaGetErrorName(e) + " (" +
                   cudaGetErrorString(e) + ")");
}

#define TC_CUDA(call)                                                                           \
  do {                                                                                          \
    const cudaError_t tc_e_ = (call);                                                           \
    if (tc_e_ != cudaSuccess) ::traincast::bench::throw_cuda(tc_e_, #call, __FILE__, __LINE__); \
  } while (0)

/// Set by the SIGINT/SIGTERM handler; parts stop at their next point and the file is written.
extern volatile std::sig_atomic_t g_stop_signal;

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// The end of one part's share of --budget-s.
class Deadline {
 public:
  explicit Deadline(Clock::time_point end) : end_(end) {}
  double remaining_s() const { return seconds_between(Clock::now(), end_); }
  /// True once the share is spent or a stop signal arrived.
  bool passed() const { return g_stop_signal != 0 || Clock::now() >= end_; }
  /// True when `cost_s` more seconds would still end before the deadline (and no stop signal).
  bool affords(double cost_s) const { return g_stop_signal == 0 && remaining_s() >= cost_s; }

 private:
  Clock::time_point end_;
};

/// Seconds since the program started (for progress lines).
double run_elapsed_s();

/// printf-style progress line on stderr, prefixed with the elapsed time: "[  12.3 s] ...".
void progress(const char* format, ...) __attribute__((format(printf, 1, 2)));

/// Median of `v` (mean of the two middle values for an even count); 0 for an empty vector.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// What the parts share: the selected GPUs, the results being collected, notes for the file.
struct BenchContext {
  std::vector<int> gpus;           ///< CUDA device indices; gpus[0] runs the single-GPU parts
  Measurements* results;           ///< parts append here
  std::vector<std::string> notes;  ///< one line each, written as comments at the top of the file
};

/// Bytes free on `device` now (cudaMemGetInfo).
size_t free_device_bytes(int device);

}  // namespace traincast::bench
