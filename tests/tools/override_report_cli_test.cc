// `traincast run` on a cluster with overrides: the "Overrides" section names each entry with what
// the run measured on its element and the cost against the same job without the overrides, and
// the JSON report carries the same (docs/outputs.md, "Overrides in the report"). Before session
// 41 a slowed NIC showed only as slower communication, and a TP-only job with a slow GPU printed
// no line naming it.

#include <gtest/gtest.h>

#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;

/// A small GPT, TP 8 x DP `dp` on `nodes` DGX H100, with `overrides` (text) in the cluster.
std::string scenario(int nodes, int dp, const std::string& overrides) {
  return "cluster { node_template: \"dgx_h100\" num_nodes: " + std::to_string(nodes) +
         "\n  fabric { kind: fat_tree nodes_per_leaf: 2 }\n" + overrides +
         "}\n"
         "workload {\n"
         "  model { num_layers: 4 hidden_size: 4096 num_attention_heads: 32 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { tp: 8 dp: " +
         std::to_string(dp) +
         " }\n"
         "  training { global_batch_size: " +
         std::to_string(4 * dp) + " micro_batch_size: 1 }\n}\n";
}

TEST(OverrideReportCli, SlowedNicAndSlowGpuAreNamedWithTheirCost) {
  const traincast::test_support::TempDir dir("override_report");
  const std::string path =
      dir.write("two.textproto", scenario(4, 4,
                                          "  overrides { select: \"node2/nic0\" bandwidth_factor: 0.5 }\n"
                                          "  overrides { select: \"node1/gpu5\" clock_factor: 0.9 }\n"));
  const std::string json = dir.file("r.json");
  const Result r = run({"run", path, "--json", json});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\nOverrides (cluster.overrides): +")) << r.out;
  EXPECT_TRUE(has(r.out, "against the same job without them\n")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "  [0] node2/nic0 bandwidth_factor 0.5: carried nothing, nor did node0/nic0, the busiest of the "
                  "same element on the other simulated nodes: the collectives avoid it there too (its replica is "
                  "folded: the collectives over every replica counted, not its own traffic)\n"))
      << r.out;
  EXPECT_TRUE(has(r.out,
                  "  [1] node1/gpu5 clock_factor 0.9: SM clock 1,782 of 1,980 MHz while computing (its TP "
                  "group computes at its pace: 7 other GPUs wait for it up to "))
      << r.out;
  const std::string report = test_support::slurp(json);
  EXPECT_TRUE(has(report, "\"overrides\": {")) << report;
  EXPECT_TRUE(has(report, "\"select\": \"node2/nic0\"")) << report;
  EXPECT_TRUE(has(report, "\"setting\": \"clock_factor 0.9\"")) << report;
  EXPECT_TRUE(has(report, "\"sm_clock_mhz\": 178")) << report;
  EXPECT_TRUE(has(report, "\"cost_known\": true")) << report;
}

// One DGX H100, TP 8 only: no other replica, so no straggler line; the overrides line names the
// slow GPU and what it costs.
TEST(OverrideReportCli, TpOnlyJobWithASlowGpuNamesIt) {
  const traincast::test_support::TempDir dir("override_report_tp");
  const std::string path =
      dir.write("tp.textproto", scenario(1, 1, "  overrides { select: \"node0/gpu3\" clock_factor: 0.8 }\n"));
  const Result r = run({"run", path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(has(r.out, "waiting for slower GPUs")) << r.out;
  EXPECT_TRUE(has(r.out, "  [0] node0/gpu3 clock_factor 0.8: SM clock 1,584 of 1,980 MHz while computing")) << r.out;
  EXPECT_FALSE(has(r.out, "+0.0 µs per iteration")) << r.out;
}

// No overrides: no section, in the text or the JSON.
TEST(OverrideReportCli, NoOverridesNoSection) {
  const traincast::test_support::TempDir dir("override_report_none");
  const std::string path = dir.write("none.textproto", scenario(2, 2, ""));
  const std::string json = dir.file("r.json");
  const Result r = run({"run", path, "--json", json});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(has(r.out, "Overrides")) << r.out;
  EXPECT_FALSE(has(test_support::slurp(json), "\"overrides\"")) << r.out;
}

}  // namespace
}  // namespace traincast::cli
