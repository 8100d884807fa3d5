// Partial folding (models/executor/folding.h, issue 18): asymmetric jobs folded by class against
// the same jobs unfolded, which simulate every replica: the same iteration time within 0.1 % and
// the same straggler named. Small clusters, so each pair runs in well under a second.
#include "models/executor/folding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/executor/training_run.h"
#include "models/hardware/cluster.h"

namespace traincast::models {
namespace {

/// A small GPT on `nodes` DGX H100 under a non-blocking fat tree (two nodes per leaf), tp x pp x dp.
Scenario job(int nodes, int tp, int pp, int dp) {
  Scenario sc;
  sc.name = "partial-folding";
  sc.cluster.node_template = "dgx_h100";
  sc.cluster.num_nodes = nodes;
  sc.cluster.fabric.kind = FabricKind::fat_tree;
  sc.cluster.fabric.nodes_per_leaf = 2;
  sc.model.num_layers = 4;
  sc.model.hidden_size = 1024;
  sc.model.num_attention_heads = 8;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 1024;
  sc.parallel.tp = tp;
  sc.parallel.pp = pp;
  sc.parallel.dp = dp;
  sc.training.global_batch_size = 4 * dp * pp;
  sc.training.micro_batch_size = 1;
  return sc;
}

struct Pair {
  Report folded, unfolded;
};

/// Runs `sc` folded (as given) and unfolded; checks that folding simulated fewer replicas than
/// there are, that both agree within 0.1 % and name the same straggler. With pp > 1 that held
/// only once a wait at the optimizer barrier was split along the critical path (wait_split.h):
/// before, its split between "bubble" and "waiting for slower GPUs" followed which of the ops
/// ending at the same nanosecond the barrier saw last, an op order folding changes.
Pair folded_vs_unfolded(const Scenario& sc) {
  Pair p;
  p.folded = simulate_training(sc);
  Scenario off = sc;
  off.options.fold_symmetric = false;
  p.unfolded = simulate_training(off);
  EXPECT_TRUE(p.folded.folded);
  EXPECT_LT(p.folded.folding.simulated_replicas, p.folded.folding.replicas);
  EXPECT_EQ(p.unfolded.folding.simulated_replicas, p.unfolded.folding.replicas);
  EXPECT_NEAR(p.folded.iteration_time_s, p.unfolded.iteration_time_s, 1e-3 * p.unfolded.iteration_time_s);
  EXPECT_EQ(p.folded.straggler.found, p.unfolded.straggler.found);
  EXPECT_EQ(p.folded.straggler.gpu, p.unfolded.straggler.gpu);
  EXPECT_EQ(p.folded.straggler.cause, p.unfolded.straggler.cause);
  EXPECT_EQ(p.folded.straggler.slowest_replica, p.unfolded.straggler.slowest_replica);
  EXPECT_EQ(p.folded.straggler.slowest_stage, p.unfolded.straggler.slowest_stage);
  return p;
}

double nominal_iteration_s(Scenario sc) {
  sc.cluster.overrides.clear();
  return simulate_training(sc).iteration_time_s;
}

TEST(PartialFolding, OneSlowGpuIsItsReplicasClassAndTheStraggler) {
  Scenario sc = job(4, 8, 1, 4);
  sc.cluster.overrides = {{"node2/gpu5", 0.9, 0.0}};
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 2);
  ASSERT_EQ(p.folded.folding.classes.size(), 2u);
  EXPECT_EQ(p.folded.folding.classes[0].members, "0-1, 3");
  EXPECT_EQ(p.folded.folding.classes[0].reason, "nominal");
  EXPECT_EQ(p.folded.folding.classes[1].members, "2");
  EXPECT_EQ(p.folded.folding.classes[1].reason, "clock_factor 0.9 on node2/gpu5");
  EXPECT_TRUE(p.folded.straggler.found);
  EXPECT_EQ(p.folded.straggler.gpu, 21);
  EXPECT_EQ(p.folded.straggler.cause, "clock_factor");
  EXPECT_GT(p.folded.breakdown.straggler_wait_s, 0.0);
  EXPECT_GT(p.folded.iteration_time_s, nominal_iteration_s(sc));
}

TEST(PartialFolding, ANodeRangeFoldsItsReplicasTogether) {
  // Nodes 1-2 at 0.95 (replicas 1 and 2: one class), GPU 6 of node 0 at 0.9 (replica 0 alone).
  Scenario sc = job(4, 8, 1, 4);
  sc.cluster.overrides = {{"node1-2", 0.95, 0.0}, {"node0/gpu6", 0.9, 0.0}};
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 3);
  ASSERT_EQ(p.folded.folding.classes.size(), 3u);
  EXPECT_EQ(p.folded.folding.classes[1].members, "1-2");
  EXPECT_EQ(p.folded.folding.classes[1].reason, "clock_factor 0.95 on node1/gpu0 (+7 more GPUs)");
  EXPECT_EQ(p.folded.straggler.gpu, 6);
}

