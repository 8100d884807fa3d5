// Overrides naming one element with the same field (models/hardware/override_overlaps.h).
#include "models/hardware/override_overlaps.h"

#include <gtest/gtest.h>

#include <vector>

#include "models/hardware/cluster.h"

namespace traincast::models {
namespace {

using Outcome = OverrideOverlap::Outcome;

ClusterSpec four_dgx_h100(std::vector<ElementOverride> overrides = {}) {
  ClusterSpec s;
  s.node_template = "dgx_h100";  // 8 GPUs, 8 compute NICs per node
  s.num_nodes = 4;
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.nodes_per_leaf = 2;
  s.fabric.routing = FabricRouting::d_mod_k;  // leaf up-links one by one (a cable can fail)
  s.overrides = std::move(overrides);
  return s;
}

ElementOverride supply(const std::string& select, double c) {
  ElementOverride o;
  o.select = select;
  o.supply_c = c;
  return o;
}

ElementOverride failed(const std::string& select) {
  ElementOverride o;
  o.select = select;
  o.failed = true;
  return o;
}

TEST(OverrideOverlaps, DisjointOrDifferentFieldsAreNone) {
  const std::vector<ElementOverride> o = {{"node0-1", 0.9, 0.0},
                                          {"node2-3", 0.8, 0.0},
                                          {"node0/nic0", 0.0, 0.5},
                                          {"node0/nic1", 0.0, 0.5},
                                          supply("node0", 30.0)};
  const Cluster c(four_dgx_h100());
  EXPECT_TRUE(override_overlaps(c, o).empty());
}

TEST(OverrideOverlaps, OverlappingRangesCountTheirCommonElements) {
  const std::vector<ElementOverride> o = {{"node0-2", 0.9, 0.0}, {"node1-3/gpu4", 0.8, 0.0}};
  const Cluster c(four_dgx_h100());
  const std::vector<OverrideOverlap> p = override_overlaps(c, o);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].earlier, 0);
  EXPECT_EQ(p[0].later, 1);
  EXPECT_EQ(p[0].outcome, Outcome::later_acts);
  EXPECT_EQ(p[0].count, 2);  // node1/gpu4 and node2/gpu4
  EXPECT_EQ(p[0].first, "node1/gpu4");
  EXPECT_FALSE(p[0].earlier_acts_nowhere);
  EXPECT_FALSE(p[0].repeated);
}

TEST(OverrideOverlaps, SupplyTemperaturesOverlapByNode) {
  const std::vector<ElementOverride> o = {supply("node0-3", 30.0), supply("node2", 30.0)};
  const Cluster c(four_dgx_h100());
  const std::vector<OverrideOverlap> p = override_overlaps(c, o);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].outcome, Outcome::same_value);
  EXPECT_EQ(p[0].count, 1);
  EXPECT_EQ(p[0].first, "node2");
  EXPECT_FALSE(p[0].repeated);  // another selector
}

TEST(OverrideOverlaps, AFailedCableOverrulesAFactorOnEitherDirectionInEitherOrder) {
  const Cluster c(four_dgx_h100());
  std::vector<OverrideOverlap> p = override_overlaps(c, {failed("leaf0->spine1"), {"spine1->leaf0", 0.0, 0.5}});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].outcome, Outcome::failed_earlier);
  EXPECT_EQ(p[0].first, "spine1->leaf0");
  p = override_overlaps(c, {{"node1/nic2", 0.0, 0.5}, failed("node1.nic2.rx")});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].outcome, Outcome::failed_later);
  EXPECT_EQ(p[0].count, 2);  // a failed NIC port is down both ways
  EXPECT_TRUE(p[0].earlier_acts_nowhere);
  p = override_overlaps(c, {failed("node1/nic2"), failed("node1/nic2")});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].outcome, Outcome::same_value);
  EXPECT_TRUE(p[0].repeated);
}

}  // namespace
}  // namespace traincast::models
