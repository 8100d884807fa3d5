// What the last fresh-user round (session 36) found and left open: `storage { local { ... } }`
// read without effect and without a word; `traincast cluster` demanded a workload when every job
// has a fixed duration_s; `--set` values echoed as read (1e+300), not as typed; compare's verdict
// set a time with drawn failures against one without; `traincast cluster` printed none of the
// warnings `traincast run` prints for a job. (compare's progress line: robust_outputs_cli_test.cc.)

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/compare.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;

const std::string kJob =
    "cluster { node_template: \"dgx_h100\" num_nodes: 1 }\n"
    "workload {\n"
    "  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
    "  parallel { tp: 8 }\n"
    "  training { global_batch_size: 16 }\n"
    "}\n";

/// Occurrences of `what` in `text`.
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::string kUnusedLocal =
    ": storage.local: has no effect: neither storage.data_source nor storage.checkpoint_target is local, so nothing "
    "reads or writes these drives (expected storage.data_source: local or storage.checkpoint_target: local for them "
    "to be modelled; both default to shared_fs)\n";

// Before: `storage { local { drives: 2 raid: raid1 } }` ran as if the drives were not there (data
// and checkpoints on the default shared_fs), exit 0 and not a word.
TEST(FreshUser37Cli, LocalDrivesNothingUsesAreNamedOnceAndLeftOutOfAPrintedScenario) {
  const traincast::test_support::TempDir dir("fresh_user37_local");
  const std::string unused = dir.write("unused.textproto", kJob + "storage { local { drives: 2 raid: raid1 } }\n");
  const Result r = run({"run", unused});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(r.err, "warning: " + unused + ":7:11" + kUnusedLocal), 1u) << r.err;
  // Where the drives are used, no warning.
  const Result used = run({"run", unused, "--set", "storage.checkpoint_target=local"});
  ASSERT_EQ(used.status, 0) << used.err;
  EXPECT_FALSE(has(used.err, "storage.local")) << used.err;
  // The drives as given are kept in a printed scenario (and still warned about when it is run).
  const std::string printed = (dir.path() / "printed.json").string();
  ASSERT_EQ(run({"run", unused, "--print-scenario", "--json", printed}).status, 0);
  EXPECT_TRUE(has(traincast::test_support::slurp(printed), "\"raid\": \"raid1\"")) << printed;
  EXPECT_TRUE(has(run({"run", printed}).err, kUnusedLocal));
  // A storage section without local drives: its printed scenario leaves the default drives out,
  // so running it does not warn about a block its user never wrote.
  const std::string shared = dir.write("shared.textproto", kJob + "storage { checkpoint_mode: asynchronous }\n");
  const std::string shared_json = (dir.path() / "shared.json").string();
  const Result p = run({"run", shared, "--print-scenario", "--json", shared_json});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_FALSE(has(traincast::test_support::slurp(shared_json), "\"local\"")) << p.out;
  const Result back = run({"run", shared_json, "--print-scenario"});
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(back.out, p.out);
  EXPECT_FALSE(has(back.err, "storage.local")) << back.err;
}

const std::string kCluster = "cluster { node_template: \"dgx_h100\" num_nodes: 4 }\n";

