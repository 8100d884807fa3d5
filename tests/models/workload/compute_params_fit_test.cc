// Where the compute model's default efficiencies come from, re-derived from the real measurements
// in shared/data so the constants in models/compute/compute_model.cc cannot drift from their source.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/compute/compute_model.h"
#include "models/hardware/catalog.h"
#include "models/workload/transformer.h"
#include "sim/flow_network.h"
#include "tests/models/workload/csv_rows.h"

namespace traincast::models {
namespace {

using test_support::read_csv;

const std::string kData = TRAINCAST_SHARED_DATA_DIR;

// H100 GEMMs: t = max(W/(η·peak), bytes/(η_mem·bw)) + t0 fitted on the even rows of the measured
// openxla table; the model's gemm_fixed_s is that t0 and the held-out rows are predicted well.
TEST(ComputeParamsFit, H100GemmFixedCostFromMeasuredTable) {
  const auto rows = read_csv(kData + "/gemm/xla_matmul_perf_table_measured.csv");
  ASSERT_GT(rows.size(), 100u) << "missing shared data";
  struct Point {
    double W, t, b, m, n, k;
  };
  std::vector<Point> pts;
  for (const auto& r : rows)
    if (r.size() == 7 && r[0] == "sm_90" && r[5] == "bf16xbf16->bf16") {
      const double b = std::stod(r[1]), m = std::stod(r[2]), n = std::stod(r[3]), k = std::stod(r[4]);
      const double W = 2 * b * m * n * k;
      pts.push_back({W, W / std::stod(r[6]), b, m, n, k});
    }
  std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& c) { return a.W < c.W; });
  // Least squares on relative error: minimise Σ((a·W + t0)/t − 1)² over the even rows.
  double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
  for (std::size_t i = 0; i < pts.size(); i += 2) {
    const double x1 = pts[i].W / pts[i].t, x2 = 1 / pts[i].t;
    s11 += x1 * x1, s12 += x1 * x2, s22 += x2 * x2, r1 += x1, r2 += x2;
  }
  const double det = s11 * s22 - s12 * s12;
  const double a = (r1 * s22 - r2 * s12) / det, t0 = (s11 * r2 - s12 * r1) / det;
  const GpuSpec& gpu = find_gpu("H100-SXM5-80GB");
  const double eta = 1 / (a * gpu.peak_bf16_flops);
  const ComputeParams params = default_compute_params(gpu);
  EXPECT_NEAR(t0, params.gemm_fixed_s, 0.1e-6) << "gemm_fixed_s no longer matches its fit";
  EXPECT_NEAR(eta, 0.77, 0.01);
  // Held-out (odd) rows: median relative error of the fitted model t = W/(η·peak) + t0 (the
  // memory-roofline term is left out here as in the fit; it only matters for the smallest shapes).
  std::vector<double> err;
  for (std::size_t i = 1; i < pts.size(); i += 2) {
    const Point& p = pts[i];
    err.push_back(std::fabs((p.W / (eta * gpu.peak_bf16_flops) + t0) / p.t - 1));
  }
  std::nth_element(err.begin(), err.begin() + static_cast<long>(err.size() / 2), err.end());
  EXPECT_LT(err[err.size() / 2], 0.10) << "held-out median error";
}

// A100 training GEMM efficiency: fitted to Korthikanti et al. 2022 Table 4 (22B per-layer forward
// and backward times on Selene, five variants).
TEST(ComputeParamsFit, A100GemmEfficiencyFromKorthikantiTable4) {
  const auto rows = read_csv(kData + "/training/korthikanti2022_table4_per_layer_22B.csv");
  ASSERT_EQ(rows.size(), 6u) << "missing shared data";
  Scenario sc;
  sc.cluster.node_template = "dgx_a100";
  sc.model.num_layers = 48;
  sc.model.hidden_size = 6144;
  sc.model.num_attention_heads = 64;
  sc.model.vocab_size = 51200;
  sc.model.seq_length = 2048;
  sc.parallel.tp = 8;
  sc.training.micro_batch_size = 4;
  sc.training.global_batch_size = 4;
  sc.training.precision = Precision::fp16;
  sc.training.flash_attention = false;
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(sc.cluster, net);
  CollectiveEngine coll(sim, net, cluster);
  const GpuSpec& gpu = find_gpu("A100-SXM4-80GB");
  // Table 4 row -> (sequence parallel, recomputation).
  auto variant = [](const std::string& name) -> std::pair<bool, Recompute> {
    if (name == "Baseline no recompute") return {false, Recompute::none};
    if (name == "Sequence Parallelism") return {true, Recompute::none};
    if (name == "Baseline with recompute") return {false, Recompute::full};
    if (name == "Selective Recompute") return {false, Recompute::selective};
    return {true, Recompute::selective};  // "Selective + Sequence"
  };
  auto program_ms = [&](const Program& p) {
    double s = 0;
    for (const Segment& seg : p) {
      if (!seg.is_collective)
        s += seg.seconds;
      else if (seg.overlap == Overlap::blocking)
        s += coll.estimate_seconds(CollectiveCall{seg.op, {0, 1, 2, 3, 4, 5, 6, 7}, seg.bytes});
    }
    return s * 1e3;
  };
  auto rms_log_error = [&](double eta) {
    ComputeParams params = default_compute_params(gpu);
    params.gemm_efficiency = eta;
    double sum = 0;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const auto [sp, rc] = variant(rows[i][0]);
      sc.parallel.sequence_parallel = sp;
      sc.training.recompute = rc;
      const ModelPrograms pr = build_transformer_programs(sc, gpu, params);
      const double fwd = program_ms(pr.layer_kinds[0].forward);
      const double bwd = program_ms(pr.layer_kinds[0].backward) + program_ms(pr.layer_kinds[0].recompute);
      sum += std::pow(std::log(fwd / std::stod(rows[i][1])), 2) + std::pow(std::log(bwd / std::stod(rows[i][2])), 2);
    }
    return std::sqrt(sum / (2.0 * (rows.size() - 1)));
  };
  double best = 1e9, best_eta = 0;
  for (double eta = 0.50; eta <= 0.90; eta += 0.0025) {
    const double e = rms_log_error(eta);
    if (e < best) best = e, best_eta = eta;
  }
  EXPECT_NEAR(default_compute_params(gpu).gemm_efficiency, best_eta, 0.01) << "constant drifted from its fit";
  EXPECT_LT(best, 0.03) << "per-layer times no longer reproduced";
}

// Memory-bound kernels run at the STREAM fraction of their HBM kind (gpu-benches): HBM2e H100s
// (the PCIe card and torchtitan's 96 GB SXM, catalog.cc) at the H100 PCIe's 1832 of 2039 GB/s,
// HBM3/HBM3e Hoppers at the H200's 3534 of 4800 GB/s.
TEST(ComputeParamsFit, HopperMemoryEfficiencyFollowsTheHbmKind) {
  EXPECT_DOUBLE_EQ(default_compute_params(find_gpu("H100-SXM5-96GB")).memory_efficiency, 1832.0 / 2039.0);
  EXPECT_DOUBLE_EQ(default_compute_params(find_gpu("H100-PCIe-80GB")).memory_efficiency, 1832.0 / 2039.0);
  EXPECT_DOUBLE_EQ(default_compute_params(find_gpu("H100-SXM5-80GB")).memory_efficiency, 3534.0 / 4800.0);
  EXPECT_DOUBLE_EQ(default_compute_params(find_gpu("H200-SXM-141GB")).memory_efficiency, 3534.0 / 4800.0);
}

}  // namespace
}  // namespace traincast::models
