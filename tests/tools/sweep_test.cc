// `traincast sweep` and `traincast merge` as a user drives them: the CSV's bytes do not depend on
// --jobs; --resume after an interrupted or truncated run gives the full CSV; shards merged give
// the single-run CSV; files are never clobbered; Ctrl-C (SIGINT) stops cleanly with exit 130.
// (The MPI run is checked by the CTest test integration.sweep_mpirun_matches_single_process.)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/commands.h"

extern char** environ;

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;

using test_support::Result;
using test_support::run;

using test_support::slurp;

void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::size_t count_lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

/// 28 cheap points on 2 DGX H100 (16 GPUs): 6 valid layouts x 2 widths (hidden 32768 does not
/// fit: oom rows) and 16 points with TP 3 (does not divide 16 heads: invalid rows).
const std::string kSweep =
    "name: \"cli-test\"\n"
    "scenario { cluster { node_template: \"dgx_h100\" num_nodes: 2 } workload { model { num_layers: 8 hidden_size: "
    "2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 } training { global_batch_size: 64 } } }\n"
    "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"2\" values: \"3\" values: \"4\" }\n"
    "axis { path: \"workload.parallel.pp\" values: \"1\" values: \"2\" }\n"
    "axis { path: \"workload.parallel.dp\" log2_range { from: 2 to: 16 } }\n"
    "axis { path: \"workload.model.hidden_size\" values: \"2048\" values: \"32768\" }\n"
    "constraint: \"tp * pp * dp == gpus || tp == 3\"\n"
    "metric: \"iteration_time_s\"\nmetric: \"mfu\"\nmetric: \"peak_memory_gib\"\nmetric: \"busiest_link\"\n";
constexpr std::size_t kSweepPoints = 28;

/// 36 points of about 40 ms each here (a fat tree with one node per leaf: no replica folding),
/// for the interrupt test: long enough to interrupt after the first row, short enough for ASan.
const std::string kSlowSweep =
    "scenario { cluster { node_template: \"dgx_h100\" num_nodes: 2 fabric { kind: fat_tree nodes_per_leaf: 1 } } "
    "workload { model { num_layers: 4 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 "
    "} training { global_batch_size: 512 } } }\n"
    "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"2\" values: \"4\" }\n"
    "axis { path: \"workload.parallel.pp\" values: \"1\" values: \"2\" }\n"
    "axis { path: \"workload.parallel.dp\" log2_range { from: 2 to: 16 } }\n"
    "axis { path: \"workload.training.micro_batch_size\" values: \"1\" values: \"2\" }\n"
    "axis { name: \"oversub\" path: \"cluster.fabric.oversubscription\" range { from: 1 to: 3 step: 1 } }\n"
    "constraint: \"tp * pp * dp == gpus\"\n";

class SweepCliTest : public traincast::test_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    sweep_ = (dir_ / "s.sweep.textproto").string();
    spit(sweep_, kSweep);
  }
  /// The single-process CSV of kSweep (computed once per test that needs it).
  std::string full_csv() {
    const std::string out = path("full.csv");
    const Result r = run({"sweep", sweep_, "--out", out, "--jobs", "1"});
    EXPECT_EQ(r.status, 0) << r.err;
    return slurp(out);
  }
  std::string sweep_;
};

