#include "calibrate/bench/bench_util.h"

namespace traincast::bench {

volatile std::sig_atomic_t g_stop_signal = 0;

namespace {
const Clock::time_point kProgramStart = Clock::now();
}

double run_elapsed_s() { return seconds_between(kProgramStart, Clock::now()); }

void progress(const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  std::fprintf(stderr, "[%7.1f s] %s\n", run_elapsed_s(), line);
  std::fflush(stderr);
}

size_t free_device_bytes(int device) {
  int current = 0;
  TC_CUDA(cudaGetDevice(&current));
  TC_CUDA(cudaSetDevice(device));
  size_t free_bytes = 0, total_bytes = 0;
  const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
  cudaSetDevice(current);
  if (e != cudaSuccess) throw_cuda(e, "cudaMemGetInfo", __FILE__, __LINE__);
  return free_bytes;
}

}  // namespace traincast::bench
