// Mixed clusters (issue 20, ClusterSpec::node_groups): a pipeline whose first stage runs on a
// DGX A100 and whose second runs on a DGX H100, on one fabric. The iteration and the slow
// group's cost are checked against a hand computation from each stage's own kernel times.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/power/power_model.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

/// PP 2 x DP 8 (TP 1) on one DGX A100 (stage 0) and one DGX H100 (stage 1), both on HDR NICs:
/// 8 layers of hidden 2048 at seq 2048, split 3 (A100) + 5 (H100), 64 micro-batches of 1
/// sequence. Communication is small against compute: the pipeline send of one micro-batch is
/// s x h x 2 bytes = 8 MiB (0.34 ms at HDR's 25 GB/s) against about 9 ms of A100 kernels per
/// micro-batch, and the gradient reduction of a stage overlaps its last backward.
Scenario a100_h100_pipeline() {
  Scenario sc;
  sc.name = "mixed-a100-h100";
  sc.cluster.node_groups = {{"dgx_a100", 1, ""}, {"dgx_h100", 1, ""}};
  sc.cluster.node_template = "dgx_a100";
  sc.cluster.num_nodes = 2;
  sc.cluster.nic = "IB-HDR-200";
  sc.model.num_layers = 8;
  sc.model.hidden_size = 2048;
  sc.model.num_attention_heads = 16;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 2048;
  sc.parallel.pp = 2;
  sc.parallel.dp = 8;
  sc.parallel.pipeline_stage_layers = {3, 5};
  sc.training.global_batch_size = 64 * 8;
  sc.training.micro_batch_size = 1;
  sc.training.precision = Precision::bf16;
  return sc;
}

/// Kernel seconds of a program (collectives excluded; TP 1 has none).
double seconds(const Program& p) {
  double s = 0;
  for (const Segment& seg : p)
    if (!seg.is_collective) s += seg.seconds;
  return s;
}

/// Stage time per micro-batch by hand from the compute model's per-layer programs on `gpu`:
/// layers x (forward + recompute + backward), plus the embedding (first stage) or head (last).
double stage_s(const Scenario& sc, const std::string& gpu_name, int stage) {
  const GpuSpec& gpu = find_gpu(gpu_name);
  const ModelPrograms p = build_transformer_programs(sc, gpu, compute_params(gpu, nullptr));
  const LayerPrograms& layer = p.layer_kinds.front();
  double t = sc.parallel.pipeline_stage_layers[static_cast<std::size_t>(stage)] *
             (seconds(layer.forward) + seconds(layer.recompute) + seconds(layer.backward));
  t += stage == 0 ? seconds(p.embedding_forward) + seconds(p.embedding_backward)
                  : seconds(p.head_forward) + seconds(p.head_backward);
  return t;
}