TEST_F(SweepCliTest, CsvBytesDoNotDependOnJobs) {
  const std::string one = full_csv();
  const Result r = run({"sweep", sweep_, "--out", path("two.csv"), "--jobs", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(path("two.csv")), one);
  ASSERT_EQ(run({"sweep", sweep_, "--out", path("five.csv"), "--jobs", "5"}).status, 0);
  EXPECT_EQ(slurp(path("five.csv")), one);

  // Shape: comment, header, one row per point in point order; every status present.
  EXPECT_EQ(count_lines(one), kSweepPoints + 2);
  EXPECT_EQ(one.rfind("# traincast sweep ", 0), 0u);
  std::istringstream lines(one);
  std::string comment, header, row;
  std::getline(lines, comment);
  std::getline(lines, header);
  EXPECT_EQ(comment.substr(34), " points 28");
  EXPECT_EQ(header, "point,tp,pp,dp,hidden_size,status,iteration_time_s,mfu,peak_memory_gib,busiest_link,reason");
  std::size_t index = 0, ok = 0, oom = 0, invalid = 0;
  while (std::getline(lines, row)) {
    EXPECT_EQ(row.substr(0, row.find(',')), std::to_string(index++));
    ok += row.find(",ok,") != std::string::npos;
    oom += row.find(",oom,") != std::string::npos;
    invalid += row.find(",invalid,") != std::string::npos;
  }
  EXPECT_EQ(ok, 6u);        // the 6 layouts at hidden 2048
  EXPECT_EQ(oom, 6u);       // the same at hidden 32768 (~100B parameters)
  EXPECT_EQ(invalid, 16u);  // TP 3
  EXPECT_NE(r.out.find("28 points (6 ok, 6 oom, 16 invalid)"), std::string::npos) << r.out;
}

TEST_F(SweepCliTest, EveryPointInvalidExitsTwoAndKeepsTheReasons) {
  // Only TP 3 (does not divide 16 heads): all 16 points invalid; the CSV keeps why, exit status 2.
  std::string only_tp3 = kSweep;
  only_tp3.replace(only_tp3.find("values: \"1\" values: \"2\" values: \"3\" values: \"4\""),
                   std::string("values: \"1\" values: \"2\" values: \"3\" values: \"4\"").size(), "values: \"3\"");
  spit(path("tp3.sweep.textproto"), only_tp3);
  const std::string out = path("tp3.csv");
  const Result r = run({"sweep", path("tp3.sweep.textproto"), "--out", out, "--jobs", "2"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.out.find("16 points (0 ok, 0 oom, 16 invalid)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("every point is invalid"), std::string::npos) << r.err;
  EXPECT_EQ(count_lines(slurp(out)), 16u + 2);
  EXPECT_NE(slurp(out).find("does not divide"), std::string::npos);
  // One shard of several whose points are all invalid is not an error: the others may run.
  const Result shard = run({"sweep", path("tp3.sweep.textproto"), "--out", path("s0.csv"), "--shard", "0/2"});
  EXPECT_EQ(shard.status, 0) << shard.err;
}

TEST_F(SweepCliTest, OutInAMissingDirectoryNamesTheDirectory) {
  const std::string out = path("no_such_dir/r.csv");
  const Result r = run({"sweep", sweep_, "--out", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: " + out + ": directory " + path("no_such_dir") + " does not exist\n");
}

TEST_F(SweepCliTest, BareFileNameIsWrittenInTheWorkingDirectory) {
  // `--out results.csv` as the README writes it (a regression of the missing-directory check).
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  const Result r = run({"sweep", sweep_, "--out", "bare.csv", "--jobs", "2"});
  fs::current_path(before);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count_lines(slurp(path("bare.csv"))), kSweepPoints + 2);
  EXPECT_FALSE(fs::exists(path("bare.csv.lock")));
}

TEST_F(SweepCliTest, NeverOverwritesWithoutForceOrResume) {
  const std::string out = path("r.csv");
  spit(out, "precious\n");
  const Result r = run({"sweep", sweep_, "--out", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: " + out + ": file exists (pass --resume to continue it, or --force to overwrite it)\n");
  EXPECT_EQ(slurp(out), "precious\n");
  // --resume on a file that is no sweep CSV refuses too.
  const Result resumed = run({"sweep", sweep_, "--out", out, "--resume"});
  EXPECT_EQ(resumed.status, 2);
  EXPECT_EQ(slurp(out), "precious\n");
  EXPECT_EQ(run({"sweep", sweep_, "--out", out, "--force"}).status, 0);
  EXPECT_EQ(count_lines(slurp(out)), kSweepPoints + 2);
}

TEST_F(SweepCliTest, ResumeAfterATruncatedCsvGivesTheFullCsv) {
  const std::string full = full_csv();
  const std::string out = path("r.csv");
  // Cut inside the 8th row (as a kill during a write would), on a row boundary, and right after
  // the header; each time --resume completes it to the same bytes.
  std::size_t row8 = 0;
  for (int i = 0; i < 9; ++i) row8 = full.find('\n', row8) + 1;
  const std::size_t header_end = full.find('\n', full.find('\n') + 1) + 1;
  for (const std::size_t cut : {row8 + 5, row8, header_end}) {
    spit(out, full.substr(0, cut));
    const Result r = run({"sweep", sweep_, "--out", out, "--resume", "--jobs", "2"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(slurp(out), full) << "cut at byte " << cut;
  }
  // Resuming a finished CSV runs nothing and changes nothing.
  const Result again = run({"sweep", sweep_, "--out", out, "--resume"});
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("0 points"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("28 already in the file"), std::string::npos) << again.out;
  EXPECT_EQ(slurp(out), full);
}

TEST_F(SweepCliTest, ResumeRefusesTheCsvOfAnotherSweep) {
  const std::string full = full_csv();
  const std::string out = path("r.csv");
  spit(out, full.substr(0, full.size() / 2));
  spit(sweep_, kSweep + "metric: \"hfu\"\n");  // other columns: another sweep
  const Result r = run({"sweep", sweep_, "--out", out, "--resume"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(out + ": was written by a different sweep (hash "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(expected the CSV of this sweep file, or --force to start over)"), std::string::npos);
  EXPECT_EQ(slurp(out), full.substr(0, full.size() / 2));
  // Nor may a shard's CSV be resumed as another shard.
  ASSERT_EQ(run({"sweep", sweep_, "--out", path("s0.csv"), "--shard", "0/2"}).status, 0);
  const Result shard = run({"sweep", sweep_, "--out", path("s0.csv"), "--shard", "1/2", "--resume"});
  EXPECT_EQ(shard.status, 2);
  EXPECT_EQ(shard.err, "traincast: " + path("s0.csv") +
                           ": holds shard 0/2, not shard 1/2 (expected the same --shard as the run that wrote it)\n");
}

TEST_F(SweepCliTest, ShardsMergedGiveTheSingleRunCsv) {
  const std::string full = full_csv();
  std::vector<std::string> parts;
  for (int i = 0; i < 3; ++i) {
    parts.push_back(path("part" + std::to_string(i) + ".csv"));
    const Result r = run({"sweep", sweep_, "--out", parts.back(), "--shard", std::to_string(i) + "/3"});
    ASSERT_EQ(r.status, 0) << r.err;
    // Shard i holds points i, i + 3, ...: 10, 9, 9 rows.
    EXPECT_EQ(count_lines(slurp(parts.back())), (i == 0 ? 10u : 9u) + 2);
  }
  const std::string merged = path("merged.csv");
  const Result m = run({"merge", merged, parts[2], parts[0], parts[1], "--sweep", sweep_});  // any order
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(m.err, "");
  EXPECT_EQ(slurp(merged), full);
  // Without the sweep file the axis values cannot be checked, and merge says so.
  const Result unchecked = run({"merge", path("m0.csv"), parts[0], parts[1], parts[2]});
  ASSERT_EQ(unchecked.status, 0) << unchecked.err;
  EXPECT_EQ(unchecked.err,
            "traincast merge: note: axis values not checked against the sweep (pass --sweep SWEEP to check that "
            "each row's axis values are its point's)\n");
  EXPECT_EQ(slurp(path("m0.csv")), full);

  // Refusals: the output exists; a shard missing; a shard twice; parts of different sweeps.
  EXPECT_EQ(run({"merge", merged, parts[0], parts[1], parts[2]}).err,
            "traincast: " + merged + ": file exists (pass --force to overwrite it)\n");
  const Result missing = run({"merge", path("m2.csv"), parts[0], parts[2]});
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err,
            "merge: 9 of 28 points are in no part (1, 4, 7, 10, 13, 16, 19, 22, 25; parts given: shard "
            "0/3, shard 2/3) (expected every point: is a shard missing or unfinished?)\n");
  const Result twice = run({"merge", path("m3.csv"), parts[0], parts[1], parts[2], parts[1]});
  EXPECT_EQ(twice.status, 2);
  EXPECT_EQ(twice.err, "traincast: merge: " + parts[1] +
                           " is given twice (expected each part once: a part given twice holds every point twice)\n");
  // The same points in two files (a copy): each point named with both places.
  std::filesystem::copy_file(parts[1], path("copy.csv"));
  const Result copy = run({"merge", path("m3.csv"), parts[0], parts[1], parts[2], path("copy.csv")});
  EXPECT_EQ(copy.status, 2);
  EXPECT_EQ(copy.err.substr(0, copy.err.find('\n')),
            path("copy.csv") + ":3: point 1 is also in " + parts[1] + ":3 (expected each point in one part)");
  spit(sweep_, kSweep + "metric: \"hfu\"\n");
  ASSERT_EQ(run({"sweep", sweep_, "--out", path("other.csv"), "--shard", "1/3"}).status, 0);
  const Result other = run({"merge", path("m4.csv"), parts[0], path("other.csv"), parts[2]});
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find(path("other.csv") + ":1: from a different sweep (hash "), std::string::npos) << other.err;
  EXPECT_FALSE(fs::exists(path("m2.csv")) || fs::exists(path("m3.csv")) || fs::exists(path("m4.csv")));
}

/// `text` with the first occurrence of `from` at or after line `line` (0 = the comment) replaced by `to`.
std::string replace_on_line(std::string text, int line, const std::string& from, const std::string& to) {
  std::size_t at = 0;
  for (int i = 0; i < line; ++i) at = text.find('\n', at) + 1;
  const std::size_t hit = text.find(from, at);
  EXPECT_LT(hit, text.find('\n', at)) << "\"" << from << "\" not on line " << line;
  return text.replace(hit, from.size(), to);
}

// Issue 16: merge and --resume took a row whose axis value no point of the sweep has, a negative
// iteration_time_s and an oom row with no reason. Each is refused with file:line, the column and
// what was expected, exit 2, and no output written.
TEST_F(SweepCliTest, MergeAndResumeRefuseRowsTheSweepCannotHaveWritten) {
  const std::string full = full_csv();
  // Line 3 is point 0: tp 1, pp 1, dp 16, hidden 2048, ok.
  ASSERT_EQ(full.substr(full.find('\n', full.find('\n') + 1) + 1, 14), "0,1,1,16,2048,") << full;
  auto refused = [&](const std::string& csv, const std::string& expected_err) {
    spit(path("part.csv"), csv);
    const Result m = run({"merge", path("m.csv"), path("part.csv"), "--sweep", sweep_});
    EXPECT_EQ(m.status, 2);
    EXPECT_EQ(m.err, expected_err);
    EXPECT_FALSE(fs::exists(path("m.csv")));
    const Result r = run({"sweep", sweep_, "--out", path("part.csv"), "--resume"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, expected_err);
    EXPECT_EQ(slurp(path("part.csv")), csv);  // nothing run, nothing appended
  };
  const std::string at = path("part.csv") + ":3: ";
  refused(replace_on_line(full, 2, "0,1,1,16,", "0,1,1,12,"),
          at + "column dp: \"12\" is a value no point of the sweep has on axis dp (expected \"16\" for point 0; the "
               "axis has 2, 4, 8, 16)\n");
  refused(
      replace_on_line(full, 2, "0,1,1,16,2048,", "0,1,1,16,32768,"),
      at + "column hidden_size: \"32768\" is not point 0's value (expected \"2048\", as the sweep gives point 0)\n");
  refused(
      replace_on_line(full, 2, "2048,ok,", "2048,ok,-"),
      at + "column iteration_time_s: \"-" +
          full.substr(full.find("2048,ok,") + 8,
                      full.find(',', full.find("2048,ok,") + 8) - full.find("2048,ok,") - 8) +
          "\" is negative (expected a number >= 0: no time, memory, rate, fraction, count or cost a sweep records is "
          "negative)\n");
  // Point 1 (hidden 32768) is oom: its reason cut.
  const std::size_t oom_line = full.find("\n1,1,1,16,32768,oom,") + 1;
  ASSERT_NE(oom_line, 0u) << full;
  const std::size_t oom_end = full.find('\n', oom_line);
  std::size_t reason = full.find("peak ", oom_line);  // quoted when it holds a comma
  ASSERT_LT(reason, oom_end);
  if (full[reason - 1] == '"') --reason;
  refused(full.substr(0, reason) + full.substr(oom_end),
          path("part.csv") +
              ":4: column reason: empty in a row of status oom (expected why the point is oom, as traincast sweep "
              "writes)\n");
}

TEST_F(SweepCliTest, BadSweepFilesAndFlags) {
  spit(sweep_, kSweep + "axis { path: \"workload.parallel.tpp\" values: \"1\" }\nconstraint: \"tp > 99\"\n");
  const Result r = run({"sweep", sweep_, "--out", path("r.csv")});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, sweep_ +
                       ":12:8: axis[4].path: unknown field \"tpp\" in workload.parallel, did you mean \"tp\"? "
                       "(expected one of: tp, pp, dp, sequence_parallel, schedule, virtual_stages, "
                       "uneven_stages, zero_stage, dp_bucket_bytes, overlap_grad_reduce, tp_comm_overlap, "
                       "overlap_param_gather, ep, cp, reshard_after_forward, reshard_after_backward, "
                       "param_gather_bytes, grad_sync_every_microbatch, pipeline_stage_layers, zero_implementation, "
                       "reduce_bucket_elements, tp_overlap_implementation, moe_shared_expert_overlap, "
                       "activation_layout, overlap_tp_grad_reduce)\n");
  EXPECT_FALSE(fs::exists(path("r.csv")));
  spit(sweep_, kSweep + "constraint: \"tp > 99\"\n");
  EXPECT_EQ(run({"sweep", sweep_, "--out", path("r.csv")}).err,
            sweep_ +
                ":12:1: constraint[1]: no point satisfies \"tp > 99\": it rejects all 28 points that pass the "
                "constraints before it (expected a constraint that some point satisfies)\n");
  spit(sweep_, kSweep);
  EXPECT_EQ(run({"sweep", sweep_}).err, "traincast: sweep: --out is required (the CSV file to write)\n");
  EXPECT_EQ(run({"sweep", sweep_, "--out", path("r.csv"), "--shard", "3/3"}).err,
            "traincast: --shard: \"3/3\" is not a shard (expected i/N with 0 <= i < N, e.g. 0/4)\n");
  EXPECT_EQ(run({"sweep", sweep_, "--out", path("r.csv"), "--resume", "--force"}).err,
            "traincast: --resume and --force exclude each other (continue, or start over)\n");
  const std::string why =
      " (expected an integer from 0 to 1024: 0 for all hardware threads; one thread per simulation at once, and "
      "more threads than hardware threads do not make it faster; 1024 is above a two-socket AMD EPYC 9965 server's "
      "768)\n";
  // 0 is all hardware threads, as run --threads 0 (fresh user, session 42: refused before).
  EXPECT_EQ(run({"sweep", sweep_, "--out", path("r.csv"), "--jobs", "-1"}).err, "traincast: --jobs: got -1" + why);
  // A fresh user's --jobs 20000 on a 16-point sweep started 18,903 threads before this limit.
  EXPECT_EQ(run({"sweep", sweep_, "--out", path("r.csv"), "--jobs", "20000"}).err,
            "traincast: --jobs: got 20000" + why);
  EXPECT_FALSE(std::filesystem::exists(path("r.csv")));
  EXPECT_EQ(run({"sweep", sweep_, "--out", sweep_, "--force"}).err,
            "traincast: " + sweep_ + ": is one of the input files (" + sweep_ + ")\n");
  EXPECT_EQ(run({"merge", path("m.csv")}).status, 2);
}

#ifdef TRAINCAST_BINARY
/// Starts the traincast binary with `args`, stdout and stderr to `log`; returns its pid.
pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv_s = {TRAINCAST_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

TEST_F(SweepCliTest, SigintStopsCleanlyKeepsWholeRowsAndResumeFinishes) {
  spit(sweep_, kSlowSweep);
  const std::string out = path("r.csv");
  const pid_t pid = spawn({"sweep", sweep_, "--out", out, "--jobs", "2"}, path("log.txt"));
  ASSERT_GT(pid, 0);
  // Wait for the first row (comment + header + 1 line), then press Ctrl-C.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (count_lines(slurp(out)) < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 130) << slurp(path("log.txt"));
  const std::string partial = slurp(out);
  EXPECT_LT(count_lines(partial), 38u) << "the sweep finished before the interrupt arrived";
  EXPECT_EQ(partial.back(), '\n');  // whole rows only
  EXPECT_NE(slurp(path("log.txt")).find("interrupted: "), std::string::npos);
  // The rows kept are the first rows of the full CSV; --resume completes them to it.
  const Result resumed = run({"sweep", sweep_, "--out", out, "--resume", "--jobs", "2"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const Result full = run({"sweep", sweep_, "--out", path("full.csv"), "--jobs", "2"});
  ASSERT_EQ(full.status, 0) << full.err;
  const std::string expected = slurp(path("full.csv"));
  EXPECT_EQ(expected.substr(0, partial.size()), partial);
  EXPECT_EQ(slurp(out), expected);
}
#endif

TEST_F(SweepCliTest, WarnsOnceWhenTheProfileWasFittedOnOtherHardware) {
  // As `traincast run` does (warn_profile_hardware): a profile fitted on a DGX A100, swept on DGX
  // H100 points; one warning line per difference, not one per point.
  const std::string profile = path("a100.textproto");
  spit(profile, "fitted_on { gpu: \"A100-SXM4-80GB\" node_template: \"dgx_a100\" num_nodes: 2 }\nlatency_scale: 1.5\n");
  const std::string sweep = path("p.sweep.textproto");
  std::string text = kSweep;
  const std::string at = "scenario { ";
  text.insert(text.find(at) + at.size(), "profile: \"" + profile + "\" ");
  spit(sweep, text);
  const Result r = run({"sweep", sweep, "--out", path("p.csv"), "--jobs", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string gpu =
      "warning: profile " + profile + " was fitted on GPU A100-SXM4-80GB but the scenario's GPU is H100-SXM5-80GB";
  ASSERT_NE(r.err.find(gpu), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(gpu, r.err.find(gpu) + 1), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was fitted on node template dgx_a100 (2 node(s)) but the scenario's is dgx_h100"),
            std::string::npos)
      << r.err;
}
}  // namespace
}  // namespace traincast::cli
