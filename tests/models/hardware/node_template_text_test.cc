// Tests of node templates as data (models/hardware/node_template_text.h): the reader of the text
// form, the checks every template goes through, the registry of described templates, and the
// NVLink graph in the cluster model.

#include "models/hardware/node_template_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"

namespace traincast::models {
namespace {

/// A valid 8-GPU V100 node in the hybrid cube mesh of the NVIDIA DGX-1 V100 whitepaper (24 links).
const char* kCubeMesh = R"(node_template {
  name: "cube"
  gpu: "V100-SXM2-32GB"
  gpus_per_node: 8
  scale_up: graph
  nic: "IB-EDR-100"
  nics: 4
  sockets: 2
  pcie_switches: 4
  pcie_generation: 3
  socket_link_bytes_per_s: 10e9
  source: "test: DGX-1 V100 whitepaper"
  nvlink { gpus: [0, 1] links: 1 } nvlink { gpus: [0, 2] links: 1 } nvlink { gpus: [0, 3] links: 2 }
  nvlink { gpus: [0, 4] links: 2 } nvlink { gpus: [1, 2] links: 2 } nvlink { gpus: [1, 3] links: 1 }
  nvlink { gpus: [1, 5] links: 2 } nvlink { gpus: [2, 3] links: 2 } nvlink { gpus: [2, 6] links: 1 }
  nvlink { gpus: [3, 7] links: 1 } nvlink { gpus: [4, 5] links: 1 } nvlink { gpus: [4, 6] links: 1 }
  nvlink { gpus: [4, 7] links: 2 } nvlink { gpus: [5, 6] links: 2 } nvlink { gpus: [5, 7] links: 1 }
  nvlink { gpus: [6, 7] links: 2 }
}
)";

std::string error_of(const std::string& text) {
  try {
    read_node_templates(text, "t.textproto");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("no '" + from + "' in the text");
  return text.replace(at, from.size(), to);
}

TEST(NodeTemplateText, BuiltinsComeFromTheDataFileWithDerivedPcieRates) {
  // Every built-in read and completed (a problem would throw here); dgx_a100 as the whitepaper.
  ASSERT_EQ(node_template_names().size(), 27u);
  const NodeTemplate& t = find_builtin_node_template("dgx_a100");
  EXPECT_EQ(t.gpu, "A100-SXM4-80GB");
  EXPECT_EQ(t.scale_up, ScaleUp::nvswitch);
  EXPECT_EQ(t.nvswitches, 6);
  EXPECT_DOUBLE_EQ(t.pcie_bytes_per_s, pcie_bytes_per_s(4, 16));         // 31.5e9: gen4 x16
  EXPECT_DOUBLE_EQ(t.pcie_uplink_bytes_per_s, pcie_bytes_per_s(4, 16));  // the link's rate
  EXPECT_DOUBLE_EQ(t.socket_link_bytes_per_s, 16e9);                     // NCCL AMD_ZEN12_BW
  // Root ports (no switch): no uplink; explicit rates kept (GB200's NVLink-C2C 450 GB/s).
  EXPECT_EQ(find_builtin_node_template("tinybox_6x4090").pcie_uplink_bytes_per_s, 0.0);
  EXPECT_DOUBLE_EQ(find_builtin_node_template("gb200_nvl72").pcie_bytes_per_s, 450e9);
  EXPECT_TRUE(find_builtin_node_template("gb300_nvl72").liquid_cooled);
  EXPECT_TRUE(is_builtin_node_template("dgx_h100"));
  EXPECT_FALSE(is_builtin_node_template("dgx_h100/4"));
}

TEST(NodeTemplateText, ReadsTheGraph) {
  const std::vector<NodeTemplate> v = read_node_templates(kCubeMesh, "t.textproto");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].scale_up, ScaleUp::graph);
  ASSERT_EQ(v[0].nvlinks.size(), 16u);
  EXPECT_EQ(v[0].nvlinks[2].gpu_a, 0);
  EXPECT_EQ(v[0].nvlinks[2].gpu_b, 3);
  EXPECT_EQ(v[0].nvlinks[2].links, 2);
  EXPECT_DOUBLE_EQ(v[0].pcie_bytes_per_s, pcie_bytes_per_s(3, 16));
}

