// burn part of traincast-bench: NVML samples during an idle baseline, a sustained GEMM on every
// selected GPU (the step up of power and temperature), and a cool-down (the step down), for the
// power-vs-load curve and the thermal R and C fit (DESIGN §4.5: C dT/dt = P - (T - T_inlet) / R).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "calibrate/bench/cuda_raii.h"
#include "calibrate/bench/gemm.h"
#include "calibrate/bench/parts.h"

namespace traincast::bench {

namespace {

// NVML power: a 1 s average on Ampere (except GA100) and later, e.g. H100/H200; instantaneous on
// GA100 (A100) and older (NVML API reference, nvmlDeviceGetPowerUsage).
constexpr double kSamplePeriodS = 0.25;

struct BurnGpu {
  int device = 0;
  void* nvml_device = nullptr;
  DeviceBuffer a, b, c, workspace;
  std::unique_ptr<Stream> stream;
  cublasLtHandle_t handle = nullptr;
  std::unique_ptr<GemmProblem> problem;
  double flops_per_gemm = 0;
  std::atomic<long long> gemms_done{0};
  std::string error;
  ~BurnGpu() {
    problem.reset();
    if (handle) cublasLtDestroy(handle);
  }
};

/// Keeps `g`'s stream busy with GEMMs until `stop`, at most two batches of 4 queued ahead.
void burn_loop(BurnGpu& g, const std::atomic<bool>& stop) {
  try {
    DeviceScope scope(g.device);
    Event events[2];
    long long batch = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      for (int i = 0; i < 4; ++i) g.problem->run(g.stream->get());
      TC_CUDA(cudaEventRecord(events[batch % 2].get(), g.stream->get()));
      if (batch >= 1) {
        TC_CUDA(cudaEventSynchronize(events[(batch - 1) % 2].get()));
        g.gemms_done += 4;
      }
      ++batch;
    }
    TC_CUDA(cudaStreamSynchronize(g.stream->get()));
  } catch (const std::exception& e) {
    g.error = e.what();
  }
}

}  // namespace

