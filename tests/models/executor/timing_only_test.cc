// simulate_training_timing (training_run.h): the same timing bits as simulate_training; the
// power/thermal model is left out only where no clock can change.
#include <gtest/gtest.h>

#include <string>

#include "models/executor/training_run.h"
#include "tests/support/fixtures.h"

namespace traincast::models {
namespace {

/// Every timing figure traincast cluster reads (and the rates derived from the iteration time).
void expect_same_timing(const Report& full, const Report& timing, const std::string& what) {
  EXPECT_EQ(timing.iteration_time_s, full.iteration_time_s) << what;
  EXPECT_EQ(timing.tokens_per_s, full.tokens_per_s) << what;
  EXPECT_EQ(timing.mfu, full.mfu) << what;
  EXPECT_EQ(timing.time_to_train_s, full.time_to_train_s) << what;
  EXPECT_EQ(timing.breakdown.compute_s, full.breakdown.compute_s) << what;
  EXPECT_EQ(timing.breakdown.tp_comm_exposed_s, full.breakdown.tp_comm_exposed_s) << what;
  EXPECT_EQ(timing.breakdown.dp_comm_exposed_s, full.breakdown.dp_comm_exposed_s) << what;
  EXPECT_EQ(timing.breakdown.pipeline_bubble_s, full.breakdown.pipeline_bubble_s) << what;
  EXPECT_EQ(timing.memory.oom, full.memory.oom) << what;
  EXPECT_EQ(timing.routing.seeds, full.routing.seeds) << what;
}

// No power cap, no rack recirculation, an H100 that stays below its slowdown temperature at TDP:
// the power model is not run (no power section) and the timing is the same bits, on one node and
// across a fat tree with a pipeline.
TEST(TimingOnly, SameBitsWithoutThePowerModelWhereNoClockCanChange) {
  Scenario one = test_support::small_h100_job("timing-one-node");
  Scenario two = test_support::small_h100_job("timing-fat-tree");
  two.cluster.num_nodes = 2;
  two.cluster.fabric.kind = FabricKind::fat_tree;
  two.cluster.fabric.nodes_per_leaf = 1;
  two.parallel.pp = 2;
  two.training.global_batch_size = 32;
  for (const Scenario& sc : {one, two}) {
    const Report full = simulate_training(sc);
    const Report timing = simulate_training_timing(sc);
    expect_same_timing(full, timing, sc.name);
    EXPECT_GT(full.power.gpu_peak_w, 0.0) << sc.name;
    EXPECT_EQ(timing.power.gpu_peak_w, 0.0) << sc.name << ": the power model ran";
  }
}

// A power cap below TDP or a GPU with clock_factor 0.9 changes clocks: the power model runs as in
// simulate_training (its power section is there) and the timing is the same bits.
TEST(TimingOnly, PowerModelRunsWhereAClockCanChange) {
  Scenario capped = test_support::small_h100_job("timing-capped");
  capped.power.gpu_power_limit_w = 400;
  Scenario slow = test_support::small_h100_job("timing-slow-gpu");
  ElementOverride o;
  o.select = "node0/gpu3";
  o.clock_factor = 0.9;
  slow.cluster.overrides.push_back(o);
  for (const Scenario& sc : {capped, slow}) {
    const Report full = simulate_training(sc);
    const Report timing = simulate_training_timing(sc);
    expect_same_timing(full, timing, sc.name);
    EXPECT_GT(timing.power.gpu_peak_w, 0.0) << sc.name << ": the power model did not run";
    EXPECT_EQ(timing.power.gpu_peak_w, full.power.gpu_peak_w) << sc.name;
  }
}

}  // namespace
}  // namespace traincast::models
