// Leaf switch radix (models/hardware/leaf_ports.h; fresh-user finding: a fat tree of 72-NIC GB200
// NVL72 racks was built and priced with 2,304-port leaves, 576 DGX B200 with 256-port ones): the
// default nodes per leaf fits the leaf switch, and a leaf that cannot be built is refused with its
// position and what would fit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/leaf_ports.h"
#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// Line 1: the cluster; lines 2-4: a small job whose GPU count the cluster need not match (the
/// fabric checks run before the GPU count is compared, and its error is filtered out below).
std::string cluster(const std::string& tmpl, int nodes, const std::string& fabric) {
  return "cluster { node_template: \"" + tmpl + "\" num_nodes: " + std::to_string(nodes) + " fabric { " + fabric +
         " } }\n"
         "workload { model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: "
         "2048 }\n"
         "  parallel { tp: 8 dp: " +
         std::to_string(nodes * models::find_builtin_node_template(tmpl).gpus_per_node / 8) +
         " } training { global_batch_size: " +
         std::to_string(nodes * models::find_builtin_node_template(tmpl).gpus_per_node / 8) + " } }\n" +
         (models::find_builtin_node_template(tmpl).liquid_cooled ? "thermal { cooling: liquid }\n" : "");
}

models::Scenario load(const std::string& text) { return load_scenario_text(text, "t.textproto", Format::text, {}); }

TEST(LeafPortsIo, DefaultNodesPerLeafFitsTheLeafSwitch) {
  // 32 rail-optimized DGX H100 per rail leaf: 32 down + 32 up of a 64-port QM9700, unchanged.
  EXPECT_EQ(load(cluster("dgx_h100", 64, "kind: rail_optimized")).cluster.fabric.nodes_per_leaf, 32);
  // A fat tree puts all 8 NICs of a node on its leaf: 32 nodes would be 256 down ports; 4 fit.
  EXPECT_EQ(load(cluster("dgx_h100", 64, "kind: fat_tree")).cluster.fabric.nodes_per_leaf, 4);
  // 2:1 leaves: 5 nodes, 40 down + 20 up.
  EXPECT_EQ(load(cluster("dgx_h100", 64, "kind: fat_tree oversubscription: 2")).cluster.fabric.nodes_per_leaf, 5);
  // 8 nodes' 64 NICs fill one 64-port leaf with no up-links needed: the default stays.
  EXPECT_EQ(load(cluster("dgx_h100", 8, "kind: fat_tree")).cluster.fabric.nodes_per_leaf, 32);
  // A larger switch given: 8 per leaf fit 128 ports.
  EXPECT_EQ(load(cluster("dgx_h100", 64, "kind: fat_tree leaf_ports: 128")).cluster.fabric.nodes_per_leaf, 8);
}

TEST(LeafPortsIo, ImpossibleLeavesAreRefused) {
  // The fresh user's file: 64 GB200 NVL72 racks on a fat tree, 72 NICs per rack.
  std::vector<std::string> e = errors_of(cluster("gb200_nvl72", 64, "kind: fat_tree"));
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0],
            "t.textproto:1:63: cluster.fabric.kind: the default 32 nodes per leaf: a fat_tree leaf then needs 2304 "
            "down + 2304 up-link ports, over its switch's 64 ports, the default for IB-NDR-400 (expected fabric.kind: "
            "rail_optimized, one leaf per NIC rail, for nodes of 72 NICs, or fabric.leaf_ports >= 144 for one node "
            "per leaf)");
  // Fresh user (session 33): already rail-optimized on 1-port leaves, it was told to be rail-optimized;
  // on 143-port leaves it was told 4,608 ports where 144 make one rack per leaf fit.
  e = errors_of(cluster("gb200_nvl72", 64, "kind: rail_optimized leaf_ports: 1"));
  ASSERT_FALSE(e.empty());
  EXPECT_NE(e[0].find("(expected fabric.leaf_ports >= 2: one node per leaf needs that many)"), std::string::npos)
      << e[0];
  e = errors_of(cluster("gb200_nvl72", 64, "kind: fat_tree leaf_ports: 143"));
  ASSERT_FALSE(e.empty());
  EXPECT_NE(e[0].find("or fabric.leaf_ports >= 144 for one node per leaf)"), std::string::npos) << e[0];
  // An explicit nodes_per_leaf over the radix: 8 DGX H100 at 2:1 need 64 + 32 ports.
  e = errors_of(cluster("dgx_h100", 64, "kind: fat_tree nodes_per_leaf: 8 oversubscription: 2"));
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0],
            "t.textproto:1:75: cluster.fabric.nodes_per_leaf: got 8 nodes per leaf: a fat_tree leaf then needs 64 "
            "down + 32 up-link ports, over its switch's 64 ports, the default for IB-NDR-400 (expected "
            "nodes_per_leaf <= 5, or fabric.leaf_ports >= 96)");
  // What fits loads: rail-optimized racks (32 per rail leaf), the same fat tree on 128-port leaves.
  EXPECT_NO_THROW(load(cluster("gb200_nvl72", 64, "kind: rail_optimized")));
  EXPECT_NO_THROW(load(cluster("dgx_h100", 64, "kind: fat_tree nodes_per_leaf: 8 oversubscription: 2 leaf_ports: 96")));
  // XDR's Quantum-X800 Q3400 has 144 ports of 800 Gb/s: 64 rail leaves' worth of GB300 racks fit.
  EXPECT_EQ(models::default_leaf_ports(models::find_nic("IB-XDR-800")), 144);
  EXPECT_EQ(load(cluster("gb300_nvl72", 64, "kind: rail_optimized")).cluster.fabric.nodes_per_leaf, 32);
}

// A tree of k-port switches reaches k pods of k/2 leaf switches in 3 tiers (Al-Fares et al. 2008;
// models/hardware/switch_count.h); more would need a fourth tier, which no fabric kind builds: the
// scenario is refused at num_nodes with the most that fit (16-port switches: 128 leaves of one
// DGX H100 each, 8 down + 8 up).
TEST(LeafPortsIo, AFabricPastThreeTiersIsRefused) {
  EXPECT_NO_THROW(load(cluster("dgx_h100", 128, "kind: fat_tree leaf_ports: 16")));
  const std::vector<std::string> e = errors_of(cluster("dgx_h100", 129, "kind: fat_tree leaf_ports: 16"));
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0].rfind("t.textproto:1:", 0), 0u) << e[0];
  EXPECT_NE(e[0].find(": cluster.num_nodes: 129 leaf switches need 17 pods of 8, over the 16 a core switch of 16 "
                      "ports reaches"),
            std::string::npos)
      << e[0];
  EXPECT_NE(e[0].find("(expected num_nodes <= 128, or a larger fabric.leaf_ports)"), std::string::npos) << e[0];
  // The shipped 3-tier and rack scenarios' sizes load: 64 GB200 racks (144 rail leaves: a third
  // tier bought), 2,048 DGX H100.
  EXPECT_NO_THROW(load(cluster("gb200_nvl72", 64, "kind: rail_optimized")));
  EXPECT_NO_THROW(load(cluster("dgx_h100", 2048, "kind: fat_tree tiers: 3")));
}

}  // namespace
}  // namespace traincast::io
