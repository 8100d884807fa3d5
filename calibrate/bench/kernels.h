#pragma once
// The few CUDA kernels traincast-bench needs (everything else is cuBLASLt, cudaMemcpy or NCCL),
// behind plain host functions so that the rest of the program is ordinary C++. Every function
// enqueues on `stream` and returns cudaGetLastError() (the launch status).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace traincast::bench {

/// Element types the fill kernel writes.
enum class ElementType { f32, f16, bf16, fp8_e4m3 };

/// Fills `count` elements at `data` with pseudo-random values uniform in [-1, 1) (a hash of the
/// index and `seed`; values matter for power: zeros draw less than random data).
cudaError_t fill_random(void* data, size_t count, ElementType type, uint64_t seed, cudaStream_t stream);

/// Reads `bytes` at `data` (16-byte aligned, bytes a multiple of 16) with `blocks` x 256 threads,
/// grid-stride, 16-byte loads; writes to `sink` only in a case that never happens, so the loads
/// cannot be removed.
cudaError_t read_memory(const void* data, size_t bytes, float* sink, int blocks, cudaStream_t stream);

/// Writes `bytes` at `data` (16-byte aligned, multiple of 16) with 16-byte stores, `blocks` x 256.
cudaError_t write_memory(void* data, size_t bytes, int blocks, cudaStream_t stream);

/// One block of one thread that does nothing (launch latency).
cudaError_t empty_kernel(cudaStream_t stream);

/// One thread that spins for `ns` nanoseconds of GPU time (%globaltimer): holds the stream while
/// the host enqueues the timed work behind it, so host launch gaps do not enter GPU timings.
cudaError_t spin(uint64_t ns, cudaStream_t stream);

/// Sets `count` floats at `data` to `value`.
cudaError_t fill_value(float* data, size_t count, float value, cudaStream_t stream);

}  // namespace traincast::bench
