// calibrate/fit collectives (collective_fit.h): round trips (data simulated with known
// parameters are fitted back), protocol regimes, size corrections, the neighbour reference,
// stability with 10% outliers, and real logs predicting the other ops of their system.
#include "calibrate/fit/collective_fit.h"
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/fit/inputs.h"
#include "calibrate/fit/profile_fit.h"
#include "calibrate/fit/profile_validate.h"
#include "calibrate/nccl_tests_log.h"
#include "models/collectives/collective_engine.h"
#include "models/collectives/nccl_tests.h"
#include "models/io/scenario_io.h"
#include "tests/calibrate/simulated_collectives.h"

namespace traincast::calibrate {
namespace {

using test_support::consumer_cluster;
using test_support::consumer_options;
using test_support::simulated;
using test_support::truth_profile;
namespace fs = std::filesystem;
const fs::path kData = fs::path(TRAINCAST_SHARED_DATA_DIR) / "nccl-tests";
const std::string kSrc = TRAINCAST_SOURCE_DIR;

TEST(CollectiveFit, RecoversLinkEfficiencyAndLatencyFromSimulatedData) {
  // all_reduce (both ways) gives the both-direction budget, broadcast (one way) the PCIe
  // efficiency; each is recovered on its own.
  const auto truth = truth_profile();
  const models::MeasurementSet m = simulated(truth, {"all_reduce", "broadcast"});
  const FitOptions o = consumer_options(Holdout::odd);
  const models::CalibrationProfile p = fit_profile(m, o);
  const auto& eff = p.link_efficiency[static_cast<int>(models::LinkKind::pcie)];
  ASSERT_TRUE(eff.has_value());
  EXPECT_NEAR(*eff, 0.65, 0.65 * 0.01);
  ASSERT_TRUE(p.pcie_duplex_efficiency.has_value());
  EXPECT_NEAR(*p.pcie_duplex_efficiency, 0.5, 0.5 * 0.01);
  EXPECT_NEAR(p.latency_scale, 1.6, 1.6 * 0.02);
  ASSERT_EQ(p.collectives.size(), 2u);
  for (const auto& f : p.collectives) {
    for (const auto& c : f.size_correction) EXPECT_NEAR(c.time_ratio, 1.0, 0.01) << c.bytes;
  }
  // Held-out sizes predicted within 1%.
  const Validation v = validate_profile(std::make_shared<const models::CalibrationProfile>(p), m, o);
  ASSERT_EQ(v.groups.size(), 2u);
  for (const ValidationGroup& g : v.groups) {
    EXPECT_LT(g.held_large_error, 0.01) << g.group;
    EXPECT_LT(g.held_small_error, 0.01) << g.group;
    EXPECT_GT(g.held_large + g.held_small, 10) << g.group;
  }
}

TEST(CollectiveFit, RecoversProtocolRegimesFromSimulatedData) {
  // Truth: all_reduce whose Simple protocol has 6x NCCL's latency and 1.25x its bandwidth and
  // whose LL runs at 0.7x bandwidth: the curve is the lower envelope of two alpha-beta lines with
  // a kink where Simple takes over (later than NCCL's figures put it). One common (a, b) cannot
  // follow the kink; per-protocol scales can: held-out sizes within 1%, and the fitted Simple/LL
  // latency ratio is the truth's 6 (within 10%: the size correction absorbs a little).
  auto truth = std::make_shared<models::CalibrationProfile>();
  models::CollectiveFit f;
  f.op = models::CollectiveOp::all_reduce;
  f.num_ranks = 2;
  f.protocol_latency_scale = {1.0, 1.0, 6.0};
  f.protocol_bandwidth_scale = {0.7, 1.0, 1.25};
  truth->collectives.push_back(f);
  const models::MeasurementSet m = simulated(truth, {"all_reduce"});
  const FitOptions o = consumer_options(Holdout::odd);
  const models::CalibrationProfile p = fit_profile(m, o);
  ASSERT_EQ(p.collectives.size(), 1u);
  const auto& c = p.collectives[0];
  EXPECT_NEAR(c.protocol_latency_scale[2] / c.protocol_latency_scale[0], 6.0, 0.6);
  const Validation v = validate_profile(std::make_shared<const models::CalibrationProfile>(p), m, o);
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_LT(v.groups[0].held_large_error, 0.01);
  EXPECT_LT(v.groups[0].held_small_error, 0.01);
}

TEST(CollectiveFit, BothWayEvidenceLeavesOneWayPcieAtItsDefault) {
  // Fitted on all_reduce only (every GPU PCIe link loaded both ways): the deficit goes to the
  // both-direction budget (0.5, as the truth), the one-way efficiency stays unset (NCCL's
  // 12.0 / 15.75), so broadcast is predicted as with defaults, S / (0.762 C), against the
  // truth's S / (0.65 C): +17.2% busbw at large sizes (0.762 / 0.65 - 1).
  const auto truth = truth_profile();
  const FitOptions o = consumer_options(Holdout::none);
  const auto p = std::make_shared<const models::CalibrationProfile>(fit_profile(simulated(truth, {"all_reduce"}), o));
  EXPECT_FALSE(p->link_efficiency[static_cast<int>(models::LinkKind::pcie)].has_value());
  ASSERT_TRUE(p->pcie_duplex_efficiency.has_value());
  EXPECT_NEAR(*p->pcie_duplex_efficiency, 0.5, 0.5 * 0.01);
  const Validation v = validate_profile(p, simulated(truth, {"broadcast"}), o);
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_NEAR(v.points.back().error, 12.0 / (8.0 * 16 * 128.0 / 130.0 / 8.0) / 0.65 - 1, 0.01);
}

TEST(CollectiveFit, ProfileFromOneOpPredictsAnotherOnTheSameSystem) {
  // Fitted on all_reduce only; all_gather (never seen) uses the profile-wide efficiency/latency.
  const auto truth = truth_profile();
  const FitOptions o = consumer_options(Holdout::none);
  const auto p = std::make_shared<const models::CalibrationProfile>(fit_profile(simulated(truth, {"all_reduce"}), o));
  const Validation v = validate_profile(p, simulated(truth, {"all_gather"}), o);
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_LT(v.groups[0].fit_large_error, 0.02);
  EXPECT_LT(v.groups[0].fit_small_error, 0.05);
}

TEST(CollectiveFit, SizeCorrectionKeepsADepartureAtTheEndOfTheRange) {
  // The smallest size 1.3x slower than the truth, and one interior size (index 10) as well. The
  // interior one departs from neighbours on both sides: an outlier, its correction takes its
  // window's median (1). At the end of the range a departure cannot be told from a trend (n04b
  // fitted on odd sizes: 2 MiB at 1.29x the model, every larger size at 1.0x), so it is kept.
  const auto truth = truth_profile();
  models::MeasurementSet m = simulated(truth, {"all_reduce"});
  m.collectives.front().time_us *= 1.3;
  m.collectives[10].time_us *= 1.3;
  const models::CalibrationProfile p = fit_profile(m, consumer_options(Holdout::none));
  ASSERT_EQ(p.collectives.size(), 1u);
  const auto& corr = p.collectives[0].size_correction;
  ASSERT_EQ(corr.size(), m.collectives.size());
  EXPECT_NEAR(corr.front().time_ratio, 1.3, 0.03);
  EXPECT_NEAR(corr[10].time_ratio, 1.0, 0.02);
}

TEST(CollectiveFit, NeighbourReferenceInterpolatesHeldOutSizesFromTheirFitNeighbours) {
  // Four all_reduce sizes, --holdout odd: 1 and 4 MiB fit, 2 and 8 MiB held out. 2 MiB from its
  // neighbours, linear in (ln size, ln time): sqrt(1000 x 2000) = 1414.2 us against 3000 measured,
  // busbw predicted / measured = 3000 / 1414.2 = 2.1213 (+112.1%). 8 MiB lies beyond the last fit
  // size and is not counted. The profile plays no part.
  models::MeasurementSet m;
  const double mib = 1 << 20;
  const std::vector<std::pair<double, double>> rows = {{mib, 1000}, {2 * mib, 3000}, {4 * mib, 2000}, {8 * mib, 4000}};
  for (const auto& [bytes, us] : rows) m.collectives.push_back({"all_reduce", 2, bytes, us, "float", "hand"});
  const Validation v =
      validate_profile(std::make_shared<const models::CalibrationProfile>(), m, consumer_options(Holdout::odd));
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_EQ(v.groups[0].neighbour_large, 1);
  EXPECT_EQ(v.groups[0].neighbour_small, 0);
  EXPECT_NEAR(v.groups[0].neighbour_large_error, 3000 / std::sqrt(1000.0 * 2000.0) - 1, 1e-9);
}

TEST(CollectiveFit, StableWithTenPercentOutliers) {
  const auto truth = truth_profile();
  models::MeasurementSet m = simulated(truth, {"all_reduce"});
  std::vector<bool> outlier(m.collectives.size(), false);
  for (std::size_t i = 5; i < m.collectives.size(); i += 10) {
    m.collectives[i].time_us *= 3.0;  // 10% of the points three times too slow
    outlier[i] = true;
  }
  const FitOptions o = consumer_options(Holdout::none);
  const models::CalibrationProfile p = fit_profile(m, o);
  ASSERT_TRUE(p.pcie_duplex_efficiency.has_value());
  EXPECT_NEAR(*p.pcie_duplex_efficiency, 0.5, 0.5 * 0.03);
  EXPECT_NEAR(p.latency_scale, 1.6, 1.6 * 0.05);
  // The clean points stay within 1%: the outliers do not leak into the size correction.
  const Validation v = validate_profile(std::make_shared<const models::CalibrationProfile>(p), m, o);
  for (std::size_t i = 0; i < v.points.size(); ++i) {
    if (!outlier[i]) {
      EXPECT_NEAR(v.points[i].error, 0.0, 0.01) << v.points[i].label;
    }
  }
}

TEST(CollectiveFit, RealLogsOneCollectivePredictsTheOthersNoWorseThanDefaults) {
  // n11a-e: two RTX 2080 Ti without P2P, one log per collective. Fitted on all_reduce only, the
  // profile predicts the other four; one-way broadcast/reduce must not get worse than with the
  // datasheet defaults (with one PCIe efficiency for both ways they did: 34% against 8%), and
  // the both-ways ops must get better. Geometric-mean busbw error over sizes >= 1 MiB.
  if (!fs::exists(kData)) GTEST_SKIP() << "no shared data at " << kData;
  auto load = [](const std::string& name) {
    const std::string path = (kData / name).string();
    InputNotes notes;
    return samples_from_nccl_log(read_nccl_tests_log(path), path, "", notes);
  };
  const FitOptions o = consumer_options(Holdout::none);
  const auto p = std::make_shared<const models::CalibrationProfile>(
      fit_profile(load("n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt"), o));
  const auto none = std::make_shared<const models::CalibrationProfile>();
  for (const std::string name :
       {"n11b_rtx2080ti_1x2_pcie3_nop2p_allgather.txt", "n11c_rtx2080ti_1x2_pcie3_nop2p_broadcast.txt",
        "n11d_rtx2080ti_1x2_pcie3_nop2p_reduce.txt", "n11e_rtx2080ti_1x2_pcie3_nop2p_alltoall.txt"}) {
    const models::MeasurementSet m = load(name);
    const ValidationGroup fitted = validate_profile(p, m, o).groups.at(0);
    const ValidationGroup defaults = validate_profile(none, m, o).groups.at(0);
    std::printf("%s: profile %.1f%% | %.1f%%, defaults %.1f%% | %.1f%% (>= 1 MiB | below)\n", fitted.group.c_str(),
                100 * fitted.fit_large_error, 100 * fitted.fit_small_error, 100 * defaults.fit_large_error,
                100 * defaults.fit_small_error);
    if (fitted.group == "broadcast" || fitted.group == "reduce") {
      EXPECT_LE(fitted.fit_large_error, defaults.fit_large_error + 1e-9) << name;
    } else {
      EXPECT_LT(fitted.fit_large_error, defaults.fit_large_error) << name;
    }
  }
}

/// One table (`run`) of a multi-op nccl-tests paste, as fit input.
models::MeasurementSet log_run(const std::string& path, std::size_t run) {
  calibrate::NcclTestsLog log = read_nccl_tests_log(path);
  EXPECT_LT(run, log.runs.size()) << path;
  log.runs = {log.runs.at(run)};
  InputNotes notes;
  return samples_from_nccl_log(log, path, "", notes);
}

/// Fits each op of a five-op paste (all its sizes) and predicts the other four ops of the same
/// system; returns [fitted op][predicted op] geometric-mean busbw error over sizes >= 1 MiB (the
/// pastes start at 32 MiB), and the datasheet defaults' in defaults[op].
struct CrossOp {
  std::vector<std::string> ops;
  std::vector<std::vector<double>> error;
  std::vector<double> defaults;
};
CrossOp cross_op(const std::string& log, const std::string& scenario) {
  CrossOp r;
  FitOptions o;
  o.base = scenario;
  o.cluster = io::load_cluster_scenario_file(kSrc + "/scenarios/nccl/" + scenario).cluster;
  std::vector<models::MeasurementSet> runs;
  for (std::size_t i = 0; i < 5; ++i) {
    runs.push_back(log_run((kData / "raw" / log).string(), i));
    r.ops.push_back(runs.back().collectives.at(0).op);
  }
  const auto none = std::make_shared<const models::CalibrationProfile>();
  for (const auto& m : runs) r.defaults.push_back(validate_profile(none, m, o).groups.at(0).fit_large_error);
  for (std::size_t f = 0; f < runs.size(); ++f) {
    const auto p = std::make_shared<const models::CalibrationProfile>(fit_profile(runs[f], o));
    r.error.emplace_back();
    for (const auto& m : runs) r.error.back().push_back(validate_profile(p, m, o).groups.at(0).fit_large_error);
    auto eff = [&](models::LinkKind k) {
      const auto& e = p->link_efficiency[static_cast<int>(k)];
      return e ? *e : 0.0;
    };
    std::printf("%s fitted on %-14s (NVLink eff %.3f, NIC eff %.3f, latency x%.2f):", log.c_str(), r.ops[f].c_str(),
                eff(models::LinkKind::nvlink), eff(models::LinkKind::nic), p->latency_scale);
    for (std::size_t t = 0; t < runs.size(); ++t) std::printf(" %s %.1f%%", r.ops[t].c_str(), 100 * r.error[f][t]);
    std::printf("\n");
  }
  std::printf("%s defaults:", log.c_str());
  for (std::size_t t = 0; t < runs.size(); ++t) std::printf(" %s %.1f%%", r.ops[t].c_str(), 100 * r.defaults[t]);
  std::printf("\n");
  return r;
}

/// exp(mean ln(1 + e)) - 1 over the given ops' errors.
double geomean_error(const std::vector<double>& errors, const std::vector<std::size_t>& ops) {
  double s = 0;
  for (std::size_t t : ops) s += std::log1p(errors[t]);
  return std::expm1(s / static_cast<double>(ops.size()));
}

TEST(CollectiveFit, RealFiveOpLogsOneCollectivePredictsTheOthers) {
  // r02 (one node of 8 H100, NVSwitch) and r03 (10 such nodes, 80 ranks): five ops of one system
  // each, 32 MiB to 16 GiB. A profile fitted on all of one of all_reduce, all_gather or
  // reduce_scatter predicts the other three of all_reduce, all_gather, reduce_scatter, alltoall
  // (geometric mean of their busbw errors) better than the datasheet defaults do. Not asserted,
  // printed and documented in calibrate/fit/README.md: sendrecv (a step between 64 and 256 MiB
  // in r02, 15.2 GB/s flat per node-crossing pair in r03) neither is predicted by the others nor
  // predicts them, and an alltoall fit does not transfer to r03's rings.
  if (!fs::exists(kData / "raw")) GTEST_SKIP() << "no shared data at " << kData;
  for (const CrossOp& r : {cross_op("r02_h100_1x8_5ops.log", "dgx_h100.textproto"),
                           cross_op("r03_h100_10x8_5ops.log", "h100_10node_400g.textproto")}) {
    ASSERT_EQ(r.ops, (std::vector<std::string>{"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"}));
    for (std::size_t f = 0; f < 3; ++f) {
      std::vector<std::size_t> others;
      for (std::size_t t = 0; t < 4; ++t) {
        if (t != f) others.push_back(t);
      }
      EXPECT_LT(geomean_error(r.error[f], others), geomean_error(r.defaults, others)) << "fitted on " << r.ops[f];
      EXPECT_LT(r.error[f][f], 0.02) << r.ops[f];  // all sizes fitted: the fit itself
    }
  }
}

}  // namespace
}  // namespace traincast::calibrate
