// Fabric routing: d-mod-k tables (exact ports), ECMP hash collisions against size, adaptive
// pooling against static tables, and automatic routing per NIC.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

ClusterSpec fat_tree(const std::string& tmpl, int nodes, int nodes_per_leaf, FabricRouting routing) {
  ClusterSpec s;
  s.node_template = tmpl;
  s.num_nodes = nodes;
  s.fabric.nodes_per_leaf = nodes_per_leaf;
  s.fabric.routing = routing;
  return s;
}

/// The names of the fabric (switch-to-switch) resources of a route, in order.
std::vector<std::string> fabric_hops(const Cluster& c, std::span<const sim::ResourceId> route) {
  std::vector<std::string> out;
  for (auto r : route) {
    if (c.link_kind(r) == LinkKind::fabric) out.push_back(c.resource_name(r));
  }
  return out;
}

/// Flows per fabric resource for a set of (src GPU, dst GPU) flows, each over dst's NIC: the most
/// any one link carries (1 = no collision).
int max_flows_per_link(const Cluster& c, const std::vector<std::pair<int, int>>& flows) {
  std::map<sim::ResourceId, int> count;
  int most = 0;
  for (const auto& [src, dst] : flows) {
    for (auto r : c.route(src, dst)) {
      if (c.link_kind(r) == LinkKind::fabric) most = std::max(most, ++count[r]);
    }
  }
  return most;
}

/// Every node sends on rail 0 to the node `shift` places on (a shift permutation).
std::vector<std::pair<int, int>> shift_flows(int nodes, int gpus_per_node, int shift) {
  std::vector<std::pair<int, int>> flows;
  for (int n = 0; n < nodes; ++n) flows.emplace_back(n * gpus_per_node, ((n + shift) % nodes) * gpus_per_node);
  return flows;
}

TEST(Routing, DModKTablesOnASmallFatTree) {
  // fat_tree, 4 DGX A100 (8 HCAs each), 2 nodes per leaf, 4:1: 2 leaves of 16 down ports, 4 up.
  // Destination index D = leaf x 16 + (node % 2) x 8 + HCA; the leaf's up-port is D mod 4.
  ClusterSpec s = fat_tree("dgx_a100", 4, 2, FabricRouting::d_mod_k);
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.oversubscription = 4.0;
  const Cluster c(s);
  ASSERT_EQ(c.num_spines(), 4);
  for (int hca = 0; hca < 8; ++hca) {
    // Node 0 GPU 0 -> node 3 GPU `hca` (over HCA `hca`): D = 16 + 8 + hca.
    EXPECT_EQ(c.destination_index(3, hca), 24u + hca);
    const std::string spine = "spine" + std::to_string((24 + hca) % 4);
    EXPECT_EQ(fabric_hops(c, c.route(0, 3 * 8 + hca)),
              (std::vector<std::string>{"leaf0->" + spine, spine + "->leaf1"}));
    // Node 2 -> node 1 (D = 8 + hca): the table is per destination, whatever the source.
    const std::string back = "spine" + std::to_string((8 + hca) % 4);
    EXPECT_EQ(fabric_hops(c, c.route(2 * 8 + 5, 1 * 8 + hca)),
              (std::vector<std::string>{"leaf1->" + back, back + "->leaf0"}));
  }
}

TEST(Routing, DModKThreeTiersPicksTheCoreFromTheDestination) {
  // 256 DGX H100, rail-optimized, 16 nodes per leaf, 4 leaf groups per pod: 16 aggregation
  // up-ports per leaf (D mod 16), one core per aggregation switch (floor(D / 16) mod 1 = 0).
  ClusterSpec s = fat_tree("dgx_h100", 256, 16, FabricRouting::d_mod_k);
  s.fabric.tiers = 3;
  s.fabric.leaves_per_pod = 4;
  const Cluster c(s);
  // Node 65, rail 0: leaf 4 x 8 + 0 = 32 (pod 1), port 1: D = 32 x 16 + 1 = 513, 513 mod 16 = 1.
  EXPECT_EQ(c.destination_index(65, 0), 513u);
  EXPECT_EQ(fabric_hops(c, c.route(0, 65 * 8)), (std::vector<std::string>{"leaf0->pod0.agg1", "pod0.agg1->core1",
                                                                          "core1->pod1.agg1", "pod1.agg1->leaf32"}));
}

