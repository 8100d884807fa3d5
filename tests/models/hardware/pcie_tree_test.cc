// Tests of a node's PCIe tree (models/hardware/pcie_tree.h): every built-in template's regular
// layout written out gives the cluster the counts gave it (the same resource table and routes);
// written trees route through the lowest common switch, the root complex or the socket link;
// and each impossible tree is refused with the field that is wrong.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/node_template_text.h"
#include "models/hardware/pcie_tree.h"

namespace traincast::models {
namespace {

/// A two-socket PCIe box with cascaded switches: upper switch 0 on CPU 0 with leaves 1 (GPUs 0, 1,
/// NIC 0) and 2 (GPU 2), switch 3 straight on CPU 0 (GPU 3), GPUs 4 and 5 and NIC 1 on CPU 1's
/// root ports.
const char* const kCascade = R"(node_template {
  name: "pcie_tree_test_box"
  gpu: "L40S"
  gpus_per_node: 6
  scale_up: none
  nic: "IB-HDR-200"
  nics: 2
  sockets: 2
  pcie_generation: 4
  socket_link_bytes_per_s: 16e9
  source: "test"
  pcie_switch { socket: 0 uplink_lanes: 8 }
  pcie_switch { upstream_switch: 0 gpus: [0, 1] nics: [0] }
  pcie_switch { upstream_switch: 0 gpus: [2] uplink_bytes_per_s: 20e9 }
  pcie_switch { socket: 0 gpus: [3] uplink_generation: 3 }
  root_ports { socket: 1 gpus: [4, 5] nics: [1] }
  nic_gpus { nic: 0 gpus: [0, 1, 2, 3] }
  nic_gpus { nic: 1 gpus: [4, 5] }
}
)";

NodeTemplate cascade() { return read_node_templates(kCascade, "t.textproto").front(); }

std::vector<std::string> names(const Cluster& c, std::span<const sim::ResourceId> route) {
  std::vector<std::string> out;
  for (auto r : route) out.push_back(c.resource_name(r));
  return out;
}

/// The first problem complete_node_template finds in `t`, as "field: what".
std::string problem(NodeTemplate t) {
  const std::vector<NodeTemplateProblem> p = complete_node_template(t);
  return p.empty() ? "(none)" : p.front().field + ": " + p.front().what;
}

TEST(PcieTree, EveryBuiltinIsItsRegularLayoutWrittenOut) {
  for (const std::string& name : node_template_names()) {
    SCOPED_TRACE(name);
    const NodeTemplate& t = find_builtin_node_template(name);
    // Completed: the tree is written out, one switch entry per switch, and it is the regular one.
    EXPECT_EQ(t.pcie_tree.size(), static_cast<std::size_t>(t.pcie_switches));
    EXPECT_TRUE(pcie_tree_is_regular(t));
    EXPECT_TRUE(nic_gpus_are_regular(t));
    // The counts alone (the lists cleared) and the written tree build the same cluster: every
    // resource (name, ends, capacity) and every route, within the node and to another node.
    NodeTemplate counts = t;
    counts.name = "pcie_tree_test_counts_" + name;
    counts.pcie_tree.clear();
    counts.root_ports.clear();
    counts.nic_gpus.clear();
    NodeTemplate written = t;
    written.name = "pcie_tree_test_written_" + name;
    ClusterSpec a, b;
    a.described_node_templates = DescribedNodeTemplates({counts});
    b.described_node_templates = DescribedNodeTemplates({written});
    a.node_template = counts.name;
    b.node_template = written.name;
    a.num_nodes = b.num_nodes = t.nics > 0 ? 2 : 1;
    if (a.num_nodes == 1) a.fabric.kind = b.fabric.kind = FabricKind::none;
    const Cluster ca(a), cb(b);
    ASSERT_EQ(ca.num_resources(), cb.num_resources());
    for (sim::ResourceId r = 0; r < ca.num_resources(); ++r) {
      ASSERT_EQ(ca.resource(r).from, cb.resource(r).from);
      ASSERT_EQ(ca.resource(r).to, cb.resource(r).to);
      ASSERT_EQ(ca.resource(r).capacity_bytes_per_s, cb.resource(r).capacity_bytes_per_s);
    }
    EXPECT_EQ(ca.pcie_tree(), cb.pcie_tree());
    const int gpn = ca.gpus_per_node();
    const int g = std::min(gpn, 8);  // the large racks: the first tray or two
    for (int x = 0; x < g; ++x) {
      for (int y = 0; y < g; ++y) {
        if (x != y) {
          ASSERT_EQ(names(ca, ca.route(x, y)), names(cb, cb.route(x, y))) << x << "->" << y;
        }
      }
      for (int i = 0; i < ca.nics_per_node() && ca.num_nodes() > 1; ++i)
        ASSERT_EQ(names(ca, ca.route(x, gpn + x, i)), names(cb, cb.route(x, gpn + x, i))) << x << " NIC " << i;
      EXPECT_EQ(ca.host_route(x, true), cb.host_route(x, true));
    }
  }
}

