// Session 44's leftovers from the earlier fresh users: numeric options read "007" as 7 where a
// scenario file and --set refuse a leading zero.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;

const std::string kSrc = TRAINCAST_SOURCE_DIR;

// ---- 1. numeric options refuse a leading zero ---------------------------------------------------

// Before: `run --threads 007` ran with 7 threads, `--shard 00/2` ran shard 0, `--gpus 00,1` GPUs 0 and 1,
// where `--set options.threads=007` was refused.
TEST(FreshUser44LeadingZeros, NumericOptionsRefuseALeadingZeroAsSetDoes) {
  Result r = run({"run", "--threads", "007"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --threads: got \"007\": a number has no leading zero, as in a scenario file and --set "
            "(expected 7)\n");
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = run({"run", "--set", "options.threads=007"});  // the rule it follows
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "007 has a leading zero")) << r.err;
  // A double option written as an integer, and another command's count.
  r = run({"compare", "--vary", "workload.parallel.tp=2,4", "--tokens", "01"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "traincast: --tokens: got \"01\": a number has no leading zero, as in a scenario file and --set (expected 1)\n");
  r = run({"compare", "--vary", "workload.parallel.tp=2,4", "--jobs", "00"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "traincast: --jobs: got \"00\": a number has no leading zero, as in a scenario file and --set (expected 0)\n");
  // A lone 0 is a number, not a leading zero.
  r = run({"run", "--threads", "0"});
  EXPECT_EQ(r.status, 0) << r.err;
  // Options that hold numbers in text of their own.
  const traincast::test_support::TempDir dir("fresh_user44_zeros");
  r = run({"sweep", kSrc + "/tests/tools/data/small.sweep.textproto", "--out", dir.file("s.csv"), "--shard", "00/2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --shard: \"00/2\": 00 has a leading zero (expected i/N in decimal without leading zeros, e.g. "
            "0/2)\n");
  r = run({"sweep", kSrc + "/tests/tools/data/small.sweep.textproto", "--out", dir.file("s.csv"), "--shard", "1/02"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "02 has a leading zero (expected i/N in decimal without leading zeros, e.g. 1/2)")) << r.err;
  r = run({"nccl-tests", kSrc + "/scenarios/default.textproto", "--gpus", "00,1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --gpus: bad GPU list '00,1': 00 has a leading zero (expected ids and ranges in decimal without "
            "leading "
            "zeros, e.g. 0)\n");
}

}  // namespace
}  // namespace traincast::cli
