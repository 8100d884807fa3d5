// Cluster: resources per template, route bandwidths, rails/PXN, oversubscription, ECMP.

#include "models/hardware/cluster.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

ClusterSpec make_spec(const std::string& tmpl, int nodes) {
  ClusterSpec s;
  s.node_template = tmpl;
  s.num_nodes = nodes;
  return s;
}

double path_bandwidth(const sim::FlowNetwork& net, std::span<const sim::ResourceId> path) {
  double bw = 1e300;
  for (auto r : path) bw = std::min(bw, net.capacity(r));
  return bw;
}

std::int64_t path_latency_ns(const sim::FlowNetwork& net, std::span<const sim::ResourceId> path) {
  std::int64_t ns = 0;
  for (auto r : path) ns += net.latency(r).ns();
  return ns;
}

std::vector<std::string> names(const sim::FlowNetwork& net, std::span<const sim::ResourceId> path) {
  std::vector<std::string> out;
  for (auto r : path) out.push_back(net.resource_name(r));
  return out;
}

struct Fixture {
  explicit Fixture(const ClusterSpec& spec) : net(sim), cluster(spec, net) {}
  sim::Simulator sim;
  sim::FlowNetwork net;
  Cluster cluster;
};

TEST(Cluster, DgxA100SingleNodeCounts) {
  Fixture f(make_spec("dgx_a100", 1));
  EXPECT_EQ(f.cluster.num_gpus(), 8);
  EXPECT_EQ(f.cluster.num_nodes(), 1);
  EXPECT_EQ(f.cluster.gpus_per_node(), 8);
  EXPECT_EQ(f.cluster.gpu_spec(0).name, "A100-SXM4-80GB");
  // 8 GPUs x (nvl_up, nvl_down, pcie_up, pcie_down) + 8 NICs x (pcie_up, pcie_down); a single
  // node has no NIC cables.
  EXPECT_EQ(f.net.num_resources(), 8u * 4 + 8u * 2);
  EXPECT_EQ(f.cluster.num_spines(), 0);
}

TEST(Cluster, TwoDgxH100Counts) {
  Fixture f(make_spec("dgx_h100", 2));
  EXPECT_EQ(f.cluster.num_gpus(), 16);
  EXPECT_EQ(f.cluster.node_of(9), 1);
  EXPECT_EQ(f.cluster.local_rank(9), 1);
  // Per node 8 x 4 GPU resources + 8 x 4 NIC resources (pcie up/down, tx, rx); both nodes
  // under the same rail leaves: no spine.
  EXPECT_EQ(f.net.num_resources(), 2u * (32 + 32));
  EXPECT_EQ(f.cluster.num_leaves(), 8);
  EXPECT_EQ(f.cluster.num_spines(), 0);
}

TEST(Cluster, IntraNodePathIsNvlinkBound) {
  Fixture a(make_spec("dgx_a100", 1));
  // NVLink3: 12 x 25 GB/s per direction.
  EXPECT_DOUBLE_EQ(path_bandwidth(a.net, a.cluster.route(0, 5)), 300e9);
  EXPECT_EQ(names(a.net, a.cluster.route(0, 5)),
            (std::vector<std::string>{"node0.gpu0.nvl_up", "node0.gpu5.nvl_down"}));
  Fixture h(make_spec("dgx_h100", 1));
  EXPECT_DOUBLE_EQ(path_bandwidth(h.net, h.cluster.route(7, 2)), 450e9);
  EXPECT_EQ(a.cluster.link_kind(a.cluster.route(0, 5)[0]), LinkKind::nvlink);
}

