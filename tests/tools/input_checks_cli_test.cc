// Review findings on input checks, through the command line: each bad input named with its file,
// line, field and what was expected (exit status 2), a template no node uses warned at its line,
// --vary's errors naming --vary, an enum number naming no value refused at the number, and run
// --json naming the recomputation the summary prints.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;
using test_support::Result;
using test_support::run;
using test_support::slurp;

/// The shipped DGX-2 tree example (scenarios/nccl/dgx2_v100_pcie_tree.textproto) with `from`
/// replaced by `to` (which must occur in it).
std::string dgx2_tree_with(const std::string& from, const std::string& to) {
  std::string text = slurp(kSrc + "/scenarios/nccl/dgx2_v100_pcie_tree.textproto");
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// 1-based line of the first occurrence of `what` in `text`.
std::size_t line_of(const std::string& text, const std::string& what) {
  const std::size_t at = text.find(what);
  EXPECT_NE(at, std::string::npos) << what;
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

TEST(InputChecksCli, PcieTreeIndexThatIsNotAWholeNumber) {
  const traincast::test_support::TempDir dir("input_checks_cli");
  const std::string text = dgx2_tree_with("pcie_switch { upstream_switch: 0 gpus: [0, 1] nics: [0] }",
                                          "pcie_switch { upstream_switch: 0 gpus: [0, 1.5] nics: [0] }");
  const std::string path = dir.write("tree.textproto", text);
  const Result r = run({"explain", path});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, path + ":" + std::to_string(line_of(text, "1.5")) +
                       ":46: node_template[0].pcie_switch[4].gpus: invalid value 1.5 (expected a whole number >= 0: "
                       "a GPU of the node, below gpus_per_node)\n");
}

TEST(InputChecksCli, UnusedNodeTemplateIsWarnedAtItsLine) {
  const traincast::test_support::TempDir dir("input_checks_cli");
  const std::string spare =
      "node_template {\n"
      "  name: \"spare\"\n"
      "  gpu: \"V100-SXM2-32GB\"\n"
      "  scale_up: none\n"
      "  nic: \"IB-EDR-100\"\n"
      "  pcie_generation: 3\n"
      "  socket_link_bytes_per_s: 10e9\n"
      "  source: \"a template kept for later\"\n"
      "}\n";
  const std::string text = slurp(kSrc + "/scenarios/nccl/dgx2_v100_pcie_tree.textproto") + spare;
  const std::string path = dir.write("tree.textproto", text);
  const Result r = run({"explain", path});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "warning: " + path + ":" + std::to_string(line_of(text, "name: \"spare\"")) +
                       ":3: node_template[1].name: \"spare\" is described but no node uses it (the cluster names "
                       "\"dgx2_v100_tree\"); it is checked, not simulated (expected cluster.node_template or a node "
                       "group's node_template to name it for it to run)\n");
}

TEST(InputChecksCli, MultiNodeClusterOfANodeWithoutNicsIsPositioned) {
  const traincast::test_support::TempDir dir("input_checks_cli");
  std::string box = slurp(kSrc + "/scenarios/nccl/rtx4090_8gpu_2socket_nop2p.textproto");
  box.replace(box.find("num_nodes: 1"), 12, "num_nodes: 2 fabric { kind: fat_tree }");
  const std::string path = dir.write("box.textproto", box);
  const Result r = run({"nccl-tests", path});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, path + ":" + std::to_string(line_of(box, "cluster {")) +
                       ":11: cluster.node_template: \"rtx4090_8gpu_2socket\" has no compute NICs (nics: 0) for a "
                       "cluster of 2 nodes (expected a node template with NICs, cluster.nics_per_node >= 1, or "
                       "num_nodes: 1)\n");
}

TEST(InputChecksCli, VaryErrorsNameVary) {
  Result r = run({"compare", "--vary", "cluster.fabrc.kind=fat_tree,torus"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("--vary: cluster.fabrc: unknown field, did you mean \"fabric\"?", 0), 0u) << r.err;
  r = run({"compare", "--vary", "cluster.num_nodes.x=1,2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--vary: cluster.num_nodes: is not a message, it has no field \"x\" (expected cluster.num_nodes=value)\n");
  r = run({"compare", "--vary", "workload.training.compute_model=\"kernel\",training_fit"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--vary: workload.training.compute_model: invalid value \"kernel\": --vary takes the value without quotes "
            "(expected workload.training.compute_model=kernel)\n");
  // A --set beside it keeps its own name.
  r = run({"compare", "--set", "cluster.num_nodez=2", "--vary", "cluster.num_nodes=1,2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("--set: cluster.num_nodez: unknown field", 0), 0u) << r.err;
}

// A number for an enum (docs/scenarios.md: names only) is refused at the number, with the field and the names (review
// finding: the position was the field's name, and a node template's scale_up: 7 read as none without a word).
TEST(InputChecksCli, EnumNumberNamingNoValueIsRefusedAtTheNumber) {
  const traincast::test_support::TempDir dir("input_checks_cli");
  std::string text = slurp(kSrc + "/scenarios/default.textproto");
  text.replace(text.find("precision: bf16"), 15, "precision: 9");
  std::string path = dir.write("s.textproto", text);
  Result r = run({"run", path});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, path + ":" + std::to_string(line_of(text, "precision: 9")) +
                       ":16: workload.training.precision: invalid value 9 (expected one of: fp32, tf32, fp16, bf16, "
                       "fp8)\n");
  text = slurp(kSrc + "/scenarios/nccl/rtx4090_8gpu_2socket_nop2p.textproto");
  text.replace(text.find("scale_up: none"), 14, "scale_up: 7");
  path = dir.write("box.textproto", text);
  r = run({"explain", path});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, path + ":" + std::to_string(line_of(text, "scale_up: 7")) +
                       ":13: node_template[0].scale_up: invalid value 7 (expected one of: none, nvswitch, mesh, "
                       "bridges, graph)\n");
  // A number that names a value is refused too: names only, as JSON and --set (fresh-user finding:
  // `precision: 2`, meant as "2 bytes", ran as fp16; `scale_up: 0` built a PCIe-only node).
  text.replace(text.find("scale_up: 7"), 11, "scale_up: 0");
  path = dir.write("box0.textproto", text);
  r = run({"explain", path});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, path + ":" + std::to_string(line_of(text, "scale_up: 0")) +
                       ":13: node_template[0].scale_up: invalid value 0 (expected one of: none, nvswitch, mesh, "
                       "bridges, graph)\n");
}

TEST(InputChecksCli, RunJsonNamesTheRecomputation) {
  const traincast::test_support::TempDir dir("input_checks_cli");
  const std::string json = dir.file("r.json");
  Result r =
      run({"run", "--json", json, "--set", "workload.model.num_layers=2", "--set", "workload.training.recompute=full"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("recompute full"), std::string::npos) << r.out;
  std::string report = slurp(json);
  EXPECT_NE(report.find("\"recompute\": \"full\",\n  \"selective_policy\": \"\""), std::string::npos) << report;
  r = run({"run", "--json", json, "--force", "--set", "workload.model.num_layers=2", "--set",
           "workload.training.selective_policy=torchtitan_op"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("recompute selective (torchtitan op-level)"), std::string::npos) << r.out;
  report = slurp(json);
  EXPECT_NE(report.find("\"recompute\": \"selective\",\n  \"selective_policy\": \"torchtitan_op\""), std::string::npos)
      << report;
}

}  // namespace
}  // namespace traincast::cli
