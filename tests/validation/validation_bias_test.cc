// validate's bias view (issue 17): the split rule, signed mean and OLS trend on synthetic lists,
// the signed-error convention, the table's structure, and a run predicted OOM failing validate.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/validation_stats.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;
using test_support::Result;
using test_support::run;
using BiasCliTest = traincast::test_support::TempDirTest;

TEST(SplitRule, EvenDataRowIsFitOddIsHeldNoRowIsNone) {
  EXPECT_EQ(split_half("megatron_sc21_table1_a100.csv:0"), SplitHalf::fit);
  EXPECT_EQ(split_half("megatron_sc21_table1_a100.csv:1"), SplitHalf::held);
  EXPECT_EQ(split_half("t.csv:10"), SplitHalf::fit);
  EXPECT_EQ(split_half("t.csv:215"), SplitHalf::held);
  EXPECT_EQ(split_half("dir/with:colon.csv:3"), SplitHalf::held);  // the last colon separates the index
  for (const char* bad : {"", "t.csv", "t.csv:", ":4", "t.csv:4a", "t.csv:-2"})
    EXPECT_EQ(split_half(bad), SplitHalf::none) << bad;
  EXPECT_EQ(split_half_name(SplitHalf::fit), "fit");
  EXPECT_EQ(split_half_name(SplitHalf::held), "held");
}

TEST(SplitRule, EveryCommittedTrainingCaseHasARowAndTheHalvesAreStable) {
  // Every case of a shared training table names its row, and the halves of the committed files do
  // not change (a changed count means the split moved: the note must then cite the change). The
  // files are scanned as text (loading them simulates nothing but builds 378 scenarios: slow).
  int fit = 0, held = 0;
  for (const char* f : {"korthikanti2022", "llama3_405b", "megatron_core_r080_h100", "megatron_sc21_table1",
                        "development/mpt", "development/torchtitan", "development/bloom"}) {
    std::ifstream in(kSrc + "/scenarios/validation/" + f + ".cases.textproto");
    ASSERT_TRUE(in) << f;
    std::string line;
    int cases = 0, rows = 0;
    while (std::getline(in, line)) {
      if (line.rfind("case {", 0) == 0) ++cases;
      const std::string key = "  data_row: \"";
      if (line.rfind(key, 0) != 0) continue;
      ++rows;
      const SplitHalf h = split_half(line.substr(key.size(), line.size() - key.size() - 1));
      EXPECT_NE(h, SplitHalf::none) << f << ": " << line;
      (h == SplitHalf::fit ? fit : held) += 1;
    }
    EXPECT_EQ(rows, cases) << f << ": every case names its data_row";
  }
  // Session 22: BLOOM rows 70, 73, 75 reprint rows 61, 60, 57 and are no longer cases (184 / 194
  // before; docs/accuracy_split.md).
  EXPECT_EQ(fit, 183);
  EXPECT_EQ(held, 192);
}

TEST(BiasStats, SignedMeanKeepsTheSignThatMapeLoses) {
  EXPECT_DOUBLE_EQ(signed_mean({}), 0.0);
  EXPECT_DOUBLE_EQ(signed_mean({0.10, -0.10, 0.30}), 0.10);
  EXPECT_DOUBLE_EQ(signed_mean({-0.2, -0.4}), -0.3);
}