TEST(Cluster, InterNodePathIsNicBoundAndRailAligned) {
  Fixture f(make_spec("dgx_h100", 2));
  auto p = f.cluster.route(3, 8 + 3);
  EXPECT_DOUBLE_EQ(path_bandwidth(f.net, p), 50e9);  // NDR 400 Gb/s
  EXPECT_EQ(names(f.net, p), (std::vector<std::string>{"node0.gpu3.pcie_up", "node0.nic3.pcie_down", "node0.nic3.tx",
                                                       "node1.nic3.rx", "node1.nic3.pcie_up", "node1.gpu3.pcie_down"}));
  // Adapter latency 600 ns (ConnectX-7) + one leaf switch hop of 130 ns.
  EXPECT_EQ(path_latency_ns(f.net, p), 600 + 130);
  EXPECT_EQ(f.cluster.link_kind(p[2]), LinkKind::nic);

  Fixture a(make_spec("dgx_a100", 2));
  EXPECT_DOUBLE_EQ(path_bandwidth(a.net, a.cluster.route(0, 8)), 25e9);  // HDR 200 Gb/s
}

TEST(Cluster, CrossRailUsesPxn) {
  Fixture f(make_spec("dgx_h100", 2));
  // GPU 2 of node 0 to GPU 5 of node 1: NVLink to local GPU 5, then rail 5.
  auto p = f.cluster.route(2, 8 + 5);
  EXPECT_EQ(names(f.net, p), (std::vector<std::string>{"node0.gpu2.nvl_up", "node0.gpu5.nvl_down", "node0.gpu5.pcie_up",
                                                       "node0.nic5.pcie_down", "node0.nic5.tx", "node1.nic5.rx",
                                                       "node1.nic5.pcie_up", "node1.gpu5.pcie_down"}));
}

TEST(Cluster, OversubscriptionDividesUplinks) {
  ClusterSpec s = make_spec("dgx_h100", 64);
  s.fabric.nodes_per_leaf = 32;
  s.fabric.oversubscription = 2.0;
  Fixture f(s);
  // 2 leaf groups x 8 rails = 16 leaves; 32 down ports of 50 GB/s / 2 = 800 GB/s up per leaf,
  // spread over 16 spines of 50 GB/s each.
  EXPECT_EQ(f.cluster.num_leaves(), 16);
  EXPECT_EQ(f.cluster.num_spines(), 16);
  auto p = f.cluster.route(0, 40 * 8);  // node 0 -> node 40 (other group), rail 0
  ASSERT_EQ(p.size(), 8u);
  EXPECT_EQ(f.cluster.link_kind(p[3]), LinkKind::fabric);
  EXPECT_DOUBLE_EQ(f.net.capacity(p[3]) * f.cluster.num_spines(), 32 * 50e9 / 2.0);
  // Three switch hops (leaf, spine, leaf) + adapters.
  EXPECT_EQ(path_latency_ns(f.net, p), 600 + 3 * 130);

  ClusterSpec nb = make_spec("dgx_h100", 64);
  Fixture g(nb);  // defaults: 32 nodes per leaf, non-blocking
  auto q = g.cluster.route(0, 40 * 8);
  EXPECT_DOUBLE_EQ(g.net.capacity(q[3]) * g.cluster.num_spines(), 32 * 50e9);
}

TEST(Cluster, EcmpIsDeterministicAndSpreads) {
  ClusterSpec s = make_spec("dgx_a100", 8);
  s.fabric.nodes_per_leaf = 2;
  Fixture a(s), b(s);
  std::set<std::string> spines;
  for (int src = 0; src < 8; ++src) {
    for (int dst = 48; dst < 64; ++dst) {
      auto pa = a.cluster.route(src, dst);
      auto pb = b.cluster.route(src, dst);
      ASSERT_EQ(names(a.net, pa), names(b.net, pb));
      for (auto r : pa) {
        if (a.cluster.link_kind(r) == LinkKind::fabric) spines.insert(a.net.resource_name(r));
      }
    }
  }
  EXPECT_GT(spines.size(), 4u);
  // Cached: the same span twice.
  EXPECT_EQ(a.cluster.route(1, 50).data(), a.cluster.route(1, 50).data());
}