TEST(Routing, DModKIsNonBlockingForShiftsButNotForATranspose) {
  // Non-blocking rail-optimized tree, 4 nodes per leaf (4 down, 4 up ports), 16 nodes.
  const ClusterSpec s = fat_tree("dgx_h100", 16, 4, FabricRouting::d_mod_k);
  const Cluster c(s);
  for (int shift : {1, 4, 5, 7}) EXPECT_EQ(max_flows_per_link(c, shift_flows(16, 8, shift)), 1) << shift;
  // Transpose: node 4g + p -> 4p + g. The 3 flows leaving leaf g go to ports p = g of other
  // leaves: D = leaf x 4 + g, all equal mod 4, so they share one up-link.
  std::vector<std::pair<int, int>> transpose;
  for (int g = 0; g < 4; ++g) {
    for (int p = 0; p < 4; ++p) {
      if (g != p) transpose.emplace_back((4 * g + p) * 8, (4 * p + g) * 8);
    }
  }
  EXPECT_EQ(max_flows_per_link(c, transpose), 3);
  // Adaptive routing pools the 4 up-links: 3 flows on 4 links' capacity, no link over 1 flow's share.
  const Cluster a(fat_tree("dgx_h100", 16, 4, FabricRouting::adaptive));
  const auto route = a.route(4 * 8, 1 * 8);
  ASSERT_EQ(fabric_hops(a, route), (std::vector<std::string>{"leaf8->spines", "spines->leaf0"}));
  for (auto r : route) {
    if (a.link_kind(r) == LinkKind::fabric) {
      EXPECT_DOUBLE_EQ(a.capacity(r), 4 * 50e9);
    }
  }
}

TEST(Routing, HashCollisionsGrowWithSize) {
  // A non-blocking tree (8 nodes per leaf, 8 spines) carrying a shift by one leaf: every up-link
  // could carry one flow. ECMP hashing puts several on one link, and the worst link of the fabric
  // (which sets a ring's pace) gets worse as leaves are added; d-mod-k stays at one flow per link.
  double last_mean = 0;
  for (int nodes : {16, 64, 256}) {
    double sum = 0;
    for (std::uint64_t seed = 0; seed < 16; ++seed) {
      ClusterSpec s = fat_tree("dgx_h100", nodes, 8, FabricRouting::ecmp_hash);
      s.nic = "RoCE-400GbE";
      s.fabric.ecmp_seed = seed;
      const Cluster c(s);
      ASSERT_TRUE(c.hashing_matters());
      sum += max_flows_per_link(c, shift_flows(nodes, 8, 8));
    }
    const double mean = sum / 16;
    EXPECT_GT(mean, 1.0) << nodes;
    EXPECT_GT(mean, last_mean) << nodes;
    last_mean = mean;
    const Cluster d(fat_tree("dgx_h100", nodes, 8, FabricRouting::d_mod_k));
    EXPECT_FALSE(d.hashing_matters());
    EXPECT_EQ(max_flows_per_link(d, shift_flows(nodes, 8, 8)), 1) << nodes;
  }
}

TEST(Routing, SeedsChangeEcmpRoutesOnlyWhereThereIsAChoice) {
  ClusterSpec s = fat_tree("dgx_h100", 16, 4, FabricRouting::ecmp_hash);
  std::set<std::vector<std::string>> seen;
  for (std::uint64_t seed = 0; seed < 16; ++seed) {
    s.fabric.ecmp_seed = seed;
    const Cluster c(s);
    seen.insert(fabric_hops(c, c.route(0, 9 * 8)));
    EXPECT_EQ(fabric_hops(c, c.route(0, 9 * 8)), fabric_hops(Cluster(s), Cluster(s).route(0, 9 * 8)));
  }
  EXPECT_GT(seen.size(), 1u);
  // One leaf group: no spine, nothing to hash.
  EXPECT_FALSE(Cluster(fat_tree("dgx_h100", 4, 4, FabricRouting::ecmp_hash)).hashing_matters());
  // 4:1 on 4 down ports leaves one up-link: nothing to choose.
  s.fabric.oversubscription = 4.0;
  EXPECT_FALSE(Cluster(s).hashing_matters());
}

