// NCCL searches its ring graph on each rank's own node and the ranks agree on the fewest channels
// (NcclTopoCache::ring_graph_across): a slowed or failed NIC shapes the graph wherever it sits in
// the group, not only on the group's first node, and a group of healthy nodes is not given the
// graph of a degraded one.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/models/collectives/collective_fixture.h"

namespace traincast::models {
namespace {

using test_support::Bench;
using test_support::call;
using test_support::iota;
using test_support::kGiB;

ClusterSpec cluster_of(int nodes, const std::vector<std::pair<std::string, double>>& slowed) {
  ClusterSpec s = Bench::make("dgx_h100", nodes);
  s.fabric.kind = FabricKind::rail_optimized;
  for (const auto& [select, factor] : slowed) {
    ElementOverride o;
    o.select = select;
    o.bandwidth_factor = factor;
    s.overrides.push_back(o);
  }
  return s;
}

double all_reduce_s(const ClusterSpec& spec, int first_gpu, int gpus, double bytes) {
  Bench b(spec);
  return b.run(call(CollectiveOp::all_reduce, iota(first_gpu, gpus), bytes));
}

// 2 x DGX H100, one NIC at 1 % of its line rate: the all-reduce takes the same time whichever
// node holds it (before: 6.18 ms with the NIC on node 0, 293 ms on node 1, whose NIC the first
// node's graph used at 1 %), and no less than on the healthy cluster.
TEST(NcclGraphPerNode, SlowedNicCountsAlikeOnEveryNode) {
  const double healthy = all_reduce_s(cluster_of(2, {}), 0, 16, kGiB);
  const double on_node0 = all_reduce_s(cluster_of(2, {{"node0/nic0", 0.01}}), 0, 16, kGiB);
  const double on_node1 = all_reduce_s(cluster_of(2, {{"node1/nic0", 0.01}}), 0, 16, kGiB);
  EXPECT_GE(on_node0, healthy);
  EXPECT_DOUBLE_EQ(on_node1, on_node0);
  // The graph routes around the slow NIC: the call is not bound by 1 GiB through 0.5 GB/s.
  EXPECT_LT(on_node1, 3 * healthy);
  // 4 nodes, the slow NIC on node 2: as on node 0.
  const double four_node0 = all_reduce_s(cluster_of(4, {{"node0/nic5", 0.01}}), 0, 32, kGiB);
  const double four_node2 = all_reduce_s(cluster_of(4, {{"node2/nic5", 0.01}}), 0, 32, kGiB);
  EXPECT_DOUBLE_EQ(four_node2, four_node0);
}

// Two nodes with slow NICs on different rails: both are avoided, and the call is no faster than
// with either alone (more slow NICs never make it faster).
TEST(NcclGraphPerNode, SlowNicsOnDifferentRailsAreBothAvoided) {
  const double healthy = all_reduce_s(cluster_of(2, {}), 0, 16, kGiB);
  const double one = all_reduce_s(cluster_of(2, {{"node0/nic0", 0.01}}), 0, 16, kGiB);
  const double other = all_reduce_s(cluster_of(2, {{"node1/nic3", 0.01}}), 0, 16, kGiB);
  const double both = all_reduce_s(cluster_of(2, {{"node0/nic0", 0.01}, {"node1/nic3", 0.01}}), 0, 16, kGiB);
  EXPECT_GE(both, one);
  EXPECT_GE(both, other);
  EXPECT_LT(both, 3 * healthy);
}

// A group on healthy nodes keeps the healthy graph after a group on a degraded node has run on the
// same engine (the graphs are cached per node class, not per local ranks only).
TEST(NcclGraphPerNode, HealthyGroupIsNotGivenADegradedNodesGraph) {
  const double healthy = all_reduce_s(cluster_of(4, {}), 16, 16, kGiB);
  Bench b(cluster_of(4, {{"node0/nic0", 0.01}}));
  const double degraded = b.run(call(CollectiveOp::all_reduce, iota(0, 16), kGiB));
  const double after = b.run(call(CollectiveOp::all_reduce, iota(16, 16), kGiB));
  EXPECT_GT(degraded, healthy);
  EXPECT_DOUBLE_EQ(after, healthy);
}

// Failed NICs one per node on different rails (4 x DGX H100 on a fat tree): no less than one
// failure, no more than four on one node. They cost as much as four on one node (3.08 ms at
// 256 MiB): each node's failed rail leaves through its next NIC up, which then carries two of the
// rings' channels, as on the node that lost four NICs. NCCL's nodes would each search their own
// seven NICs (one channel per NIC) and cost about one failure: a known gap of the model's one
// rail per channel on every node (docs/fabric.md).
TEST(NcclGraphPerNode, FailedNicsOnDifferentNodesCostBetweenOneAndAllOnOneNode) {
  auto failed = [](const std::vector<std::string>& selects) {
    ClusterSpec s = Bench::make("dgx_h100", 4);
    s.fabric.kind = FabricKind::fat_tree;
    for (const std::string& select : selects) {
      ElementOverride o;
      o.select = select;
      o.failed = true;
      s.overrides.push_back(o);
    }
    return s;
  };
  const double bytes = 256.0 * 1024 * 1024;
  const double healthy = all_reduce_s(failed({}), 0, 32, bytes);
  const double one = all_reduce_s(failed({"node0/nic0"}), 0, 32, bytes);
  const double scattered = all_reduce_s(failed({"node0/nic0", "node1/nic1", "node2/nic2", "node3/nic3"}), 0, 32, bytes);
  const double one_node = all_reduce_s(failed({"node0/nic0", "node0/nic1", "node0/nic2", "node0/nic3"}), 0, 32, bytes);
  EXPECT_GE(one, healthy);
  EXPECT_GE(scattered, one);
  EXPECT_LE(scattered, one_node);
}

}  // namespace
}  // namespace traincast::models
