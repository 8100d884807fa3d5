// Per-element overrides (models/hardware/element_overrides.h): the selector grammar, its errors,
// and what Cluster does with the factors.
#include "models/hardware/element_overrides.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
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

// The scenario check resolves GPU selectors on Cluster::sizes_only (no network built): the same
// GPUs and the same refusals as on the built cluster, for every selector that reads no resource.
TEST(ElementOverrides, GpuSelectorsResolveAlikeWithoutTheNetwork) {
  const Cluster full(four_dgx_h100());
  const std::unique_ptr<Cluster> sizes = Cluster::sizes_only(four_dgx_h100());
  EXPECT_EQ(sizes->num_resources(), 0u);
  for (const char* select : {"node2/gpu3", "node1", "node1-3", "node0-2/gpu7", "node4/gpu0", "node1/gpu8", "node3-1",
                             "node01/gpu1", "node1/foo"}) {
    ASSERT_TRUE(selector_reads_no_resource(select)) << select;
    EXPECT_EQ(error_of(*sizes, select), error_of(full, select)) << select;
    if (error_of(full, select).empty()) {
      EXPECT_EQ(resolve_selector(*sizes, select).gpus, resolve_selector(full, select).gpus) << select;
    }
  }
  for (const char* select : {"node3/nic1", "node0.gpu3.nvl_up", "leaf0->spine1", "node[0-3]", "gpu3", ""})
    EXPECT_FALSE(selector_reads_no_resource(select)) << select;
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

/// Every route between GPUs of different nodes, on every rail, crosses no failed resource.
void expect_no_route_crosses_failed(const Cluster& c) {
  std::vector<char> failed(c.num_resources(), 0);
  for (const sim::ResourceId r : c.failed_resources()) failed[r] = 1;
  for (int a = 0; a < c.num_gpus(); ++a)
    for (int b = 0; b < c.num_gpus(); ++b) {
      if (a == b || c.node_of(a) == c.node_of(b)) continue;
      for (int rail = 0; rail < c.nics_per_node(); ++rail)
        for (const sim::ResourceId r : c.route(a, b, rail))
          ASSERT_EQ(failed[r], 0) << a << "->" << b << " rail " << rail << " crosses " << c.resource_name(r);
    }
}

std::string cluster_error(const ClusterSpec& s) {
  try {
    const Cluster c(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ElementOverrides, FailedNicItsRailTakesTheNextNicUpOnTheSameSocket) {
  ClusterSpec s = four_dgx_h100();
  s.overrides = {{"node1/nic1", 0.0, 0.0, true}, {"node1.nic3.rx", 0.0, 0.0, true}};  // one direction: the NIC
  const Cluster c(s);
  EXPECT_FALSE(c.nic_up(1, 1));
  EXPECT_FALSE(c.nic_up(1, 3));
  EXPECT_TRUE(c.nic_up(0, 1));
  EXPECT_EQ(c.failed_nics(1), 2);
  EXPECT_EQ(c.failed_resources().size(), 4u);  // tx and rx of both
  // DGX H100: NICs 0-3 on socket 0 (catalog.h), so nic1 -> nic2, nic3 -> nic0 (wrapping on its socket).
  EXPECT_EQ(c.socket_of_nic(3), c.socket_of_nic(0));
  EXPECT_EQ(c.serving_nic(1, 1), 2);
  EXPECT_EQ(c.serving_nic(1, 3), 0);
  EXPECT_EQ(c.serving_nic(0, 1), 1);
  // node0/gpu1 -> node1/gpu1 on rail 1: leaves through node0's nic1, enters through node1's nic2.
  std::vector<std::string> names;
  for (const sim::ResourceId r : c.route(1, 9, 1)) names.push_back(c.resource_name(r));
  EXPECT_NE(std::find(names.begin(), names.end(), "node0.nic1.tx"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "node1.nic2.rx"), names.end());
  expect_no_route_crosses_failed(c);
}

TEST(ElementOverrides, FailedUpLinkCarriesNoRouteAndOtherFlowsKeepTheirs) {
  for (const FabricRouting routing : {FabricRouting::d_mod_k, FabricRouting::ecmp_hash}) {
    ClusterSpec s = four_dgx_h100();
    s.num_nodes = 8;
    s.fabric.nodes_per_leaf = 2;  // 4 leaves
    s.fabric.routing = routing;
    const Cluster healthy(s);
    s.overrides = {{"spine1->leaf2", 0.0, 0.0, true}};  // the cable leaf2 <-> spine1
    const Cluster c(s);
    ASSERT_TRUE(c.has_failed_up_links());
    ASSERT_EQ(c.failed_resources().size(), 2u);
    expect_no_route_crosses_failed(c);
    std::vector<char> failed(c.num_resources(), 0);
    for (const sim::ResourceId r : c.failed_resources()) failed[r] = 1;
    int moved = 0, kept = 0;
    for (int a = 0; a < c.num_gpus(); a += 3)
      for (int b = 0; b < c.num_gpus(); ++b) {
        if (c.node_of(a) == c.node_of(b)) continue;
        const auto before = healthy.route(a, b);
        const auto after = c.route(a, b);
        const bool hit = std::any_of(before.begin(), before.end(), [&](sim::ResourceId r) { return failed[r] != 0; });
        if (hit) {
          ++moved;
        } else {
          ++kept;
          EXPECT_TRUE(std::equal(before.begin(), before.end(), after.begin(), after.end())) << a << "->" << b;
        }
      }
    EXPECT_GT(moved, 0);
    EXPECT_GT(kept, 0);
  }
}

TEST(ElementOverrides, FailuresRoutesCannotAvoidAreRefusedNamingTheElement) {
  ClusterSpec s = four_dgx_h100();
  s.overrides = {{"node0.gpu3.nvl_up", 0.0, 0.0, true}};
  EXPECT_EQ(cluster_error(s).rfind("cluster.overrides[0].failed: \"node0.gpu3.nvl_up\" is an NVLink link, which routes "
                                   "cannot avoid here (expected a compute NIC",
                                   0),
            0u)
      << cluster_error(s);
  s.overrides = {{"node2/gpu3", 0.0, 0.0, true}};
  EXPECT_EQ(cluster_error(s),
            "cluster.overrides[0].failed: \"node2/gpu3\" names GPUs (expected a NIC or a leaf up-link)");
  s.overrides = {{"node2/nic3", 0.0, 0.5, true}};
  EXPECT_EQ(cluster_error(s),
            "cluster.overrides[0].failed: \"node2/nic3\" with a factor (expected failed or a factor, not both)");
  s.overrides.clear();
  for (int k = 0; k < 8; ++k) s.overrides.push_back({"node2/nic" + std::to_string(k), 0.0, 0.0, true});
  EXPECT_EQ(cluster_error(s),
            "cluster.overrides[7].failed: every compute NIC of node2 is failed, so node2 reaches no "
            "other node (expected at least one of nic0-7 up)");
  ClusterSpec adaptive = four_dgx_h100();
  adaptive.fabric.routing = FabricRouting::adaptive;
  adaptive.overrides = {{"leaf0->spines", 0.0, 0.0, true}};
  EXPECT_NE(cluster_error(adaptive).find("the pooled up-links of a leaf under adaptive routing"), std::string::npos)
      << cluster_error(adaptive);
}

TEST(ElementOverrides, PowerCapsAreRecordedPerGpuAndRefusedAboveTheTdp) {
  ClusterSpec s = four_dgx_h100();
  s.overrides = {{"node2/gpu3", 0.0, 0.0, false, 350.0}};
  const Cluster c(s);
  EXPECT_EQ(c.power_cap_w(19), 350.0);
  EXPECT_EQ(c.power_cap_w(18), 0.0);
  EXPECT_EQ(c.slowed_gpus(), std::vector<int>{19});
  s.overrides = {{"node2/gpu3", 0.0, 0.0, false, 800.0}};
  EXPECT_EQ(cluster_error(s).rfind("cluster.overrides[0].power_cap_w: got 800.000000 W (expected 0 < p <= 700", 0), 0u)
      << cluster_error(s);
  s.overrides = {{"node2/nic3", 0.0, 0.0, false, 350.0}};
  EXPECT_EQ(cluster_error(s), "cluster.overrides[0].power_cap_w: \"node2/nic3\" names a link or NIC (expected GPUs)");
}

TEST(ElementOverrides, FailedNicOnARailOnlyFabricKeepsBothEndsOnOneRail) {
  ClusterSpec s = four_dgx_h100();
  s.num_nodes = 2;
  s.fabric.kind = FabricKind::rail_optimized;
  s.fabric.nodes_per_leaf = 2;  // one leaf per rail, no spine
  s.overrides = {{"node0/nic3", 0.0, 0.0, true}};
  const Cluster c(s);
  expect_no_route_crosses_failed(c);
  std::vector<std::string> names;  // node0/gpu3 -> node1/gpu3 on rail 3: both ends on rail 0 (nic0)
  for (const sim::ResourceId r : c.route(3, 11, 3)) names.push_back(c.resource_name(r));
  EXPECT_NE(std::find(names.begin(), names.end(), "node0.nic0.tx"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "node1.nic0.rx"), names.end());
}

}  // namespace
}  // namespace traincast::models
