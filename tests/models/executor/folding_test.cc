// Tests of the folding decision by network position (models/executor/folding.h).
#include "models/executor/folding.h"

#include <gtest/gtest.h>

#include "models/executor/training_run.h"
#include "models/hardware/cluster.h"

namespace traincast::models {
namespace {

/// A small GPT on `nodes` DGX H100 under one fat tree, tp x pp x dp.
Scenario job(int nodes, int tp, int pp, int dp) {
  Scenario sc;
  sc.name = "folding";
  sc.cluster.node_template = "dgx_h100";
  sc.cluster.num_nodes = nodes;
  sc.cluster.fabric.kind = FabricKind::fat_tree;
  sc.cluster.fabric.nodes_per_leaf = 1;
  sc.model.num_layers = 4;
  sc.model.hidden_size = 1024;
  sc.model.num_attention_heads = 8;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 512;
  sc.parallel.tp = tp;
  sc.parallel.pp = pp;
  sc.parallel.dp = dp;
  sc.training.global_batch_size = 4 * dp * pp;
  sc.training.micro_batch_size = 1;
  return sc;
}

bool folds(const Scenario& sc) {
  const Cluster cluster(sc.cluster);
  return fold_replicas_by_position(sc, parallel_layout_of(sc, cluster.num_gpus()), cluster);
}

/// job() on two-socket PCIe H100 servers with NVLink bridges and 4 NICs (2 GPUs per NIC).
Scenario pcie_job(int nodes, int tp, int pp, int dp) {
  Scenario sc = job(nodes, tp, pp, dp);
  sc.cluster.node_template = "pcie_8gpu_2socket_h100_nvlink_bridge";
  sc.cluster.nics_per_node = 4;
  return sc;
}

TEST(Folding, ReplicasThatOwnTheirNodesFold) {
  EXPECT_TRUE(folds(job(4, 8, 1, 4)));  // one replica per node
  EXPECT_TRUE(folds(job(4, 8, 2, 2)));  // two nodes per replica, PP between leaves, non-blocking
}

TEST(Folding, ReplicasInterleavedWithinNodesFoldOnlyOnDisjointLinks) {
  // tp 2 x pp 4 = 8 GPUs per replica, a node's worth, but GPU g = k + tp (r + dp s) puts both
  // replicas' stages 0-1 on node 0 and 2-3 on node 1. On the PCIe server the stage-1 GPUs of
  // both replicas (4-7) send across the socket link to the NICs of the stage-2 GPUs' socket.
  EXPECT_FALSE(folds(pcie_job(2, 2, 4, 2)));
  // On DGX H100 every GPU has its own NVSwitch ports, PCIe switch and NIC: the replicas'
  // sends take disjoint links (PXN relays through a GPU of the same replica).
  EXPECT_TRUE(folds(job(4, 4, 2, 4)));
}

TEST(Folding, BlockingOrTorusFabricDoesNotFoldReplicasAcrossNodes) {
  Scenario over = job(4, 8, 2, 2);
  over.cluster.fabric.oversubscription = 2;
  EXPECT_FALSE(folds(over));
  Scenario torus = job(4, 8, 2, 2);
  torus.cluster.fabric.kind = FabricKind::torus;
  EXPECT_FALSE(folds(torus));
  torus.parallel.pp = 1;
  torus.parallel.dp = 4;
  EXPECT_TRUE(folds(torus));  // each replica inside its node
  Scenario off = job(4, 8, 1, 4);
  off.options.fold_symmetric = false;
  EXPECT_FALSE(folds(off));
}

TEST(Folding, InterleavedReplicasRunUnfoldedAndMatch) {
  // The shrunk draw train-0122 (two-socket PCIe H100 servers with NVLink bridges, one leaf):
  // folded it was 2.2 % faster than unfolded, since the folded run never saw the other
  // replica's sends on the shared nodes.
  Scenario sc = pcie_job(2, 2, 4, 2);
  sc.cluster.fabric.nodes_per_leaf = 2;
  sc.model.hidden_size = 256;
  sc.training.global_batch_size = 8;
  const Report folded = simulate_training(sc);
  sc.options.fold_symmetric = false;
  const Report full = simulate_training(sc);
  EXPECT_FALSE(folded.folded);
  EXPECT_EQ(folded.iteration_time_s, full.iteration_time_s);
}

// A folded report's link utilisation is the unfolded one's (report.h: the simulated replicas'
// links stand for the others'). Before session 39 a folded run also averaged the other nodes'
// NICs, which carry only the DP collectives joining the replicas: 4 replicas of 2 nodes read a
// lower NIC mean folded than unfolded (llama3_70b on 8 nodes: 0.7 % against 0.8 %).
TEST(Folding, FoldedLinkUtilisationIsTheUnfoldedOne) {
  Scenario sc = job(8, 8, 2, 4);  // TP 8 x PP 2 x DP 4: each replica owns 2 nodes
  const Report folded = simulate_training(sc);
  sc.options.fold_symmetric = false;
  const Report full = simulate_training(sc);
  ASSERT_TRUE(folded.folded);
  ASSERT_FALSE(full.folded);
  ASSERT_EQ(folded.iteration_time_s, full.iteration_time_s);
  const UtilizationReport& f = folded.utilization;
  const UtilizationReport& u = full.utilization;
  ASSERT_GT(u.nic_utilization_mean, 0.0);
  EXPECT_NEAR(f.nic_utilization_mean, u.nic_utilization_mean, 1e-9 * u.nic_utilization_mean);
  EXPECT_NEAR(f.nvlink_utilization_mean, u.nvlink_utilization_mean, 1e-9 * u.nvlink_utilization_mean);
  EXPECT_EQ(f.nic_utilization_max, u.nic_utilization_max);
  // One replica's 2 nodes of the 8: a quarter of the links.
  EXPECT_EQ(4 * f.nic_links_used, u.nic_links_used);
  EXPECT_EQ(4 * f.nvlink_links_used, u.nvlink_links_used);
}

// Partially folded (a slow node makes its replica a class of its own), a simulated replica's GPUs
// weigh as many replicas as it stands for in the compute-busy mean. Before session 39 the mean was
// over the simulated GPUs alone (the fresh user's 8-node Llama 3 70B with node5 at 0.8: 81.0 %
// folded against 78.7 % unfolded).
TEST(Folding, PartiallyFoldedComputeBusyMeanIsTheUnfoldedOne) {
  Scenario sc = job(8, 8, 2, 4);
  ElementOverride slow;
  slow.select = "node5";
  slow.clock_factor = 0.8;
  sc.cluster.overrides = {slow};
  const Report folded = simulate_training(sc);
  sc.options.fold_symmetric = false;
  const Report full = simulate_training(sc);
  ASSERT_TRUE(folded.folded);
  ASSERT_EQ(folded.iteration_time_s, full.iteration_time_s);
  const UtilizationReport& f = folded.utilization;
  const UtilizationReport& u = full.utilization;
  ASSERT_LT(u.gpu_compute_busy_fraction_min, u.gpu_compute_busy_fraction_max);  // the classes differ
  EXPECT_NEAR(f.gpu_compute_busy_fraction_mean, u.gpu_compute_busy_fraction_mean,
              1e-12 * u.gpu_compute_busy_fraction_mean);
  EXPECT_EQ(f.gpu_compute_busy_fraction_min, u.gpu_compute_busy_fraction_min);
  EXPECT_EQ(f.gpu_compute_busy_fraction_max, u.gpu_compute_busy_fraction_max);
}

}  // namespace
}  // namespace traincast::models