// The 1F1B pipeline with unequal stage times t0 (A100) > t1 (H100) and m micro-batches: stage 0
// never waits once t1 + 2 sends <= t0 (it runs B(i-1) and F(i+1) while stage 1 runs F(i), B(i)),
// so the iteration is the slow stage's m micro-batches plus the fill/drain through stage 1:
// T = (m - 1) x max(t0, t1) + t0 + t1. Within 2 % of the simulated iteration (the rest: two
// pipeline sends, the exposed tail of the gradient reduction and the optimizer step).
// Power follows each node group's own GPU and node: the H100 stage (GPUs 8-15) draws above the
// A100's 400 W TDP, each GPU stays within its own TDP (A100 400 W, H100 700 W; catalog), the
// report's limit is the highest and its PSU figure the peak node's (the DGX H100's). Before, every
// GPU took node_group[0]'s A100 curve: the H100s peaked at 400 W.
TEST(MixedCluster, PowerFollowsEachGroupsGpuAndNode) {
  const Report r = simulate_training(a100_h100_pipeline());
  const GpuSpec& a100 = find_gpu("A100-SXM4-80GB");
  const GpuSpec& h100 = find_gpu("H100-SXM5-80GB");
  double a100_peak_w = 0, h100_peak_w = 0;
  int a100_gpus = 0, h100_gpus = 0;
  for (const GpuPower& g : r.power.gpus) {
    if (g.gpu < 8) {  // node 0, the DGX A100
      a100_peak_w = std::max(a100_peak_w, g.peak_w);
      ++a100_gpus;
    } else {
      h100_peak_w = std::max(h100_peak_w, g.peak_w);
      ++h100_gpus;
    }
  }
  ASSERT_GT(a100_gpus, 0);
  ASSERT_GT(h100_gpus, 0);
  EXPECT_GT(a100_peak_w, a100.idle_w);
  EXPECT_LE(a100_peak_w, a100.tdp_w * (1 + 1e-12));
  EXPECT_GT(h100_peak_w, a100.tdp_w);
  EXPECT_LE(h100_peak_w, h100.tdp_w * (1 + 1e-12));
  EXPECT_EQ(r.power.gpu_power_limit_w, h100.tdp_w);
  EXPECT_EQ(r.power.node_psu_capacity_w,
            node_power_spec(find_builtin_node_template("dgx_h100"), h100).redundant_capacity_w());
  EXPECT_EQ(r.caveat.find("power and thermal"), std::string::npos) << r.caveat;
}

TEST(MixedCluster, A100H100PipelineMatchesTheHandFormula) {
  const Scenario sc = a100_h100_pipeline();
  const double t0 = stage_s(sc, "A100-SXM4-80GB", 0), t1 = stage_s(sc, "H100-SXM5-80GB", 1);
  ASSERT_GT(t0, t1 + 2 * 0.34e-3) << "the case needs stage 0 to be the never-waiting slow stage";
  const int m = 64;
  const double hand = (m - 1) * std::max(t0, t1) + t0 + t1;
  const Report r = simulate_training(sc);
  EXPECT_NEAR(r.iteration_time_s, hand, 0.02 * hand);
  std::printf("stage times %.6f s (A100), %.6f s (H100); iteration %.6f s, hand %.6f s (%+.3f %%)\n", t0, t1,
              r.iteration_time_s, hand, 100.0 * (r.iteration_time_s / hand - 1.0));

  // The report names the groups and the stages on them, with the stage times the hand used.
  ASSERT_EQ(r.mixed.groups.size(), 2U);
  EXPECT_EQ(r.mixed.groups[0].gpu, "A100-SXM4-80GB");
  EXPECT_EQ(r.mixed.groups[1].gpu, "H100-SXM5-80GB");
  ASSERT_EQ(r.mixed.stages.size(), 2U);
  EXPECT_EQ(r.mixed.stages[0].node_group, 0);
  EXPECT_EQ(r.mixed.stages[1].node_group, 1);
  EXPECT_EQ(r.mixed.stages[0].layers, 3);
  EXPECT_EQ(r.mixed.stages[1].layers, 5);
  // The executor rounds each kernel up to a whole ns (sim::Time): at most 1 ns per kernel, under
  // 100 kernels per micro-batch here.
  constexpr double kRoundingS = 100e-9;
  EXPECT_NEAR(r.mixed.stages[0].compute_s_per_micro_batch, t0, kRoundingS);
  EXPECT_NEAR(r.mixed.stages[1].compute_s_per_micro_batch, t1, kRoundingS);
  EXPECT_NEAR(r.mixed.pipeline_s, hand, (m + 1) * kRoundingS);

  // The slow group's cost by hand: every stage at the H100 group's slowest stage time t1,
  // (m - 1 + pp) x t1, against (m - 1) x t0 + t0 + t1.
  EXPECT_EQ(r.mixed.slow_group, 0);
  EXPECT_EQ(r.mixed.fast_group, 1);
  const double cost = hand - (m - 1 + 2) * t1;
  EXPECT_NEAR(r.mixed.slow_group_cost_s, cost, 2 * (m + 1) * kRoundingS);
}

