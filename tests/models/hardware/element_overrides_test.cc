// Per-element overrides (models/hardware/element_overrides.h): the selector grammar, its errors,
// and what Cluster does with the factors.
#include "models/hardware/element_overrides.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/hardware/cluster.h"

namespace traincast::models {
namespace {

ClusterSpec four_dgx_h100() {
  ClusterSpec s;
  s.node_template = "dgx_h100";  // 8 GPUs, 8 compute NICs per node
  s.num_nodes = 4;
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.nodes_per_leaf = 2;
  return s;
}

std::string error_of(const Cluster& c, const std::string& select) {
  try {
    resolve_selector(c, select);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ElementOverrides, SelectorsNameGpusNodesRangesNicsAndLinks) {
  const Cluster c(four_dgx_h100());
  EXPECT_EQ(resolve_selector(c, "node2/gpu3").gpus, std::vector<int>{19});
  EXPECT_EQ(resolve_selector(c, "node1").gpus, (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(resolve_selector(c, "node1-3").gpus.size(), 24u);
  EXPECT_EQ(resolve_selector(c, "node0-2/gpu7").gpus, (std::vector<int>{7, 15, 23}));
  const ResolvedSelector nic = resolve_selector(c, "node3/nic1");
  ASSERT_EQ(nic.resources.size(), 2u);
  EXPECT_EQ(c.resource_name(nic.resources[0]), "node3.nic1.tx");
  EXPECT_EQ(c.resource_name(nic.resources[1]), "node3.nic1.rx");
  const ResolvedSelector link = resolve_selector(c, "node0.gpu3.nvl_up");
  ASSERT_EQ(link.resources.size(), 1u);
  EXPECT_EQ(c.resource_name(link.resources[0]), "node0.gpu3.nvl_up");
  EXPECT_EQ(gpu_selector_name(c, 19), "node2/gpu3");
}

TEST(ElementOverrides, BadSelectorsSayWhatExists) {
  const Cluster c(four_dgx_h100());
  EXPECT_EQ(error_of(c, "node4/gpu0"), "no node4 (the cluster has node0-3)");
  EXPECT_EQ(error_of(c, "node1/gpu8"), "no gpu8 on node1 (it has gpu0-7)");
  EXPECT_EQ(error_of(c, "node1/nic9"), "no nic9 on node1 (it has nic0-7)");
  EXPECT_EQ(error_of(c, "node3-1"), "bad node range in \"node3-1\" (expected node<A>-<B> with A <= B, e.g. node0-15)");
  EXPECT_EQ(error_of(c, "node[0-3]").rfind("write a node range as node<A>-<B>, e.g. node0-15 (got \"node[0-3]\"", 0),
            0u);
  EXPECT_EQ(error_of(c, "node01/gpu1").rfind("bad node number in \"node01/gpu1\"", 0), 0u);
  const std::string link = error_of(c, "node0.gpu3.nvl");
  EXPECT_EQ(link.rfind("no GPU, NIC or link named \"node0.gpu3.nvl\" (expected node<N>/gpu<K>", 0), 0u) << link;
  EXPECT_NE(link.find("links such as: node0.gpu0.nvl_up, node0.gpu0.nvl_down"), std::string::npos) << link;
  EXPECT_EQ(error_of(c, "node1/gpu2x").rfind("cannot read \"node1/gpu2x\"", 0), 0u);
}

TEST(ElementOverrides, ClusterScalesLinksAndRecordsClocksLastOneWins) {
  ClusterSpec s = four_dgx_h100();
  s.overrides = {{"node0-3", 0.95, 0.0}, {"node2/gpu3", 0.9, 0.0}, {"node1/nic0", 0.0, 0.5}};
  const Cluster base(four_dgx_h100());
  const Cluster c(s);
  EXPECT_EQ(c.clock_factor(19), 0.9);
  EXPECT_EQ(c.clock_factor(0), 0.95);
  EXPECT_EQ(c.slowed_gpus().size(), 32u);
  const sim::ResourceId tx = resolve_selector(c, "node1/nic0").resources[0];
  EXPECT_EQ(c.capacity(tx), 0.5 * base.capacity(tx));
  ASSERT_EQ(c.scaled_resources().size(), 2u);
  EXPECT_EQ(c.scaled_resources()[0].second, 0.5);
  EXPECT_EQ(base.clock_factor(19), 1.0);
  EXPECT_TRUE(base.slowed_gpus().empty());
}

TEST(ElementOverrides, ClusterRefusesWrongOrImpossibleFactors) {
  ClusterSpec s = four_dgx_h100();
  s.overrides = {{"node2/gpu3", 1.1, 0.0}};
  EXPECT_THROW(Cluster{s}, std::invalid_argument);
  s.overrides = {{"node2/gpu3", 0.0, 0.5}};  // a GPU takes clock_factor
  try {
    Cluster c(s);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "cluster.overrides[0].bandwidth_factor: \"node2/gpu3\" names GPUs (expected clock_factor only)");
  }
  s.overrides = {{"node9", 0.9, 0.0}};
  try {
    Cluster c(s);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "cluster.overrides[0].select: no node9 (the cluster has node0-3)");
  }
}

}  // namespace
}  // namespace traincast::models