TEST(NodeTemplateText, RefusesWithPositionFieldAndExpectation) {
  EXPECT_EQ(error_of("node_template {\n  nmae: \"x\"\n}\n"), "t.textproto:2:3: nmae: unknown field of node_template");
  EXPECT_EQ(error_of(replaced(kCubeMesh, "\"V100-SXM2-32GB\"", "\"V100-SXM9\"")).substr(0, 47),
            "t.textproto:1:15: node_template \"cube\" gpu: unk");
  EXPECT_EQ(error_of(replaced(kCubeMesh, "gpus: [6, 7] links: 2", "gpus: [6, 8] links: 2")),
            "t.textproto:1:15: node_template \"cube\" nvlink[15].gpus: [6, 8] names a GPU out of range (expected "
            "indices 0 to 7)");
  EXPECT_EQ(error_of(replaced(kCubeMesh, "gpus: [6, 7] links: 2", "gpus: [6, 7] links: 3")),
            "t.textproto:1:15: node_template \"cube\" nvlink: GPU 6 has 7 NVLink links listed and a V100-SXM2-32GB "
            "has 6 (expected at most 6 per GPU)");
  EXPECT_EQ(error_of(replaced(kCubeMesh, "gpus: [6, 7]", "gpus: [7, 6]")), "(no error)");  // either order
}

/// The first problem complete_node_template finds in `t`, as "field: what".
std::string problem(NodeTemplate t) {
  const std::vector<NodeTemplateProblem> p = complete_node_template(t);
  return p.empty() ? "(none)" : p.front().field + ": " + p.front().what;
}

TEST(NodeTemplateText, RefusesImpossibleNodes) {
  NodeTemplate cube = read_node_templates(kCubeMesh, "t.textproto").front();
  NodeTemplate t = cube;
  t.nvlinks.push_back({3, 0, 1});
  EXPECT_EQ(problem(t), "nvlink[16].gpus: GPUs 3 and 0 listed twice (expected each pair once, with its link count)");
  t = cube;
  t.nvlinks[0] = {1, 1, 1};
  EXPECT_EQ(problem(t), "nvlink[0].gpus: GPU 1 linked to itself (expected two different GPUs)");
  t = cube;
  t.nvlinks.clear();
  EXPECT_EQ(problem(t), "scale_up: graph without nvlink entries (expected nvlink { gpus: [a, b] links: n } entries)");
  t = cube;
  t.gpu = "RTX-4090";  // a PCIe card without NVLink on an NVLink graph
  EXPECT_EQ(problem(t),
            "scale_up: graph with RTX-4090, a PCIe card (expected a baseboard GPU with NVLink or xGMI "
            "links, or scale_up: none)");
  t = cube;
  t.scale_up = ScaleUp::nvswitch;
  t.nvlinks.clear();
  // The count left out: told the fewest chips the GPUs' links need (fresh-user finding, session 33).
  EXPECT_EQ(problem(t),
            "nvswitches: got 0 for 8 x 6 NVLink2 links = 48 GPU ports (expected at least 3: an NVLink2 switch chip "
            "has 18 ports)");
  // NVSwitch chips: enough ports for every GPU link (8 x 6 NVLink2 links on 18-port chips: 3), and
  // none that no GPU link reaches (fresh-user finding: 1,000 chips on 8 GPUs ran).
  t = cube;
  t.scale_up = ScaleUp::nvswitch;
  t.nvlinks.clear();
  t.nvswitches = 2;
  EXPECT_EQ(problem(t),
            "nvswitches: got 2 for 8 x 6 NVLink2 links = 48 GPU ports (expected at least 3: an NVLink2 "
            "switch chip has 18 ports)");
  t.nvswitches = 1000;
  EXPECT_EQ(problem(t),
            "nvswitches: got 1000 for 48 GPU links (expected at most 48: a switch chip no GPU link "
            "reaches carries no traffic)");
  t.nvswitches = 6;
  EXPECT_EQ(problem(t), "(none)");
  t = cube;
  t.scale_up = ScaleUp::mesh;
  t.nvlinks.clear();  // 6 links cannot reach 7 peers
  EXPECT_EQ(problem(t),
            "scale_up: mesh of 8 GPUs and a V100-SXM2-32GB has 6 links (expected at least one link to "
            "each of the 7 peers)");
  t = cube;
  t.scale_up = ScaleUp::none;
  EXPECT_EQ(problem(t),
            "nvlink: set with scale_up none (expected scale_up: graph for a node whose NVLinks are listed)");
  t = cube;
  t.socket_link_bytes_per_s = 0;
  EXPECT_EQ(problem(t).rfind("socket_link_bytes_per_s: not set on a node of 2 sockets (expected", 0), 0u);
  t = cube;
  t.sockets = 9;  // 8 GPUs: neither a glueless x86 platform nor one CPU per GPU
  EXPECT_EQ(problem(t).rfind("sockets: got 9 (expected 1 to 8:", 0), 0u);
  t = cube;
  t.nics = 33;  // more than any shipping server (16) and more than 2 per GPU
  EXPECT_EQ(problem(t), "nics: got 33 (expected 0 to 16: 16, the most a shipping GPU server has, or 2 per GPU)");
  t = cube;
  t.socket_link_bytes_per_s = 1e308;
  EXPECT_EQ(problem(t),
            "socket_link_bytes_per_s: got 1e+308 bytes/s = 1e+299 GB/s (expected 0 for no link, or 0.25 GB/s, "
            "PCIe 1.0 x1, to 1000 GB/s per direction: 250e6 to 1e12 bytes/s)");
  t = cube;
  t.pcie_bytes_per_s = std::nan("");  // named as what it is, not "negative"
  EXPECT_EQ(problem(t).rfind("pcie_bytes_per_s: got nan (expected 0 for", 0), 0u);
  t = cube;
  t.pcie_bytes_per_s = 1;  // 1 byte/s: slower than any PCIe link (fresh-user finding: a 30-day all_reduce)
  EXPECT_EQ(problem(t).rfind("pcie_bytes_per_s: got 1 bytes/s = 1e-09 GB/s (expected 0 for", 0), 0u);
  t = cube;
  t.pcie_bytes_per_s = 1.0000001e12;  // just above the bound: printed exactly, not rounded onto it
  EXPECT_EQ(problem(t).rfind("pcie_bytes_per_s: got 1000000100000 bytes/s = 1000.0001 GB/s (expected 0 for", 0), 0u);
  t = cube;
  t.pcie_uplink_bytes_per_s = -1;
  EXPECT_EQ(problem(t).rfind("pcie_uplink_bytes_per_s: got -1 (expected", 0), 0u);
  t = cube;
  t.pcie_generation = 7;
  EXPECT_EQ(problem(t), "pcie_generation: got 7 (expected 1 to 6)");
  t = cube;
  t.source.clear();
  EXPECT_EQ(problem(t).rfind("source: not set (expected", 0), 0u);
}