TEST(BiasStats, Log2TrendIsTheOlsSlopePerDoubling) {
  // y = 0.02 * log2(x) - 0.1 exactly: slope 0.02 per doubling, over 1..1024 (10 doublings, 11 rows).
  std::vector<double> x, y;
  for (int k = 0; k <= 10; ++k) {
    x.push_back(std::ldexp(1.0, k));
    y.push_back(0.02 * k - 0.1);
  }
  Log2Trend t = log2_trend(x, y);
  EXPECT_TRUE(t.computed);
  EXPECT_TRUE(t.qualifies);
  EXPECT_NEAR(t.slope, 0.02, 1e-12);
  EXPECT_NEAR(t.doublings, 10.0, 1e-12);
  // Noisy points: OLS by hand on log2 x = {0, 1, 2, 3}, y = {0, 1, 1, 3}: slope = 0.9.
  t = log2_trend({1, 2, 4, 8}, {0, 1, 1, 3});
  EXPECT_NEAR(t.slope, 0.9, 1e-12);
  EXPECT_FALSE(t.qualifies);  // 4 rows < 10
  // Ten rows over two doublings: computed, but not a trend issue 17 scores.
  t = log2_trend({1, 1, 2, 2, 2, 4, 4, 4, 4, 4}, {0, 0, 1, 1, 1, 2, 2, 2, 2, 2});
  EXPECT_NEAR(t.slope, 1.0, 1e-12);
  EXPECT_FALSE(t.qualifies);
  // One distinct x: no slope.
  t = log2_trend({8, 8, 8}, {0.1, 0.2, 0.3});
  EXPECT_FALSE(t.computed);
  EXPECT_THROW(log2_trend({1, 0}, {0, 0}), std::invalid_argument);
  EXPECT_THROW(log2_trend({1, 2}, {0}), std::invalid_argument);
}

TEST(BiasStats, SignedErrorIsThroughputPlusMeansPredictedFaster) {
  // Predicted time 0.8 s for a measured 1.0 s: throughput 25% too high.
  EXPECT_NEAR(signed_throughput_error("iteration_time_s", 1.0, 0.8), 0.25, 1e-12);
  EXPECT_NEAR(signed_throughput_error("tokens_per_s", 1000, 1100), 0.10, 1e-12);
  EXPECT_NEAR(signed_throughput_error("activation_memory_gib", 10, 9), -0.10, 1e-12);
  EXPECT_TRUE(is_run_metric("tokens_per_s"));
  EXPECT_FALSE(is_run_metric("peak_memory_gib"));
}

TEST(BiasStats, TablePoolsAGroupAndNamesTheLargestErrorAndOom) {
  std::vector<models::ValidationCase> cases(3);
  std::vector<std::string> files = {"a/sc21.cases.textproto", "a/mcore.cases.textproto", "a/bloom.cases.textproto"};
  cases[0].name = "sc21-x";
  cases[0].group = "megatron";
  cases[0].metric = "iteration_time_s";
  cases[0].measured = 1.0;
  cases[1].name = "mcore-y";
  cases[1].group = "megatron";
  cases[1].metric = "tokens_per_s";
  cases[1].measured = 100;
  cases[2].name = "bloom-z";
  cases[2].metric = "iteration_time_s";
  cases[2].measured = 2.0;
  cases[2].assumptions = "network as IB EDR";
  std::vector<CaseOutcome> out(3);
  out[0].predicted = 0.5;  // +100% throughput
  out[1].predicted = 90;   // -10%
  out[2].predicted = 2.0;
  out[2].oom = true;
  out[2].peak_gib = 90;
  out[2].capacity_gib = 80;
  int oom = -1;
  const std::string s = format_bias_report(cases, files, out, "all", oom);
  EXPECT_EQ(oom, 1);
  EXPECT_NE(s.find("half: all"), std::string::npos) << s;
  // megatron pools two rows: MAPE 55%, signed +45%, largest +100% (sc21-x), 50% over.
  const std::size_t m = s.find("megatron");
  ASSERT_NE(m, std::string::npos) << s;
  const std::string row = s.substr(m, s.find('\n', m) - m);
  for (const char* cell : {" 2 ", "55.0%", "+45.0%", "50%", "+100.0%", "  sc21-x"})
    EXPECT_NE(row.find(cell), std::string::npos) << cell << " in: " << row;
  // ... and each of its files on a row of its own.
  const std::size_t sub = s.find("megatron/mcore ");
  ASSERT_NE(sub, std::string::npos) << s;
  const std::string sub_row = s.substr(sub, s.find('\n', sub) - sub);
  for (const char* cell : {" 1 ", "10.0%", "-10.0%", "0%", "  mcore-y"})
    EXPECT_NE(sub_row.find(cell), std::string::npos) << cell << " in: " << sub_row;
  EXPECT_NE(s.find("bloom  "), std::string::npos) << s;  // no group: the file's stem
  EXPECT_NE(s.find("bloom-z: network as IB EDR"), std::string::npos) << s;
  EXPECT_NE(s.find("FAIL: bloom-z ran (iteration_time_s measured) but is predicted OOM"), std::string::npos) << s;
}