// The slow group's cost in simulated time: the same job with the A100 node replaced by a second
// H100 node (same split, same fabric) is faster by what the hand formula says the A100 stage
// costs: [(m - 1) t0 + t0 + t1] - [(m - 1) max(t0', t1) + t0' + t1], t0' the first stage on an
// H100. Within 2 %.
TEST(MixedCluster, SlowGroupCostMatchesTheSameJobOnFastGpus) {
  const Scenario mixed = a100_h100_pipeline();
  Scenario fast = mixed;
  fast.cluster.node_groups.clear();
  fast.cluster.node_template = "dgx_h100";
  const int m = 64;
  const double t0 = stage_s(mixed, "A100-SXM4-80GB", 0), t1 = stage_s(mixed, "H100-SXM5-80GB", 1);
  const double t0_fast = stage_s(mixed, "H100-SXM5-80GB", 0);
  const double hand = ((m - 1) * std::max(t0, t1) + t0 + t1) - ((m - 1) * std::max(t0_fast, t1) + t0_fast + t1);
  const Report a = simulate_training(mixed);
  const Report b = simulate_training(fast);
  EXPECT_TRUE(b.mixed.groups.empty());
  EXPECT_NEAR(a.iteration_time_s - b.iteration_time_s, hand, 0.02 * hand);
  std::printf("simulated cost %.6f s, hand %.6f s (%+.3f %%)\n", a.iteration_time_s - b.iteration_time_s, hand,
              100.0 * ((a.iteration_time_s - b.iteration_time_s) / hand - 1.0));
}

// Memory is checked on each stage's own GPU: on an A100 40 GB the first stage runs out of memory
// where the same stage on an H100 80 GB would fit, and the report says so at that stage.
TEST(MixedCluster, MemoryIsCheckedPerGroup) {
  Scenario sc = a100_h100_pipeline();
  sc.cluster.node_groups = {{"dgx_a100_40gb", 1, ""}, {"dgx_h100", 1, ""}};
  sc.cluster.node_template = "dgx_a100_40gb";
  sc.model.hidden_size = 6144;
  sc.model.num_attention_heads = 48;
  sc.parallel.pipeline_stage_layers = {5, 3};
  sc.training.global_batch_size = 8 * 8;
  const Report r = simulate_training(sc);
  ASSERT_EQ(r.mixed.stages.size(), 2U);
  EXPECT_TRUE(r.mixed.stages[0].oom);
  EXPECT_FALSE(r.mixed.stages[1].oom);
  EXPECT_GT(r.mixed.stages[0].memory_peak_bytes, r.mixed.stages[0].memory_capacity_bytes);
  EXPECT_LT(r.mixed.stages[0].memory_peak_bytes, find_gpu("H100-SXM5-80GB").hbm_capacity_bytes);
  EXPECT_TRUE(r.memory.oom);
  EXPECT_EQ(r.memory.worst_stage, 0);
}

// Groups that cannot share one fabric or node shape are refused with the group's field.
TEST(MixedCluster, RefusesGroupsThatCannotShareAFabric) {
  ClusterSpec c;
  c.node_groups = {{"dgx_a100", 1, ""}, {"dgx_h100", 1, ""}};
  c.node_template = "dgx_a100";
  c.num_nodes = 2;
  try {
    const Cluster cluster(c);  // HDR vs NDR NICs, no cluster.nic
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cluster.node_group[1].node_template: 'dgx_h100' cannot share", 0), 0U)
        << e.what();
  }
  c.nic = "IB-HDR-200";
  c.num_nodes = 3;
  EXPECT_THROW(Cluster{c}, std::invalid_argument);  // num_nodes is not the groups' sum
  c.num_nodes = 2;
  const Cluster cluster(c);
  EXPECT_EQ(cluster.gpu_spec(0).name, "A100-SXM4-80GB");
  EXPECT_EQ(cluster.gpu_spec(15).name, "H100-SXM5-80GB");
  EXPECT_EQ(cluster.group_of_node(1), 1);
}

