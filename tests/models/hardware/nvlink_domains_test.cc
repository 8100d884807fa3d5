// Rack-scale NVLink domains (issue 19): the GB200 NVL72 rack as one 72-GPU NVLink domain (TP/EP/CP
// across trays over NVLink, what leaves the rack over the NICs) and "base/N" templates that cut a
// rack into smaller NVLink domains (nvlink_domains.h).

#include "models/hardware/nvlink_domains.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

struct Rack {
  explicit Rack(const std::string& tmpl, int nodes) : net(sim), cluster(spec(tmpl, nodes), net) {}
  static ClusterSpec spec(const std::string& tmpl, int nodes) {
    ClusterSpec s;
    s.node_template = tmpl;
    s.num_nodes = nodes;
    return s;
  }
  bool crosses_nic(int a, int b) const {
    for (auto r : cluster.route(a, b))
      if (cluster.link_kind(r) == LinkKind::nic) return true;
    return false;
  }
  double nvlink_bytes_per_s(int a, int b) const {
    double bw = 1e300;
    for (auto r : cluster.route(a, b)) bw = std::min(bw, net.capacity(r));
    return bw;
  }
  sim::Simulator sim;
  sim::FlowNetwork net;
  Cluster cluster;
};

std::string refusal(const std::string& name) {
  try {
    find_builtin_node_template(name);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(NvlinkDomains, Nvl72IsOneNvlinkDomainAcrossTrays) {
  const Rack r("gb200_nvl72", 2);
  EXPECT_EQ(r.cluster.gpus_per_node(), 72);
  // GPU 0 (tray 0) and GPU 71 (tray 17) talk over NVLink at 900 GB/s each way, no NIC.
  EXPECT_TRUE(r.cluster.nvlink_between(0, 71));
  EXPECT_FALSE(r.crosses_nic(0, 71));
  EXPECT_DOUBLE_EQ(r.nvlink_bytes_per_s(0, 71), 900e9);
  // Between racks: over the GPUs' ConnectX-7 (400 Gb/s = 50 GB/s).
  EXPECT_TRUE(r.crosses_nic(5, 72 + 5));
  EXPECT_DOUBLE_EQ(r.nvlink_bytes_per_s(5, 72 + 5), 50e9);
}

TEST(NvlinkDomains, PartitionedRackTalksBetweenDomainsOverTheNics) {
  const NodeTemplate& half = find_builtin_node_template("gb200_nvl72/36");
  EXPECT_EQ(half.name, "gb200_nvl72/36");
  EXPECT_EQ(half.gpus_per_node, 36);
  EXPECT_EQ(half.nics, 36);
  EXPECT_EQ(half.sockets, 18);
  EXPECT_EQ(half.pcie_switches, 18);
  EXPECT_EQ(half.nvswitches, 9);
  EXPECT_EQ(&half, &find_builtin_node_template("gb200_nvl72/36"));  // built once, references stay valid
  const NodeTemplate& eight = find_builtin_node_template("gb200_nvl72/8");
  EXPECT_EQ(eight.gpus_per_node, 8);
  EXPECT_EQ(eight.nics, 8);
  EXPECT_EQ(eight.sockets, 4);
  // One rack as 2 x 36: the same 72 GPUs; GPU 0 and 35 over NVLink, GPU 0 and 36 over the NICs.
  const Rack r("gb200_nvl72/36", 2);
  EXPECT_EQ(r.cluster.num_gpus(), 72);
  EXPECT_FALSE(r.crosses_nic(0, 35));
  EXPECT_TRUE(r.crosses_nic(0, 36));
  // More bandwidth never slower: the whole rack's path between GPU 0 and 36 is at least as fast.
  const Rack whole("gb200_nvl72", 1);
  EXPECT_GE(whole.nvlink_bytes_per_s(0, 36), r.nvlink_bytes_per_s(0, 36));
}

TEST(NvlinkDomains, SizeThatDoesNotDivideTheRackLeavesSpares) {
  // "/64": one domain of 64 GPUs per rack (16 of 18 compute trays), its 64/72 share of the 72
  // NICs, 36 Graces and 36 C2C hubs; the other 8 GPUs are in no domain.
  const NodeTemplate& t = find_builtin_node_template("gb200_nvl72/64");
  EXPECT_EQ(t.gpus_per_node, 64);
  EXPECT_EQ(t.nics, 64);
  EXPECT_EQ(t.sockets, 32);
  EXPECT_EQ(t.pcie_switches, 32);
  EXPECT_NE(t.source.find("8 GPUs per gb200_nvl72 in no domain"), std::string::npos);
  // Two racks as two 64-GPU domains: GPUs 48..63 (a TP 16 group's last) over NVLink, 63 and 64
  // over the NICs.
  const Rack r("gb200_nvl72/64", 2);
  EXPECT_EQ(r.cluster.num_gpus(), 128);
  EXPECT_FALSE(r.crosses_nic(48, 63));
  EXPECT_DOUBLE_EQ(r.nvlink_bytes_per_s(48, 63), 900e9);
  EXPECT_TRUE(r.crosses_nic(63, 64));
}

// Fresh-user finding: explain said "PCIe gen5: 450 GB/s per direction per GPU and per NIC" on
// GB200, 450 GB/s being NVLink-C2C: the GPU's host link is C2C, each ConnectX-7 NIC's is its own
// PCIe gen5 x16 (63.0 GB/s per direction; ConnectX-8 on GB300: gen6 x16, 121.0 GB/s).
TEST(NvlinkDomains, SuperchipNicsSitOnPcieNotOnC2c) {
  for (const auto& [tmpl, nic_bytes_per_s] : {std::pair<std::string, double>{"gb200_nvl72", 63.0e9},
                                              {"gb300_nvl72", 121.0e9},
                                              {"gb200_nvl72/36", 63.0e9},
                                              {"gh200_1gpu", 63.0e9}}) {
    const Rack r(tmpl, 2);
    int nic_links = 0, gpu_links = 0;
    for (const ClusterEdge& e : r.cluster.edges()) {
      if (e.name.rfind("node0.nic0.pcie_", 0) == 0) {
        EXPECT_DOUBLE_EQ(e.capacity_bytes_per_s, nic_bytes_per_s) << tmpl << " " << e.name;
        ++nic_links;
      }
      if (e.name.rfind("node0.gpu0.pcie_", 0) == 0) {
        EXPECT_DOUBLE_EQ(e.capacity_bytes_per_s, 450e9) << tmpl << " " << e.name;  // NVLink-C2C
        ++gpu_links;
      }
    }
    EXPECT_EQ(nic_links, 2) << tmpl;
    EXPECT_EQ(gpu_links, 2) << tmpl;
    const std::string d = r.cluster.describe();
    EXPECT_EQ(d.find("450 GB/s per direction per GPU and per NIC"), std::string::npos) << d;
    EXPECT_NE(d.find("GPU host link 450 GB/s per direction per GPU; NICs on PCIe gen"), std::string::npos) << d;
  }
  // A node whose NICs share the GPUs' PCIe keeps the one line.
  const Rack dgx("dgx_h100", 2);
  EXPECT_NE(dgx.cluster.describe().find("per direction per GPU and per NIC"), std::string::npos);
}

// A partition is the same hardware: it records the rack it is cut from, the unit a price buys.
TEST(NvlinkDomains, PartitionsKnowTheirPhysicalRack) {
  EXPECT_EQ(find_builtin_node_template("gb200_nvl72").physical_gpus(), 72);
  EXPECT_EQ(find_builtin_node_template("gb200_nvl72").nodes_per_physical(), 1);
  EXPECT_EQ(find_builtin_node_template("gb200_nvl72/36").physical_gpus(), 72);
  EXPECT_EQ(find_builtin_node_template("gb200_nvl72/36").nodes_per_physical(), 2);
  EXPECT_EQ(find_builtin_node_template("gb200_nvl72/8").nodes_per_physical(), 9);
  EXPECT_EQ(find_builtin_node_template("gb200_nvl72/64").nodes_per_physical(), 1);  // 8 spare GPUs
  EXPECT_EQ(find_builtin_node_template("dgx_h100/4").physical_gpus(), 8);
}

TEST(NvlinkDomains, ImpossiblePartitionsAreRefused) {
  // 7 GPUs would take 3.5 of the 36 Grace sockets.
  EXPECT_EQ(refusal("gb200_nvl72/7"),
            "node template 'gb200_nvl72/7': gb200_nvl72's 36 CPU sockets do not split over NVLink domains of 7 GPUs "
            "(expected a domain size whose GPUs take a whole share of them: n x 36 / 72 an integer)");
  EXPECT_EQ(refusal("gb200_nvl72/72"),
            "node template 'gb200_nvl72/72': 72 GPUs per NVLink domain does not split gb200_nvl72's 72 GPUs (expected "
            "a GPU count below 72)");
  EXPECT_EQ(refusal("gb200_nvl72/x"),
            "node template 'gb200_nvl72/x': 'x' is not a GPU count (expected base/N with N GPUs per NVLink domain, "
            "e.g. gb200_nvl72/36)");
  // A leading zero names the same domains under a second name (session 31's fresh user): refused.
  EXPECT_EQ(refusal("gb200_nvl72/08"),
            "node template 'gb200_nvl72/08': '08' is not a GPU count (expected base/N with N GPUs per NVLink domain, "
            "e.g. gb200_nvl72/36)");
  EXPECT_EQ(refusal("kestrel_h100_4gpu/2"),
            "node template 'kestrel_h100_4gpu/2': kestrel_h100_4gpu has no NVSwitch to partition (expected a template "
            "whose GPUs reach each other through NVSwitch, e.g. gb200_nvl72)");
  // 36 sockets do not split over 8 domains of 9 GPUs (4.5 each).
  EXPECT_EQ(refusal("gb200_nvl72/9"),
            "node template 'gb200_nvl72/9': gb200_nvl72's 36 CPU sockets do not split over NVLink domains of 9 GPUs "
            "(expected a domain size whose GPUs take a whole share of them: n x 36 / 72 an integer)");
  EXPECT_NE(refusal("nosuch/2").find("unknown node template 'nosuch'"), std::string::npos);
}

}  // namespace
}  // namespace traincast::models
