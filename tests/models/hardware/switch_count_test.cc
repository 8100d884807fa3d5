// Physical switches of a fabric (models/hardware/switch_count.h), the count the cost buys and
// explain prints. Fresh-user findings (session 34): every NIC rail got its own leaf switch however
// few ports it used (two partitions of one GB200 NVL72 rack bought 36 leaves); explain printed the
// simulation's spines, not the cost's; 144 leaves were priced as a 2-tier tree of 64-port spines,
// which reach 64; a 3-tier tree's aggregation switches were left out.
#include "models/hardware/switch_count.h"

#include <gtest/gtest.h>

#include <string>

#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"

namespace traincast::models {
namespace {

FabricSpec fabric(FabricKind kind, int nodes_per_leaf, int tiers = 2, int leaves_per_pod = 16) {
  FabricSpec f;
  f.kind = kind;
  f.nodes_per_leaf = nodes_per_leaf;
  f.tiers = tiers;
  f.leaves_per_pod = leaves_per_pod;
  return f;
}

// A leaf group's rail leaves share a switch as ports permit: floor(64 / ports per rail) rails.
TEST(SwitchCount, RailsOfALeafGroupShareASwitch) {
  const FabricSpec rail = fabric(FabricKind::rail_optimized, 32);
  // gb200_nvl72/36 x 2 (36 NICs each): 36 rails of 2 ports, 32 per switch: 2 switches (was 36).
  SwitchCount s = count_switches(rail, 2, 36, 64);
  EXPECT_EQ(s.rail_leaves, 36);
  EXPECT_EQ(s.rails_per_leaf_switch, 32);
  EXPECT_EQ(s.leaf_switches, 2);
  EXPECT_EQ(s.total(), 2);
  EXPECT_EQ(s.tiers(), 1);
  EXPECT_EQ(s.leaf_up_links, 0);
  // gb200_nvl72/8 x 9: 8 rails of 9 ports, 7 per switch: 2 (was 8).
  EXPECT_EQ(count_switches(rail, 9, 8, 64).leaf_switches, 2);
  // gb200_nvl72/36 x 5: 36 rails of 5 ports, 12 per switch: 3 (was 36).
  EXPECT_EQ(count_switches(rail, 5, 36, 64).leaf_switches, 3);
  // A full rail leaf (32 down + 32 up) fills its switch: one rail each, as before.
  s = count_switches(rail, 64, 8, 64);
  EXPECT_EQ(s.rails_per_leaf_switch, 1);
  EXPECT_EQ(s.leaf_switches, 16);
  // A fat tree's leaf is already one switch.
  EXPECT_EQ(count_switches(fabric(FabricKind::fat_tree, 4), 8, 8, 64).leaf_switches, 2);
  // No switch fabric, or one node: nothing.
  EXPECT_EQ(count_switches(fabric(FabricKind::torus, 32), 8, 8, 64).total(), 0);
  EXPECT_EQ(count_switches(rail, 1, 8, 64).total(), 0);
}

// NVIDIA DGX SuperPOD reference architecture, DGX H100 (RA-11333-001), compute fabric of 4
// scalable units (127 nodes + UFM, 128 slots): 32 leaf and 16 spine QM9700 switches.
TEST(SwitchCount, TwoTiersMatchTheDgxSuperPod) {
  const SwitchCount s = count_switches(fabric(FabricKind::rail_optimized, 32), 128, 8, 64);
  EXPECT_EQ(s.leaf_switches, 32);
  EXPECT_EQ(s.spine_switches, 16);
  EXPECT_FALSE(s.third_tier_added);
  EXPECT_EQ(s.leaf_up_links, 32 * 32);
}

// Al-Fares et al. 2008: a k-ary fat tree has k pods of k/2 edge and k/2 aggregation switches and
// (k/2)^2 cores, 5k^2/4 switches for k^3/4 hosts (k = 4: 20 for 16; k = 64: 5,120 for 65,536).
TEST(SwitchCount, ThreeTiersAreAFatTree) {
  SwitchCount s = count_switches(fabric(FabricKind::fat_tree, 2, 3, 2), 16, 1, 4);
  EXPECT_EQ(s.leaf_switches, 8);
  EXPECT_EQ(s.aggregation_switches, 8);
  EXPECT_EQ(s.core_switches, 4);
  EXPECT_EQ(s.pods, 4);
  EXPECT_EQ(s.total(), 20);
  s = count_switches(fabric(FabricKind::fat_tree, 32, 3, 32), 65536, 1, 64);
  EXPECT_EQ(s.total(), 5 * 64 * 64 / 4);
  EXPECT_EQ(s.core_switches, 32 * 32);
  EXPECT_TRUE(s.refusal.empty());
  // scenarios/models/llama3_405b: 2,048 DGX H100 on a 3-tier fat tree, 4 per leaf (32 + 32
  // ports): 512 leaves, 16 pods of 32, 512 aggregation switches, 256 cores (was 512 + 32 cores).
  s = count_switches(fabric(FabricKind::fat_tree, 4, 3), 2048, 8, 64);
  EXPECT_EQ(s.leaf_switches, 512);
  EXPECT_EQ(s.aggregation_switches, 512);
  EXPECT_EQ(s.core_switches, 256);
  EXPECT_EQ(s.pods, 16);
  EXPECT_EQ(s.total(), 1280);  // a quarter of the k = 64 fat tree's 5,120: 16,384 of its 65,536 ports
  // One pod of at most k leaves: the aggregation switches are the top, no core.
  s = count_switches(fabric(FabricKind::fat_tree, 4, 3), 16, 8, 64);
  EXPECT_EQ(s.pods, 1);
  EXPECT_EQ(s.aggregation_switches, 4 * 32 / 64);
  EXPECT_EQ(s.core_switches, 0);
  // The simulation's pod of 16 rail-optimized groups has 128 leaf switches, over an aggregation
  // switch's 32 down ports: pods of 32 are bought (scenarios/operations/llama3_405b_16k_failures).
  s = count_switches(fabric(FabricKind::rail_optimized, 32, 3), 2048, 8, 64);
  EXPECT_EQ(s.pod_leaf_switches, 32);
  EXPECT_EQ(s.pods, 16);
  EXPECT_EQ(s.aggregation_switches, 512);
  EXPECT_EQ(s.core_switches, 256);
}

// Past k leaf switches a 2-tier tree cannot be built (a spine has a port for each): the count
// adds a third tier; past k pods of k/2 a fourth would be needed, which is refused.
TEST(SwitchCount, TwoTiersPastTheSpinesReachGetAThirdTier) {
  // scenarios/racks/llama31_405b_gb200_nvl72: 64 racks, 72 rails, 32 per leaf group: 144 rail
  // leaves of 32 + 32 ports on 64-port switches (was 144 leaves + 72 spines: 144-port spines).
  SwitchCount s = count_switches(fabric(FabricKind::rail_optimized, 32), 64, 72, 64);
  EXPECT_TRUE(s.third_tier_added);
  EXPECT_EQ(s.leaf_switches, 144);
  EXPECT_EQ(s.spine_switches, 0);
  EXPECT_EQ(s.pods, 5);  // 4 of 32 leaf switches and one of 16
  EXPECT_EQ(s.aggregation_switches, 144);
  EXPECT_EQ(s.core_switches, 72);
  EXPECT_EQ(s.core_links, 144 * 32);
  EXPECT_EQ(s.tiers(), 3);
  // On 144-port switches (IB-XDR-800's default) the same leaves fit 2 tiers.
  s = count_switches(fabric(FabricKind::rail_optimized, 32), 64, 72, 144);
  EXPECT_FALSE(s.third_tier_added);
  EXPECT_EQ(s.spine_switches, 32);
  // k = 8: 3 tiers reach 8 pods of 4 leaf switches, 32 leaves of 4 nodes: 128 nodes fit, 132 not.
  const FabricSpec small = fabric(FabricKind::fat_tree, 4);
  EXPECT_TRUE(count_switches(small, 128, 1, 8).refusal.empty());
  s = count_switches(small, 132, 1, 8);
  EXPECT_EQ(s.refused_field, "cluster.num_nodes");
  EXPECT_NE(s.refusal.find("(expected num_nodes <= 128, or a larger fabric.leaf_ports)"), std::string::npos)
      << s.refusal;
}

// explain prints the count the cost buys, and how the simulation differs.
TEST(SwitchCount, DescribePrintsTheSwitchesBought) {
  ClusterSpec spec;
  spec.node_template = "gb200_nvl72/36";
  spec.num_nodes = 2;
  spec.fabric.kind = FabricKind::rail_optimized;
  const Cluster two(spec);
  EXPECT_EQ(two.switch_count().leaf_switches, 2);
  const std::string d = two.describe();
  EXPECT_NE(d.find("Switches bought (the cost's count): 2 switches of 64 ports (fabric.leaf_ports, the default for "),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("simulated: one leaf per NIC rail, 36"), std::string::npos) << d;
  spec.node_template = "dgx_h100";
  spec.num_nodes = 128;
  const std::string pod = Cluster(spec).describe();
  EXPECT_NE(pod.find(": 32 leaf + 16 spine (32 leaves x 32 up-links / 64 ports)\n"), std::string::npos) << pod;
  EXPECT_NE(pod.find("  simulated: 32 spines each reaching every leaf, a leaf's 32 up-links on 32 resources"),
            std::string::npos)
      << pod;
}

}  // namespace
}  // namespace traincast::models
