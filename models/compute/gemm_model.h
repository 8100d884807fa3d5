#pragma once
// GEMM time from its shape (issue 17, "compute per kernel class, shape-aware"; DESIGN §4.2).
//
// A tensor-core GEMM C[M x N] = A[M x K] B[K x N] (batch b) runs as output tiles of
// tile_m x tile_n, one tile per SM at a time. cuBLAS splits K (split-K / stream-K) when the tiles
// alone do not fill the SMs, so a kernel runs `s` K-slices per tile, s in {1, 2, 4, 8, 16}, the
// fastest one taken (as cuBLAS's heuristic picks a kernel). Each work unit (tile, K-slice) costs
// its main loop plus a fixed prologue/epilogue worth `k_overhead` K elements; units run in waves
// over the SMs (the last wave is as long as a full one: wave quantization):
//   units  = b * ceil(M / tile_m) * ceil(N / tile_n) * s
//   t_math = ceil(units / SMs) * 2 tile_m tile_n (ceil(K / s) + k_overhead) / (η peak / SMs)
//   t      = max(t_math, bytes / (η_mem hbm_bw)) + fixed_s
// η, k_overhead and fixed_s are kernel constants fitted on kernel measurements only
// (fit_gemm_tile_model on the even rows of shared/data/gemm/xla_matmul_perf_table_measured.csv;
// tests/models/workload/gemm_model_test.cc refits and scores the odd rows).

#include <vector>

namespace traincast::models {

/// Kernel constants of the tile model for one GPU type and one math precision.
struct GemmTileModel {
  double efficiency = 0.85;  ///< η: main-loop fraction of the dense peak at full SM occupancy
  double k_overhead = 140;   ///< per-unit prologue/epilogue, in K elements of main loop
  double fixed_s = 4.6e-6;   ///< per-GEMM launch, ramp and tail [s]
  double tile_m = 128;       ///< output tile rows (CUTLASS/cuBLAS Hopper bf16 128x256x64)
  double tile_n = 256;       ///< output tile columns
  int max_split_k = 16;      ///< largest K split tried (powers of 2)
};

/// One GEMM's shape and the hardware it runs on.
struct GemmShape {
  double b = 1, m = 0, n = 0, k = 0;  ///< batch and the M, N, K of one GEMM
  double bytes = 0;                   ///< HBM bytes read + written by the whole batch
};

/// Seconds for `shape` under `model` on a GPU with `sms` SMs, `peak_flops` dense peak of the
/// precision (clock scaling already applied) and `hbm_bytes_per_s` effective HBM bandwidth
/// (memory efficiency applied). Requires sms > 0, peak > 0, m, n, k > 0.
double gemm_tile_seconds(const GemmTileModel& model, const GemmShape& shape, int sms, double peak_flops,
                         double hbm_bytes_per_s);

/// The part of gemm_tile_seconds spent in tensor-core math (t_math above), for the same arguments.
double gemm_tile_math_seconds(const GemmTileModel& model, const GemmShape& shape, int sms, double peak_flops);

/// One measured GEMM: its shape and the seconds it took.
struct GemmMeasurement {
  GemmShape shape;
  double seconds = 0;
};

/// Least squares of log(predicted / measured) over `points` for η, k_overhead and fixed_s (tile
/// shape and max split from `start`, which also seeds the search); Nelder-Mead from three starts,
/// deterministic. Returns the fitted model.
GemmTileModel fit_gemm_tile_model(const std::vector<GemmMeasurement>& points, const GemmTileModel& start, int sms,
                                  double peak_flops, double hbm_bytes_per_s);

/// η that makes the model reproduce one measured GEMM (a best shape, e.g. MAMF's), k_overhead
/// and fixed_s kept from `model`: the main loop's efficiency the measurement implies once wave
/// quantization, the per-unit overhead and the fixed cost are taken out. Requires the measured
/// time above fixed_s and the shape compute bound.
double gemm_efficiency_from_measurement(const GemmTileModel& model, const GemmMeasurement& point, int sms,
                                        double peak_flops);

}  // namespace traincast::models
