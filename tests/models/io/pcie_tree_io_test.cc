// A node's PCIe tree written in a scenario (docs/hardware.md, "User-described nodes"): the shipped
// DGX-2 example builds the topology its published `nvidia-smi topo -m` shows; the fields are
// refused with their positions; a written tree writes back and reads back the same.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/collectives/nccl_topo_search.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "models/hardware/pcie_tree.h"
#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

// `nvidia-smi topo -m` of a DGX-2, NVIDIA/nccl-tests issue 78 (2020), the rows the excerpt
// shows: GPU0-GPU4 against mlx5_0..mlx5_7 (mlx5_8/9 are not compute NICs; every GPU-GPU cell is
// NV6). nvidia-smi's NODE (another host bridge of the same CPU) is NCCL's PHB.
const std::vector<std::vector<std::string>> kDgx2TopoRows = {
    {"PIX", "PXB", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"},  // GPU0
    {"PIX", "PXB", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"},  // GPU1
    {"PXB", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"},  // GPU2
    {"PXB", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"},  // GPU3
    {"PHB", "PHB", "PIX", "PXB", "SYS", "SYS", "SYS", "SYS"},  // GPU4
};

TEST(PcieTreeIo, Dgx2ExampleMatchesItsTopologyMatrix) {
  const models::Scenario s =
      load_cluster_scenario_file(std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/nccl/dgx2_v100_pcie_tree.textproto");
  const models::Cluster c(s.cluster);
  ASSERT_EQ(c.nics_per_node(), 8);
  for (std::size_t g = 0; g < kDgx2TopoRows.size(); ++g) {
    for (std::size_t n = 0; n < kDgx2TopoRows[g].size(); ++n) {
      EXPECT_EQ(
          models::nccl_path_type_name(models::nccl_gpu_nic_path_type(c, static_cast<int>(g), static_cast<int>(n))),
          kDgx2TopoRows[g][n])
          << "GPU" << g << " mlx5_" << n;
    }
    for (int peer = 0; peer < c.gpus_per_node(); ++peer) {  // NV6 to every peer: NVLink through NVSwitch
      if (peer != static_cast<int>(g)) {
        EXPECT_EQ(models::nccl_gpu_path_type(c, static_cast<int>(g), peer), models::NcclPathType::nvl);
      }
    }
  }
  // The same server in the regular layout (8 switches straight on the CPUs) has no PXB: GPU0 to
  // mlx5_1 crosses the root complex there.
  const models::Scenario flat =
      load_cluster_scenario_file(std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/nccl/dgx2_v100_1node.textproto");
  models::ClusterSpec two = flat.cluster;
  const models::Cluster f(two);
  EXPECT_EQ(models::nccl_gpu_nic_path_type(f, 0, 1), models::NcclPathType::phb);
}

/// A scenario of 2 nodes of its own 4-GPU PCIe box (lines 1-10 the template's head, the tree from
/// line 11).
std::string described(const std::string& tree) {
  return "node_template {\n"
         "  name: \"tree_box\"\n"
         "  gpu: \"A100-PCIe-80GB\"\n"
         "  gpus_per_node: 4\n"
         "  scale_up: none\n"
         "  nic: \"IB-HDR-200\"\n"
         "  nics: 2\n"
         "  sockets: 1\n"
         "  pcie_generation: 4\n"
         "  source: \"test\"\n" +
         tree +
         "}\n"
         "cluster { node_template: \"tree_box\" num_nodes: 2 }\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { tp: 2 pp: 2 dp: 2 }\n"
         "  training { global_batch_size: 16 }\n"
         "}\n";
}

const std::string kTree =
    "  pcie_switch { socket: 0 uplink_lanes: 8 }\n"
    "  pcie_switch { upstream_switch: 0 gpus: [0, 1] nics: [0] }\n"
    "  pcie_switch { upstream_switch: 0 gpus: [2] nics: [1] }\n"
    "  root_ports { socket: 0 gpus: [3] }\n"
    "  nic_gpus { nic: 0 gpus: [0, 1, 3] }\n"
    "  nic_gpus { nic: 1 gpus: [2] }\n";

TEST(PcieTreeIo, WrittenTreeLoadsWritesBackAndReadsBack) {
  const models::Scenario s = load_scenario_text(described(kTree), "t.textproto", Format::text);
  const models::NodeTemplate& t = models::find_node_template("tree_box", s.cluster);
  EXPECT_EQ(t.pcie_switches, 3);
  EXPECT_EQ(t.pcie_tree[1].upstream_switch, 0);
  EXPECT_DOUBLE_EQ(t.pcie_tree[0].uplink_bytes_per_s, models::pcie_bytes_per_s(4, 8));
  EXPECT_FALSE(models::pcie_tree_is_regular(t));
  EXPECT_FALSE(models::nic_gpus_are_regular(t));  // by default NIC 0 serves GPUs 0-1, NIC 1 GPUs 2-3
  const std::string text = scenario_to_text(s);
  EXPECT_NE(text.find("upstream_switch: 0"), std::string::npos) << text;
  EXPECT_NE(text.find("root_ports {"), std::string::npos) << text;
  EXPECT_EQ(scenario_to_text(load_scenario_text(text, "back.textproto", Format::text)), text);
}

TEST(PcieTreeIo, RefusesWithPositions) {
  // Line 11 is the first tree line.
  EXPECT_EQ(
      errors_of(described("  pcie_switch { socket: 0 upstream_switch: 0 gpus: [0, 1, 2, 3] nics: [0, 1] }\n")).front(),
      "t.textproto:11:27: node_template[0].pcie_switch[0].upstream_switch: set with socket (expected one "
      "uplink: a socket's root complex or an upstream switch)");
  EXPECT_EQ(errors_of(described("  pcie_switch { socket: 0 gpus: [0, 1, 2] nics: [0, 1] }\n"
                                "  pcie_switch { upstream_switch: 4 gpus: [3] }\n"))
                .front(),
            "t.textproto:12:17: node_template[0].pcie_switch[1].upstream_switch: got 4 (expected 0 to 1, the index "
            "of a pcie_switch entry)");
  EXPECT_EQ(errors_of(described("  pcie_switch { socket: 0 gpus: [0, 1, 2, 3] nics: [0, 1] }\n"
                                "  root_ports { socket: 0 gpus: [3] }\n"))
                .front(),
            "t.textproto:12:26: node_template[0].root_ports[0].gpus: GPU 3 attached twice (first in "
            "pcie_switch[0].gpus; expected each GPU on one switch or root port)");
  EXPECT_EQ(errors_of(described(kTree + "  nic_gpus { gpus: [0] }\n")).front(),
            "t.textproto:17:3: node_template[0].nic_gpus[2].nic: not set (expected the NIC whose GPUs these are)");
  EXPECT_EQ(errors_of(described("  pcie_switches: 2\n" + kTree)).front(),
            "t.textproto:11:3: node_template[0].pcie_switches: got 2 with 3 pcie_switch entries (expected their "
            "count, or no pcie_switches)");
  // A negative socket or upstream switch is refused with its value, not read as "not set"
  // (fresh-user finding).
  EXPECT_EQ(errors_of(described("  pcie_switch { socket: -1 gpus: [0, 1, 2, 3] nics: [0, 1] }\n")).front(),
            "t.textproto:11:17: node_template[0].pcie_switch[0].socket: got -1 (expected 0 to sockets - 1, a socket "
            "of the node)");
  EXPECT_EQ(errors_of(described("  pcie_switch { socket: 0 gpus: [0, 1, 2] nics: [0, 1] }\n"
                                "  pcie_switch { upstream_switch: -1 gpus: [3] }\n"))
                .front(),
            "t.textproto:12:17: node_template[0].pcie_switch[1].upstream_switch: got -1 (expected the index of a "
            "pcie_switch entry, from 0)");
  // The block's own errors (GPU 3, NICs 0 and 1 not attached), not a further "unknown node template".
  EXPECT_EQ(errors_of(described("  root_ports { socket: 0 gpus: [0, 1, 2] }\n")).size(), 3u);
}

// A tree index that is not a whole number: "a whole number >= 0" and what it indexes, at the value,
// not the int32 range (review finding).
TEST(PcieTreeIo, NonIntegerIndexNamesAWholeNumber) {
  EXPECT_EQ(errors_of(described("  pcie_switch { socket: 0 gpus: [0, 1.5, 2, 3] nics: [0, 1] }\n")),
            std::vector<std::string>{"t.textproto:11:37: node_template[0].pcie_switch[0].gpus: invalid value 1.5 "
                                     "(expected a whole number >= 0: a GPU of the node, below gpus_per_node)"});
  EXPECT_EQ(errors_of(described("  pcie_switch { socket: \"x\" gpus: [0, 1, 2, 3] nics: [0, 1] }\n")),
            std::vector<std::string>{"t.textproto:11:25: node_template[0].pcie_switch[0].socket: invalid value \"x\" "
                                     "(expected a whole number >= 0: a socket of the node, below sockets)"});
  EXPECT_EQ(errors_of(described("  pcie_switch { socket: 0 gpus: [0, 1, 2] nics: [0, 1] }\n"
                                "  pcie_switch { upstream_switch: 0.5 gpus: [3] }\n")),
            std::vector<std::string>{"t.textproto:12:34: node_template[0].pcie_switch[1].upstream_switch: invalid "
                                     "value 0.5 (expected a whole number >= 0: the index of another pcie_switch "
                                     "entry)"});
  EXPECT_EQ(errors_of(described("  pcie_switch { socket: 0 gpus: [0, 1, 2, 3] nics: [0, x] }\n")),
            std::vector<std::string>{"t.textproto:11:56: node_template[0].pcie_switch[0].nics: invalid value x "
                                     "(expected a whole number >= 0: a NIC of the node, below nics)"});
  EXPECT_EQ(errors_of(described("  root_ports { socket: 1.0 gpus: [0, 1, 2, 3] nics: [0, 1] }\n")),
            std::vector<std::string>{"t.textproto:11:24: node_template[0].root_ports[0].socket: invalid value 1.0 "
                                     "(expected a whole number >= 0: a socket of the node, below sockets)"});
  EXPECT_EQ(errors_of(described(kTree + "  nic_gpus { nic: 1e0 gpus: [2] }\n")),
            std::vector<std::string>{"t.textproto:17:19: node_template[0].nic_gpus[2].nic: invalid value 1e0 "
                                     "(expected a whole number >= 0: a NIC of the node, below nics)"});
  EXPECT_EQ(
      errors_of(described("  pcie_switch { socket: 0 uplink_generation: 4.0 gpus: [0, 1, 2, 3] nics: [0, 1] }\n")),
      std::vector<std::string>{"t.textproto:11:46: node_template[0].pcie_switch[0].uplink_generation: invalid "
                               "value 4.0 (expected an integer from 0 to 6: 0 for the node's pcie_generation)"});
  // JSON: the same words.
  EXPECT_EQ(errors_of("{\"node_template\": [{\"name\": \"j\", \"nic_gpus\": [{\"nic\": 0, \"gpus\": [1.5]}]}]}",
                      Format::json),
            std::vector<std::string>{"t.json:1:67: node_template[0].nic_gpus[0].gpus[0]: invalid value 1.5 (expected "
                                     "a whole number >= 0: a GPU of the node, below gpus_per_node)"});
}

// A switch's own uplink rate out of range: named in GB/s, with the field and its line.
TEST(PcieTreeIo, UplinkRateOutOfRangeReadsInGbPerS) {
  EXPECT_EQ(
      errors_of(described("  pcie_switch { socket: 0 uplink_bytes_per_s: 2e12 gpus: [0, 1, 2, 3] nics: [0, 1] }\n")),
      std::vector<std::string>{
          "t.textproto:11:27: node_template[0].pcie_switch[0].uplink_bytes_per_s: got 2e12 bytes/s = 2000 GB/s "
          "(expected 0 for uplink_generation x uplink_lanes or the node's uplink, or 0.25 GB/s, PCIe 1.0 x1, "
          "to 1000 GB/s per direction: 250e6 to 1e12 bytes/s)"});
  EXPECT_EQ(
      errors_of(described("  pcie_switch { socket: 0 uplink_bytes_per_s: -1 gpus: [0, 1, 2, 3] nics: [0, 1] }\n"))
          .front()
          .rfind("t.textproto:11:27: node_template[0].pcie_switch[0].uplink_bytes_per_s: got -1 (expected 0 for ", 0),
      0u);
}

// A leaf switch with nothing below it is refused at its entry (review finding: it was simulated as
// an idle switch); an upper switch with switches below it is not a leaf.
TEST(PcieTreeIo, EmptyLeafSwitchIsRefused) {
  EXPECT_EQ(errors_of(described("  pcie_switch { socket: 0 gpus: [0, 1, 2, 3] nics: [0, 1] }\n"
                                "  pcie_switch { socket: 0 }\n")),
            std::vector<std::string>{"t.textproto:12:3: node_template[0].pcie_switch[1]: switch 1 has no GPU, NIC or "
                                     "switch below it (expected gpus or nics on a leaf switch, or no entry for a "
                                     "switch that carries nothing)"});
  EXPECT_EQ(errors_of(described(kTree + "  pcie_switch { upstream_switch: 0 }\n")),
            std::vector<std::string>{"t.textproto:17:3: node_template[0].pcie_switch[3]: switch 3 has no GPU, NIC or "
                                     "switch below it (expected gpus or nics on a leaf switch, or no entry for a "
                                     "switch that carries nothing)"});
  // The regular layout of a count that leaves a switch empty: 3 switches for 4 GPUs (2, 2, none).
  EXPECT_EQ(errors_of(described("  pcie_switches: 3\n")),
            std::vector<std::string>{"t.textproto:11:3: node_template[0].pcie_switches: got 3 for 4 GPUs: the regular "
                                     "layout puts 2 GPUs under each switch, so switch 2 would have no GPU or NIC below "
                                     "it (expected a count whose switches all get GPUs, e.g. 2 with 2 GPUs each, or "
                                     "pcie_switch entries for another tree)"});
  EXPECT_NO_THROW(load_scenario_text(described("  pcie_switches: 4\n"), "t.textproto", Format::text));
}

// A described template no node uses loads (a library of templates is legitimate) with a positioned
// note the commands print as a warning; a used one, or the base of a partition, gives none.
TEST(PcieTreeIo, UnusedTemplateIsANoteNotAnError) {
  const std::string spare =
      "node_template {\n"
      "  name: \"spare_box\"\n"
      "  gpu: \"A100-PCIe-80GB\"\n"
      "  gpus_per_node: 4\n"
      "  scale_up: none\n"
      "  nic: \"IB-HDR-200\"\n"
      "  nics: 2\n"
      "  sockets: 1\n"
      "  pcie_generation: 4\n"
      "  source: \"test\"\n"
      "}\n";
  const models::Scenario s = load_scenario_text(described(kTree) + spare, "t.textproto", Format::text);
  EXPECT_EQ(s.input_warnings,
            std::vector<std::string>{"t.textproto:25:3: node_template[1].name: \"spare_box\" is described but no node "
                                     "uses it (the cluster names \"tree_box\"); it is checked, not simulated (expected "
                                     "cluster.node_template or a node group's node_template to name it for it to "
                                     "run)"});
  EXPECT_TRUE(load_scenario_text(described(kTree), "t2.textproto", Format::text).input_warnings.empty());
}

// A multi-node cluster of a node without NICs: refused at the template's name with its position
// (review finding: "traincast: cluster.node_template: ..." at run time, no position).
TEST(PcieTreeIo, MultiNodeWithoutNicsIsPositioned) {
  std::string text = described("  pcie_switch { socket: 0 gpus: [0, 1, 2, 3] }\n");
  text.replace(text.find("  nics: 2\n"), 10, "  nics: 0\n");
  EXPECT_EQ(errors_of(text),
            std::vector<std::string>{"t.textproto:13:11: cluster.node_template: \"tree_box\" has no compute NICs "
                                     "(nics: 0) for a cluster of 2 nodes (expected a node template with NICs, "
                                     "cluster.nics_per_node >= 1, or num_nodes: 1)"});
  // One node needs no NIC; nics_per_node gives the node NICs of the template's kind.
  EXPECT_NO_THROW(
      load_scenario_text(text, "t.textproto", Format::text, {"cluster.num_nodes=1", "workload.parallel.dp=1"}));
}

}  // namespace
}  // namespace traincast::io