// Each group routes over its own PCIe tree: a DGX A100 hangs GPUs 0 and 1 (and NICs 0 and 1) on
// one switch, an HGX H100 board (dgx_h100) each GPU with its NIC on its own switch (NVIDIA/nccl
// issue 1264's topology: one NIC per GPU at PIX; nvbandwidth host_to_all on 8 x H800: every GPU at
// its single-GPU rate). So GPUs 0 and 1 share an uplink to the host on the A100 node, not on the
// H100 node.
TEST(MixedCluster, EachGroupRoutesOverItsOwnPcieTree) {
  ClusterSpec c;
  c.node_groups = {{"dgx_a100", 1, ""}, {"dgx_h100", 1, ""}};
  c.node_template = "dgx_a100";
  c.num_nodes = 2;
  c.nic = "IB-HDR-200";
  const Cluster cluster(c);
  const auto uplink = [&](int gpu) {
    for (sim::ResourceId r : cluster.host_route(gpu, true)) {
      const std::string& name = cluster.resource_name(r);
      if (name.find(".uplink_up") != std::string::npos) return name;
    }
    return std::string("none");
  };
  EXPECT_EQ(uplink(0), "node0.pcie_sw0.uplink_up");
  EXPECT_EQ(uplink(1), "node0.pcie_sw0.uplink_up");
  EXPECT_EQ(uplink(8), "node1.pcie_sw0.uplink_up");
  EXPECT_EQ(uplink(9), "node1.pcie_sw1.uplink_up");
  EXPECT_EQ(uplink(15), "node1.pcie_sw7.uplink_up");
  EXPECT_EQ(cluster.switch_of_gpu(0, 1), 0);
  EXPECT_EQ(cluster.switch_of_gpu(1, 1), 1);
  EXPECT_EQ(cluster.switch_of_nic(1, 5), 5);
  // GPU 1 to NIC 1 turns at the H100 node's switch 1 (PIX); on the A100 node at switch 0.
  const auto names = [&](const std::vector<sim::ResourceId>& route) {
    std::string out;
    for (sim::ResourceId r : route) out += cluster.resource_name(r) + " ";
    return out;
  };
  EXPECT_EQ(names(cluster.pcie_route_to_nic(9, 1)), "node1.gpu1.pcie_up node1.nic1.pcie_down ");
  EXPECT_EQ(names(cluster.pcie_route_to_nic(1, 1)), "node0.gpu1.pcie_up node0.nic1.pcie_down ");
  // Both boards put GPUs 0-3 and their NICs on socket 0.
  for (int g = 0; g < 8; ++g) EXPECT_EQ(cluster.socket_of_gpu(g), g < 4 ? 0 : 1);
  // `traincast explain` describes one node of each group with its own GPU and tree.
  const std::string d = cluster.describe();
  const std::size_t h100 = d.find("Node 1 (node_group[1]'s");
  ASSERT_NE(h100, std::string::npos) << d;
  EXPECT_LT(d.find("4 PCIe switches (2 GPUs each)"), h100) << d;
  EXPECT_NE(d.find("8 x H100-SXM5-80GB", h100), std::string::npos) << d;
  EXPECT_NE(d.find("8 PCIe switches (1 GPU each)", h100), std::string::npos) << d;
  EXPECT_NE(d.find("gpu1: pcie_sw1, socket 0", h100), std::string::npos) << d;
}

// A stage whose GPUs are of two types (here pp 1: data parallelism across A100 and H100) is refused.
TEST(MixedCluster, RefusesAStageSpanningTwoGpuTypes) {
  Scenario sc = a100_h100_pipeline();
  sc.parallel.pp = 1;
  sc.parallel.dp = 16;
  sc.parallel.pipeline_stage_layers.clear();
  sc.training.global_batch_size = 16;
  try {
    (void)simulate_training(sc);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline stage 0 spans two GPU types"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace traincast::models
