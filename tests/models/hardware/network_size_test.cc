// Cluster::network_size (network_size.h): the count from the spec equals what Cluster builds, over
// every node template and fabric shape; the limit is refused before anything is built; the build
// stops on an interrupt request.

#include "models/hardware/network_size.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/spec/run_control.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

/// The 16,384-GPU Llama 3 405B cluster of scenarios/models/llama3_405b.textproto at `nodes`.
ClusterSpec llama3_405b_cluster(int nodes) {
  ClusterSpec s;
  s.node_template = "dgx_h100";
  s.num_nodes = nodes;
  s.nic = "RoCE-400GbE";
  s.fabric.kind = FabricKind::fat_tree;
  s.fabric.tiers = 3;
  return s;
}

/// Every fabric shape the builder distinguishes at `nodes`: kind, tiers, pooled or not, one or
/// several leaf groups and pods, oversubscribed or not, torus rings and grids.
std::vector<FabricSpec> fabric_shapes(int nodes) {
  std::vector<FabricSpec> out;
  if (nodes == 1) {
    out.emplace_back();  // the default: rail_optimized, no traffic leaves the node
    FabricSpec none;
    none.kind = FabricKind::none;
    out.push_back(none);
    return out;
  }
  for (FabricKind kind : {FabricKind::rail_optimized, FabricKind::fat_tree}) {
    for (int tiers : {2, 3}) {
      for (FabricRouting routing : {FabricRouting::d_mod_k, FabricRouting::adaptive, FabricRouting::ecmp_hash}) {
        for (double over : {1.0, 3.0}) {
          FabricSpec f;
          f.kind = kind;
          f.tiers = tiers;
          f.routing = routing;
          f.oversubscription = over;
          f.nodes_per_leaf = 4;
          f.leaves_per_pod = 2;
          out.push_back(f);
        }
      }
    }
  }
  FabricSpec ring;
  ring.kind = FabricKind::torus;
  out.push_back(ring);
  if (nodes % 4 == 0) {
    FabricSpec grid = ring;
    grid.torus_dims = {4, nodes / 4};
    out.push_back(grid);
  }
  return out;
}

