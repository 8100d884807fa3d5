// Tests of a scenario's own node templates (models/io/node_template_io.h): the built-in data file
// read by protobuf as a scenario reads it gives the catalog's templates field for field (one form,
// two readers); described templates load, are used, write back, and are refused with positions.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/executor/training_run.h"
#include "models/hardware/catalog.h"
#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"
#include "tests/models/io/small_scenario.h"

namespace traincast::io {
namespace {

using test_support::errors_of;
using test_support::small;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// `text` with every `name: "x"` turned into `name: "x<suffix>"`.
std::string renamed(std::string text, const std::string& suffix) {
  const std::string key = "name: \"";
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const std::size_t end = text.find('"', at + key.size());
    text.insert(end, suffix);
  }
  return text;
}

void expect_same(const models::NodeTemplate& a, const models::NodeTemplate& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
  EXPECT_EQ(a.scale_up, b.scale_up);
  EXPECT_EQ(a.bridge_gpus, b.bridge_gpus);
  EXPECT_EQ(a.nvswitches, b.nvswitches);
  EXPECT_EQ(a.nic, b.nic);
  EXPECT_EQ(a.nics, b.nics);
  EXPECT_EQ(a.sockets, b.sockets);
  EXPECT_EQ(a.pcie_switches, b.pcie_switches);
  EXPECT_EQ(a.pcie_generation, b.pcie_generation);
  EXPECT_EQ(a.pcie_lanes, b.pcie_lanes);
  EXPECT_EQ(a.pcie_bytes_per_s, b.pcie_bytes_per_s);
  EXPECT_EQ(a.pcie_uplink_bytes_per_s, b.pcie_uplink_bytes_per_s);
  EXPECT_EQ(a.socket_link_bytes_per_s, b.socket_link_bytes_per_s);
  EXPECT_EQ(a.cpu, b.cpu);
  EXPECT_EQ(a.pcie_p2p, b.pcie_p2p);
  EXPECT_EQ(a.liquid_cooled, b.liquid_cooled);
  EXPECT_EQ(a.gpus_per_rack, b.gpus_per_rack);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.nvlinks.size(), b.nvlinks.size());
}

TEST(NodeTemplateIo, BuiltinDataFileReadsAsAScenarioDoes) {
  const std::string data = read_file(std::string(TRAINCAST_SOURCE_DIR) + "/models/hardware/node_templates.textproto");
  ASSERT_FALSE(data.empty());
  // The catalog's own names are refused in a scenario: the copies carry a suffix.
  const models::Scenario s = load_scenario_text(renamed(data, "_copy") + small(), "copies.textproto", Format::text);
  for (const std::string& name : models::node_template_names())
    expect_same(models::find_node_template(name + "_copy", s.cluster), models::find_builtin_node_template(name));
}

/// A scenario of 2 nodes of its own 4-GPU PCIe box (lines 1-13 the template, 14 the cluster).
std::string described(const std::string& template_extra, const std::string& cluster = "my_box") {
  return "node_template {\n"
         "  name: \"my_box\"\n"
         "  gpu: \"A100-PCIe-80GB\"\n"
         "  gpus_per_node: 4\n"
         "  scale_up: none\n"
         "  nic: \"IB-HDR-200\"\n"
         "  nics: 2\n"
         "  sockets: 1\n"
         "  pcie_switches: 1\n"
         "  pcie_generation: 4\n"
         "  source: \"test\"\n" +
         template_extra +
         "}\n"
         "cluster { node_template: \"" +
         cluster +
         "\" num_nodes: 2 }\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { tp: 2 pp: 2 dp: 2 }\n"
         "  training { global_batch_size: 16 }\n"
         "}\n";
}

TEST(NodeTemplateIo, DescribedNodeLoadsAndWritesBack) {
  const models::Scenario s = load_scenario_text(described(""), "t.textproto", Format::text);
  EXPECT_EQ(s.cluster.node_template, "my_box");
  const models::NodeTemplate& t = models::find_node_template("my_box", s.cluster);
  EXPECT_EQ(t.gpus_per_node, 4);
  EXPECT_DOUBLE_EQ(t.pcie_bytes_per_s, models::pcie_bytes_per_s(4, 16));
  // The scenario's text carries the template it names, and reads back to the same scenario.
  const std::string text = scenario_to_text(s);
  EXPECT_NE(text.find("name: \"my_box\""), std::string::npos);
  EXPECT_EQ(scenario_to_text(load_scenario_text(text, "back.textproto", Format::text)), text);
}

