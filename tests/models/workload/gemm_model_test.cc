// The GEMM tile model's kernel constants (models/compute/gemm_model.h), re-derived from the kernel
// measurements in shared/data so the values in models/compute/compute_model.cc cannot drift from
// their source: fitted on the even-indexed H100 bf16 rows of the openxla GEMM table, scored on the
// odd ones, and η of the other GPUs from MAMF's best shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/compute/gemm_model.h"
#include "models/hardware/catalog.h"
#include "tests/models/workload/csv_rows.h"

namespace traincast::models {
namespace {

using test_support::read_csv;

const std::string kData = TRAINCAST_SHARED_DATA_DIR;

// H100 bf16 rows of the openxla table in CSV order; bytes as a bf16 GEMM moves them.
std::vector<GemmMeasurement> h100_bf16_rows() {
  std::vector<GemmMeasurement> pts;
  for (const auto& r : read_csv(kData + "/gemm/xla_matmul_perf_table_measured.csv"))
    if (r.size() == 7 && r[0] == "sm_90" && r[5] == "bf16xbf16->bf16") {
      const double b = std::stod(r[1]), m = std::stod(r[2]), n = std::stod(r[3]), k = std::stod(r[4]);
      const double flops = 2 * b * m * n * k;
      pts.push_back({GemmShape{b, m, n, k, 2 * b * (m * k + k * n + m * n)}, flops / std::stod(r[6])});
    }
  return pts;
}

TEST(GemmTileModel, FittedOnEvenH100RowsPredictsOddRows) {
  const std::vector<GemmMeasurement> all = h100_bf16_rows();
  ASSERT_EQ(all.size(), 375u) << "missing shared data";
  std::vector<GemmMeasurement> even, odd;
  for (std::size_t i = 0; i < all.size(); ++i) (i % 2 == 0 ? even : odd).push_back(all[i]);
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const ComputeParams params = default_compute_params(gpu);
  const double bw = gpu.hbm_bandwidth_bytes_per_s * params.memory_efficiency;
  const GemmTileModel fit =
      fit_gemm_tile_model(even, GemmTileModel{0.85, 140, 4.6e-6}, gpu.sm_count, gpu.peak_bf16_flops, bw);
  std::printf("fit on %zu even rows: efficiency %.4f, k_overhead %.1f, fixed %.3f us\n", even.size(), fit.efficiency,
              fit.k_overhead, fit.fixed_s * 1e6);
  EXPECT_NEAR(fit.efficiency, params.kernel_gemm_efficiency, 0.005)
      << "H100 kernel_gemm_efficiency drifted from its fit";
  EXPECT_NEAR(fit.k_overhead, params.kernel_gemm_k_overhead, 5) << "kernel_gemm_k_overhead drifted from its fit";
  EXPECT_NEAR(fit.fixed_s, params.kernel_gemm_fixed_s, 0.1e-6) << "kernel_gemm_fixed_s drifted from its fit";
  // Held-out rows with the shipped constants: throughput error predicted/measured - 1.
  std::vector<double> abs_err;
  double signed_sum = 0;
  for (const GemmMeasurement& p : odd) {
    const double e = p.seconds / gemm_tile_seconds(gemm_tile_model(params, Precision::bf16), p.shape, gpu.sm_count,
                                                   gpu.peak_bf16_flops, bw) -
                     1;
    abs_err.push_back(std::fabs(e));
    signed_sum += e;
  }
  std::nth_element(abs_err.begin(), abs_err.begin() + static_cast<long>(abs_err.size() / 2), abs_err.end());
  const double median = abs_err[abs_err.size() / 2], signed_mean = signed_sum / static_cast<double>(odd.size());
  std::printf("odd rows (%zu): median |error| %.1f%%, mean signed %+.1f%%\n", odd.size(), 100 * median,
              100 * signed_mean);
  EXPECT_LT(median, 0.035);
  EXPECT_LT(std::fabs(signed_mean), 0.02);
}

// Wave quantization: one tile more than a full wave costs a second wave; a K split fills the SMs
// when the tiles alone cannot.
TEST(GemmTileModel, WaveQuantizationAndSplitK) {
  const GemmTileModel m{0.85, 140, 0, 128, 256, 16};
  const double peak = 989.4e12;
  // 132 SMs: 11 x 12 = 132 tiles of 128 x 256 is one wave; 133 tiles is two.
  const double one_wave = gemm_tile_math_seconds(m, GemmShape{1, 11 * 128, 12 * 256, 8192, 0}, 132, peak);
  const double two_waves = gemm_tile_math_seconds(m, GemmShape{1, 11 * 128 + 1, 12 * 256, 8192, 0}, 132, peak);
  EXPECT_GT(two_waves / one_wave, 1.05);  // split-K softens the second wave: between 1 and 2
  EXPECT_LT(two_waves / one_wave, 2.0);
  // A 256 x 256 x 4096 GEMM (2 tiles) is split K-wise, far faster than 2 tiles alone would run.
  GemmTileModel no_split = m;
  no_split.max_split_k = 1;
  const GemmShape small{1, 256, 256, 4096, 0};
  EXPECT_LT(gemm_tile_math_seconds(m, small, 132, peak), 0.25 * gemm_tile_math_seconds(no_split, small, 132, peak));
}

// η of the GPUs fitted on MAMF's best shape (ml-engineering): the tile model reproduces the
// measured TFLOP/s of that shape with the shipped η.
TEST(GemmTileModel, EfficiencyFromMamfBestShapes) {
  const auto rows = read_csv(kData + "/gemm/mamf_matmul_tflops.csv");
  ASSERT_GT(rows.size(), 10u) << "missing shared data";
  struct Want {
    std::string precision, accelerator, gpu;
    Precision math;
  };
  const std::vector<Want> wants{{"BF16", "NVIDIA A100 SXM", "A100-SXM4-80GB", Precision::bf16},
                                {"BF16", "NVIDIA H100 SXM", "H100-SXM5-80GB", Precision::bf16},
                                {"FP8 float8_e4m3fn", "NVIDIA H100 SXM", "H100-SXM5-80GB", Precision::fp8},
                                {"BF16", "NVIDIA B200 SXM", "B200", Precision::bf16},
                                {"FP8 float8_e4m3fn", "NVIDIA B200 SXM", "B200", Precision::fp8}};
  int checked = 0;
  for (const Want& w : wants)
    for (const auto& r : rows) {
      if (r.size() < 6 || r[0] != w.precision || r[1] != w.accelerator) continue;
      double m = 0, n = 0, k = 0;
      ASSERT_EQ(std::sscanf(r[5].c_str(), "%lfx%lfx%lf", &m, &n, &k), 3) << r[5];
      const GpuSpec& gpu = find_gpu(w.gpu);
      const ComputeParams params = default_compute_params(gpu);
      const double peak = peak_flops(gpu, w.math), flops = 2 * m * n * k;
      const GemmMeasurement pt{GemmShape{1, m, n, k, 0}, flops / (std::stod(r[2]) * 1e12)};
      const double eta = gemm_efficiency_from_measurement(gemm_tile_model(params, w.math), pt, gpu.sm_count, peak);
      std::printf("%s %s: eta %.3f (shipped %.3f)\n", w.accelerator.c_str(), w.precision.c_str(), eta,
                  gemm_tile_model(params, w.math).efficiency);
      if (w.gpu != "H100-SXM5-80GB" || w.math != Precision::bf16)  // H100 bf16 is the table fit
        EXPECT_NEAR(gemm_tile_model(params, w.math).efficiency, eta, 0.003) << w.accelerator << " " << w.precision;
      else
        EXPECT_NEAR(eta, params.kernel_gemm_efficiency, 0.03) << "the table fit and MAMF disagree";
      ++checked;
    }
  EXPECT_EQ(checked, 5);
}

}  // namespace
}  // namespace traincast::models
