// What each cluster.overrides entry did (models/executor/override_effects.h, Report::overrides):
// the element's figures as the run measured them, its peer on the other nodes, and the cost
// against the same job without the overrides. Small clusters: each run well under a second.
#include "models/executor/override_effects.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "models/executor/training_run.h"

namespace traincast::models {
namespace {

/// A small GPT on `nodes` DGX H100 under a non-blocking fat tree (two nodes per leaf), tp x dp.
Scenario job(int nodes, int tp, int dp) {
  Scenario sc;
  sc.name = "override-effects";
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
  sc.parallel.dp = dp;
  sc.training.global_batch_size = 4 * dp;
  sc.training.micro_batch_size = 1;
  return sc;
}

ElementOverride slowed(const std::string& select, double factor) {
  ElementOverride o;
  o.select = select;
  o.bandwidth_factor = factor;
  return o;
}

TEST(OverrideEffects, NoOverridesNoSection) {
  const Report r = simulate_training(job(2, 8, 2));
  EXPECT_TRUE(r.overrides.entries.empty());
  EXPECT_FALSE(without_acting_overrides(job(2, 8, 2)).has_value());
}

// TP 8 x DP 4 on 4 nodes: each DP ring has one GPU per node. NCCL's ring search leaves a NIC
// below its peers by any factor, and the model's nodes of a group share one search with one rail
// per channel (docs/fabric.md), so rail 0 goes dark on every node: the slowed NIC carries nothing,
// nor does its peer. At factor 1 the same entry carries what its peer does.
TEST(OverrideEffects, SlowedNicNamedWithItsTrafficAndItsPeers) {
  Scenario sc = job(4, 8, 4);
  sc.cluster.overrides = {slowed("node2/nic0", 1.0)};
  const Report full = simulate_training(sc);
  ASSERT_EQ(full.overrides.entries.size(), 1u);
  EXPECT_EQ(full.overrides.entries[0].setting, "bandwidth_factor 1");
  EXPECT_GT(full.overrides.entries[0].bytes_per_iteration, 1e6);
  EXPECT_EQ(full.overrides.entries[0].peer, "node0/nic0");
  EXPECT_NEAR(full.overrides.entries[0].peer_bytes_per_iteration, full.overrides.entries[0].bytes_per_iteration,
              1e-9 * full.overrides.entries[0].bytes_per_iteration);
  EXPECT_GT(full.overrides.entries[0].utilization, 0.0);

  sc.cluster.overrides = {slowed("node2/nic0", 0.5)};
  const Report r = simulate_training(sc);
  ASSERT_EQ(r.overrides.entries.size(), 1u);
  const OverrideEffectReport& e = r.overrides.entries[0];
  EXPECT_EQ(e.index, 0);
  EXPECT_EQ(e.select, "node2/nic0");
  EXPECT_EQ(e.setting, "bandwidth_factor 0.5");
  EXPECT_EQ(e.bytes_per_iteration, 0.0);
  EXPECT_EQ(e.utilization, 0.0);
  EXPECT_EQ(e.peer, "node0/nic0");
  EXPECT_EQ(e.peer_bytes_per_iteration, 0.0);
  EXPECT_EQ(e.sm_clock_mhz, 0.0);
  EXPECT_FALSE(e.straggler);
  EXPECT_GT(r.iteration_time_s, full.iteration_time_s);
}

TEST(OverrideEffects, FailedNicCarriesNothing) {
  Scenario sc = job(4, 8, 4);
  ElementOverride o;
  o.select = "node1/nic3";
  o.failed = true;
  sc.cluster.overrides = {o};
  const Report r = simulate_training(sc);
  ASSERT_EQ(r.overrides.entries.size(), 1u);
  EXPECT_EQ(r.overrides.entries[0].setting, "failed: true");
  EXPECT_EQ(r.overrides.entries[0].bytes_per_iteration, 0.0);
  EXPECT_EQ(r.overrides.entries[0].peer, "node0/nic3");
}

// An NVLink port at half its rate still carries its GPU's TP traffic: the same bytes as the same
// port on another node (the job's work is the same), at a higher utilisation of the lower rate.
TEST(OverrideEffects, SlowedNvlinkPortCarriesWhatItsPeerCarries) {
  Scenario sc = job(2, 8, 2);
  sc.cluster.overrides = {slowed("node1.gpu0.nvl_up", 0.5)};
  const Report r = simulate_training(sc);
  ASSERT_EQ(r.overrides.entries.size(), 1u);
  const OverrideEffectReport& e = r.overrides.entries[0];
  EXPECT_EQ(e.peer, "node0.gpu0.nvl_up");
  EXPECT_GT(e.bytes_per_iteration, 1e6);
  EXPECT_NEAR(e.bytes_per_iteration, e.peer_bytes_per_iteration, 1e-9 * e.peer_bytes_per_iteration);
  EXPECT_GT(e.utilization, 0.0);
  EXPECT_LE(e.utilization, 1.0);
}

TEST(OverrideEffects, SlowGpuClockAndStraggler) {
  Scenario sc = job(2, 8, 2);
  sc.cluster.overrides = {{"node1/gpu5", 0.9, 0.0}};
  const Report r = simulate_training(sc);
  ASSERT_EQ(r.overrides.entries.size(), 1u);
  const OverrideEffectReport& e = r.overrides.entries[0];
  EXPECT_EQ(e.setting, "clock_factor 0.9");
  EXPECT_GT(e.boost_clock_mhz, 0.0);
  EXPECT_NEAR(e.sm_clock_mhz, 0.9 * e.boost_clock_mhz, 1e-6 * e.boost_clock_mhz);
  EXPECT_TRUE(r.straggler.found);
  EXPECT_TRUE(e.straggler);
}

// A TP-only job has no other replica to wait for, so no straggler: the slow GPU paces its TP
// group, and the cost run says by how much.
TEST(OverrideEffects, TpOnlySlowGpuCostsItsTpGroupsTime) {
  Scenario sc = job(1, 8, 1);
  sc.model.hidden_size = 8192;  // GEMM-bound layers, so the clock shows
  sc.model.num_attention_heads = 64;
  sc.model.seq_length = 4096;
  sc.cluster.overrides = {{"node0/gpu3", 0.8, 0.0}};
  Report r = simulate_training(sc);
  EXPECT_FALSE(r.straggler.found);
  EXPECT_FALSE(r.overrides.cost_known);
  add_override_cost(sc, r);
  Scenario nominal = sc;
  nominal.cluster.overrides.clear();
  const double nominal_s = simulate_training(nominal).iteration_time_s;
  EXPECT_TRUE(r.overrides.cost_known);
  EXPECT_DOUBLE_EQ(r.overrides.cost_s, r.iteration_time_s - nominal_s);
  EXPECT_DOUBLE_EQ(r.overrides.cost_fraction, r.overrides.cost_s / nominal_s);
  // Compute-bound kernels at 0.8 of the clock: a real share of the iteration, not all of it.
  EXPECT_GT(r.overrides.cost_fraction, 0.05);
  EXPECT_LT(r.overrides.cost_fraction, 0.25 + 1e-9);
}

// The slow GPU sets its TP group's pace; its 7 peers finish their share of each kernel first and
// wait at the group's next collective. Their compute busy time is then the nominal job's (they
// do the same work at the same clock), not the slow GPU's: utilisation's min is theirs, its max
// the slow GPU's, and the entry counts them with their wait.
TEST(OverrideEffects, TpPeersOfASlowGpuWaitForIt) {
  Scenario sc = job(1, 8, 1);
  sc.model.hidden_size = 8192;
  sc.model.num_attention_heads = 64;
  sc.model.seq_length = 4096;
  Scenario nominal = sc;
  sc.cluster.overrides = {{"node0/gpu3", 0.8, 0.0}};
  const Report r = simulate_training(sc);
  const Report n = simulate_training(nominal);
  ASSERT_EQ(r.overrides.entries.size(), 1u);
  const OverrideEffectReport& e = r.overrides.entries[0];
  EXPECT_EQ(e.peers_waiting, 7);
  EXPECT_GT(e.peers_wait_s, 0.0);
  const UtilizationReport& u = r.utilization;
  EXPECT_LT(u.gpu_compute_busy_fraction_min, u.gpu_compute_busy_fraction_max);
  EXPECT_NEAR(u.gpu_compute_busy_fraction_max - u.gpu_compute_busy_fraction_min, e.peers_wait_s / r.iteration_time_s,
              1e-9);
  // Mean over 8 GPUs: 7 at the min, 1 at the max.
  EXPECT_NEAR(u.gpu_compute_busy_fraction_mean,
              (7 * u.gpu_compute_busy_fraction_min + u.gpu_compute_busy_fraction_max) / 8, 1e-9);
  // The waiting GPUs compute as long as every GPU of the nominal job does.
  const double nominal_busy_s = n.utilization.gpu_compute_busy_fraction_max * n.iteration_time_s;
  EXPECT_EQ(n.utilization.gpu_compute_busy_fraction_min, n.utilization.gpu_compute_busy_fraction_max);
  EXPECT_NEAR(u.gpu_compute_busy_fraction_min * r.iteration_time_s, nominal_busy_s, 0.005 * nominal_busy_s);
  // The slow GPU computes longer than that, by its lower clock on the compute-bound share.
  EXPECT_GT(u.gpu_compute_busy_fraction_max * r.iteration_time_s, 1.05 * nominal_busy_s);
}

// The whole TP group slowed alike: nobody waits, every GPU's fraction is the group's.
TEST(OverrideEffects, WholeTpGroupSlowedAlikeHasNoWait) {
  Scenario sc = job(1, 8, 1);
  sc.cluster.overrides = {{"node0", 0.8, 0.0}};
  const Report r = simulate_training(sc);
  ASSERT_EQ(r.overrides.entries.size(), 1u);
  EXPECT_EQ(r.overrides.entries[0].peers_waiting, 0);
  EXPECT_EQ(r.overrides.entries[0].peers_wait_s, 0.0);
  EXPECT_EQ(r.utilization.gpu_compute_busy_fraction_min, r.utilization.gpu_compute_busy_fraction_max);
}

// A missing GPU drains its node: the job runs on the others, with or without the entry, so it
// has no cost run and no figures.
TEST(OverrideEffects, MissingGpuIsListedWithoutCost) {
  Scenario sc = job(3, 8, 2);
  ElementOverride o;
  o.select = "node1/gpu2";
  o.missing = true;
  sc.cluster.overrides = {o};
  EXPECT_FALSE(without_acting_overrides(sc).has_value());
  Report r = simulate_training(sc);
  add_override_cost(sc, r);
  ASSERT_EQ(r.overrides.entries.size(), 1u);
  EXPECT_EQ(r.overrides.entries[0].setting, "missing: true");
  EXPECT_FALSE(r.overrides.cost_known);
  // With a slowed link beside it, only the link goes in the cost run; the node stays drained.
  sc.cluster.overrides.push_back(slowed("node0.gpu0.nvl_up", 0.5));
  const std::optional<Scenario> base = without_acting_overrides(sc);
  ASSERT_TRUE(base.has_value());
  ASSERT_EQ(base->cluster.overrides.size(), 1u);
  EXPECT_TRUE(base->cluster.overrides[0].missing.value_or(false));
}

TEST(OverrideEffects, HotNodeSupplyNamesItsHottestGpu) {
  Scenario sc = job(2, 8, 2);
  ElementOverride o;
  o.select = "node1";
  o.supply_c = 40.0;
  sc.cluster.overrides = {o};
  const Report r = simulate_training(sc);
  ASSERT_EQ(r.overrides.entries.size(), 1u);
  const OverrideEffectReport& e = r.overrides.entries[0];
  EXPECT_EQ(e.setting, "supply_c 40");
  double node0_hottest = 0.0;
  for (const GpuThermal& g : r.thermal.gpus)
    if (g.gpu < 8) node0_hottest = std::max(node0_hottest, g.average_c);
  EXPECT_GT(node0_hottest, 0.0);
  EXPECT_GT(e.hottest_gpu_c, node0_hottest + 5.0);  // 15 K warmer supply
}

// Entries naming one GPU with the same field: the later one acts there. The earlier acts nowhere
// and says so; a node entry partly replaced reports its own GPUs' clock, not the replaced one's.
TEST(OverrideEffects, FiguresAreOverTheElementsAnEntryActsOn) {
  Scenario sc = job(2, 8, 2);
  sc.cluster.overrides = {{"node1/gpu3", 0.5, 0.0}, {"node1", 0.9, 0.0}, {"node1/gpu3", 0.5, 0.0}};
  const Report r = simulate_training(sc);
  ASSERT_EQ(r.overrides.entries.size(), 3u);
  EXPECT_FALSE(r.overrides.entries[0].acts);
  EXPECT_EQ(r.overrides.entries[0].sm_clock_mhz, 0.0);
  EXPECT_FALSE(r.overrides.entries[0].straggler);
  const OverrideEffectReport& node = r.overrides.entries[1];
  EXPECT_TRUE(node.acts);
  EXPECT_NEAR(node.sm_clock_mhz, 0.9 * node.boost_clock_mhz, 1e-6 * node.boost_clock_mhz);
  const OverrideEffectReport& gpu = r.overrides.entries[2];
  EXPECT_TRUE(gpu.acts);
  EXPECT_NEAR(gpu.sm_clock_mhz, 0.5 * gpu.boost_clock_mhz, 1e-6 * gpu.boost_clock_mhz);
  EXPECT_TRUE(gpu.straggler);
}

// A GPU entry with no effect (clock_factor 1) makes no class of its own: its GPUs are folded with
// the nominal ones, which the entry says instead of a clock it never measured.
TEST(OverrideEffects, AnEntryOnAFoldedReplicaSaysSo) {
  Scenario sc = job(4, 8, 4);
  sc.cluster.overrides = {{"node2/gpu1", 1.0, 0.0}, slowed("node3/nic2", 1.0)};
  const Report r = simulate_training(sc);
  ASSERT_EQ(r.overrides.entries.size(), 2u);
  EXPECT_TRUE(r.folded);
  EXPECT_TRUE(r.overrides.entries[0].acts);
  EXPECT_TRUE(r.overrides.entries[0].folded);
  EXPECT_EQ(r.overrides.entries[0].sm_clock_mhz, 0.0);
  EXPECT_TRUE(r.overrides.entries[1].folded);
  EXPECT_EQ(r.overrides.entries[1].peer, "node0/nic2");  // a simulated replica's
}

// Static routing keeps the flows of a slowed cable: at a tenth of its rate a leaf up-link costs
// more than failed, whose flows move to the other up-links. add_override_cost runs the failed
// variant and says so.
TEST(OverrideEffects, SlowedUpLinkIsComparedWithItFailed) {
  Scenario sc = job(4, 8, 4);
  sc.cluster.fabric.oversubscription = 2.0;
  sc.cluster.fabric.routing = FabricRouting::d_mod_k;
  sc.cluster.overrides = {slowed("leaf0->spine1", 0.1)};
  Report r = simulate_training(sc);
  add_override_cost(sc, r);
  ASSERT_EQ(r.overrides.entries.size(), 1u);
  const OverrideEffectReport& e = r.overrides.entries[0];
  ASSERT_TRUE(e.failed_instead_known);
  EXPECT_GT(r.overrides.cost_s, 0.0);
  Scenario failed = sc;
  failed.cluster.overrides[0].bandwidth_factor = 0.0;
  failed.cluster.overrides[0].failed = true;
  Scenario nominal = sc;
  nominal.cluster.overrides.clear();
  EXPECT_DOUBLE_EQ(e.failed_instead_cost_s,
                   simulate_training(failed).iteration_time_s - simulate_training(nominal).iteration_time_s);
  EXPECT_LT(e.failed_instead_cost_s, r.overrides.cost_s);
  EXPECT_EQ(e.peer, "");  // a switch link has no like on another node
}

// `traincast run` and compare run the job and the job without its overrides side by side
// (simulate_training_with_override_cost): the same figures as one after the other, for any
// thread count, and the failed-link runs too.
TEST(OverrideEffects, SideBySideCostRunsMatchOneAfterTheOther) {
  Scenario sc = job(4, 8, 4);
  sc.cluster.fabric.oversubscription = 2.0;
  sc.cluster.fabric.routing = FabricRouting::d_mod_k;
  ElementOverride slow_gpu;
  slow_gpu.select = "node2/gpu5";
  slow_gpu.clock_factor = 0.8;
  sc.cluster.overrides = {slowed("leaf0->spine1", 0.1), slow_gpu, slowed("leaf1->spine0", 0.5)};
  Report one_after = simulate_training(sc);
  add_override_cost(sc, one_after);
  ASSERT_TRUE(one_after.overrides.cost_known);
  ASSERT_TRUE(one_after.overrides.entries[0].failed_instead_known);
  for (const int threads : {1, 2, 0}) {
    SCOPED_TRACE(threads);
    sc.options.threads = threads;
    const Report r = simulate_training_with_override_cost(sc);
    EXPECT_EQ(r.events, one_after.events);
    EXPECT_EQ(r.iteration_time_s, one_after.iteration_time_s);
    EXPECT_EQ(r.overrides.cost_s, one_after.overrides.cost_s);
    EXPECT_EQ(r.overrides.cost_fraction, one_after.overrides.cost_fraction);
    ASSERT_EQ(r.overrides.entries.size(), one_after.overrides.entries.size());
    for (std::size_t i = 0; i < r.overrides.entries.size(); ++i) {
      EXPECT_EQ(r.overrides.entries[i].acts, one_after.overrides.entries[i].acts) << i;
      EXPECT_EQ(r.overrides.entries[i].failed_instead_known, one_after.overrides.entries[i].failed_instead_known) << i;
      EXPECT_EQ(r.overrides.entries[i].failed_instead_cost_s, one_after.overrides.entries[i].failed_instead_cost_s)
          << i;
    }
  }
}

// A job that cannot run reports its own error, not the nominal run's (which here would succeed),
// whatever the thread count.
TEST(OverrideEffects, SideBySideRunsReportTheJobsError) {
  Scenario sc = job(2, 8, 2);
  ElementOverride bad;
  bad.select = "node7/gpu0";  // 2 nodes: names nothing
  bad.clock_factor = 0.9;
  sc.cluster.overrides = {bad};
  std::string alone;
  try {
    simulate_training(sc);
  } catch (const std::invalid_argument& e) {
    alone = e.what();
  }
  ASSERT_FALSE(alone.empty());
  for (const int threads : {1, 2}) {
    sc.options.threads = threads;
    try {
      simulate_training_with_override_cost(sc);
      ADD_FAILURE() << "threads " << threads << ": no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), alone) << threads;
    }
  }
}

}  // namespace
}  // namespace traincast::models