// Two scenarios of one process describe different nodes under one name: both load, each runs on
// its own node, and neither's answer depends on the other having been read.
TEST(NodeTemplateIo, TwoScenariosMayDescribeOneNameDifferently) {
  std::string gen3 = described("");
  gen3.replace(gen3.find("pcie_generation: 4"), 18, "pcie_generation: 3");
  const models::Scenario a = load_scenario_text(described(""), "a.textproto", Format::text);
  const double a_alone_s = models::simulate_training_timing(a).iteration_time_s;
  const models::Scenario b = load_scenario_text(gen3, "b.textproto", Format::text);
  EXPECT_EQ(models::cluster_node_template(a.cluster).pcie_generation, 4);
  EXPECT_EQ(models::cluster_node_template(b.cluster).pcie_generation, 3);
  EXPECT_THROW(models::find_builtin_node_template("my_box"), std::invalid_argument);  // no process-wide name
  // TP over PCIe: the gen3 box is slower.
  const double b_s = models::simulate_training_timing(b).iteration_time_s;
  EXPECT_GT(b_s, a_alone_s);
  // The first again, after the second was read: the same answer, and the same when reloaded.
  EXPECT_EQ(models::simulate_training_timing(a).iteration_time_s, a_alone_s);
  const models::Scenario again = load_scenario_text(described(""), "a.textproto", Format::text);
  EXPECT_EQ(models::simulate_training_timing(again).iteration_time_s, a_alone_s);
  EXPECT_TRUE(again == a);
  EXPECT_FALSE(b == a);
  // Each prints its own node back.
  EXPECT_NE(scenario_to_text(b).find("pcie_generation: 3"), std::string::npos);
  EXPECT_EQ(scenario_to_text(a).find("pcie_generation: 3"), std::string::npos);
}

// "base/N" of a described rack is cut from the scenario's own rack: two scenarios' racks of one
// name give each its own partition.
TEST(NodeTemplateIo, PartitionsOfADescribedNodeAreTheScenarios) {
  const auto rack = [](const std::string& gpu) {
    return "node_template {\n"
           "  name: \"my_rack\" gpu: \"" +
           gpu +
           "\" gpus_per_node: 8 scale_up: nvswitch nvswitches: 4\n"
           "  nic: \"IB-NDR-400\" nics: 8 sockets: 2 pcie_switches: 8 pcie_generation: 5\n"
           "  socket_link_bytes_per_s: 22e9 source: \"test\"\n"
           "}\n" +
           small();
  };
  const std::vector<std::string> sets{"cluster.node_template=my_rack/4", "cluster.num_nodes=2"};
  const models::Scenario h100 = load_scenario_text(rack("H100-SXM5-80GB"), "a.textproto", Format::text, sets);
  const models::Scenario h200 = load_scenario_text(rack("H200-SXM-141GB"), "b.textproto", Format::text, sets);
  const models::NodeTemplate& a = models::cluster_node_template(h100.cluster);
  const models::NodeTemplate& b = models::cluster_node_template(h200.cluster);
  EXPECT_EQ(a.gpus_per_node, 4);
  EXPECT_EQ(a.gpu, "H100-SXM5-80GB");
  EXPECT_EQ(b.gpu, "H200-SXM-141GB");
  EXPECT_EQ(&models::cluster_node_template(h100.cluster), &a);  // kept with the scenario's templates
  EXPECT_LT(models::simulate_training_timing(h200).iteration_time_s,
            models::simulate_training_timing(h100).iteration_time_s);  // the H200's HBM
}