/// A shared table t.csv with `rows` data rows where validate looks for it (shared/data/training
/// in a folder above the cases file).
void write_shared_table(const fs::path& dir, int rows) {
  fs::create_directories(dir / "shared/data/training");
  std::ofstream t(dir / "shared/data/training/t.csv");
  t << "a,b\n";
  for (int i = 0; i < rows; ++i) t << i << ",x\n";
}

TEST_F(BiasCliTest, RunPredictedOomFailsValidateAndHalfIsPrinted) {
  write_shared_table(dir_, 2);
  const fs::path cases = dir_ / "oom.cases.textproto";
  std::ofstream(cases) << "source: \"test\"\ncase {\n  name: \"ran-but-oom\"\n  data_row: \"t.csv:1\"\n"
                       << "  scenario: \"" << kSrc << "/scenarios/llama3_70b_one_node_oom.textproto\"\n"
                       << "  set: \"workload.training.global_batch_size=8\"\n"
                       << "  metric: \"iteration_time_s\"\n  measured: 10\n}\n";
  Result r = run({"validate", cases.string(), "--half", "held"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("half: held (1 of 1 cases"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL: ran-but-oom ran"), std::string::npos) << r.out;
  // Its row is odd: the fit half holds no case of this file (bad input, exit 2).
  r = run({"validate", cases.string(), "--half", "fit"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  r = run({"validate", cases.string(), "--half", "odd"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("expected fit, held or all"), std::string::npos) << r.err;
}

TEST_F(BiasCliTest, BadDataRowIsRefusedWithItsPosition) {
  const fs::path cases = dir_ / "bad.cases.textproto";
  std::ofstream(cases) << "case {\n  name: \"x\"\n  data_row: \"t.csv\"\n  scenario: \"" << kSrc
                       << "/scenarios/default.textproto\"\n  metric: \"tokens_per_s\"\n  measured: 1\n}\n";
  const Result r = run({"validate", cases.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(":3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("case[0].data_row"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected FILE.csv:INDEX"), std::string::npos) << r.err;
}

TEST_F(BiasCliTest, DataRowMustNameARowOfASharedTable) {
  write_shared_table(dir_, 3);
  const auto refused = [&](const std::string& data_row, const std::string& extra, const std::string& expected) {
    const fs::path cases = dir_ / "rows.cases.textproto";
    std::ofstream(cases) << "case {\n  name: \"x\"\n  data_row: \"" << data_row << "\"\n"
                         << extra << "  scenario: \"" << kSrc
                         << "/scenarios/default.textproto\"\n  metric: \"tokens_per_s\"\n  measured: 1\n}\n";
    const Result r = run({"validate", cases.string()});
    EXPECT_EQ(r.status, 2) << data_row << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << data_row << ": " << r.err;
  };
  refused("t.csv:3", "", "row 3 of t.csv, which has 3 data rows (expected 0 to 2)");
  refused("nosuch.csv:1", "", "\"nosuch.csv\" is not in shared/data/training");
  refused("t.txt:1", "", "expected FILE.csv:INDEX");
  refused("dir/t.csv:1", "", "expected FILE.csv:INDEX");
  refused("t.csv:1", "  oom_known_gap: \"   \"\n", "case[0].oom_known_gap: is blank");
}

}  // namespace
}  // namespace traincast::cli
