// launch, hbm and pcie parts of traincast-bench.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "calibrate/bench/cuda_raii.h"
#include "calibrate/bench/parts.h"

namespace traincast::bench {

namespace {

constexpr double kGiB = 1073741824.0;

std::string size_text(double bytes) {
  char buf[32];
  if (bytes >= kGiB) {
    std::snprintf(buf, sizeof buf, "%.0f GiB", bytes / kGiB);
  } else if (bytes >= 1048576.0) {
    std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / 1048576.0);
  } else if (bytes >= 1024.0) {
    std::snprintf(buf, sizeof buf, "%.0f KiB", bytes / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  }
  return buf;
}

/// Times one bandwidth point: warm-up, then samples chosen to fit; appends the measurement.
/// Returns false (appending nothing) when the deadline cannot afford even the minimum.
template <typename Enqueue>
bool measure_bandwidth(BenchContext& ctx, const Deadline& deadline, cudaStream_t stream, BandwidthKind kind,
                       size_t size, double bytes_moved, std::optional<int> src, std::optional<int> dst,
                       Enqueue&& enqueue) {
  enqueue(stream);  // warm-up (first touch, page mapping, clocks)
  const double single = gpu_time_once(stream, enqueue);
  if (!deadline.affords(single * 4 + 1e-3)) return false;
  const Repeats r = choose_repeats(single, 100e-6, 0.05, 0.25 * deadline.remaining_s(), 3, 20);
  const double t = median(gpu_time_per_call(stream, r.samples, r.inner, enqueue));
  BandwidthMeasurement m;
  m.kind = kind;
  m.size_bytes = static_cast<double>(size);
  m.bytes = bytes_moved;
  m.time_s = t;
  m.gb_per_s = bytes_moved / t / 1e9;
  m.src_gpu = src;
  m.dst_gpu = dst;
  m.repeats = r.samples;
  ctx.results->bandwidth.push_back(m);
  progress("%s %s%s: %.1f GB/s (%d x %d)", bandwidth_kind_name(kind), size_text(static_cast<double>(size)).c_str(),
           src ? (" GPU " + std::to_string(*src) + " -> " + std::to_string(*dst)).c_str() : "", *m.gb_per_s, r.samples,
           r.inner);
  return true;
}

int full_occupancy_blocks(int device) {
  int sms = 0, threads_per_sm = 0;
  TC_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  TC_CUDA(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  return std::max(1, sms * threads_per_sm / 256);
}

}  // namespace

void run_launch_part(BenchContext& ctx, const Deadline& deadline) {
  const int device = ctx.gpus.front();
  DeviceScope scope(device);
  Stream stream;
  for (int i = 0; i < 100; ++i) TC_CUDA(empty_kernel(stream.get()));
  TC_CUDA(cudaStreamSynchronize(stream.get()));

  // Launch + synchronize, host clock, one kernel at a time.
  std::vector<double> single;
  for (int i = 0; i < 2000 && !(i >= 50 && deadline.passed()); ++i) {
    const auto t0 = Clock::now();
    TC_CUDA(empty_kernel(stream.get()));
    TC_CUDA(cudaStreamSynchronize(stream.get()));
    single.push_back(seconds_between(t0, Clock::now()));
  }
  // Back to back: CUDA events around a batch of kernels launched as fast as the host can (no spin:
  // the launch rate is what is measured).
  constexpr int kBatch = 1000;
  std::vector<double> batch;
  Event start, stop;
  for (int b = 0; b < 10 && !(b >= 3 && deadline.passed()); ++b) {
    TC_CUDA(cudaEventRecord(start.get(), stream.get()));
    for (int i = 0; i < kBatch; ++i) TC_CUDA(empty_kernel(stream.get()));
    TC_CUDA(cudaEventRecord(stop.get(), stream.get()));
    TC_CUDA(cudaEventSynchronize(stop.get()));
    float ms = 0;
    TC_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    batch.push_back(ms * 1e-3 / kBatch);
  }
  LaunchMeasurement m;
  m.empty_kernel_launch_s = median(single);
  m.back_to_back_kernel_s = median(batch);
  ctx.results->launch = m;
  progress("launch: empty kernel launch+sync %.2f us (median of %zu), back to back %.2f us per kernel",
           *m.empty_kernel_launch_s * 1e6, single.size(), *m.back_to_back_kernel_s * 1e6);
}

void run_hbm_part(BenchContext& ctx, const Deadline& deadline) {
  const int device = ctx.gpus.front();
  DeviceScope scope(device);
  // Two buffers (copy source and destination) within 80% of free memory, at most 8 GiB each.
  const size_t free_bytes = free_device_bytes(device);
  size_t max_size = size_t{8} << 30;
  while (max_size > 4096 && 2 * max_size > free_bytes / 10 * 8) max_size /= 2;
  if (max_size < (size_t{1} << 20)) throw BenchError("hbm: less than 2 MiB of free device memory");
  DeviceBuffer a(max_size), b(max_size), sink(256);
  Stream stream;
  TC_CUDA(write_memory(a.get(), max_size, 1024, stream.get()));
  TC_CUDA(write_memory(b.get(), max_size, 1024, stream.get()));
  const int blocks = full_occupancy_blocks(device);
  float* sink_f = static_cast<float*>(sink.get());
  for (size_t size = 4096; size <= max_size && !deadline.passed(); size *= 2) {
    const double s = static_cast<double>(size);
    bool ok = measure_bandwidth(
        ctx, deadline, stream.get(), BandwidthKind::hbm_copy, size, 2 * s, std::nullopt, std::nullopt,
        [&](cudaStream_t st) { TC_CUDA(cudaMemcpyAsync(b.get(), a.get(), size, cudaMemcpyDeviceToDevice, st)); });
    ok = ok &&
         measure_bandwidth(ctx, deadline, stream.get(), BandwidthKind::hbm_read, size, s, std::nullopt, std::nullopt,
                           [&](cudaStream_t st) { TC_CUDA(read_memory(a.get(), size, sink_f, blocks, st)); });
    ok = ok &&
         measure_bandwidth(ctx, deadline, stream.get(), BandwidthKind::hbm_write, size, s, std::nullopt, std::nullopt,
                           [&](cudaStream_t st) { TC_CUDA(write_memory(b.get(), size, blocks, st)); });
    if (!ok) break;
  }
}

void run_pcie_part(BenchContext& ctx, const Deadline& deadline) {
  const int device = ctx.gpus.front();
  {
    DeviceScope scope(device);
    size_t max_size = size_t{1} << 30;
    while (max_size > 4096 && max_size > free_device_bytes(device) / 4) max_size /= 2;
    std::unique_ptr<PinnedBuffer> host;
    while (!host) {
      try {
        host = std::make_unique<PinnedBuffer>(max_size);
      } catch (const BenchError&) {
        cudaGetLastError();  // clear the allocation error (not sticky)
        if (max_size <= (size_t{1} << 20)) throw;
        max_size /= 4;
      }
    }
    std::memset(host->get(), 1, max_size);
    DeviceBuffer dev(max_size);
    Stream stream;
    for (size_t size = 4096; size <= max_size && !deadline.passed(); size *= 4) {
      const double s = static_cast<double>(size);
      bool ok = measure_bandwidth(
          ctx, deadline, stream.get(), BandwidthKind::h2d, size, s, std::nullopt, std::nullopt,
          [&](cudaStream_t st) { TC_CUDA(cudaMemcpyAsync(dev.get(), host->get(), size, cudaMemcpyHostToDevice, st)); });
      ok = ok && measure_bandwidth(ctx, deadline, stream.get(), BandwidthKind::d2h, size, s, std::nullopt, std::nullopt,
                                   [&](cudaStream_t st) {
                                     TC_CUDA(cudaMemcpyAsync(host->get(), dev.get(), size, cudaMemcpyDeviceToHost, st));
                                   });
      if (!ok) break;
    }
  }
  if (ctx.gpus.size() < 2) {
    progress("pcie: one GPU selected, no D2D peer copies");
    return;
  }
  // Peer copies: enable peer access where possible (otherwise CUDA stages through the host, which
  // is what such a pair does in practice, and is measured as such).
  for (int src : ctx.gpus) {
    DeviceScope scope(src);
    for (int dst : ctx.gpus) {
      if (dst == src) continue;
      int can = 0;
      TC_CUDA(cudaDeviceCanAccessPeer(&can, src, dst));
      if (can) {
        const cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();
        } else if (e != cudaSuccess) {
          throw_cuda(e, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
        }
      } else {
        progress("pcie: GPU %d cannot access GPU %d directly (copies staged through host memory)", src, dst);
      }
    }
  }
  size_t peer_size = size_t{256} << 20;
  for (int g : ctx.gpus) {
    while (peer_size > 4096 && peer_size > free_device_bytes(g) / 4) peer_size /= 2;
  }
  std::vector<DeviceBuffer> buffers;
  for (int g : ctx.gpus) {
    DeviceScope scope(g);
    buffers.emplace_back(peer_size);
  }
  auto peer_point = [&](size_t si, size_t di, size_t size) {
    const int src = ctx.gpus[si], dst = ctx.gpus[di];
    DeviceScope scope(src);
    Stream stream;
    return measure_bandwidth(ctx, deadline, stream.get(), BandwidthKind::d2d_peer, size, static_cast<double>(size), src,
                             dst, [&](cudaStream_t st) {
                               TC_CUDA(cudaMemcpyPeerAsync(buffers[di].get(), dst, buffers[si].get(), src, size, st));
                             });
  };
  // Every ordered pair at the largest size, then a size sweep for the first pair.
  for (size_t si = 0; si < ctx.gpus.size() && !deadline.passed(); ++si) {
    for (size_t di = 0; di < ctx.gpus.size() && !deadline.passed(); ++di) {
      if (si != di && !peer_point(si, di, peer_size)) return;
    }
  }
  for (size_t size = 4096; size < peer_size && !deadline.passed(); size *= 4) {
    if (!peer_point(0, 1, size)) return;
  }
}

}  // namespace traincast::bench
