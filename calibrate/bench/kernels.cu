#include "calibrate/bench/kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace traincast::bench {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float hash_uniform(uint64_t i, uint64_t seed) {
  // splitmix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", OOPSLA 2014).
  uint64_t z = i + seed * 0x9E3779B97F4A7C15ull + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // 24 bits -> [-1, 1)
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

template <typename T>
__global__ void fill_random_kernel(T* data, size_t count, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    data[i] = from_float<T>(hash_uniform(i, seed));
  }
}

__global__ void read_kernel(const float4* __restrict__ data, size_t n, float* sink) {
  float acc = 0.0f;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float4 v = data[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == -1.2345e-30f) sink[0] = acc;  // never true for the data written; keeps the loads
}

__global__ void write_kernel(float4* data, size_t n) {
  const float4 v = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    data[i] = v;
  }
}

__global__ void fill_value_kernel(float* data, size_t count, float value) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    data[i] = value;
  }
}

__global__ void empty() {}

__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(uint64_t ns) {
  const uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < ns) {
    __nanosleep(1000);
  }
}

int grid_for(size_t items) {
  const size_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

}  // namespace

cudaError_t fill_random(void* data, size_t count, ElementType type, uint64_t seed, cudaStream_t stream) {
  const int grid = grid_for(count);
  switch (type) {
    case ElementType::f32:
      fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<float*>(data), count, seed);
      break;
    case ElementType::f16:
      fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__half*>(data), count, seed);
      break;
    case ElementType::bf16:
      fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, seed);
      break;
    case ElementType::fp8_e4m3:
      fill_random_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data), count, seed);
      break;
  }
  return cudaGetLastError();
}

cudaError_t read_memory(const void* data, size_t bytes, float* sink, int blocks, cudaStream_t stream) {
  read_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float4*>(data), bytes / sizeof(float4), sink);
  return cudaGetLastError();
}

cudaError_t write_memory(void* data, size_t bytes, int blocks, cudaStream_t stream) {
  write_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<float4*>(data), bytes / sizeof(float4));
  return cudaGetLastError();
}

cudaError_t empty_kernel(cudaStream_t stream) {
  empty<<<1, 1, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t spin(uint64_t ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}

cudaError_t fill_value(float* data, size_t count, float value, cudaStream_t stream) {
  fill_value_kernel<<<grid_for(count), kThreads, 0, stream>>>(data, count, value);
  return cudaGetLastError();
}

}  // namespace traincast::bench
