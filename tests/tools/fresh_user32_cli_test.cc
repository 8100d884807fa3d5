// What a fresh user found on the command line (session 32): a scenario that sets its own token
// budget lost the rent from the summary's "To train" line (and from --json) that the default budget
// prints, though the catalog has the GPU's rate; option names were guessed from prefixes; nccl-tests
// -b 0 -f 2 stopped after one row without a word.

#include <gtest/gtest.h>

#include <string>

#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::has;
using test_support::Result;
using test_support::run;

// The default scenario's own default budget (20 tokens per parameter: 160.6B tokens) given as the
// scenario's budget: the same days and the same rent, without the default-budget remark.
TEST(FreshUser32Cli, OwnTokenBudgetKeepsTheRentOfTheToTrainLine) {
  const Result d = run({"run"});
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_TRUE(has(d.out, "25.2 days for 160.6B tokens (default budget")) << d.out;
  EXPECT_TRUE(has(d.out, "rent $15,491 at $3.20/GPU-hour")) << d.out;
  const Result own = run({"run", "--set", "workload.training.train_tokens=160640000000"});
  ASSERT_EQ(own.status, 0) << own.err;
  EXPECT_TRUE(has(own.out,
                  "To train   25.2 days for 160.6B tokens (no failures or restarts counted), rent $15,491 at "
                  "$3.20/GPU-hour (Hyperstack cloud on-demand"))
      << own.out;
  // A GPU without a catalog rate keeps the line without rent.
  const Result unpriced =
      run({"run", "--set", "workload.training.train_tokens=160640000000", "--set", "cluster.gpu=H100-SXM5-96GB"});
  ASSERT_EQ(unpriced.status, 0) << unpriced.err;
  EXPECT_TRUE(has(unpriced.out, "tokens (no failures or restarts counted)\n")) << unpriced.out;
}

// An option is its whole name: boost's prefix guessing took `--forc` as --force and `--js F` as
// --json F; a misspelled option names the closest one, as a misspelled field does.
TEST(FreshUser32Cli, OptionsAreNotGuessedFromPrefixes) {
  const Result js = run({"run", "--js", "/tmp/never_written.json"});
  EXPECT_EQ(js.status, 2);
  EXPECT_EQ(js.err, "traincast: unrecognised option '--js', did you mean \"--json\"?\n");
  const Result sett = run({"run", "--sett", "options.iterations=1"});
  EXPECT_EQ(sett.status, 2);
  EXPECT_EQ(sett.err, "traincast: unrecognised option '--sett', did you mean \"--set\"?\n");
  const Result far = run({"run", "--zzzzzz"});
  EXPECT_EQ(far.status, 2);
  EXPECT_EQ(far.err, "traincast: unrecognised option '--zzzzzz'\n");
}

// nccl-tests' -b 0 with a factor stays at 0: one row, and now a warning saying why (the rest of
// the range was dropped without a word).
TEST(FreshUser32Cli, NcclTestsSizeZeroWithAFactorSaysWhyOneRow) {
  const Result r =
      run({"nccl-tests", kSrc + "/scenarios/nccl/h100_ib400_2node.textproto", "-b", "0", "-e", "64", "-f", "2"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err, "warning: -b 0 with -f 2: 0 x factor stays 0, so only the size-0 row is simulated")) << r.err;
  const Result from_one =
      run({"nccl-tests", kSrc + "/scenarios/nccl/h100_ib400_2node.textproto", "-b", "1", "-e", "64", "-f", "2"});
  EXPECT_EQ(from_one.status, 0) << from_one.err;
  EXPECT_FALSE(has(from_one.err, "warning: -b 0")) << from_one.err;
}

}  // namespace
}  // namespace traincast::cli
