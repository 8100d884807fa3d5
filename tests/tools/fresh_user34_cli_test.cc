// What a fresh user found on the command line (session 34): a failures scenario printed 74.5 days
// to train "no failures counted" above a Failures section of 54 days, two answers to one question;
// `run --threads 1` on a broken file noted "the file as changed by --set options.threads=1"; a
// damaged row inside an nccl-tests table was skipped without a word and the fit used one size less;
// `--set 'cluster.node_template="dgx_a100"'` looked for a template named with its quotes.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::has;
using test_support::Result;
using test_support::run;

TEST(FreshUser34Cli, ToTrainGivesTheWallClockWithFailuresWhereTheyAreModelled) {
  // The default budget: its failure-free time over the Failures section's mean goodput.
  const Result d = run({"run", kSrc + "/scenarios/operations/llama3_405b_16k_failures.textproto"});
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_TRUE(has(d.out, "failure-free; about 80.5 days at the 92.6 % goodput of Failures, below)")) << d.out;
  EXPECT_FALSE(has(d.out, "no failures counted")) << d.out;
  // A scenario's budget: the Failures section's Monte-Carlo wall clock.
  const Result b = run({"run", kSrc + "/scenarios/operations/buy_vs_rent_60pct.textproto"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_TRUE(has(b.out, "(failure-free; 16.0 days with failures and restarts (Failures, below))")) << b.out;
  // Without a reliability section the line says what it leaves out, as before.
  const Result plain = run({"run"});
  EXPECT_TRUE(has(plain.out, "workload.training.train_tokens; no failures counted)")) << plain.out;
}

// Round 2: run's rent left the failures out where compare counted them ($93.8M vs $101.3M), and a
// larger switch radix was bought at the 64-port price (capex fell from 32 to 512 ports).
TEST(FreshUser34Cli, RentCountsFailuresAndALargerSwitchIsNotCheaper) {
  const Result d = run({"run", kSrc + "/scenarios/operations/llama3_405b_16k_failures.textproto"});
  EXPECT_TRUE(has(d.out, "rent with failures $101,274,735 at $3.20/GPU-hour")) << d.out;
  // Every port bought at the 64-port switch's rate: the same capex at 32, 64 and 512 ports; 144
  // ports leave ports of each switch unused, so a little more.
  for (const auto& [ports, expected] : std::vector<std::pair<std::string, std::string>>{
           {"32", "23,773,440"}, {"64", "23,773,440"}, {"144", "23,881,440"}, {"512", "23,773,440"}}) {
    const Result r = run({"run", kSrc + "/scenarios/operations/buy_vs_rent_60pct.textproto", "--set",
                          "cluster.num_nodes=64", "--set", "workload.parallel.dp=32", "--set",
                          "workload.training.global_batch_size=1024", "--set", "cluster.fabric.leaf_ports=" + ports});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "capex         $" + expected + " (64 nodes, ")) << ports << "\n" << r.out;
  }
}

// Round 2: a refused node template was followed by "no public rent or purchase price is recorded
// for " with no GPU name.
TEST(FreshUser34Cli, ARefusedNodeTemplateIsNotFollowedByAPriceErrorWithoutAGpu) {
  const Result r = run({"run", kSrc + "/scenarios/operations/buy_vs_rent_60pct.textproto", "--set",
                        "cluster.node_template=gb200_nvl72/0"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "'0' is not a GPU count")) << r.err;
  EXPECT_FALSE(has(r.err, "no public rent or purchase price")) << r.err;
}

TEST(FreshUser34Cli, ThreadsIsNotCalledASetInAFileErrorsNote) {
  const traincast::test_support::TempDir dir("fresh_user34_threads");
  const std::string bad = dir.write(
      "pue0.textproto", traincast::test_support::slurp(kSrc + "/scenarios/default.textproto") + "power { pue: 0 }\n");
  const Result r = run({"run", bad, "--threads", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "power.pue: got 0 (expected 1 to 3")) << r.err;
  EXPECT_FALSE(has(r.err, "options.threads")) << r.err;
  // A real --set beside it is still named, without the thread count.
  const Result s = run({"run", bad, "--threads", "1", "--set", "workload.parallel.tp=2"});
  EXPECT_TRUE(has(s.err, "note: the file as changed by --set workload.parallel.tp=2\n")) << s.err;
}

TEST(FreshUser34Cli, QuotedStringValuesAreRefusedWithTheBareForm) {
  const Result r = run({"run", "--set", "cluster.node_template=\"dgx_a100\""});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err,
                  "--set: cluster.node_template: invalid value \"dgx_a100\": --set takes the value without "
                  "quotes (expected cluster.node_template=dgx_a100)"))
      << r.err;
}

TEST(FreshUser34Cli, CalibrateFitNotesARowMissingFromATable) {
  const traincast::test_support::TempDir dir("fresh_user34_fit");
  const auto row = [](long long size) {
    return std::to_string(size) + " " + std::to_string(size / 4) +
           " float sum -1 1225.0 0.00 0.00 0 1200.0 0.00 0.00 0\n";
  };
  const std::string header =
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n";
  const std::string log = dir.write(
      "ar.txt", "# all_reduce_perf\n" + header + row(8) + row(16) + "garbage line here\n" + row(64) + row(128));
  const Result r = run({"calibrate", "fit", log, "--base", kSrc + "/scenarios/nccl/consumer_2x2080ti_nop2p.textproto",
                        "--out", dir.file("p.textproto")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "ar.txt:6: size 64 follows 16 on line 4, 2 steps of the table's usual one: 1 row(s) missing"))
      << r.out;
}

}  // namespace
}  // namespace traincast::cli