TEST(PartialFolding, SlowGpusAtTheSameSlotShareAClassOnARailFabric) {
  // Replicas 2 and 5 have GPU 4 at 0.9: one class; replica 7's GPU 1 at 0.95: another.
  Scenario sc = job(8, 8, 1, 8);
  sc.cluster.fabric.kind = FabricKind::rail_optimized;
  sc.cluster.overrides = {{"node2/gpu4", 0.9, 0.0}, {"node5/gpu4", 0.9, 0.0}, {"node7/gpu1", 0.95, 0.0}};
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 3);
  ASSERT_EQ(p.folded.folding.classes.size(), 3u);
  EXPECT_EQ(p.folded.folding.classes[1].members, "2, 5");
  EXPECT_EQ(p.folded.folding.classes[2].members, "7");
  EXPECT_EQ(p.folded.straggler.gpu, 20);
}

TEST(PartialFolding, InterleavedPipelinesFoldByClass) {
  Scenario sc = job(4, 4, 2, 4);
  sc.cluster.overrides = {{"node3/gpu1", 0.85, 0.0}};
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 2);
  EXPECT_EQ(p.folded.folding.classes[1].reason, "clock_factor 0.85 on node3/gpu1");
  // Before the barrier's wait was split, folded named no one and unfolded GPU 8 (stage 0).
  EXPECT_TRUE(p.folded.straggler.found);
  EXPECT_EQ(p.folded.straggler.gpu, 25);
  EXPECT_EQ(p.folded.straggler.slowest_stage, 1);
}

TEST(PartialFolding, AReplicaWhosePipelineCrossesASlowNicIsAlone) {
  // tp 8 x pp 2 x dp 2: replica r's stage 0 on node r, stage 1 on node r + 2; its PP sends leave
  // through NIC 0 of node 1 for replica 1 only.
  Scenario sc = job(4, 8, 2, 2);
  sc.cluster.overrides = {{"node1/nic0", 0.0, 0.25}, {"node0-3/gpu7", 0.97, 0.0}};
  const Cluster cluster(sc.cluster);
  const FoldingPlan plan = plan_replica_folding(sc, parallel_layout_of(sc, cluster.num_gpus()), cluster);
  ASSERT_EQ(plan.classes.size(), 2u);
  EXPECT_EQ(plan.classes[1].units, std::vector<int>{1});
  EXPECT_EQ(plan.classes[1].reason.find("its own traffic's default route crosses node1.nic0."),
            plan.classes[1].reason.find("its"));
  // dp 2 with one replica alone simulates both: compare on dp 4 over 8 nodes instead.
  Scenario wide = job(8, 8, 2, 4);
  wide.cluster.overrides = {{"node1/nic0", 0.0, 0.25}};
  const Pair p = folded_vs_unfolded(wide);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 2);
}

TEST(PartialFolding, AReplicaOnANodeWithAFailedNicIsAloneAndNoFasterThanHealthy) {
  // tp 8 x pp 2 x dp 4 on 8 nodes: replica 1's stage 0 sits on node 1, whose nic0 is down, so its
  // PP sends and its share of the DP all-reduce leave through nic1 (shared with rail 1).
  Scenario sc = job(8, 8, 2, 4);
  sc.cluster.overrides = {{"node1/nic0", 0.0, 0.0, true}};
  const Cluster cluster(sc.cluster);
  const FoldingPlan plan = plan_replica_folding(sc, parallel_layout_of(sc, cluster.num_gpus()), cluster);
  ASSERT_EQ(plan.classes.size(), 2u);
  EXPECT_EQ(plan.classes[1].units, std::vector<int>{1});
  EXPECT_EQ(plan.classes[1].reason, "node1.nic0 failed on its node");
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 2);
  EXPECT_GE(p.folded.iteration_time_s, nominal_iteration_s(sc) * (1 - 1e-9));
}

TEST(PartialFolding, APowerCappedGpuIsTheStragglerAndALowerCapNeverFaster) {
  // tp 8 x dp 4 on 4 nodes: node2/gpu5 limited to 200 W (the H100's Min Power Limit) runs its
  // compute below boost; its replica is a class alone and the straggler names it "power_cap".
  Scenario sc = job(4, 8, 1, 4);
  sc.cluster.overrides = {{"node2/gpu5", 0.0, 0.0, false, 200.0}};
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 2);
  EXPECT_TRUE(p.folded.straggler.found);
  EXPECT_EQ(p.folded.straggler.gpu, 21);
  EXPECT_EQ(p.folded.straggler.cause, "power_cap");
  Scenario higher = sc;
  higher.cluster.overrides = {{"node2/gpu5", 0.0, 0.0, false, 400.0}};
  const double t_higher = simulate_training(higher).iteration_time_s;
  EXPECT_GE(p.folded.iteration_time_s, t_higher * (1 - 1e-9));
  EXPECT_GE(t_higher, nominal_iteration_s(sc) * (1 - 1e-9));
}

