// `traincast calibrate fit|validate` refusing what a new user got wrong (exit 2, naming the file,
// the line or the option and what was expected) instead of fitting something else silently.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;
const fs::path kLogs = fs::path(TRAINCAST_SHARED_DATA_DIR) / "nccl-tests";
const std::string kScenario = kSrc + "/scenarios/nccl/consumer_2x2080ti_nop2p.textproto";
const std::string kN11a = (kLogs / "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt").string();

using test_support::has;
using test_support::Result;
using test_support::run;
using test_support::slurp;

class CalibrateInputChecks : public traincast::test_support::TempDirTest {
 protected:
  void SetUp() override {
    if (!fs::exists(kN11a)) GTEST_SKIP() << "no shared data";
    TempDirTest::SetUp();
  }
};

// n11a line 2 is "# command: ./build/all_reduce_perf ...", its column header line 10.
TEST_F(CalibrateInputChecks, OpDifferentFromTheOneTheLogNamesIsRefused) {
  Result r = run({"calibrate", "fit", kN11a, "--base", kScenario, "--op", "all_gather", "--out", path("x.textproto")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(
      r.err, kN11a + ":2: the log names operation all_reduce for the table at line 10; --op all_gather "
                     "differs (expected an operation there only for logs that name none: drop it or give all_reduce)"))
      << r.err;
  EXPECT_FALSE(fs::exists(path("x.textproto")));
  // The same operation as the log's is accepted.
  r = run({"calibrate", "fit", kN11a, "--base", kScenario, "--op", "all_reduce", "--out", path("y.textproto")});
  EXPECT_EQ(r.status, 0) << r.err;

  r = run({"calibrate", "validate", path("y.textproto"), kN11a, "--op", "all_gather"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, kN11a + ":2: the log names operation all_reduce")) << r.err;

  // The cases path: nccl_tests.op of a case.
  const std::string cases = write("c.cases.textproto", "case {\n  name: \"n11a_as_gather\"\n  scenario: \"" +
                                                           kScenario + "\"\n  nccl_tests {\n    log: \"" + kN11a +
                                                           "\"\n    op: \"all_gather\"\n  }\n}\n");
  r = run({"calibrate", "validate", "--cases", cases, "--holdout", "odd", "-q"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has(r.out,
                  "n11a_rtx2080ti_1x2_pcie3_nop2p_allreduce.txt:2: the log names operation all_reduce for the "
                  "table at line 10; case n11a_as_gather nccl_tests.op all_gather differs"))
      << r.out;
  r = run({"validate", cases});
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(has(r.out + r.err, "nccl_tests.op all_gather differs")) << r.out << r.err;
}

TEST_F(CalibrateInputChecks, RowWithTextInFrontIsRefusedAndAFileGivenTwiceToo) {
  std::string log = slurp(kN11a);
  // Line 20 (2048 B): "xy" glued in front, then "host3: " as a field of its own.
  std::size_t at = 0;
  for (int line = 1; line < 20; ++line) at = log.find('\n', at) + 1;
  const std::string row = log.substr(at, log.find('\n', at) - at);
  ASSERT_TRUE(has(row, " 2048 ")) << row;
  const std::size_t first = row.find_first_not_of(' ');
  for (const std::string& prefix : {std::string("xy"), std::string("host3: ")}) {
    std::string bad = log;
    bad.replace(at, row.size(), prefix + row.substr(first));
    const std::string p = write("bad.log", bad);
    const Result r = run({"calibrate", "fit", p, "--base", kScenario, "--out", path("x.textproto")});
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_TRUE(
        has(r.err, p + ":20: data row with leading unexpected text \"" + prefix.substr(0, prefix.find(' ')) + "\""))
        << r.err;
    EXPECT_FALSE(fs::exists(path("x.textproto")));
  }
  const Result r = run({"calibrate", "fit", kN11a, kN11a, "--base", kScenario, "--out", path("x.textproto")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.err, kN11a + ": the same bytes as " + kN11a)) << r.err;
}

TEST_F(CalibrateInputChecks, CasesWithoutNcclTestsAndNonPositiveLimitsAreUsageErrors) {
  const std::string korthikanti = kSrc + "/scenarios/validation/korthikanti2022.cases.textproto";
  Result r = run({"calibrate", "validate", "--cases", korthikanti, "--holdout", "odd"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(has(r.err, korthikanti + ": no nccl_tests case")) << r.err;
  const std::string cases = kSrc + "/scenarios/nccl/shared_logs.cases.textproto";
  for (const char* opt : {"--max-large-error", "--max-small-error"}) {
    for (const char* v : {"-1", "0"}) {
      r = run({"calibrate", "validate", "--cases", cases, "--holdout", "odd", opt, v});
      EXPECT_EQ(r.status, 2) << opt << " " << v;
      EXPECT_TRUE(has(r.err, std::string(opt) + ": got " + v + " (expected a number > 0")) << r.err;
    }
  }
}

TEST_F(CalibrateInputChecks, GpusOutsideTheBaseOrRepeatedNameTheOption) {
  // consumer_2x2080ti_nop2p: one node of 2 GPUs.
  Result r = run({"calibrate", "fit", kN11a, "--base", kScenario, "--gpus", "0,8", "--out", path("x.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "--gpus 0,8: GPU 8 is not in the base, which has 2 GPUs (expected distinct GPUs 0..1 of "
                  "--base " +
                      kScenario + ")"))
      << r.err;
  r = run({"calibrate", "fit", kN11a, "--base", kScenario, "--gpus", "0,0", "--out", path("x.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--gpus 0,0: GPU 0 given twice (expected distinct GPUs 0..1")) << r.err;
  r = run({"calibrate", "fit", kN11a, "--base", kScenario, "--gpus", "a", "--out", path("x.textproto")});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--gpus: bad GPU list 'a'")) << r.err;
}

// holdout_known_gap may be written for the other split: an ok verdict says only what this split shows.
TEST_F(CalibrateInputChecks, OkCaseWithAHoldoutKnownGapSaysOkOnThisSplit) {
  const std::string cases = write(
      "g.cases.textproto", "case {\n  name: \"n11a\"\n  scenario: \"" + kScenario + "\"\n  nccl_tests {\n    log: \"" +
                               kN11a + "\"\n    holdout_known_gap: \"stated for the other split\"\n  }\n}\n");
  const Result r = run({"calibrate", "validate", "--cases", cases, "--holdout", "odd", "--max-large-error", "1000",
                        "--max-small-error", "1000", "-q"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out,
                  "ok on this split (holdout_known_gap is set: remove it only if the other --holdout split is "
                  "ok too)"))
      << r.out;
  EXPECT_FALSE(has(r.out, "was a known gap")) << r.out;
}

// An empty or comment-only measurement file fits nothing: refused with its name (exit 2), not an
// internal error from the profile's own reader (fresh user, session 31).
TEST_F(CalibrateInputChecks, EmptyMeasurementFileIsRefused) {
  for (const std::string& text : {std::string(), std::string("# only a comment\n")}) {
    const std::string m = write("m.textproto", text);
    Result r = run({"calibrate", "fit", m, "--base", kScenario, "--out", path("p.textproto"), "--force"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(has(r.err, m + ": no measurements (expected gemm, bandwidth, launch, collective or burn samples"))
        << r.err;
    EXPECT_FALSE(has(r.err, "internal error")) << r.err;
    EXPECT_FALSE(fs::exists(path("p.textproto")));
  }
}

}  // namespace
}  // namespace traincast::cli