TEST(Routing, WithEcmpSeedIsTheClusterBuiltWithThatSeed) {
  // The ECMP draws of one job copy one cluster with their seeds (training_run.cc): each copy must
  // route, and install on a network, exactly as a cluster built with its seed, sharing the table.
  ClusterSpec s = fat_tree("dgx_h100", 16, 4, FabricRouting::ecmp_hash);
  s.nic = "RoCE-400GbE";
  s.overrides.push_back(ElementOverride{});
  s.overrides.back().select = "node5/gpu3";
  s.overrides.back().clock_factor = 0.9;
  const Cluster base(s);
  (void)base.route(0, 9 * 8);  // a filled route cache is not copied
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    ClusterSpec seeded = s;
    seeded.fabric.ecmp_seed = seed;
    const Cluster built(seeded);
    const Cluster copy = base.with_ecmp_seed(seed);
    EXPECT_EQ(copy.spec().fabric.ecmp_seed, seed);
    EXPECT_EQ(&copy.edges(), &base.edges());  // shared, not copied
    ASSERT_EQ(copy.num_resources(), built.num_resources());
    EXPECT_EQ(copy.clock_factor(5 * 8 + 3), 0.9);
    for (int src = 0; src < copy.num_gpus(); src += 5) {
      for (int dst = 0; dst < copy.num_gpus(); dst += 7) {
        if (src == dst) continue;
        const auto a = copy.route(src, dst), b = built.route(src, dst);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << seed << " " << src << " " << dst;
      }
    }
    sim::Simulator sim_a, sim_b;
    sim::FlowNetwork net_a(sim_a), net_b(sim_b);
    copy.install(net_a);
    built.install(net_b);
    ASSERT_EQ(net_a.num_resources(), net_b.num_resources());
    for (sim::ResourceId r = 0; r < net_a.num_resources(); ++r) {
      EXPECT_EQ(net_a.resource_name(r), net_b.resource_name(r));
      EXPECT_EQ(net_a.capacity(r), net_b.capacity(r));
      EXPECT_EQ(net_a.latency(r), net_b.latency(r));
    }
  }
}

/// Time for every flow of `flows` (bytes each, over dst's NIC) to finish, all started at once.
double finish_time_s(const ClusterSpec& s, const std::vector<std::pair<int, int>>& flows, double bytes) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const Cluster c(s, net);
  for (const auto& [src, dst] : flows) net.start_flow(c.route(src, dst), bytes, nullptr, 0);
  sim.run();
  return sim.now().seconds();
}

TEST(Routing, AdaptiveIsNeverSlowerThanStaticAndFewerUplinksNeverFaster) {
  // Transpose and shift traffic between leaves, 16 nodes, 4 per leaf, 1:1 to 4:1.
  std::vector<std::pair<int, int>> transpose;
  for (int g = 0; g < 4; ++g) {
    for (int p = 0; p < 4; ++p) {
      if (g != p) transpose.emplace_back((4 * g + p) * 8, (4 * p + g) * 8);
    }
  }
  for (const auto& flows : {transpose, shift_flows(16, 8, 4), shift_flows(16, 8, 5)}) {
    double last_adaptive = 0;
    for (double ratio : {1.0, 1.5, 2.0, 3.0, 4.0}) {
      ClusterSpec st = fat_tree("dgx_h100", 16, 4, FabricRouting::d_mod_k);
      st.fabric.oversubscription = ratio;
      ClusterSpec ad = st;
      ad.fabric.routing = FabricRouting::adaptive;
      const double t_static = finish_time_s(st, flows, 1e9);
      const double t_adaptive = finish_time_s(ad, flows, 1e9);
      EXPECT_LE(t_adaptive, t_static * (1 + 1e-9)) << ratio;
      EXPECT_GE(t_adaptive, last_adaptive * (1 - 1e-9)) << ratio;  // fewer up-links: never faster
      last_adaptive = t_adaptive;
    }
  }
}

TEST(Routing, AutomaticFollowsTheNic) {
  ClusterSpec s = fat_tree("dgx_h100", 16, 4, FabricRouting::automatic);
  EXPECT_EQ(Cluster(s).routing(), FabricRouting::adaptive);  // InfiniBand NDR: OpenSM ar_updn
  s.nic = "RoCE-400GbE";
  EXPECT_EQ(Cluster(s).routing(), FabricRouting::ecmp_hash);
  EXPECT_TRUE(Cluster(s).hashing_matters());
  s.nic = "Slingshot-200";
  EXPECT_EQ(Cluster(s).routing(), FabricRouting::adaptive);
  s.nic = "IB-HDR-200";
  s.fabric.routing = FabricRouting::d_mod_k;
  EXPECT_EQ(Cluster(s).routing(), FabricRouting::d_mod_k);
  EXPECT_NE(Cluster(s).describe().find("routing d_mod_k"), std::string::npos);
}

}  // namespace
}  // namespace traincast::models
