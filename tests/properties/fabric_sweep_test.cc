// The fabric notebook's sweep (scenarios/sweeps/notebook_fabric.sweep.textproto) through the
// library: iteration time never falls as leaf oversubscription grows, per layout; and the ECMP
// seed mean is deterministic and bracketed by its spread.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "models/executor/training_run.h"
#include "models/io/sweep_loader.h"
#include "models/io/sweep_point.h"

namespace traincast::io {
namespace {

const std::string kFabricSweep =
    std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/sweeps/notebook_fabric.sweep.textproto";

/// Iteration time per (TP, oversubscription) over the sweep's points, the scenario changed by `edit`.
template <class Edit>
std::map<int, std::vector<std::pair<double, double>>> sweep_times(Edit edit) {
  const models::Sweep sweep = load_sweep_file(kFabricSweep);
  std::map<int, std::vector<std::pair<double, double>>> out;
  for (std::size_t p = 0; p < sweep.num_points(); ++p) {
    models::Scenario sc = sweep_point_scenario(sweep, p);
    edit(sc);
    const models::Report r = models::simulate_training(sc);
    out[sc.parallel.tp].emplace_back(sc.cluster.fabric.oversubscription, r.iteration_time_s);
  }
  return out;
}

/// Each step to more oversubscription: never faster (1e-9 relative for rounding).
void expect_non_decreasing(const std::map<int, std::vector<std::pair<double, double>>>& times, const char* what) {
  for (const auto& [tp, points] : times) {
    ASSERT_EQ(points.size(), 13u);
    for (std::size_t i = 1; i < points.size(); ++i) {
      EXPECT_GE(points[i].second, points[i - 1].second * (1 - 1e-9))
          << what << ": TP " << tp << " at " << points[i - 1].first << " -> " << points[i].first << ":1";
    }
  }
}

TEST(FabricSweep, MoreOversubscriptionIsNeverFasterAsShipped) {
  // The sweep as a user runs it (automatic algorithm, protocol and routing): the tuner's choice
  // never sees the spine (CollectivePhase::tuner_seconds_per_byte), as NCCL's does not, so one
  // more step of oversubscription cannot move it to a slower algorithm.
  expect_non_decreasing(sweep_times([](models::Scenario&) {}), "automatic");
}

TEST(FabricSweep, MoreOversubscriptionIsNeverFasterWithRingForced) {
  // The NCCL algorithm forced (the tuner's choice between ring and tree is the collectives'
  // concern; see docs/fabric.md), under the sweep's automatic (adaptive, InfiniBand) routing.
  // Ring only: the sweep's sequence-parallel TP groups reduce-scatter, which NCCL_ALGO=tree
  // cannot run (refused, as NCCL refuses it).
  expect_non_decreasing(
      sweep_times([&](models::Scenario& sc) { sc.cluster.collectives.algorithm = models::CollectiveAlgorithm::ring; }),
      "ring");
}

TEST(FabricSweep, EcmpSeedMeanIsDeterministicAndWithinItsSpread) {
  const models::Sweep sweep = load_sweep_file(kFabricSweep);
  models::Scenario sc = sweep_point_scenario(sweep, sweep.num_points() - 1);  // TP 8, 4:1
  sc.cluster.nic = "RoCE-400GbE";                                             // Ethernet: ECMP hashing
  const models::Report a = models::simulate_training(sc);
  const models::Report b = models::simulate_training(sc);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.routing.routing, "ecmp_hash");
  EXPECT_EQ(a.routing.seeds, models::kEcmpSeeds);
  EXPECT_LE(a.routing.iteration_time_s_min, a.iteration_time_s);
  EXPECT_GE(a.routing.iteration_time_s_max, a.iteration_time_s);
  EXPECT_LT(a.routing.iteration_time_s_min, a.routing.iteration_time_s_max);  // the draws differ
  // Adaptive routing: nothing to hash, one run, and no slower than the hashed draws' mean.
  models::Scenario adaptive = sc;
  adaptive.cluster.fabric.routing = models::FabricRouting::adaptive;
  const models::Report one = models::simulate_training(adaptive);
  EXPECT_EQ(one.routing.seeds, 1);
  EXPECT_EQ(one.routing.iteration_time_s_min, one.iteration_time_s);
  EXPECT_LE(one.iteration_time_s, a.iteration_time_s);  // pooled up-links: no hash collisions
}

// options.threads governs the whole run (models/reliability/worker_threads.h): one thread, two, or
// all hardware threads (0) run the 16 ECMP draws (which differ here) and the failure draws, and
// give the same report, every field.
TEST(FabricSweep, EcmpDrawsGiveTheSameReportOnOneTwoOrAllThreads) {
  const models::Sweep sweep = load_sweep_file(kFabricSweep);
  models::Scenario sc = sweep_point_scenario(sweep, sweep.num_points() - 1);  // TP 8, 4:1
  sc.cluster.nic = "RoCE-400GbE";                                             // Ethernet: ECMP hashing
  sc.training.train_tokens = 1e9;
  sc.reliability.emplace();
  sc.reliability->monte_carlo_draws = 64;
  ASSERT_EQ(sc.options.threads, 1);  // a sweep point runs on one thread
  const models::Report one = models::simulate_training(sc);
  EXPECT_EQ(one.routing.seeds, models::kEcmpSeeds);
  EXPECT_LT(one.routing.iteration_time_s_min, one.routing.iteration_time_s_max);  // the draws differ
  EXPECT_EQ(one.reliability.draws, 64);
  for (const int threads : {2, 0}) {
    sc.options.threads = threads;
    EXPECT_EQ(models::simulate_training(sc), one) << "options.threads " << threads;
  }
}

}  // namespace
}  // namespace traincast::io