TEST(Cluster, FatTreeSharesLeafAcrossRails) {
  ClusterSpec s = make_spec("dgx_a100", 4);
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.nodes_per_leaf = 2;
  s.fabric.oversubscription = 4.0;
  Fixture f(s);
  EXPECT_EQ(f.cluster.num_leaves(), 2);
  // 2 nodes x 8 NICs = 16 down ports / 4 = 4 uplinks.
  EXPECT_EQ(f.cluster.num_spines(), 4);
  EXPECT_EQ(f.cluster.route(0, 8).size(), 6u);   // same leaf: no spine
  EXPECT_EQ(f.cluster.route(0, 16).size(), 8u);  // other leaf: via a spine
  EXPECT_DOUBLE_EQ(f.net.capacity(f.cluster.route(0, 16)[3]), 25e9);
}

TEST(Cluster, Mi300xMesh) {
  Fixture f(make_spec("mi300x_platform", 1));
  auto p = f.cluster.route(0, 1);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_DOUBLE_EQ(f.net.capacity(p[0]), 64e9);
  EXPECT_DOUBLE_EQ(f.cluster.scale_up_bytes_per_s(), 7 * 64e9);
}

TEST(Cluster, RouteSpansStayValid) {
  Fixture f(make_spec("dgx_h100", 4));
  auto first = f.cluster.route(0, 9);
  const std::vector<std::string> before = names(f.net, first);
  for (int s = 0; s < 32; ++s) {
    for (int d = 0; d < 32; ++d) {
      if (s != d) f.cluster.route(s, d);
    }
  }
  EXPECT_EQ(names(f.net, first), before);
}

TEST(Cluster, Errors) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  ClusterSpec s = make_spec("dgx_h100", 2);
  s.fabric.kind = FabricKind::none;
  try {
    Cluster c(s, net);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cluster.fabric.kind: none allows a single node (got num_nodes = 2)");
  }
  try {
    Cluster c(make_spec("dgx_h100", 0), net);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cluster.num_nodes: must be > 0 (got 0)");
  }
  ClusterSpec o = make_spec("dgx_h100", 2);
  o.fabric.oversubscription = 0.5;
  EXPECT_THROW(Cluster(o, net), std::invalid_argument);
  EXPECT_THROW(Cluster(make_spec("dgx_nope", 1), net), std::invalid_argument);

  Fixture f(make_spec("dgx_a100", 1));
  EXPECT_THROW(f.cluster.route(0, 8), std::out_of_range);
  EXPECT_THROW(f.cluster.route(-1, 2), std::out_of_range);
  EXPECT_THROW(f.cluster.route(3, 3), std::out_of_range);
}

TEST(Cluster, GpuOverride) {
  ClusterSpec s = make_spec("dgx_h100", 1);
  s.gpu = "H800-SXM5-80GB";
  Fixture f(s);
  EXPECT_EQ(f.cluster.gpu_spec(0).name, "H800-SXM5-80GB");
  EXPECT_DOUBLE_EQ(path_bandwidth(f.net, f.cluster.route(0, 1)), 200e9);  // 8 x 25 GB/s
}

TEST(Cluster, DescribeNamesDevicesAndBandwidths) {
  Fixture f(make_spec("dgx_a100", 2));
  const std::string d = f.cluster.describe();
  EXPECT_NE(d.find("2 x dgx_a100"), std::string::npos) << d;
  EXPECT_NE(d.find("NVLink3 12 links x 25 GB/s = 300 GB/s per direction"), std::string::npos) << d;
  EXPECT_NE(d.find("8 x IB-HDR-200 at 25 GB/s"), std::string::npos) << d;
  EXPECT_NE(d.find("PCIe gen4: 31.51 GB/s"), std::string::npos) << d;
  EXPECT_NE(d.find("rail_optimized"), std::string::npos) << d;
}

}  // namespace
}  // namespace traincast::models