// bridge_gpus on a node without NVLink bridges has no effect: warned (it was silent, and printed
// back), not refused (a built-in copied field by field carries it).
TEST(NodeTemplateIo, BridgeGpusWithoutBridgesIsWarned) {
  const models::Scenario s = load_scenario_text(described("  bridge_gpus: 4\n"), "t.textproto", Format::text);
  EXPECT_EQ(s.input_warnings,
            std::vector<std::string>{"t.textproto:12:3: node_template[0].bridge_gpus: 4 with scale_up none has no "
                                     "effect (expected it only with scale_up: bridges, PCIe cards joined by NVLink "
                                     "bridges)"});
  EXPECT_EQ(scenario_to_text(s).find("bridge_gpus"), std::string::npos);  // not written back
  // So is a link between sockets on a node of one socket.
  const models::Scenario one =
      load_scenario_text(described("  socket_link_bytes_per_s: 16e9\n"), "t.textproto", Format::text);
  EXPECT_EQ(one.input_warnings,
            std::vector<std::string>{"t.textproto:12:3: node_template[0].socket_link_bytes_per_s: set on a node of 1 "
                                     "socket, where it has no effect (expected it only with sockets >= 2: the link "
                                     "between sockets)"});
}

TEST(NodeTemplateIo, RefusesWithPositions) {
  EXPECT_EQ(errors_of(described("  pcie_lanes: 3\n")).front(),
            "t.textproto:12:3: node_template[0].pcie_lanes: got 3 (expected 1, 2, 4, 8 or 16)");
  EXPECT_EQ(errors_of(described("  scale_up: nvswitch\n")).front(),
            "t.textproto:12:3: node_template[0].scale_up: specified more than once (expected a single value)");
  std::string unknown = described("");
  unknown.replace(unknown.find("A100-PCIe-80GB"), 14, "A100-PCIe-99");
  const std::vector<std::string> gpu = errors_of(unknown);
  EXPECT_EQ(gpu.front().substr(0, 50), "t.textproto:3:3: node_template[0].gpu: unknown GPU");
  std::string clash = described("");
  clash.replace(clash.find("my_box"), 6, "dgx_a100");
  EXPECT_EQ(errors_of(clash).front(),
            "t.textproto:2:3: node_template[0].name: \"dgx_a100\" is a built-in node template (expected a name of its "
            "own; `traincast catalog` lists the built-ins)");
  // A non-integer count names the field's own range (it gave int32's, [-2147483648, 2147483647]).
  EXPECT_EQ(errors_of(described("  nvswitches: 2.5\n")).front(),
            "t.textproto:12:15: node_template[0].nvswitches: invalid value 2.5 (expected a whole number >= 0: at most "
            "one per GPU NVLink port)");
  // A name that differs from a built-in only in case (it loaded, and reports printed "DGX_H100").
  std::string cased = described("", "DGX_H100");
  cased.replace(cased.find("my_box"), 6, "DGX_H100");
  EXPECT_EQ(errors_of(cased),
            std::vector<std::string>{"t.textproto:2:3: node_template[0].name: \"DGX_H100\" differs from the built-in "
                                     "node template \"dgx_h100\" only in case (expected a name of its own: reports "
                                     "would read it as the built-in)"});
  // The scenario's own templates are suggested and listed for a misspelt name.
  const std::vector<std::string> misspelt = errors_of(described("", "my_bx"));
  ASSERT_EQ(misspelt.size(), 1u);
  EXPECT_NE(misspelt.front().find("unknown node template \"my_bx\", did you mean \"my_box\"? (expected one of: "
                                  "my_box, dgx_a100,"),
            std::string::npos)
      << misspelt.front();
  // A space in a name (a fresh user's "dgx_h100 " printed as the built-in in every report).
  std::string spaced = described("");
  spaced.replace(spaced.find("my_box"), 6, "dgx_h100 ");
  EXPECT_EQ(errors_of(spaced).front(),
            "t.textproto:2:3: node_template[0].name: \"dgx_h100 \" holds a space or control character (expected one "
            "word: reports print the name as it is, so \"dgx_h100 \" would read as the built-in)");
  EXPECT_EQ(errors_of(described("  nvlink { gpus: [0] }\n")).front(),
            "t.textproto:12:12: node_template[0].nvlink[0].gpus: 1 GPUs (expected two: gpus: [a, b])");
  std::string missing = described("");
  missing.replace(missing.find("  source: \"test\"\n"), 17, "");
  EXPECT_EQ(errors_of(missing).front(),
            "t.textproto:1:1: node_template[0].source: not set (expected it in every node template)");
  // Only the block's own error: not a second "cluster.node_template: unknown node template".
  EXPECT_EQ(errors_of(missing).size(), 1u);
  EXPECT_EQ(errors_of(described("  pcie_lanes: 3\n")).size(), 1u);
}

}  // namespace
}  // namespace traincast::io
