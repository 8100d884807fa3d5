// What a fresh user found on the command line (session 31): an error in a named scenario file
// caused by a --set did not name the --set (only the embedded default's did); compare's payback
// row gave a finite payback beyond the hardware's life with no word of it, its verdict called a
// 41 % own-cost difference "within model error" (only rent's was judged), and a run that does not
// fit showed $0 to train and 100 % goodput; an empty file name printed ": cannot read file";
// `catalog extra` said "expected at most 0 files".

#include <gtest/gtest.h>

#include <string>

#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::has;
using test_support::Result;
using test_support::run;

// The check reports at the file's field (ep, line 38), though --set changed the other field: the
// note after it names the --set, as it does for the embedded default.
TEST(FreshUser31Cli, ErrorInANamedFileNamesTheSetThatCausedIt) {
  const std::string file = kSrc + "/scenarios/models/mixtral_8x7b.textproto";
  const Result r = run({"run", file, "--set", "workload.training.precision=fp16"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(has(r.err, file + ":38:5: workload.parallel.ep: got 8 with precision fp16")) << r.err;
  EXPECT_TRUE(has(r.err, file + ": note: the file as changed by --set workload.training.precision=fp16")) << r.err;
  // Without --set, a valid file runs and a bad one gets no note.
  EXPECT_EQ(run({"run", file}).status, 0);
  const Result plain = run({"run", kSrc + "/scenarios/default.textproto", "--set", "workload.parallel.tp=3"});
  EXPECT_EQ(plain.status, 2);
  EXPECT_TRUE(has(plain.err, "note: the file as changed by --set workload.parallel.tp=3")) << plain.err;
}

// Payback past the amortisation is not within the hardware's life. The 41 % own-cost difference
// comes from the amortisation alone: the same simulated run on both sides has the same error, so
// since session 39 it is not judged against the band (it was "beyond it").
TEST(FreshUser31Cli, CompareJudgesOwnCostAndPaybackAgainstTheHardwaresLife) {
  const Result r = run({"compare", "--vary", "cost.amortization_years=2,5", "--tokens", "1000000000"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "2.09 years (beyond its 2.0-year life)")) << r.out;
  EXPECT_TRUE(has(r.out, "for the same cost per token (within 0.5 %, rent) and 41 % less per token (own, TCO)"))
      << r.out;
  EXPECT_TRUE(has(r.out, "not judged against model error (the simulated runs are the same")) << r.out;
  EXPECT_FALSE(has(r.out, "within model error")) << r.out;
}

// A column that does not fit has no time to train: no goodput and no cost to train either.
TEST(FreshUser31Cli, CompareShowsNoCostToTrainForARunThatDoesNotFit) {
  const Result r =
      run({"compare", kSrc + "/scenarios/default.textproto", kSrc + "/scenarios/llama3_70b_one_node_oom.textproto"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string row : {"goodput (failures)", "rent to train", "own to train (TCO)"}) {
    const std::size_t at = r.out.find(row);
    ASSERT_NE(at, std::string::npos) << row << "\n" << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_EQ(line.back(), '-') << line;
    EXPECT_FALSE(has(line, "$0")) << line;
  }
}

TEST(FreshUser31Cli, EmptyFileNameAndExtraFileNamesAreNamed) {
  Result r = run({"run", ""});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "\"\": an empty file name (expected the path of a scenario file)")) << r.err;
  r = run({"catalog", "extra"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "this command takes no file names (got one; options take the form --name value)")) << r.err;
}

}  // namespace
}  // namespace traincast::cli
