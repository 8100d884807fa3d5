// The straggler wait as a user sees it (`traincast run` summary, --json, --trace) on the
// blocked-airflow gallery scenario, and its absence on the healthy default job.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::slurp;

/// The percentage column of the summary row that starts with `row`, or -1 when there is none.
double row_percent(const std::string& out, const std::string& row) {
  const std::regex re("\\n  " + row + " +[0-9.]+ [a-zµ]+ +([0-9.]+) %");
  std::smatch m;
  return std::regex_search(out, m, re) ? std::stod(m[1]) : -1.0;
}

TEST(StragglerCli, BlockedAirflowNamesTheThrottledGpuInsteadOfDpCommunication) {
  const traincast::test_support::TempDir tmp("straggler_cli_test");
  const std::filesystem::path& dir = tmp.path();
  const test_support::Result r = test_support::run(
      {"run", std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/power/blocked_airflow_dgx_h100.textproto", "--json",
       (dir / "r.json").string(), "--trace", (dir / "t.json").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  // Before the split the healthy GPUs' wait for GPUs 3 and 4 showed as "exposed DP communication
  // 20.7 %"; the DP transfer itself is ~0.1 % (as in the same job with full airflow).
  const double dp = row_percent(r.out, "exposed DP communication");
  const double wait = row_percent(r.out, "waiting for slower GPUs");
  ASSERT_GE(dp, 0.0) << r.out;
  EXPECT_LT(dp, 1.0) << r.out;
  EXPECT_GT(wait, 10.0) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("slowest: node0 gpu[34] \\(GPU [34], DP replica [12]; this breakdown: replica 0\\)")))
      << r.out;
  EXPECT_NE(r.out.find("thermal slowdown"), std::string::npos);
  EXPECT_NE(r.out.find("(airflow 35.0 % of design)"), std::string::npos);
  const std::string json = slurp(dir / "r.json");
  EXPECT_NE(json.find("\"straggler_wait_s\": "), std::string::npos);
  EXPECT_NE(json.find("\"cause\": \"thermal\""), std::string::npos);
  EXPECT_NE(slurp(dir / "t.json").find("waiting for slower GPUs"), std::string::npos);
}

TEST(StragglerCli, PowerLineNamesTheOverrideThatHoldsTheClock) {
  // A GPU at clock_factor 0.5: the Power section said "held by the 700 W power limit" (fresh-user
  // finding); a power_cap_w override: the limit line names the override too.
  const traincast::test_support::TempDir tmp("straggler_cli_power_line");
  const std::string base =
      "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 2\n  OVERRIDE\n}\nworkload {\n  model { num_layers: 4 "
      "hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n  parallel { tp: 8 dp: 2 }\n"
      "  training { global_batch_size: 16 }\n}\n";
  const auto run_with = [&](const std::string& name, const std::string& override_line) {
    std::string text = base;
    text.replace(text.find("OVERRIDE"), 8, override_line);
    std::ofstream(tmp.path() / name) << text;
    return test_support::run({"run", (tmp.path() / name).string()});
  };
  const test_support::Result slow =
      run_with("clock.textproto", "overrides { select: \"node1/gpu2\" clock_factor: 0.5 }");
  ASSERT_EQ(slow.status, 0) << slow.err;
  EXPECT_NE(slow.out.find("SM clock down to 0.500 of the maximum (GPU 10; 0.500 mean while computing), held by its "
                          "cluster.overrides clock_factor\n"),
            std::string::npos)
      << slow.out;
  const test_support::Result capped = run_with("cap.textproto", "overrides { select: \"node1\" power_cap_w: 300 }");
  ASSERT_EQ(capped.status, 0) << capped.err;
  EXPECT_NE(capped.out.find("held by its cluster.overrides power_cap_w 300 W (the cluster's limit 700 W)\n"),
            std::string::npos)
      << capped.out;
}

TEST(StragglerCli, APipelineJobsSlowGpuIsNamedWithItsStage) {
  // TP 4 x PP 2 x DP 2 on 2 x DGX H100, node1/gpu2 (stage 1 of replica 0) at half clock: the
  // summary showed the wait as "pipeline bubble / waiting 24.34 ms 28.0 %" and named no one.
  const traincast::test_support::TempDir tmp("straggler_cli_pipeline");
  std::ofstream(tmp.path() / "pp.textproto")
      << "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 2\n  overrides { select: \"node1/gpu2\" clock_factor: "
         "0.5 }\n}\nworkload {\n  model { num_layers: 8 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { tp: 4 pp: 2 dp: 2 }\n  training { global_batch_size: 32 }\n}\n";
  const test_support::Result r =
      test_support::run({"run", (tmp.path() / "pp.textproto").string(), "--json", (tmp.path() / "r.json").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(row_percent(r.out, "waiting for slower GPUs"), 20.0) << r.out;
  EXPECT_LT(row_percent(r.out, "pipeline bubble / waiting"), 5.0) << r.out;
  EXPECT_NE(r.out.find("    slowest: node1 gpu2 (GPU 10, pipeline stage 1 of DP replica 0; this breakdown: stage 1 of "
                       "replica 1)\n    cause: cluster.overrides clock_factor on node1/gpu2"),
            std::string::npos)
      << r.out;
  const std::string json = slurp(tmp.path() / "r.json");
  EXPECT_NE(json.find("\"found\": true"), std::string::npos);
  EXPECT_NE(json.find("\"slowest_stage\": 1"), std::string::npos);
}

TEST(StragglerCli, HealthyDefaultJobHasNoStragglerRow) {
  const test_support::Result r = test_support::run({"run"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("waiting for slower GPUs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("slowest:"), std::string::npos);
}

}  // namespace
}  // namespace traincast::cli