// Before: "c.textproto:1:1: workload: the file describes only a cluster, it has no workload
// section (expected ...; a cluster-only file is read by traincast nccl-tests, ...)", exit 2, for
// jobs that are never simulated.
TEST(FreshUser37Cli, ClusterRunsFixedDurationJobsWithoutAWorkload) {
  const traincast::test_support::TempDir dir("fresh_user37_durations");
  const std::string fixed = dir.write("fixed.textproto", kCluster +
                                                             "job { name: \"a\" gpus: 16 duration_s: 3600 }\n"
                                                             "job { name: \"b\" gpus: 24 duration_s: 1800 }\n");
  const Result r = run({"cluster", fixed});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Jobs run     2 of 2\n")) << r.out;
  EXPECT_TRUE(has(r.out, "Makespan     5400.0 s (")) << r.out;  // b waits for a: 24 + 16 > 32 GPUs
  EXPECT_TRUE(has(r.out, "Detailed simulations 0 ")) << r.out;
  // A job that would run the missing workload is named, with the three ways out.
  const std::string tokens = dir.write("tokens.textproto", kCluster +
                                                               "job { name: \"a\" gpus: 16 duration_s: 3600 }\n"
                                                               "job { name: \"b\" gpus: 8 tokens: 1e9 }\n");
  const Result t = run({"cluster", tokens});
  EXPECT_EQ(t.status, 2);
  EXPECT_EQ(t.err, tokens +
                       ":3:1: job[1]: runs the scenario's own workload (it names no job[1].workload and has no "
                       "duration_s), and the file has no workload section (expected a workload { ... } block with "
                       "model, parallel and training, job[1].workload naming a zoo model or a scenario file, or "
                       "job[1].duration_s: a job of fixed run time is not simulated and needs no workload)\n");
  // Its sections are checked as a whole scenario's are.
  const Result bad = run({"cluster", fixed, "--set", "cost.utilization=2"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(has(bad.err, "--set: cost.utilization: got 2 (expected")) << bad.err;
  // A --set of workload.* there changes nothing a job runs: one line (a second fresh user got six
  // "not set" fields at 1:1, from the workload the --set made).
  const Result w = run({"cluster", fixed, "--set", "workload.training.micro_batch_size=2"});
  EXPECT_EQ(w.status, 2);
  EXPECT_EQ(w.err,
            "--set: workload.training.micro_batch_size: has no effect: the file has no workload section and every job "
            "has duration_s or names its own workload (expected a field of the file's own sections, or the field in a "
            "job's workload file)\n");
}

// Before: a refused --set value was shown as read ("got 1e+300", "got 0" for -0), where the same
// value in a file was quoted as written since session 36.
TEST(FreshUser37Cli, SetValuesAreQuotedAsTyped) {
  const std::string expected = " (expected 0 for no token budget, or a whole number of tokens from 1 to 1e15";
  const Result big = run({"run", "--set", "workload.training.train_tokens=1E300"});
  EXPECT_EQ(big.status, 2);
  EXPECT_TRUE(has(big.err, "--set: workload.training.train_tokens: got 1E300" + expected)) << big.err;
  const Result half = run({"run", "--set", "workload.training.train_tokens=1000.50"});
  EXPECT_EQ(half.status, 2);
  EXPECT_TRUE(has(half.err, "--set: workload.training.train_tokens: got 1000.50" + expected)) << half.err;
  const Result zero = run({"run", "--set", "power.pue=-0"});
  EXPECT_EQ(zero.status, 2);
  EXPECT_TRUE(has(zero.err, "--set: power.pue: got -0 (expected")) << zero.err;
  // compare's --vary names its own option and the value as typed.
  const Result vary = run({"compare", "--vary", "workload.training.train_tokens=1E300,2E300"});
  EXPECT_EQ(vary.status, 2);
  EXPECT_TRUE(has(vary.err, "--vary: workload.training.train_tokens: got 1E300" + expected)) << vary.err;
  EXPECT_TRUE(has(vary.err, "--vary: workload.training.train_tokens: got 2E300" + expected)) << vary.err;
}

// Before: `traincast cluster` printed none of the warnings `traincast run` prints for a job (its
// workload settings without effect, its cluster's fabric notes), nor said that a job's workload
// file's own sections (reliability here) are not taken.
TEST(FreshUser37Cli, ClusterPrintsEachJobsWarningsOnceNamingItsJobs) {
  const traincast::test_support::TempDir dir("fresh_user37_cluster_notes");
  std::string w = kJob;
  w.replace(w.find("tp: 8"), 5, "tp: 8 uneven_stages: true");
  const std::string workload = dir.write("w.textproto", w + "reliability { horizon_s: 86400 }\n");
  const std::string jobs =
      dir.write("jobs.textproto", kCluster +
                                      "job { name: \"a\" workload: \"w.textproto\" gpus: 8 tokens: 1e8 }\n"
                                      "job { name: \"b\" workload: \"w.textproto\" gpus: 16 tokens: 1e8 }\n"
                                      "job { name: \"c\" gpus: 8 duration_s: 60 }\n");
  const Result r = run({"cluster", jobs});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Jobs run     3 of 3\n")) << r.out;
  EXPECT_EQ(count(r.err, "warning: jobs a and b: " + workload +
                             ":7:1: reliability: has no effect in traincast cluster: a job takes only the workload "
                             "section of its workload file (expected storage, power and thermal in the cluster "
                             "scenario " +
                             jobs),
            1u)
      << r.err;
  EXPECT_EQ(count(r.err, "warning: jobs a and b: workload.parallel.uneven_stages has no effect: pp 1"), 1u) << r.err;
  EXPECT_EQ(count(r.err, "warning: "), 2u) << r.err;
}

// Before: "B trains 1.25x faster than A (time to train) for 20 % less per token (rent)" where A's
// 125 days counted its drawn failures (goodput 80 %) and B's 100 days were failure-free ("not
// drawn **": its budget is beyond the draws' range): the same speed, compared unlike.
TEST(FreshUser37Verdict, ComparesFailureFreeTimesWhenOnlyOneSideDrewFailures) {
  CompareRow a, b;
  a.label = "A", b.label = "B";
  for (CompareRow* w : {&a, &b}) {
    w->train_tokens = 1e12;
    w->tokens_per_s = 1e12 / 8.64e6;
    w->report.time_to_train_s = 8.64e6;  // 100 days without failures
    w->rent_priced = true;
  }
  a.goodput_drawn = true, a.goodput = 0.8, a.wall_clock_to_train_s = 1.08e7, a.rent_to_train_usd = 1250;
  b.failures_note = "failures not drawn: ...", b.wall_clock_to_train_s = 8.64e6, b.rent_to_train_usd = 1000;
  const std::string v = compare_verdict(a, b);
  EXPECT_TRUE(has(v,
                  "B trains as fast as A (time to train without failures, like for like: A's failures are drawn "
                  "(goodput 80.00 %), B's are not (**)) for the same cost per token (within 0.5 %, rent, without "
                  "failures)"))
      << v;
  // Both drawn: their own times, as before.
  b.goodput_drawn = true, b.goodput = 1.0, b.failures_note.clear();
  EXPECT_TRUE(has(compare_verdict(a, b), "B trains 1.25x faster than A (time to train) for 20 % less per token (rent)"))
      << compare_verdict(a, b);
}

}  // namespace
}  // namespace traincast::cli
