// NCCL's path types on a node's written PCIe tree (models/hardware/pcie_tree.h): PIX under one
// switch, PXB through cascaded switches, PHB through the root complex (other switches of the
// socket, root ports), SYS across sockets, for GPU pairs and GPU-NIC pairs; the ring search's
// intra-node path type follows them; and a faster uplink never makes a collective slower.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/collectives/nccl_tests.h"
#include "models/collectives/nccl_topo_search.h"
#include "models/collectives/nccl_versions.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/node_template_text.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

/// Upper switch 0 on CPU 0 with leaves 1 (GPUs 0, 1, NIC 0) and 2 (GPU 2), switch 3 straight on
/// CPU 0 (GPU 3), GPUs 4, 5 and NIC 1 on CPU 1's root ports. `uplink` the upper switch's uplink.
std::string cascade_text(const std::string& name, const std::string& uplink) {
  return "node_template {\n"
         "  name: \"" +
         name +
         "\"\n"
         "  gpu: \"L40S\" gpus_per_node: 6 scale_up: none nic: \"IB-HDR-200\" nics: 2 sockets: 2\n"
         "  pcie_generation: 4 socket_link_bytes_per_s: 16e9 cpu: \"AMD EPYC (Milan)\" source: \"test\"\n"
         "  pcie_switch { socket: 0 " +
         uplink +
         " }\n"
         "  pcie_switch { upstream_switch: 0 gpus: [0, 1] nics: [0] }\n"
         "  pcie_switch { upstream_switch: 0 gpus: [2] }\n"
         "  pcie_switch { socket: 0 gpus: [3] }\n"
         "  root_ports { socket: 1 gpus: [4, 5] nics: [1] }\n"
         "}\n";
}

ClusterSpec described(const std::string& name, const std::string& uplink, int nodes) {
  ClusterSpec spec;
  spec.described_node_templates =
      DescribedNodeTemplates(read_node_templates(cascade_text(name, uplink), "t.textproto"));
  spec.node_template = name;
  spec.num_nodes = nodes;
  spec.fabric.kind = nodes > 1 ? FabricKind::fat_tree : FabricKind::none;
  return spec;
}

std::string type(const Cluster& c, int a, int b) { return nccl_path_type_name(nccl_gpu_path_type(c, a, b)); }
std::string nic_type(const Cluster& c, int g, int n) { return nccl_path_type_name(nccl_gpu_nic_path_type(c, g, n)); }

TEST(NcclPcieTree, PathTypesFollowTheTree) {
  const Cluster c(described("nccl_pcie_tree_box", "", 2));
  EXPECT_EQ(type(c, 0, 1), "PIX");  // one leaf switch
  EXPECT_EQ(type(c, 0, 2), "PXB");  // two leaves of one upper switch
  EXPECT_EQ(type(c, 2, 0), "PXB");
  EXPECT_EQ(type(c, 0, 3), "PHB");  // another switch of the socket: the root complex
  EXPECT_EQ(type(c, 3, 2), "PHB");
  EXPECT_EQ(type(c, 4, 5), "PHB");  // two root ports of one CPU
  EXPECT_EQ(type(c, 0, 4), "SYS");  // the other socket
  EXPECT_EQ(type(c, 5, 3), "SYS");
  EXPECT_EQ(nic_type(c, 0, 0), "PIX");
  EXPECT_EQ(nic_type(c, 1, 0), "PIX");
  EXPECT_EQ(nic_type(c, 2, 0), "PXB");
  EXPECT_EQ(nic_type(c, 3, 0), "PHB");
  EXPECT_EQ(nic_type(c, 4, 0), "SYS");
  EXPECT_EQ(nic_type(c, 4, 1), "PHB");
  EXPECT_EQ(nic_type(c, 0, 1), "SYS");
  // GPUDirect RDMA off: the NIC's data is staged through host memory, up to the root complex.
  ClusterSpec staged = c.spec();
  staged.gpu_direct_rdma = false;
  const Cluster s(staged);
  EXPECT_EQ(nic_type(s, 0, 0), "PHB");
}

TEST(NcclPcieTree, RingSearchSeesTheTreesPathTypes) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const Cluster c(described("nccl_pcie_tree_ring", "", 1), net);
  const auto intra = [&](std::vector<int> gpus) {
    return nccl_path_type_name(search_ring_graph(c, net, gpus, -1, kNewestNcclVersion).type_intra);
  };
  EXPECT_EQ(intra({0, 1}), std::string("PIX"));
  EXPECT_EQ(intra({0, 1, 2}), std::string("PXB"));
  EXPECT_EQ(intra({0, 1, 2, 3}), std::string("PHB"));
  EXPECT_EQ(intra({0, 1, 2, 3, 4, 5}), std::string("SYS"));
}

TEST(NcclPcieTree, FasterUplinkIsNeverSlower) {
  // The upper switch's uplink at x4, x8 and x16 (gen4): every op on 2 nodes and on the node's
  // GPUs 0-3 (whose ring crosses it) is no slower with a wider uplink.
  const std::vector<std::string> uplinks{"uplink_lanes: 4", "uplink_lanes: 8", "uplink_lanes: 16"};
  for (NcclTestsOp op : {NcclTestsOp::all_reduce, NcclTestsOp::all_gather, NcclTestsOp::reduce_scatter}) {
    for (bool one_node : {true, false}) {
      double previous = 0;
      for (std::size_t i = 0; i < uplinks.size(); ++i) {
        const std::string name = "nccl_pcie_tree_uplink_" + std::to_string(i);
        const ClusterSpec spec = described(name + (one_node ? "_1" : "_2"), uplinks[i], one_node ? 1 : 2);
        NcclTestsOptions o;
        o.op = op;
        if (one_node) o.gpus = {0, 1, 2, 3};
        const double busbw = simulate_nccl_tests(spec, o, {256.0 * 1024 * 1024}).front().busbw_gbps;
        EXPECT_GE(busbw, previous * (1 - 1e-9)) << uplinks[i] << " one node " << one_node;
        previous = busbw;
      }
    }
  }
}

}  // namespace
}  // namespace traincast::models
