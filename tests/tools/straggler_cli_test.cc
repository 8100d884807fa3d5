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

TEST(StragglerCli, HealthyDefaultJobHasNoStragglerRow) {
  const test_support::Result r = test_support::run({"run"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("waiting for slower GPUs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("slowest:"), std::string::npos);
}

}  // namespace
}  // namespace traincast::cli