// The count is exact (not only an upper bound): for every node template, 1 to 40 nodes, every
// fabric shape and a NIC-count override, network_size(spec).resources() == the resources built.
TEST(NetworkSize, CountEqualsTheBuiltResourcesForEveryTemplateAndFabric) {
  int compared = 0;
  for (const std::string& tmpl : node_template_names()) {
    for (int nodes : {1, 2, 12, 40}) {
      for (const FabricSpec& fabric : fabric_shapes(nodes)) {
        for (int nics : {-1, 3}) {
          ClusterSpec spec;
          spec.node_template = tmpl;
          spec.num_nodes = nodes;
          spec.fabric = fabric;
          if (nics >= 0) spec.nics_per_node = nics;
          std::int64_t built = -1;
          try {
            built = static_cast<std::int64_t>(Cluster(spec).num_resources());
          } catch (const std::invalid_argument&) {
            // A spec Cluster refuses (no NICs between nodes, a mesh without links): so does the count.
            EXPECT_THROW(Cluster::network_size(spec), std::invalid_argument) << tmpl << " x " << nodes;
            continue;
          }
          const NetworkSize size = Cluster::network_size(spec);
          EXPECT_EQ(size.resources(), built)
              << tmpl << " x " << nodes << ", fabric kind " << static_cast<int>(fabric.kind) << " tiers "
              << fabric.tiers << " routing " << static_cast<int>(fabric.routing) << " nics " << nics;
          EXPECT_EQ(size.nodes, nodes);
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 500);  // the loops above did compare real builds
}

// Mixed clusters: groups with different PCIe switches (DGX A100: 4, HGX H100: 8) count each
// node's own uplinks.
TEST(NetworkSize, CountEqualsTheBuiltResourcesForGroupsWithDifferentPcieSwitches) {
  for (int a100 : {1, 3}) {
    for (int h100 : {1, 2}) {
      ClusterSpec spec;
      spec.node_groups = {{"dgx_a100", a100, ""}, {"dgx_h100", h100, ""}};
      spec.node_template = "dgx_a100";
      spec.num_nodes = a100 + h100;
      spec.nic = "IB-HDR-200";
      const Cluster cluster(spec);
      const NetworkSize size = Cluster::network_size(spec);
      EXPECT_EQ(size.resources(), static_cast<std::int64_t>(cluster.num_resources())) << a100 << " + " << h100;
      EXPECT_EQ(size.pcie_uplink_resources, 2 * (4 * a100 + 8 * h100));
    }
  }
}

// The counts `traincast explain` prints for the Llama 3 405B cluster at 2,048 nodes (the shipped
// scenario: 172,288) and 16,384 nodes (1,378,304; the folded 131,072-GPU run), both under the limit,
// and the 2^20-GPU cluster (131,072 nodes: 11,026,432) over it. Per DGX H100 node 82: 8 GPUs x 4, 8
// PCIe switches x 2 uplinks, 2 socket links, 8 NICs x 4.
TEST(NetworkSize, Llama3405bClusterAtScale) {
  EXPECT_EQ(Cluster::network_size(llama3_405b_cluster(2048)).resources(), 172288);
  EXPECT_EQ(Cluster::network_size(llama3_405b_cluster(16384)).resources(), 1378304);
  const NetworkSize million = Cluster::network_size(llama3_405b_cluster(131072));
  EXPECT_EQ(million.resources(), 11026432);
  EXPECT_GT(million.resources(), kMaxNetworkResources);
  EXPECT_LE(Cluster::network_size(llama3_405b_cluster(16384)).resources(), kMaxNetworkResources);
  EXPECT_NO_THROW(check_network_size(llama3_405b_cluster(16384)));
}

// Over the limit, Cluster refuses before it builds anything (the build took 18.7 s and 2.6 GB),
// naming the fields, the count, the limit and what fits. That nothing is built is checked by the
// CLI tests' peak memory (robust_outputs_cli_test.cc), not by a wall-clock bound here.
TEST(NetworkSize, MillionGpuClusterIsRefusedBeforeItIsBuilt) {
  try {
    const Cluster cluster(llama3_405b_cluster(131072));
    FAIL() << "built " << cluster.num_resources() << " resources";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "cluster.num_nodes: 131,072 x dgx_h100 (cluster.node_template: 8 GPUs per node; cluster.nics_per_node: "
              "8; cluster.fabric.kind: fat_tree, 3 tiers) would build 11,026,432 network resources (directed links: "
              "82 per node, 278,528 in the fabric), beyond the simulator's limit of 4,000,000 (about 1.2 KB each in a "
              "run: ~4.7 GB) (expected cluster.num_nodes 47,548 or fewer for this node and fabric)");
  }
  EXPECT_THROW(check_network_size(llama3_405b_cluster(131072)), std::invalid_argument);
}

// The largest num_nodes the message names fits, and one more does not.
TEST(NetworkSize, NamedLargestNodeCountIsTheBoundary) {
  int fits = 1;
  while (Cluster::network_size(llama3_405b_cluster(fits * 2)).resources() <= kMaxNetworkResources) fits *= 2;
  int lo = fits, hi = fits * 2;  // count(lo) fits, count(hi) does not
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (Cluster::network_size(llama3_405b_cluster(mid)).resources() <= kMaxNetworkResources ? lo : hi) = mid;
  }
  EXPECT_EQ(lo, 47548);
  EXPECT_NO_THROW(check_network_size(llama3_405b_cluster(lo)));
  EXPECT_THROW(check_network_size(llama3_405b_cluster(lo + 1)), std::invalid_argument);
}

// A requested interrupt (the CLI's SIGINT handler) stops the build and the install.
TEST(NetworkSize, BuildAndInstallStopOnInterrupt) {
  const Cluster built(llama3_405b_cluster(4));
  request_interrupt(SIGINT);
  EXPECT_THROW(Cluster{llama3_405b_cluster(4)}, Interrupted);
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  EXPECT_THROW(built.install(net), Interrupted);
  clear_interrupt();
  EXPECT_NO_THROW(built.install(net));
  EXPECT_EQ(net.num_resources(), built.num_resources());
}

}  // namespace
}  // namespace traincast::models
