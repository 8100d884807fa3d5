// A missing GPU drains its node (cluster.overrides missing: true, issue 20): the cluster keeps the
// other nodes at their places on the fabric, names them as the scenario numbers them, and refuses
// what cannot be drained.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/hardware/cluster.h"
#include "models/hardware/element_overrides.h"

namespace traincast::models {
namespace {

/// node_template dgx_h100 (8 GPUs, 8 NICs), fat tree of 2 nodes per leaf, d-mod-k routing.
ClusterSpec dgx_h100_fat_tree(int nodes) {
  ClusterSpec s;
  s.node_template = "dgx_h100";
  s.num_nodes = nodes;
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.nodes_per_leaf = 2;
  s.fabric.routing = FabricRouting::d_mod_k;
  return s;
}

ElementOverride missing(const std::string& select) {
  ElementOverride o;
  o.select = select;
  o.missing = true;
  return o;
}

std::string error_of(const ClusterSpec& s) {
  try {
    const Cluster c(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

/// The fabric (switch-to-switch) links the route from node a's GPU 0 to node b's GPU 0 crosses.
int spine_hops(const Cluster& c, int a, int b) {
  int hops = 0;
  for (sim::ResourceId r : c.route(a * c.gpus_per_node(), b * c.gpus_per_node()))
    hops += c.link_kind(r) == LinkKind::fabric ? 1 : 0;
  return hops;
}

TEST(DrainedNodes, AMissingGpuDrainsItsNodeAndTheOthersKeepTheirPlaces) {
  ClusterSpec s = dgx_h100_fat_tree(4);
  s.overrides.push_back(missing("node1/gpu5"));
  const Cluster c(s);
  EXPECT_EQ(c.num_nodes(), 3);
  EXPECT_EQ(c.num_gpus(), 24);
  EXPECT_EQ(c.fabric_slots(), 4);
  ASSERT_EQ(c.drained_nodes().size(), 1u);
  EXPECT_EQ(c.drained_nodes()[0].slot, 1);
  EXPECT_EQ(c.drained_nodes()[0].gpu, "node1/gpu5");
  EXPECT_EQ(c.fabric_slot(0), 0);
  EXPECT_EQ(c.fabric_slot(1), 2);
  EXPECT_EQ(c.fabric_slot(2), 3);
  EXPECT_EQ(c.node_at_slot(1), -1);
  EXPECT_EQ(c.node_at_slot(3), 2);
  // Resources and selectors keep the scenario's node numbers.
  EXPECT_EQ(c.resource_name(c.route(8, 9).front()), "node2.gpu0.nvl_up");
  EXPECT_EQ(gpu_selector_name(c, 8), "node2/gpu0");
  EXPECT_EQ(resolve_selector(c, "node3/gpu1").gpus, std::vector<int>{17});
  EXPECT_EQ(resolve_selector(c, "node0-2/gpu0").gpus, (std::vector<int>{0, 8}));  // node1 is out
  EXPECT_EQ(drained_nodes_of(s), (std::vector<std::pair<int, int>>{{1, 0}}));
  // Two missing GPUs of one node drain it once; the description names it.
  s.overrides.push_back(missing("node1/gpu2"));
  EXPECT_EQ(Cluster(s).num_nodes(), 3);
  EXPECT_NE(Cluster(s).describe().find("node1 drained: its GPU node1/gpu5 is missing"), std::string::npos);
  EXPECT_NE(Cluster(s).describe().find("3 x dgx_h100 (NVIDIA DGX H100 User Guide (2023), hardware overview) in "
                                       "service, of the scenario's 4\n"),
            std::string::npos)
      << Cluster(s).describe();
}

TEST(DrainedNodes, TheDotDrawingMarksAFailedNicInsteadOfItsFullBandwidth) {
  ClusterSpec s = dgx_h100_fat_tree(2);
  ElementOverride nic;
  nic.select = "node0/nic3";
  nic.failed = true;
  s.overrides.push_back(nic);
  const std::string dot = Cluster(s).to_dot();
  EXPECT_NE(dot.find("\"leaf0\" -> \"node0.nic3\" [label=\"failed NIC\", style=dashed, color=red];"), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("\"leaf0\" -> \"node0.nic2\" [label=\"50 GB/s NIC\"];"), std::string::npos) << dot;
}

TEST(DrainedNodes, TheDescriptionListsEveryOverrideAndDoesNotCallTheNodesTheSame) {
  ClusterSpec s = dgx_h100_fat_tree(4);
  EXPECT_NE(Cluster(s).describe().find("every node is the same"), std::string::npos);
  s.overrides.push_back(missing("node1/gpu5"));
  ElementOverride nic;
  nic.select = "node2/nic3";
  nic.failed = true;
  s.overrides.push_back(nic);
  ElementOverride slow;
  slow.select = "node0/gpu3";
  slow.clock_factor = 0.9;
  s.overrides.push_back(slow);
  const std::string d = Cluster(s).describe();
  EXPECT_EQ(d.find("every node is the same"), std::string::npos) << d;
  EXPECT_NE(d.find("Overrides (cluster.overrides, in order):\n  [0] node1/gpu5: missing (the node is drained)\n"
                   "  [1] node2/nic3: failed (routes avoid it)\n  [2] node0/gpu3: SM clock x 0.9\n"),
            std::string::npos)
      << d;
}

TEST(DrainedNodes, ADrainedNodeInTheMiddleChangesWhatCrossesTheSpine) {
  // Hand-worked: 4 slots on leaves {0, 1} and {2, 3}. Draining slot 1 leaves the job nodes 0, 1, 2
  // at slots 0, 2, 3: job nodes 1 and 2 share leaf 1 (no spine), 0 and 1 cross it (leaf0 up,
  // spine down). Three nodes without a drain sit at slots 0, 1, 2: there 0 and 1 share leaf 0 and
  // 1 and 2 cross. Same job size, the opposite pair on the spine.
  ClusterSpec drained = dgx_h100_fat_tree(4);
  drained.overrides.push_back(missing("node1/gpu0"));
  const Cluster hole(drained);
  const Cluster packed(dgx_h100_fat_tree(3));
  ASSERT_EQ(hole.num_gpus(), packed.num_gpus());
  EXPECT_EQ(spine_hops(hole, 0, 1), 2);
  EXPECT_EQ(spine_hops(hole, 1, 2), 0);
  EXPECT_EQ(spine_hops(packed, 0, 1), 0);
  EXPECT_EQ(spine_hops(packed, 1, 2), 2);
  // The drained node's switch ports stay: two leaves, the spines sized for 4 nodes.
  int up_links = 0;
  for (const ClusterEdge& e : hole.edges()) up_links += e.from == "leaf1" && e.kind == LinkKind::fabric ? 1 : 0;
  int packed_up = 0;
  for (const ClusterEdge& e : packed.edges()) packed_up += e.from == "leaf1" && e.kind == LinkKind::fabric ? 1 : 0;
  EXPECT_EQ(up_links, packed_up);
  EXPECT_GT(up_links, 0);
}

TEST(DrainedNodes, NodeGroupsLoseTheirDrainedNodes) {
  ClusterSpec s = dgx_h100_fat_tree(4);
  s.node_groups = {{"dgx_a100", 2, ""}, {"dgx_h100", 2, ""}};
  s.node_template = "dgx_a100";
  s.nic = "IB-HDR-200";
  s.overrides.push_back(missing("node0/gpu0"));
  const Cluster c(s);
  ASSERT_EQ(c.node_groups().size(), 2u);
  EXPECT_EQ(c.node_groups()[0].num_nodes, 1);
  EXPECT_EQ(c.node_groups()[1].first_node, 1);
  EXPECT_EQ(c.node_groups()[1].num_nodes, 2);
  EXPECT_EQ(c.gpu_spec(8).name, "H100-SXM5-80GB");  // job node 1 = slot 2, the second group's
}

TEST(DrainedNodes, WhatCannotBeDrainedIsRefusedNamingTheOverride) {
  ClusterSpec s = dgx_h100_fat_tree(4);
  s.overrides.push_back(missing("node1"));
  EXPECT_EQ(error_of(s),
            "cluster.overrides[0].missing: \"node1\" is not one GPU (expected node<N>/gpu<K>: a node is drained for "
            "each missing GPU it has)");
  s.overrides = {missing("node1/nic0")};
  EXPECT_NE(error_of(s).find("is not one GPU"), std::string::npos);
  s.overrides = {missing("node1/gpu9")};
  EXPECT_EQ(error_of(s), "cluster.overrides[0].select: no gpu9 on node1 (it has gpu0-7)");
  s.overrides = {missing("node1/gpu0")};
  s.overrides[0].missing = false;
  EXPECT_EQ(error_of(s).rfind("cluster.overrides[0].missing: false (expected missing: true", 0), 0u);
  s.overrides = {missing("node1/gpu0")};
  s.overrides[0].clock_factor = 0.5;
  EXPECT_EQ(error_of(s).rfind("cluster.overrides[0].missing: set with another field", 0), 0u);
  // Another override on a drained node's GPUs or NICs names the drain.
  s.overrides = {missing("node1/gpu0"), {"node1/nic0", 0.0, 0.5}};
  EXPECT_EQ(error_of(s),
            "cluster.overrides[1].select: node1 is drained (its GPU node1/gpu0 is missing, cluster.overrides[0]), so "
            "no job runs on it (expected a node in service)");
  ClusterSpec one = dgx_h100_fat_tree(1);
  one.overrides = {missing("node0/gpu3")};
  EXPECT_EQ(error_of(one),
            "cluster.overrides[0].missing: every node is drained (expected at least one node with all its GPUs)");
  ClusterSpec torus = dgx_h100_fat_tree(4);
  torus.fabric.kind = FabricKind::torus;
  torus.overrides = {missing("node1/gpu0")};
  EXPECT_EQ(error_of(torus).rfind("cluster.overrides[0].missing: a torus", 0), 0u);
}

}  // namespace
}  // namespace traincast::models