TEST(NodeTemplateText, DescribedTemplatesBelongToTheirSet) {
  NodeTemplate t = read_node_templates(kCubeMesh, "t.textproto").front();
  t.name = "own_cube";
  NodeTemplate other = t;
  other.nics = 1;
  other.nvlinks.pop_back();
  const DescribedNodeTemplates a({t});
  const DescribedNodeTemplates b({other});
  // One name, two nodes: each set finds its own; no set finds it by name alone.
  EXPECT_EQ(find_node_template("own_cube", a).nvlinks.size(), 16u);
  EXPECT_EQ(find_node_template("own_cube", b).nvlinks.size(), 15u);
  EXPECT_EQ(find_node_template("own_cube", b).nics, 1);
  EXPECT_THROW(find_builtin_node_template("own_cube"), std::invalid_argument);
  EXPECT_THROW(find_node_template("own_cube", DescribedNodeTemplates{}), std::invalid_argument);
  // Built-ins are found through any set; a copy of a set shares its templates.
  EXPECT_EQ(&find_node_template("dgx_a100", a), &find_builtin_node_template("dgx_a100"));
  const DescribedNodeTemplates copy = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the test
  EXPECT_EQ(&find_node_template("own_cube", copy), &find_node_template("own_cube", a));
  EXPECT_TRUE(copy == a);
  EXPECT_FALSE(a == b);
  EXPECT_TRUE(DescribedNodeTemplates({t}) == a);  // equal by content
}

TEST(NodeTemplateText, ClusterWiresTheGraphLinkByLink) {
  NodeTemplate t = read_node_templates(kCubeMesh, "t.textproto").front();
  t.name = "cluster_test_cube";
  ClusterSpec spec;
  spec.described_node_templates = DescribedNodeTemplates({t});
  spec.node_template = "cluster_test_cube";
  spec.num_nodes = 1;
  const Cluster c(spec);
  EXPECT_EQ(c.scale_up(), ScaleUp::graph);
  EXPECT_TRUE(c.nvlink_between(0, 3));
  EXPECT_TRUE(c.nvlink_between(3, 0));
  EXPECT_FALSE(c.nvlink_between(0, 5));  // not joined: PCIe
  // The most links at a GPU (6) x 25 GB/s.
  EXPECT_DOUBLE_EQ(c.scale_up_bytes_per_s(), 6 * 25e9);
  // A doubled pair's link carries 2 x 25 GB/s, a single one 25 GB/s; 0 -> 5 goes over PCIe.
  const auto r03 = c.route(0, 3);
  ASSERT_EQ(r03.size(), 1u);
  EXPECT_DOUBLE_EQ(c.capacity(r03[0]), 50e9);
  const auto r01 = c.route(0, 1);
  ASSERT_EQ(r01.size(), 1u);
  EXPECT_DOUBLE_EQ(c.capacity(r01[0]), 25e9);
  const auto r05 = c.route(0, 5);
  EXPECT_GT(r05.size(), 1u);
  for (auto r : r05) EXPECT_NE(c.link_kind(r), LinkKind::nvlink);
}

}  // namespace
}  // namespace traincast::models
