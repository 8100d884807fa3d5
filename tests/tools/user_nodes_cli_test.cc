// Nodes a scenario describes itself (docs/hardware.md, "User-described nodes") through the command
// line: the shipped examples against the raw nccl-tests logs r11-r13 (each within 15% at >= 32 MiB
// or a named gap), and a bad node refused with its position and exit status 2.

#include <gtest/gtest.h>

#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;
using test_support::Result;
using test_support::run;

TEST(UserNodesCli, RawLogsR11ToR13WithinLimitsOrNamedGaps) {
  const Result r = run({"validate", kSrc + "/scenarios/nccl/user_nodes.cases.textproto", "--jobs", "2"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // The >= 32 MiB geometric-mean errors, as measured (docs/hardware.md).
  for (const char* row :
       {"r11_dgx2_1x12_all_gather                          12 all_gather             7.0%",
        "r11_dgx2_1x12_all_reduce                          12 all_reduce             3.8%",
        "r11_dgx2_1x12_broadcast                           12 broadcast              2.9%",
        "r11_dgx2_1x12_reduce                              12 reduce                 2.7%",
        "r12_rtx4090_1x8_all_reduce                         8 all_reduce             6.8%",
        // NCCL's tree, the automatic choice among NCCL's algorithms (issue 16; 20.1% when
        // the model's own hierarchical all-reduce was a candidate).
        "r13_nd40rs_v2_2x8_all_reduce                      16 all_reduce             7.3%            -  ok"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  }
}

TEST(UserNodesCli, BadNodeIsRefusedWithItsPosition) {
  const traincast::test_support::TempDir dir("user_nodes_cli");
  const std::string path = dir.write("box.textproto",
                                     "node_template {\n"
                                     "  name: \"box\" gpu: \"V100-SXM2-32GB\" gpus_per_node: 4 scale_up: graph\n"
                                     "  nic: \"IB-EDR-100\" nics: 1 sockets: 1 pcie_switches: 1 pcie_generation: 3\n"
                                     "  source: \"test\"\n"
                                     "  nvlink { gpus: [0, 4] links: 1 }\n"
                                     "}\n"
                                     "cluster { node_template: \"box\" }\n");
  const Result r = run({"nccl-tests", path});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(path + ":5:12: node_template[0].nvlink[0].gpus: [0, 4] names a GPU out of range (expected "
                              "indices 0 to 3)"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace traincast::cli
