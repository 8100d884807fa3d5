// 2- and 4-way NVLink bridges (ScaleUp::bridges, cluster.nvlink_bridge_gpus) on the H200 NVL
// PCIe server, worked by hand: all_reduce busbw inside a 4-way bridge group, across groups, and
// the same 4 GPUs joined by 2-way bridges; NCCL's ring search sees the bridges as NVLink paths.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/collectives/nccl_tests.h"
#include "models/collectives/nccl_topo_search.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ClusterSpec h200_nvl(int bridge_gpus) {
  ClusterSpec c;
  c.node_template = "pcie_8gpu_2socket_h200_nvl";
  c.nvlink_bridge_gpus = bridge_gpus;
  return c;
}

NcclTestsResult all_reduce_1gib(const ClusterSpec& c, std::vector<int> gpus) {
  NcclTestsOptions o;
  o.op = NcclTestsOp::all_reduce;
  o.gpus = std::move(gpus);
  return simulate_nccl_tests(c, o, {kGiB}).front();
}

TEST(NvlinkBridge, FourWayGroupsAreAllToAll) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const Cluster c(h200_nvl(4), net);
  EXPECT_EQ(c.bridge_gpus(), 4);
  // H200 NVL: 18 NVLink4 links x 25 GB/s; a 4-way bridge gives each of the 3 peers 6 links.
  EXPECT_DOUBLE_EQ(c.scale_up_bytes_per_s(), 450e9);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) EXPECT_EQ(c.nvlink_between(a, b), a != b && a / 4 == b / 4) << a << " " << b;
  }
  const auto r = c.route(1, 3);
  ASSERT_EQ(r.size(), 1U);
  EXPECT_EQ(c.link_kind(r[0]), LinkKind::nvlink);
  EXPECT_DOUBLE_EQ(net.capacity(r[0]), 150e9);
  // The 2-way default: pairs 2k, 2k+1 with all 18 links each.
  sim::Simulator sim2;
  sim::FlowNetwork net2(sim2);
  const Cluster pairs(h200_nvl(2), net2);
  EXPECT_TRUE(pairs.nvlink_between(2, 3));
  EXPECT_FALSE(pairs.nvlink_between(1, 3));
  EXPECT_DOUBLE_EQ(net2.capacity(pairs.route(2, 3)[0]), 450e9);
}

TEST(NvlinkBridge, NcclRingSearchRunsOverTheFourWayBridge) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const Cluster c(h200_nvl(4), net);
  const std::vector<int> gpus{0, 1, 2, 3};
  const NcclTopoGraph g = search_ring_graph(c, net, gpus, -1, kNewestNcclVersion);
  ASSERT_FALSE(g.fallback);
  EXPECT_EQ(g.type_intra, NcclPathType::nvl);
  sim::Simulator sim2;
  sim::FlowNetwork net2(sim2);
  const Cluster pairs(h200_nvl(2), net2);
  const NcclTopoGraph p = search_ring_graph(pairs, net2, gpus, -1, kNewestNcclVersion);
  EXPECT_GT(p.type_intra, NcclPathType::nvl);  // 1 -> 2 and 3 -> 0 leave the bridges for PCIe
}

// all_reduce of 1 GiB (ring, Simple), busbw = 2 (n - 1) / n x S / t:
// - inside a 4-way group (GPUs 0-3): 12 directed bridge links of 6 x 25 = 150 GB/s, budgeted by
//   NCCL at 20.6 / 25 (LinkEfficiency::nvlink_gen4): 123.6 GB/s. The rings cover every link
//   evenly, so each link carries 2 (n - 1) / n x S x (4 links per ring / 12 links) = S / 2 and
//   busbw = 1.5 S / (S / 2 / 123.6e9) = 370.8 GB/s, less the latency (< 1.5 % at 1 GiB);
// - the same GPUs with 2-way bridges: the ring's 1 -> 2 and 3 -> 0 hops cross PCIe gen5 x16
//   (63.02 GB/s, NCCL's PCIe budget 12 / 15.754): 48.0 GB/s, each byte of 1.5 S over one such
//   hop: busbw 48.0 GB/s;
// - across groups (GPUs 0 and 4, one per socket): the sockets' link at NCCL's Sapphire Rapids
//   figure, 22 GB/s: busbw 22 GB/s, 4-way bridges or not.
TEST(NvlinkBridge, AllReduceBusbwInsideAndAcrossGroups) {
  const NcclTestsResult in4 = all_reduce_1gib(h200_nvl(4), {0, 1, 2, 3});
  EXPECT_LE(in4.busbw_gbps, 370.8);
  EXPECT_GT(in4.busbw_gbps, 370.8 * 0.985);
  const NcclTestsResult in2 = all_reduce_1gib(h200_nvl(2), {0, 1, 2, 3});
  const double pcie_gb_per_s = 63.015 * 12.0 / 15.754;
  EXPECT_LE(in2.busbw_gbps, pcie_gb_per_s);
  EXPECT_GT(in2.busbw_gbps, pcie_gb_per_s * 0.985);
  for (int bridge : {2, 4}) {
    const NcclTestsResult across = all_reduce_1gib(h200_nvl(bridge), {0, 4});
    EXPECT_LE(across.busbw_gbps, 22.0) << bridge;
    EXPECT_GT(across.busbw_gbps, 22.0 * 0.985) << bridge;
  }
}

TEST(NvlinkBridge, InvalidBridgeSizesAreRefused) {
  const NodeTemplate& h200 = find_builtin_node_template("pcie_8gpu_2socket_h200_nvl");
  EXPECT_EQ(bridge_group_problem(h200, find_gpu("H200-NVL"), 4), "");
  EXPECT_EQ(bridge_group_problem(h200, find_gpu("H200-NVL"), 3),
            "got 3 GPUs per NVLink bridge (expected 2 or 4: NVIDIA's 2-way and 4-way bridges)");
  EXPECT_EQ(bridge_group_problem(find_builtin_node_template("pcie_8gpu_2socket_h100_nvlink_bridge"),
                                 find_gpu("H100-PCIe-80GB"), 4),
            "H100-PCIe-80GB takes at most a 2-way NVLink bridge (expected 2, or a card with a 4-way bridge such as "
            "H200-NVL)");
  EXPECT_EQ(bridge_group_problem(find_builtin_node_template("dgx_h100"), find_gpu("H100-SXM5-80GB"), 2),
            "dgx_h100 has no NVLink bridges (expected a template whose GPUs are joined by NVLink bridges, e.g. "
            "pcie_8gpu_2socket_h200_nvl, or no nvlink_bridge_gpus)");
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  ClusterSpec bad = h200_nvl(3);
  EXPECT_THROW(Cluster(bad, net), std::invalid_argument);
}

}  // namespace
}  // namespace traincast::models
