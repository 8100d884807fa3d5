// gemm part of traincast-bench: cuBLASLt GEMM grid per dtype on the first selected GPU.

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "calibrate/bench/cuda_raii.h"
#include "calibrate/bench/gemm.h"
#include "calibrate/bench/parts.h"

namespace traincast::bench {

namespace {

using Shape = std::array<int64_t, 3>;  // m, n, k

/// The grid in passes, each adding points to the previous ones, so that a budget cut keeps every
/// dtype at the same (coarser) resolution: squares 128 .. 16384; then {256, 1024, 4096, 16384}^3;
/// then the full {128, 256, ..., 16384}^3. Within a pass, shapes are in a fixed pseudo-random order
/// (a cut pass still spreads over the grid). Dimensions above max_dim are left out.
std::vector<std::vector<Shape>> grid_passes(int64_t max_dim) {
  std::vector<int64_t> all;
  for (int64_t v = 128; v <= std::min<int64_t>(max_dim, 16384); v *= 2) all.push_back(v);
  std::vector<int64_t> coarse;
  for (int64_t v : {256, 1024, 4096, 16384}) {
    if (v <= max_dim) coarse.push_back(v);
  }
  std::set<Shape> done;
  std::vector<std::vector<Shape>> passes;
  auto add_pass = [&](std::vector<Shape> shapes) {
    std::vector<Shape> fresh;
    for (const Shape& s : shapes) {
      if (done.insert(s).second) fresh.push_back(s);
    }
    // Fixed order: sort by a hash of the shape (splitmix64 finaliser); same order on every run.
    auto key = [](const Shape& s) {
      uint64_t z =
          static_cast<uint64_t>(s[0]) * 1000003u ^ static_cast<uint64_t>(s[1]) * 10007u ^ static_cast<uint64_t>(s[2]);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return z ^ (z >> 31);
    };
    std::sort(fresh.begin(), fresh.end(), [&](const Shape& a, const Shape& b) { return key(a) < key(b); });
    if (!fresh.empty()) passes.push_back(std::move(fresh));
  };
  std::vector<Shape> squares;
  for (int64_t v : all) squares.push_back({v, v, v});
  std::sort(squares.begin(), squares.end());
  for (const Shape& s : squares) done.insert(s);
  passes.push_back(squares);  // ascending: small squares first
  std::vector<Shape> pass2, pass3;
  for (int64_t m : coarse)
    for (int64_t n : coarse)
      for (int64_t k : coarse) pass2.push_back({m, n, k});
  for (int64_t m : all)
    for (int64_t n : all)
      for (int64_t k : all) pass3.push_back({m, n, k});
  add_pass(pass2);
  add_pass(pass3);
  return passes;
}

}  // namespace

void run_gemm_part(BenchContext& ctx, const Deadline& deadline) {
  const int device = ctx.gpus.front();
  DeviceScope scope(device);
  int major = 0, minor = 0;
  TC_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  TC_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const int capability = 10 * major + minor;
  std::vector<const GemmDtype*> dtypes;
  for (const GemmDtype& d : gemm_dtypes()) {
    if (capability >= d.min_capability) {
      dtypes.push_back(&d);
    } else {
      progress("gemm %s: skipped (needs compute capability %d.%d, GPU has %d.%d)", d.name, d.min_capability / 10,
               d.min_capability % 10, major, minor);
    }
  }
  // A, B, C sized for the largest square at 4 bytes per element, within 60% of free memory.
  constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // cuBLAS docs: 32 MiB recommended on Hopper
  const size_t free_bytes = free_device_bytes(device);
  int64_t max_dim = 16384;
  while (max_dim > 128 && 3 * static_cast<size_t>(max_dim * max_dim) * 4 + kWorkspaceBytes > free_bytes / 10 * 6) {
    max_dim /= 2;
  }
  const size_t elements = static_cast<size_t>(max_dim * max_dim);
  DeviceBuffer a(elements * 4), b(elements * 4), c(elements * 4), workspace(kWorkspaceBytes);
  Stream stream;
  cublasLtHandle_t handle = nullptr;
  if (cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) throw BenchError("cublasLtCreate failed");
  struct HandleGuard {
    cublasLtHandle_t h;
    ~HandleGuard() { cublasLtDestroy(h); }
  } guard{handle};

  // Best TFLOP/s seen per dtype: the cost estimate of the next point (10 TFLOP/s before any point,
  // which overestimates the cost on every GPU with tensor cores).
  std::map<std::string, double> best_tflops;
  const auto passes = grid_passes(max_dim);
  size_t planned = 0, measured = 0;
  for (const auto& p : passes) planned += p.size() * dtypes.size();
  uint64_t seed = 1;
  bool stopped = false;
  for (size_t pass = 0; pass < passes.size() && !stopped; ++pass) {
    for (const Shape& shape : passes[pass]) {
      if (deadline.passed()) {
        stopped = true;
        break;
      }
      const auto [m, n, k] = shape;
      const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
      for (const GemmDtype* d : dtypes) {
        const double guess_tflops = best_tflops.count(d->name) ? best_tflops[d->name] : 10.0;
        const double single_guess = flops / (guess_tflops * 1e12);
        if (!deadline.affords(6 * single_guess + 2e-3)) continue;  // 2 warm-up + 3 samples + margin
        TC_CUDA(fill_random(a.get(), static_cast<size_t>(k * m), d->ab_fill, seed++, stream.get()));
        TC_CUDA(fill_random(b.get(), static_cast<size_t>(k * n), d->ab_fill, seed++, stream.get()));
        GemmProblem problem(handle, *d, m, n, k, a.get(), b.get(), c.get(), workspace.get(), kWorkspaceBytes);
        if (!problem.supported()) {
          progress("gemm %s %lldx%lldx%lld: skipped (%s)", d->name, static_cast<long long>(m),
                   static_cast<long long>(n), static_cast<long long>(k), problem.why().c_str());
          continue;
        }
        auto enqueue = [&](cudaStream_t st) { problem.run(st); };
        enqueue(stream.get());
        enqueue(stream.get());
        const double single = gpu_time_once(stream.get(), enqueue);
        if (!deadline.affords(4 * single + 1e-3)) continue;
        const Repeats r = choose_repeats(single, 50e-6, 0.05, 0.5 * deadline.remaining_s(), 3, 25);
        const double t = median(gpu_time_per_call(stream.get(), r.samples, r.inner, enqueue));
        GemmMeasurement g;
        g.dtype = d->name;
        g.m = m;
        g.n = n;
        g.k = k;
        g.time_s = t;
        g.tflops = flops / t / 1e12;
        g.repeats = r.samples;
        ctx.results->gemm.push_back(g);
        best_tflops[d->name] = std::max(best_tflops[d->name], *g.tflops);
        ++measured;
        progress("gemm %-4s %5lldx%5lldx%5lld: %8.1f TFLOP/s  %10.2f us (%d x %d)", d->name, static_cast<long long>(m),
                 static_cast<long long>(n), static_cast<long long>(k), *g.tflops, t * 1e6, r.samples, r.inner);
      }
    }
  }
  if (measured < planned) {
    const std::string note = "gemm: " + std::to_string(measured) + " of " + std::to_string(planned) +
                             " grid points measured (budget; passes: squares, coarse 4^3, full 8^3)";
    progress("%s", note.c_str());
    ctx.notes.push_back(note);
  }
}

}  // namespace traincast::bench
