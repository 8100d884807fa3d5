#pragma once
// Owning wrappers of device memory, pinned host memory, streams and events, and the GPU-timing
// helper the parts share.

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "calibrate/bench/bench_util.h"
#include "calibrate/bench/kernels.h"

namespace traincast::bench {

/// Makes `device` current for the scope, restoring the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    TC_CUDA(cudaGetDevice(&previous_));
    TC_CUDA(cudaSetDevice(device));
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

/// cudaMalloc'd bytes on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    TC_CUDA(cudaGetDevice(&device_));
    TC_CUDA(cudaMalloc(&data_, bytes));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      swap(o);
    }
    return *this;
  }
  void* get() const { return data_; }
  size_t bytes() const { return bytes_; }
  void reset() {
    if (!data_) return;
    int current = 0;
    cudaGetDevice(&current);
    cudaSetDevice(device_);
    cudaFree(data_);
    cudaSetDevice(current);
    data_ = nullptr;
    bytes_ = 0;
  }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    std::swap(device_, o.device_);
  }
  void* data_ = nullptr;
  size_t bytes_ = 0;
  int device_ = 0;
};

/// cudaHostAlloc'd (pinned) host bytes.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t bytes) : bytes_(bytes) { TC_CUDA(cudaHostAlloc(&data_, bytes, cudaHostAllocPortable)); }
  ~PinnedBuffer() {
    if (data_) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

/// A non-blocking stream on the current device.
class Stream {
 public:
  Stream() { TC_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// A timing event on the current device.
class Event {
 public:
  Event() { TC_CUDA(cudaEventCreate(&event_)); }
  ~Event() {
    if (event_) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

/// GPU time of `samples` samples, each `inner` back-to-back calls of `enqueue(stream)`, in seconds
/// per call (one value per sample). A spin kernel holds the stream first (long enough for the host
/// to enqueue everything, up to 20 ms) so that host launch gaps do not enter the timings; CUDA
/// events between samples (resolution about 0.5 us, so callers choose inner to make a sample
/// much longer than that).
template <typename Enqueue>
std::vector<double> gpu_time_per_call(cudaStream_t stream, int samples, int inner, Enqueue&& enqueue) {
  std::vector<Event> events(static_cast<size_t>(samples) + 1);
  const double host_enqueue_s = 10e-6 * samples * inner;  // generous per-launch host cost
  TC_CUDA(spin(static_cast<uint64_t>(std::fmin(host_enqueue_s, 20e-3) * 1e9), stream));
  TC_CUDA(cudaEventRecord(events[0].get(), stream));
  for (int s = 0; s < samples; ++s) {
    for (int i = 0; i < inner; ++i) enqueue(stream);
    TC_CUDA(cudaEventRecord(events[static_cast<size_t>(s) + 1].get(), stream));
  }
  TC_CUDA(cudaEventSynchronize(events.back().get()));
  std::vector<double> per_call;
  per_call.reserve(static_cast<size_t>(samples));
  for (int s = 0; s < samples; ++s) {
    float ms = 0;
    TC_CUDA(cudaEventElapsedTime(&ms, events[static_cast<size_t>(s)].get(), events[static_cast<size_t>(s) + 1].get()));
    per_call.push_back(ms * 1e-3 / inner);
  }
  return per_call;
}

/// GPU time of one call of `enqueue` (after the caller's warm-up), in seconds.
template <typename Enqueue>
double gpu_time_once(cudaStream_t stream, Enqueue&& enqueue) {
  return gpu_time_per_call(stream, 1, 1, enqueue).front();
}

/// Samples and inner calls for a measurement whose single call takes `single_s`: inner so that a
/// sample lasts at least `min_sample_s`; samples in [min_samples, max_samples] aiming at
/// `target_s` of timed work, fewer if `affordable_s` is smaller (never below min_samples).
struct Repeats {
  int samples = 0;
  int inner = 0;
};
inline Repeats choose_repeats(double single_s, double min_sample_s, double target_s, double affordable_s,
                              int min_samples, int max_samples) {
  single_s = std::fmax(single_s, 1e-7);
  Repeats r;
  r.inner = static_cast<int>(std::fmin(1000, std::fmax(1, std::ceil(min_sample_s / single_s))));
  const double per_sample = single_s * r.inner;
  const double budget = std::fmin(target_s, affordable_s);
  r.samples = static_cast<int>(std::fmax(min_samples, std::fmin(max_samples, std::floor(budget / per_sample))));
  return r;
}

}  // namespace traincast::bench
