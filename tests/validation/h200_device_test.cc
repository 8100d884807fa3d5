// One H200 SXM measured on 2026-12-04 (tests/calibrate/data/h200_20261204, README there): the
// compute and power models' kernel-level defaults scored against kernels they were never fitted
// to, and `calibrate fit` on the bench file with the odd points held out (issue 17: "fit it and
// report held-out GEMM, attention, HBM and NCCL error"; NCCL needs two GPUs: none measured).
//
// Errors: time predicted / time measured - 1 (positive: the simulator is slower than the
// hardware); geometric means as exp(mean |ln ratio|) - 1. Figures are in docs/calibration.md
// ("A measured H200"); each assertion below is a property the model claims, not a fitted bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "calibrate/fit/profile_fit.h"
#include "calibrate/fit/profile_validate.h"
#include "models/calibration/calibration_profile.h"
#include "models/collectives/nccl_tests.h"
#include "models/compute/compute_model.h"
#include "models/compute/gemm_model.h"
#include "models/hardware/catalog.h"
#include "models/io/profile_io.h"
#include "models/power/power_model.h"
#include "tests/models/workload/csv_rows.h"

namespace traincast::models {
namespace {

const std::string kDir = std::string(TRAINCAST_SOURCE_DIR) + "/tests/calibrate/data/h200_20261204/";
const char* const kGpu = "H200-SXM-141GB";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

MeasurementSet bench_file() {
  const std::string text = slurp(kDir + "h200_sxm_1gpu_20261204.textproto");
  return io::load_measurements_text(text, "h200_sxm_1gpu_20261204.textproto");
}

/// Rows of a small CSV with a header line (test_support::read_csv), as name -> value maps.
std::vector<std::map<std::string, std::string>> read_rows(const std::string& path) {
  const auto cells = test_support::read_csv(path);
  std::vector<std::map<std::string, std::string>> rows;
  for (std::size_t r = 1; r < cells.size(); ++r) {
    if (cells[r].size() != cells[0].size()) continue;
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < cells[r].size(); ++i) row[cells[0][i]] = cells[r][i];
    rows.push_back(row);
  }
  return rows;
}

/// exp(mean ln ratio) - 1: the bias.
double signed_geo(const std::vector<double>& ratios) {
  double s = 0;
  for (double r : ratios) s += std::log(r);
  return std::exp(s / static_cast<double>(ratios.size())) - 1;
}

// The GEMM tile model with its shipped H100 constants (fitted on the openxla H100 table; H200 is
// the same chip with faster HBM) against the bench's 2,560 cuBLASLt GEMMs. Scored on GEMMs of at
// least 2 x 1024^3 FLOP (smaller ones printed). bf16 and fp16 (eta 0.854 from the openxla fit) must
// hold within the 15 % issue 17 asks of a kernel class and not be biased fast by more than 5 %.
// fp8 (eta 0.778 from MAMF's best H100 shape) is printed with the eta these shapes imply (the tile
// model refitted on the even-indexed large fp8 GEMMs, scored on the odd ones): a named gap in
// docs/calibration.md, not asserted.
TEST(H200Device, GemmTileModelDefaultsPredictTheBenchGemms) {
  const MeasurementSet m = bench_file();
  ASSERT_EQ(m.gemm.size(), 2560u);
  const GpuSpec& gpu = find_gpu(kGpu);
  const ComputeParams params = default_compute_params(gpu);
  const double bw = gpu.hbm_bandwidth_bytes_per_s * params.memory_efficiency;
  for (Precision p : {Precision::bf16, Precision::fp16, Precision::fp8}) {
    std::vector<double> large, small;
    std::vector<GemmMeasurement> even, odd;
    const GemmTileModel model = gemm_tile_model(params, p);
    for (const GemmSample& g : m.gemm) {
      if (g.dtype != p) continue;
      const double word = p == Precision::fp8 ? 1.0 : 2.0;
      const GemmShape shape{1, g.m, g.n, g.k, word * (g.m * g.k + g.k * g.n) + 2.0 * g.m * g.n};
      const double predicted = gemm_tile_seconds(model, shape, gpu.sm_count, peak_flops(gpu, p), bw);
      const bool is_large = 2 * g.m * g.n * g.k >= 2.0 * 1073741824.0;
      (is_large ? large : small).push_back(predicted / g.time_s);
      if (is_large) ((large.size() % 2 == 1) ? even : odd).push_back(GemmMeasurement{shape, g.time_s});
    }
    ASSERT_FALSE(large.empty());
    const GemmTileModel refit = fit_gemm_tile_model(even, model, gpu.sm_count, peak_flops(gpu, p), bw);
    std::vector<double> held;
    for (const GemmMeasurement& g : odd)
      held.push_back(gemm_tile_seconds(refit, g.shape, gpu.sm_count, peak_flops(gpu, p), bw) / g.seconds);
    std::printf(
        "GEMM %-4s tile model (eta %.3f): >= 2 GFLOP %zu shapes |err| %.1f%% signed %+.1f%%; smaller %zu "
        "shapes |err| %.1f%% signed %+.1f%%; refitted on %zu even large shapes: eta %.3f, held-out %zu "
        "|err| %.1f%% signed %+.1f%%\n",
        precision_name(p), model.efficiency, large.size(), 100 * geometric_mean_error(large), 100 * signed_geo(large),
        small.size(), 100 * geometric_mean_error(small), 100 * signed_geo(small), even.size(), refit.efficiency,
        odd.size(), 100 * geometric_mean_error(held), 100 * signed_geo(held));
    if (p == Precision::fp8) continue;
    EXPECT_LT(geometric_mean_error(large), 0.15) << precision_name(p);
    EXPECT_GT(signed_geo(large), -0.05) << precision_name(p) << ": the tile model is faster than this H200";
  }
}

// `calibrate fit --holdout odd` on the bench file: the fitted GEMM surface and HBM efficiency
// scored on the points the fit left out.
TEST(H200Device, ProfileFittedOnEvenPointsPredictsTheOddOnes) {
  const MeasurementSet m = bench_file();
  calibrate::FitOptions o;
  o.base = kGpu;
  o.gpu = kGpu;
  o.holdout = calibrate::Holdout::odd;
  const auto profile = std::make_shared<const CalibrationProfile>(calibrate::fit_profile(m, o));
  const calibrate::Validation v = calibrate::validate_profile(profile, m, o);
  int gemm_groups = 0;
  for (const auto& g : v.groups) {
    std::printf("%-9s %-9s held out %.1f%% (%d), fit %.1f%% (%d); smaller sizes held out %.1f%% (%d)\n", g.kind.c_str(),
                g.group.c_str(), 100 * g.held_large_error, g.held_large, 100 * g.fit_large_error, g.fit_large,
                100 * g.held_small_error, g.held_small);
    if (g.kind == "gemm") {
      ++gemm_groups;
      // A table fitted on 256 shapes per dtype interpolates the other 256 within its own scatter
      // (robust sigma 11-15 % of ln efficiency, printed by the fit).
      EXPECT_LT(g.held_large_error, 0.15) << g.group;
    }
    if (g.kind == "bandwidth" && g.group.rfind("hbm", 0) == 0) {
      // One efficiency for copy, read and write kernels: streaming sizes (>= 64 MiB) held out.
      EXPECT_GT(g.held_large, 0) << g.group;
      EXPECT_LT(g.held_large_error, 0.10) << g.group;
    }
  }
  EXPECT_EQ(gemm_groups, 5);
  ASSERT_TRUE(profile->memory_efficiency.has_value());
  std::printf("HBM efficiency fitted %.3f (catalog default %.3f, STREAM triad)\n", *profile->memory_efficiency,
              default_compute_params(find_gpu(kGpu)).memory_efficiency);
  // Large copies measured 4.29-4.31 TB/s of 4.8 (8 GiB: 4,313 GB/s): the fit must land there.
  EXPECT_NEAR(*profile->memory_efficiency * 4800.0, 4290.0, 60.0);
}

// Fused attention (models/compute/attention_model.h): plateau and shape factors of FA2 (the
// default, training.attention_kernel flash2) and cuDNN (attention_kernel cudnn), fitted on the rows
// of seq 512, 2,048 and 8,192 of h200_sdpa_attention.csv and scored here on 1,024, 4,096 and 16,384
// through kernel_seconds, as the simulator times them. The fit rows must be reproduced within the
// fit's own residual (constants cannot drift from their data) and the held-out rows within 4 %.
TEST(H200Device, AttentionModelAgainstPyTorchSdpa) {
  const auto rows = read_rows(kDir + "h200_sdpa_attention.csv");
  ASSERT_EQ(rows.size(), 48u);
  const GpuSpec& gpu = find_gpu(kGpu);
  for (AttentionKernel kind : {AttentionKernel::flash2, AttentionKernel::cudnn}) {
    const std::string backend = kind == AttentionKernel::flash2 ? "flash2" : "cudnn";
    TrainingSpec training;
    training.compute_model = ComputeModel::kernel;
    training.attention_kernel = kind;
    const ComputeParams params = with_compute_model(default_compute_params(gpu), training);
    std::map<std::string, std::vector<double>> ratios;  // "fwd fit", "bwd held", ...
    for (const auto& r : rows) {
      if (r.at("backend") != backend) continue;
      const int seq = std::stoi(r.at("seq_len"));
      const bool fit = seq == 512 || seq == 2048 || seq == 8192;
      for (const char* dir : {"fwd", "bwd"}) {
        Kernel k{std::string(dir) == "fwd" ? KernelKind::attention_forward : KernelKind::attention_backward,
                 std::stod(r.at(std::string(dir) + "_flops")), 0};
        k.attention_seq_len = seq;
        k.attention_head_dim = std::stod(r.at("head_dim"));
        k.attention_causal = r.at("causal") == "1";
        const double ratio =
            kernel_seconds(k, gpu, params, Precision::bf16, 1.0) / std::stod(r.at(std::string(dir) + "_s"));
        ratios[std::string(dir) + (fit ? " fit" : " held")].push_back(ratio);
        std::printf("%-6s %s d %3s causal %s seq %5d: %+.1f%%%s\n", backend.c_str(), dir, r.at("head_dim").c_str(),
                    r.at("causal").c_str(), seq, 100 * (ratio - 1), fit ? " (fit)" : "");
      }
    }
    for (const auto& [what, v] : ratios) {
      std::printf("%-6s %-8s %2zu rows |err| %.1f%% signed %+.1f%%\n", backend.c_str(), what.c_str(), v.size(),
                  100 * geometric_mean_error(v), 100 * signed_geo(v));
      ASSERT_EQ(v.size(), 12u);
      EXPECT_LT(geometric_mean_error(v), what.find("fit") != std::string::npos ? 0.025 : 0.04)
          << backend << " " << what;
    }
  }
}

// Memory-bound kernels: the default memory efficiency (STREAM triad, 0.736 of 4.8 TB/s) against
// PyTorch's kernels at >= 64 Mi elements. The default stands for a triad-like streaming kernel;
// fused AdamW (4 streams read, 3 written) is the closest such kernel of a training step and must
// be within 5 %; the others are printed (docs/calibration.md).
TEST(H200Device, MemoryBoundKernelsAgainstTheDefaultEfficiency) {
  const auto rows = read_rows(kDir + "h200_torch_memory_kernels.csv");
  ASSERT_EQ(rows.size(), 24u);
  const GpuSpec& gpu = find_gpu(kGpu);
  const ComputeParams params = default_compute_params(gpu);
  const double bw = gpu.hbm_bandwidth_bytes_per_s * params.memory_efficiency;
  for (const auto& r : rows) {
    if (std::stod(r.at("elements")) < 64.0 * 1048576.0) continue;
    const double predicted = std::stod(r.at("bytes")) / bw + params.kernel_fixed_s;
    const double e = predicted / std::stod(r.at("time_s")) - 1;
    std::printf("%-18s %10s elements: %6.0f GB/s measured (%.2f of HBM), default %+.0f%%\n", r.at("kernel").c_str(),
                r.at("elements").c_str(), std::stod(r.at("gb_per_s")),
                std::stod(r.at("gb_per_s")) * 1e9 / gpu.hbm_bandwidth_bytes_per_s, 100 * e);
    const std::string& k = r.at("kernel");
    if (k == "adamw_fused_fp32") {
      EXPECT_NEAR(e, 0, 0.05) << k;
    }
  }
}

// The sustained burn ran power-capped at 0.735 of the maximum clock (median 1,455 MHz at 690 W).
// The catalog curve (u(compute_bound) = 1: a tensor-core GEMM draws TDP at the full clock) keeps
// the full clock at 700 W: printed as the gap it is (docs/calibration.md). The profile fitted on
// this burn must make the simulator's power cap give the measured clock back.
TEST(H200Device, BurnProfileGivesTheSimulatorThePowerCappedClock) {
  const MeasurementSet m = bench_file();
  std::vector<double> clocks;
  for (const PowerThermalSample& s : m.power)
    if (s.loaded && s.t_s > 2.0 && s.sm_clock_mhz > 0) clocks.push_back(s.sm_clock_mhz);
  ASSERT_GT(clocks.size(), 500u);
  std::nth_element(clocks.begin(), clocks.begin() + static_cast<long>(clocks.size() / 2), clocks.end());
  const double f_measured = clocks[clocks.size() / 2] / 1980.0;
  calibrate::FitOptions o;
  o.base = kGpu;
  o.gpu = kGpu;
  const CalibrationProfile profile = calibrate::fit_profile(m, o);
  ASSERT_TRUE(profile.power_thermal.idle_w && profile.power_thermal.compute_bound_fraction);
  GpuPowerCurve curve = power_curve_of(find_gpu(kGpu));
  const double f_catalog = clock_for_power_limit(curve, Activity::compute_bound, 700.0);
  curve.idle_w = *profile.power_thermal.idle_w;
  curve.activity_fraction[static_cast<int>(Activity::compute_bound)] = *profile.power_thermal.compute_bound_fraction;
  const double f_fitted = clock_for_power_limit(curve, Activity::compute_bound, 700.0);
  std::printf(
      "sustained bf16 GEMM at 700 W: measured clock %.3f of max; catalog curve %.3f; fitted profile "
      "(idle %.1f W, u %.2f) %.3f\n",
      f_measured, f_catalog, curve.idle_w, *profile.power_thermal.compute_bound_fraction, f_fitted);
  EXPECT_NEAR(f_fitted, f_measured, 0.02);
}

}  // namespace
}  // namespace traincast::models