void run_burn_part(BenchContext& ctx, const Deadline& deadline, const Nvml& nvml) {
  if (!nvml.available()) {
    const std::string note = "burn: skipped, NVML unavailable (" + nvml.why_unavailable() + ")";
    progress("%s", note.c_str());
    ctx.notes.push_back(note);
    return;
  }
  const double total_s = deadline.remaining_s() - 1.0;  // 1 s for teardown
  if (total_s < 6) {
    ctx.notes.push_back("burn: skipped, less than 7 s of budget left");
    progress("burn: skipped, less than 7 s of budget left");
    return;
  }
  const double idle_s = 0.15 * total_s, load_s = 0.6 * total_s, cool_s = 0.25 * total_s;

  // Set-up before the idle baseline (allocation and heuristics do not heat the GPU).
  std::vector<std::unique_ptr<BurnGpu>> gpus;
  for (int device : ctx.gpus) {
    auto g = std::make_unique<BurnGpu>();
    g->device = device;
    DeviceScope scope(device);
    char bus_id[32] = {};
    TC_CUDA(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    g->nvml_device = nvml.device_by_pci_bus_id(bus_id);
    if (!g->nvml_device) progress("burn: NVML has no device with PCI bus id %s (GPU %d not sampled)", bus_id, device);
    int major = 0;
    TC_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    const GemmDtype& dtype = gemm_dtypes()[major >= 8 ? 3 : 2];  // bf16 on Ampere and later, else fp16
    int64_t dim = 8192;
    while (dim > 1024 && 3 * static_cast<size_t>(dim * dim) * 2 > free_device_bytes(device) / 2) dim /= 2;
    const size_t bytes = static_cast<size_t>(dim * dim) * 2;
    g->a = DeviceBuffer(bytes);
    g->b = DeviceBuffer(bytes);
    g->c = DeviceBuffer(bytes);
    g->workspace = DeviceBuffer(size_t{32} << 20);
    g->stream = std::make_unique<Stream>();
    TC_CUDA(fill_random(g->a.get(), bytes / 2, dtype.ab_fill, 11, g->stream->get()));
    TC_CUDA(fill_random(g->b.get(), bytes / 2, dtype.ab_fill, 12, g->stream->get()));
    if (cublasLtCreate(&g->handle) != CUBLAS_STATUS_SUCCESS) throw BenchError("cublasLtCreate failed");
    g->problem = std::make_unique<GemmProblem>(g->handle, dtype, dim, dim, dim, g->a.get(), g->b.get(), g->c.get(),
                                               g->workspace.get(), g->workspace.bytes());
    if (!g->problem->supported()) throw BenchError(std::string("burn GEMM: ") + g->problem->why());
    TC_CUDA(cudaStreamSynchronize(g->stream->get()));
    g->flops_per_gemm = 2.0 * static_cast<double>(dim) * static_cast<double>(dim) * static_cast<double>(dim);
    progress("burn: GPU %d, %s GEMM %lld^3", device, dtype.name, static_cast<long long>(dim));
    gpus.push_back(std::move(g));
  }

  // Settle: the parts before this one leave the GPUs hot and drawing power for a second or two
  // (on an H200 after the GEMM part: 596 W at the first idle sample, 193 W 1 s later, 131 W at
  // 1.5 s; NVML's power is a 1 s mean). Wait, without recording, until every sampled GPU's power
  // over the last 2 s spans at most 3 % (or 5 W), for at most a third of the idle share, so that
  // the idle baseline is idle.
  const double settle_max_s = idle_s / 3;
  const auto settle_start = Clock::now();
  std::vector<std::vector<double>> recent(gpus.size());
  constexpr std::size_t kSettleWindow = static_cast<std::size_t>(2.0 / kSamplePeriodS);
  while (g_stop_signal == 0 && seconds_between(settle_start, Clock::now()) < settle_max_s) {
    bool steady = true;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (!gpus[i]->nvml_device) continue;
      auto& w = recent[i];
      const std::optional<double> watts = nvml.power_w(gpus[i]->nvml_device);
      if (!watts) continue;  // NVML cannot read this GPU's power: nothing to wait for
      w.push_back(*watts);
      if (w.size() > kSettleWindow) w.erase(w.begin());
      const auto [lo, hi] = std::minmax_element(w.begin(), w.end());
      if (w.size() < kSettleWindow || *hi - *lo > std::max(5.0, 0.03 * *hi)) steady = false;
    }
    if (steady) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(kSamplePeriodS));
  }
  const double settled_s = seconds_between(settle_start, Clock::now());
  const auto idle_start = Clock::now();
  const auto burn_start = idle_start + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(std::max(1.0, idle_s - settled_s)));
  bool loaded = false;
  auto sample_until = [&](Clock::time_point end) {
    auto next = Clock::now();
    while (g_stop_signal == 0 && Clock::now() < end) {
      const double t = seconds_between(burn_start, Clock::now());
      for (const auto& g : gpus) {
        if (!g->nvml_device) continue;
        PowerSample s;
        s.gpu = g->device;
        s.t_s = t;
        s.power_w = nvml.power_w(g->nvml_device);
        s.temperature_c = nvml.temperature_c(g->nvml_device);
        s.sm_clock_mhz = nvml.sm_clock_mhz(g->nvml_device);
        s.throttle_reasons = nvml.throttle_reasons(g->nvml_device);
        s.loaded = loaded;
        ctx.results->power.push_back(s);
      }
      next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kSamplePeriodS));
      std::this_thread::sleep_until(std::min(next, end));
    }
  };
  progress("burn: settled in %.1f s; idle baseline %.0f s, load %.0f s, cool-down %.0f s, NVML every %.2f s", settled_s,
           idle_s - settled_s, load_s, cool_s, kSamplePeriodS);
  sample_until(burn_start);

  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  loaded = true;
  for (auto& g : gpus) threads.emplace_back(burn_loop, std::ref(*g), std::cref(stop));
  const auto load_end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(load_s));
  sample_until(load_end);
  stop = true;
  for (auto& t : threads) t.join();
  loaded = false;
  const double burned_s = seconds_between(burn_start, Clock::now());
  for (const auto& g : gpus) {
    if (!g->error.empty()) throw BenchError("burn on GPU " + std::to_string(g->device) + ": " + g->error);
  }
  const auto cool_end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cool_s));
  sample_until(cool_end);
  for (const auto& g : gpus) {
    const long long done = g->gemms_done.load();
    progress("burn: GPU %d ran %lld GEMMs in %.1f s (%.1f TFLOP/s sustained)", g->device, done, burned_s,
             static_cast<double>(done) * g->flops_per_gemm / burned_s / 1e12);
  }
}

}  // namespace traincast::bench