TEST(PcieTree, TheRegularLayoutIsTheDocumentedOne) {
  // pcie_8gpu_2socket: 4 switches, 2 GPUs each, switches 0-1 on socket 0; NIC i beside GPU 2i.
  const NodeTemplate& t = find_builtin_node_template("pcie_8gpu_2socket");
  const PcieLayout l = pcie_layout(t, t.nics);
  EXPECT_EQ(l.gpu_switch, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(l.switch_socket, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(l.nic_switch, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(l.gpu_nic, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  // A cluster with its own NIC count: 8 NICs, one beside each GPU.
  const PcieLayout eight = pcie_layout(t, 8);
  EXPECT_EQ(eight.nic_switch, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(eight.nic_gpu, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(PcieTree, CascadedSwitchesRouteThroughTheirCommonSwitch) {
  NodeTemplate t = cascade();
  EXPECT_FALSE(pcie_tree_is_regular(t));
  // Uplink rates: x8 gen4 (the node's generation), as written, gen3 x16 (the node's lanes), and
  // the GPU link's rate for a leaf that writes none.
  EXPECT_DOUBLE_EQ(t.pcie_tree[0].uplink_bytes_per_s, pcie_bytes_per_s(4, 8));
  EXPECT_DOUBLE_EQ(t.pcie_tree[1].uplink_bytes_per_s, pcie_bytes_per_s(4, 16));
  EXPECT_DOUBLE_EQ(t.pcie_tree[2].uplink_bytes_per_s, 20e9);
  EXPECT_DOUBLE_EQ(t.pcie_tree[3].uplink_bytes_per_s, pcie_bytes_per_s(3, 16));
  ClusterSpec spec;
  spec.described_node_templates = DescribedNodeTemplates({t});
  spec.node_template = t.name;
  spec.num_nodes = 2;
  const Cluster c(spec);
  EXPECT_EQ(c.socket_of_gpu(2), 0);
  EXPECT_EQ(c.socket_of_gpu(4), 1);
  EXPECT_EQ(c.nic_of_local(3), 0);
  EXPECT_EQ(c.nic_of_local(5), 1);
  // Under one leaf: the leaf only.
  EXPECT_EQ(names(c, c.route(0, 1)), (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.gpu1.pcie_down"}));
  // Two leaves of one upper switch: up one leaf, down the other, not through the CPU.
  EXPECT_EQ(names(c, c.route(0, 2)), (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.pcie_sw1.uplink_up",
                                                               "node0.pcie_sw2.uplink_down", "node0.gpu2.pcie_down"}));
  // Another switch of the socket: through the root complex, every uplink of the cascade.
  EXPECT_EQ(names(c, c.route(0, 3)),
            (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.pcie_sw1.uplink_up", "node0.pcie_sw0.uplink_up",
                                      "node0.pcie_sw3.uplink_down", "node0.gpu3.pcie_down"}));
  // The other socket's root ports: over the socket link.
  EXPECT_EQ(names(c, c.route(2, 4)),
            (std::vector<std::string>{"node0.gpu2.pcie_up", "node0.pcie_sw2.uplink_up", "node0.pcie_sw0.uplink_up",
                                      "node0.cpu0->cpu1", "node0.gpu4.pcie_down"}));
  // Down from the top: the upper switch's uplink before the leaf's.
  EXPECT_EQ(names(c, c.route(4, 0)),
            (std::vector<std::string>{"node0.gpu4.pcie_up", "node0.cpu1->cpu0", "node0.pcie_sw0.uplink_down",
                                      "node0.pcie_sw1.uplink_down", "node0.gpu0.pcie_down"}));
  // Host memory: a copy crosses every uplink to the root complex.
  const std::vector<sim::ResourceId> to_host = c.host_route(1, true);
  EXPECT_EQ(names(c, to_host),
            (std::vector<std::string>{"node0.gpu1.pcie_up", "node0.pcie_sw1.uplink_up", "node0.pcie_sw0.uplink_up"}));
  const std::vector<sim::ResourceId> from_host = c.host_route(1, false);
  EXPECT_EQ(names(c, from_host), (std::vector<std::string>{"node0.pcie_sw0.uplink_down", "node0.pcie_sw1.uplink_down",
                                                           "node0.gpu1.pcie_down"}));
  // A device's uplink names its upstream switch.
  bool cascade_edge = false;
  for (const ClusterEdge& e : c.edges())
    if (e.name == "node0.pcie_sw2.uplink_up") cascade_edge = e.to == "node0.pcie_sw0";
  EXPECT_TRUE(cascade_edge);
  // Without P2P, GPUs of one leaf stage through host memory: up to the root complex and back.
  ClusterSpec staged = spec;
  staged.pcie_p2p = false;
  const Cluster s(staged);
  EXPECT_EQ(names(s, s.route(0, 1)), (std::vector<std::string>{"node0.gpu0.pcie_up", "node0.pcie_sw1.uplink_up",
                                                               "node0.pcie_sw0.uplink_up", "node0.pcie_sw0.uplink_down",
                                                               "node0.pcie_sw1.uplink_down", "node0.gpu1.pcie_down"}));
  EXPECT_NE(c.describe().find("pcie_sw2: uplink 20 GB/s to pcie_sw0"), std::string::npos) << c.describe();
}

TEST(PcieTree, ImpossibleTreesAreRefused) {
  const NodeTemplate box = cascade();
  NodeTemplate t = box;
  t.pcie_tree[1].upstream_switch = 2;
  t.pcie_tree[2].upstream_switch = 1;
  EXPECT_EQ(problem(t),
            "pcie_switch[1].upstream_switch: switch 1 is in a cycle of upstream switches (expected a tree: every "
            "chain of upstream_switch ends at a switch on a socket)");
  t = box;
  t.pcie_tree[2].upstream_switch = 2;
  EXPECT_EQ(problem(t), "pcie_switch[2].upstream_switch: switch 2 is its own upstream (expected another switch)");
  t = box;
  t.pcie_tree[2].upstream_switch = 7;
  EXPECT_EQ(problem(t), "pcie_switch[2].upstream_switch: got 7 (expected 0 to 3, the index of a pcie_switch entry)");
  t = box;
  t.pcie_tree[0].socket = 2;
  EXPECT_EQ(problem(t), "pcie_switch[0].socket: got 2 (expected 0 to 1, a socket of the node)");
  t = box;
  t.pcie_tree[1].socket = 0;
  EXPECT_EQ(problem(t),
            "pcie_switch[1].upstream_switch: set with socket (expected one uplink: a socket's root complex or an "
            "upstream switch)");
  t = box;
  t.pcie_tree[0].socket = -1;
  EXPECT_EQ(problem(t),
            "pcie_switch[0].socket: not set, nor upstream_switch (expected the socket or the switch its uplink "
            "reaches)");
  t = box;
  t.pcie_tree[0].uplink_lanes = 12;
  EXPECT_EQ(problem(t), "pcie_switch[0].uplink_lanes: got 12 (expected 1, 2, 4, 8 or 16)");
  t = box;
  t.pcie_tree[3].uplink_generation = 7;
  EXPECT_EQ(problem(t), "pcie_switch[3].uplink_generation: got 7 (expected 1 to 6)");
  t = box;
  t.pcie_tree[2].uplink_bytes_per_s = 1;
  EXPECT_EQ(problem(t).rfind("pcie_switch[2].uplink_bytes_per_s: got 1 bytes/s = 1e-09 GB/s (expected 0 for", 0), 0u);
  t = box;
  t.pcie_tree[3].gpus.push_back(0);
  EXPECT_EQ(problem(t),
            "pcie_switch[3].gpus: GPU 0 attached twice (first in pcie_switch[1].gpus; expected each GPU on one "
            "switch or root port)");
  t = box;
  t.root_ports[0].gpus = {4};
  EXPECT_EQ(problem(t),
            "pcie_switch: GPU 5 not attached (expected it in the gpus of one pcie_switch or root_ports "
            "entry)");
  t = box;
  t.pcie_tree[2].gpus.push_back(6);
  EXPECT_EQ(problem(t), "pcie_switch[2].gpus: GPU 6 out of range (expected 0 to 5)");
  t = box;
  t.root_ports[0].nics = {1, 1};
  EXPECT_EQ(problem(t),
            "root_ports[0].nics: NIC 1 attached twice (first in root_ports[0].nics; expected each NIC on one switch "
            "or root port)");
  t = box;
  t.pcie_tree[1].nics.clear();
  EXPECT_EQ(problem(t),
            "pcie_switch: NIC 0 not attached (expected it in the nics of one pcie_switch or root_ports "
            "entry)");
  t = box;
  t.root_ports[0].socket = 3;
  EXPECT_EQ(problem(t), "root_ports[0].socket: got 3 (expected 0 to 1, a socket of the node)");
  t = box;
  t.pcie_switches = 5;
  EXPECT_EQ(problem(t), "pcie_switches: got 5 with 4 pcie_switch entries (expected their count, or no pcie_switches)");
  t = box;
  PcieSwitch spare;
  spare.socket = 0;
  t.pcie_tree.resize(17, spare);
  t.pcie_switches = 17;
  EXPECT_EQ(problem(t),
            "pcie_switch: 17 switches for 6 GPUs and 2 NICs (expected at most 16, twice the devices: a tree whose "
            "switches each fan out)");
  // Which GPUs a NIC serves.
  t = box;
  t.nic_gpus[1].nic = 0;
  EXPECT_EQ(problem(t), "nic_gpus[1].nic: NIC 0 listed twice (expected one entry per NIC, with all its GPUs)");
  t = box;
  t.nic_gpus[1].nic = 2;
  EXPECT_EQ(problem(t), "nic_gpus[1].nic: got 2 (expected 0 to 1, a NIC of the node)");
  t = box;
  t.nic_gpus[1].gpus = {4};
  EXPECT_EQ(problem(t), "nic_gpus: GPU 5 served by no NIC (expected every GPU in some entry's gpus)");
  t = box;
  t.nic_gpus.pop_back();
  EXPECT_EQ(problem(t), "nic_gpus: NIC 1 serves no GPU (expected an entry for every NIC)");
  t = box;
  t.nic_gpus[0].gpus = {};
  EXPECT_EQ(problem(t), "nic_gpus[0].gpus: none for NIC 0 (expected the GPUs it serves)");
  t = box;
  t.nic_gpus[0].gpus.push_back(9);
  EXPECT_EQ(problem(t), "nic_gpus[0].gpus: GPU 9 out of range (expected 0 to 5)");
  t = box;
  t.nics = 0;
  t.pcie_tree[1].nics.clear();
  t.root_ports[0].nics.clear();
  EXPECT_EQ(problem(t), "nic_gpus: set on a node without NICs (expected no nic_gpus entries)");
  // A template changed after its tree was written: the cluster says so, naming the template.
  t = box;
  t.name = "pcie_tree_test_stale";
  t.gpus_per_node = 8;
  ClusterSpec spec;
  spec.described_node_templates = DescribedNodeTemplates({t});
  spec.node_template = t.name;
  try {
    const Cluster c(spec);
    FAIL() << "a stale tree was routed";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "cluster.node_template: PCIe tree of 'pcie_tree_test_stale': pcie_switch: GPU 6 not attached (expected "
              "it in the gpus of one pcie_switch or root_ports entry)");
  }
}

TEST(PcieTree, TextFormRefusesUnknownAndRepeatedFields) {
  const std::string head = R"(node_template {
  name: "x" gpu: "L40S" gpus_per_node: 2 scale_up: none nic: "IB-HDR-200" nics: 1 sockets: 1
  pcie_generation: 4 source: "test"
)";
  try {
    read_node_templates(head + "  pcie_switch { socket: 0 lanes: 8 }\n}\n", "t.textproto");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "t.textproto:4:27: pcie_switch.lanes: unknown field of pcie_switch");
  }
  try {
    read_node_templates(head + "  root_ports { socket: 0 socket: 0 }\n}\n", "t.textproto");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "t.textproto:4:26: root_ports.socket: given twice (expected once)");
  }
  // A written tree's switch count is its entries' count; written with it, it must agree.
  const NodeTemplate t =
      read_node_templates(head + "  pcie_switch { socket: 0 gpus: [0, 1] nics: [0] }\n}\n", "t.textproto").front();
  EXPECT_EQ(t.pcie_switches, 1);
  EXPECT_TRUE(pcie_tree_is_regular(t));  // one switch with everything: the regular layout of 1 switch
}

}  // namespace
}  // namespace traincast::models
