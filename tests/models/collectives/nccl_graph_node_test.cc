// NCCL's ring search on a node whose NVLinks a template lists one by one (ScaleUp::graph,
// models/hardware/node_template_text.h): on DGX-1's hybrid cube mesh NCCL finds rings over NVLink
// only (NVIDIA DGX-1 V100 whitepaper: "NCCL ... rings over NVLink"), and so must the search here.

#include <gtest/gtest.h>

#include <vector>

#include "models/collectives/nccl_topo_search.h"
#include "models/collectives/nccl_versions.h"
#include "models/hardware/catalog.h"
#include "models/hardware/node_template_text.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

TEST(NcclGraphNode, HybridCubeMeshRingsRunOverNvlinkOnly) {
  // The DGX-1 V100 hybrid cube mesh (24 NVLink2 links, as scenarios/nccl/azure_nd40rs_v2_2node).
  NodeTemplate t = read_node_templates(R"(node_template {
    name: "search_test_cube" gpu: "V100-SXM2-32GB" gpus_per_node: 8 scale_up: graph
    nic: "IB-EDR-100" nics: 4 sockets: 2 pcie_switches: 4 pcie_generation: 3
    socket_link_bytes_per_s: 10e9 source: "test"
    nvlink { gpus: [0, 1] links: 1 } nvlink { gpus: [0, 2] links: 1 } nvlink { gpus: [0, 3] links: 2 }
    nvlink { gpus: [0, 4] links: 2 } nvlink { gpus: [1, 2] links: 2 } nvlink { gpus: [1, 3] links: 1 }
    nvlink { gpus: [1, 5] links: 2 } nvlink { gpus: [2, 3] links: 2 } nvlink { gpus: [2, 6] links: 1 }
    nvlink { gpus: [3, 7] links: 1 } nvlink { gpus: [4, 5] links: 1 } nvlink { gpus: [4, 6] links: 1 }
    nvlink { gpus: [4, 7] links: 2 } nvlink { gpus: [5, 6] links: 2 } nvlink { gpus: [5, 7] links: 1 }
    nvlink { gpus: [6, 7] links: 2 }
  })",
                                       "test")
                       .front();
  ClusterSpec spec;
  spec.described_node_templates = DescribedNodeTemplates({t});
  spec.node_template = "search_test_cube";
  spec.num_nodes = 1;
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const Cluster cluster(spec, net);
  const std::vector<int> gpus{0, 1, 2, 3, 4, 5, 6, 7};
  const NcclTopoGraph g = search_ring_graph(cluster, net, gpus, -1, kNewestNcclVersion);
  ASSERT_FALSE(g.fallback);
  EXPECT_EQ(g.type_intra, NcclPathType::nvl);
  ASSERT_GE(g.search_channels, 1);
  for (const NcclTopoChannel& c : g.channels) {
    ASSERT_EQ(c.order.size(), 8u);
    for (std::size_t i = 0; i < c.order.size(); ++i)
      EXPECT_TRUE(cluster.nvlink_between(c.order[i], c.order[(i + 1) % c.order.size()]))
          << c.order[i] << " -> " << c.order[(i + 1) % c.order.size()];
  }
}

}  // namespace
}  // namespace traincast::models