TEST(PartialFolding, AHotNodeBreathesItsOwnSupplyAndItsReplicaIsAClassAlone) {
  // tp 8 x dp 4 on 4 air-cooled nodes: node2 breathes 45 C supply air (ASHRAE A4's top) instead of
  // 25 C: every inlet of node2 is 20 C warmer than the same slot's on node0 (one short iteration
  // does not heat these GPUs to their slowdown temperature), and its replica is a class alone.
  Scenario sc = job(4, 8, 1, 4);
  sc.cluster.overrides = {{"node2", 0.0, 0.0, false, 0.0, 45.0}};
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 2);
  EXPECT_GE(p.folded.iteration_time_s, nominal_iteration_s(sc) * (1 - 1e-9));
  double inlet0 = 0, inlet16 = 0;
  for (const GpuThermal& gt : p.unfolded.thermal.gpus) {
    if (gt.gpu == 0) inlet0 = gt.inlet_c;
    if (gt.gpu == 16) inlet16 = gt.inlet_c;
  }
  EXPECT_NEAR(inlet16 - inlet0, 20.0, 0.5);
}

TEST(PartialFolding, ContextParallelUnitsFoldAsWholeUnits) {
  // cp 2: a unit is two data ranks exchanging K/V; the slow GPU's unit is simulated whole.
  Scenario sc = job(4, 4, 1, 4);
  sc.parallel.cp = 2;
  sc.training.global_batch_size = 16;
  sc.cluster.overrides = {{"node1/gpu2", 0.9, 0.0}};
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 4);  // two units of cp 2
  EXPECT_EQ(p.folded.folding.classes[1].members, "2-3");
}

TEST(PartialFolding, ZeroOneWithTwoSlowGpusInOneReplica) {
  Scenario sc = job(8, 8, 1, 8);
  sc.parallel.zero_stage = 1;
  sc.cluster.overrides = {{"node6/gpu0", 0.8, 0.0}, {"node6/gpu5", 0.9, 0.0}};
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 2);
  EXPECT_EQ(p.folded.folding.classes[1].reason, "clock_factor 0.8 on node6/gpu0, 0.9 on node6/gpu5");
  EXPECT_EQ(p.folded.straggler.gpu, 48);
}

TEST(PartialFolding, ZeroOnePipelineWithASlowLastStage) {
  Scenario sc = job(8, 8, 2, 4);
  sc.parallel.zero_stage = 1;
  sc.cluster.overrides = {{"node6/gpu0", 0.8, 0.0}};
  const Pair p = folded_vs_unfolded(sc);
  EXPECT_EQ(p.folded.folding.simulated_replicas, 2);
  EXPECT_EQ(p.folded.folding.classes[1].reason, "clock_factor 0.8 on node6/gpu0");
}

TEST(PartialFolding, ASlowerGpuNeverMakesTheJobFaster) {
  Scenario sc = job(4, 8, 1, 4);
  double previous_s = nominal_iteration_s(sc);
  for (double f : {0.99, 0.9, 0.7, 0.5}) {
    sc.cluster.overrides = {{"node1/gpu1", f, 0.0}};
    const double s = simulate_training(sc).iteration_time_s;
    EXPECT_GE(s, previous_s) << "clock_factor " << f;
    previous_s = s;
  }
}

TEST(PartialFolding, WithoutOverridesTheOneClassIsTodaysFolding) {
  const Scenario sc = job(4, 8, 1, 4);
  const Cluster cluster(sc.cluster);
  const FoldingPlan plan = plan_replica_folding(sc, parallel_layout_of(sc, cluster.num_gpus()), cluster);
  EXPECT_TRUE(plan.folded);
  EXPECT_EQ(plan.replica_ids, std::vector<int>{0});
  EXPECT_EQ(plan.sim_index, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_TRUE(simulate_training(sc).folding.classes.empty());  // the report's section needs overrides
}

// A node's supply_c equal to the cooling's own inlet (25 C air by default) changes nothing, so it
// makes no class of its own (fresh user 41: "Folding: 4 replicas in 2 classes", the same iteration);
// 45 C does.
TEST(PartialFolding, ASupplyEqualToTheCoolingsInletMakesNoClass) {
  Scenario sc = job(4, 8, 1, 4);
  ElementOverride o;
  o.select = "node2";
  o.supply_c = sc.thermal.supply_air_c;
  sc.cluster.overrides = {o};
  const Report same = simulate_training(sc);
  EXPECT_TRUE(same.folded);
  EXPECT_LE(same.folding.classes.size(), 1u);  // folded as a job without overrides
  EXPECT_DOUBLE_EQ(same.iteration_time_s, nominal_iteration_s(sc));
  sc.cluster.overrides[0].supply_c = 45.0;
  EXPECT_EQ(simulate_training(sc).folding.classes.size(), 2u);
}

}  // namespace
}  // namespace traincast::models
