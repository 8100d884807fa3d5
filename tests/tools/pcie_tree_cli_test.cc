// A node's PCIe tree written out in a scenario (docs/hardware.md, "User-described nodes") through
// the command line: a built-in template written switch by switch runs byte for byte as its
// regular form (one mechanism), the shipped DGX-2 tree runs, and a bad tree is refused with its
// position and exit status 2.

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;
using test_support::Result;
using test_support::run;

/// pcie_8gpu_2socket (models/hardware/node_templates.textproto) as a scenario's own node, its PCIe
/// tree given by `tree`, 2 nodes and a small workload.
std::string box(const std::string& tree) {
  return "node_template {\n"
         "  name: \"pcie_tree_cli_box\" gpu: \"L40S\" gpus_per_node: 8 scale_up: none\n"
         "  nic: \"RoCE-200GbE\" nics: 4 sockets: 2 pcie_generation: 4 socket_link_bytes_per_s: 10e9\n"
         "  cpu: \"Intel Xeon (Ice Lake)\" source: \"pcie_8gpu_2socket, written out\"\n" +
         tree +
         "}\n"
         "cluster { node_template: \"pcie_tree_cli_box\" num_nodes: 2 }\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { tp: 2 pp: 2 dp: 4 }\n"
         "  training { global_batch_size: 32 }\n"
         "}\n";
}

/// `text` with its wall-clock figures masked, as tests/golden/golden.py masks them (the only
/// bytes two runs of one file may differ in).
std::string masked(const std::string& text) {
  return std::regex_replace(text, std::regex(R"(in [0-9.,]+ (m?s|min|h) wall \([0-9.,]+ events/s\))"),
                            "in <wall> wall (<rate> events/s)");
}

TEST(PcieTreeCli, WrittenOutRegularLayoutRunsByteForByteAsItsCount) {
  const traincast::test_support::TempDir dir("pcie_tree_cli");
  const std::string regular = box("  pcie_switches: 4\n");
  const std::string written =
      box("  pcie_switch { socket: 0 gpus: [0, 1] nics: [0] }\n"
          "  pcie_switch { socket: 0 gpus: [2, 3] nics: [1] }\n"
          "  pcie_switch { socket: 1 gpus: [4, 5] nics: [2] }\n"
          "  pcie_switch { socket: 1 gpus: [6, 7] nics: [3] }\n"
          "  nic_gpus { nic: 0 gpus: [0, 1] } nic_gpus { nic: 1 gpus: [2, 3] }\n"
          "  nic_gpus { nic: 2 gpus: [4, 5] } nic_gpus { nic: 3 gpus: [6, 7] }\n");
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"run"}, std::vector<std::string>{"nccl-tests", "-b", "1M", "-e", "256M", "-f", "4"},
        std::vector<std::string>{"nccl-tests", "--op", "all_gather", "-b", "64M", "-e", "64M", "--gpus", "0-3"},
        std::vector<std::string>{"explain", "--path", "0", "9"}}) {
    // One path for both: the outputs may name the file.
    const std::string path = dir.write("box.textproto", regular);
    std::vector<std::string> args = command;
    args.insert(args.begin() + 1, path);
    const Result a = run(args);
    dir.write("box.textproto", written);
    const Result b = run(args);
    EXPECT_EQ(a.status, 0) << command[0] << "\n" << a.err;
    EXPECT_EQ(masked(a.out), masked(b.out)) << command[0];
    EXPECT_EQ(a.err, b.err) << command[0];
  }
}

TEST(PcieTreeCli, Dgx2TreeRuns) {
  const Result r =
      run({"nccl-tests", kSrc + "/scenarios/nccl/dgx2_v100_pcie_tree.textproto", "-b", "64M", "-e", "64M"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("67108864"), std::string::npos) << r.out;
}

TEST(PcieTreeCli, BadTreeIsRefusedWithItsPosition) {
  const traincast::test_support::TempDir dir("pcie_tree_cli_bad");
  const std::string path = dir.write("box.textproto", box("  pcie_switch { socket: 0 gpus: [0, 1, 2, 3, 4, 5, 6] "
                                                          "nics: [0, 1, 2, 3] }\n"));
  const Result r = run({"nccl-tests", path});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(path + ":5:3: node_template[0].pcie_switch: GPU 7 not attached (expected it in the gpus "
                              "of one pcie_switch or root_ports entry)"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace traincast::cli
