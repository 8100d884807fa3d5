// The warning for NICs spread unevenly over a node's PCIe switches (Cluster::nic_spread_notes,
// docs/hardware.md "All-to-all with 3, 4 or 5 NICs") through the command line: every command that
// simulates the hardware (run, nccl-tests, compare, sweep, plan, explain) prints it once for a
// dgx_h100 with 3 NICs, and none prints it with 8 (the server as shipped).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::Result;
using test_support::run;

/// 2 x dgx_h100 with `nics` NICs each and a small model: TP 8 inside a node, DP 2 across.
std::string scenario(int nics) {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 2 nics_per_node: " + std::to_string(nics) +
         " fabric { kind: rail_optimized } }\n"
         "workload {\n"
         "  model { num_layers: 4 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { tp: 8 dp: 2 }\n"
         "  training { global_batch_size: 16 }\n"
         "}\n";
}

/// How often `what` occurs in `text`.
int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST(NicSpreadCli, EveryCommandWarnsOnceForThreeNicsOnDgxH100AndNeverForEight) {
  const traincast::test_support::TempDir dir("nic_spread_cli");
  // Positioned at the field (run, plan, nccl-tests, explain) or not (compare, sweep: their
  // columns and points have no one place for it).
  const std::string warning =
      "cluster.nics_per_node 3 on dgx_h100 leaves gpu1, gpu2, gpu4, gpu5 and gpu7 without a NIC on their "
      "PCIe switch";
  for (const int nics : {3, 8}) {
    const std::string file = dir.write("nics" + std::to_string(nics) + ".textproto", scenario(nics));
    const std::string sweep = dir.write("nics" + std::to_string(nics) + ".sweep.textproto",
                                        "scenario_file: \"nics" + std::to_string(nics) +
                                            ".textproto\"\naxis { path: \"workload.parallel.tp\" values: [\"4\", "
                                            "\"8\"] }\n");
    const std::vector<std::vector<std::string>> commands = {
        {"run", file},
        {"nccl-tests", file, "--op", "alltoall", "-b", "1M", "-e", "1M"},
        {"compare", file, "--vary", "workload.training.global_batch_size=16,32"},
        {"sweep", sweep, "--out", dir.file("nics" + std::to_string(nics) + ".csv"), "--force"},
        {"plan", file, "--max-simulations", "2"},
        {"explain", file, "--path", "1", "9"},
    };
    for (const std::vector<std::string>& command : commands) {
      const Result r = run(command);
      EXPECT_EQ(r.status, 0) << command[0] << ": " << r.err;
      EXPECT_EQ(count(r.err, " PCIe switch (the NICs sit beside "), nics == 3 ? 1 : 0) << command[0] << ": " << r.err;
      if (nics == 3) {
        EXPECT_EQ(count(r.err, warning), 1) << command[0] << ": " << r.err;
      }
    }
  }
}

}  // namespace
}  // namespace traincast::cli
