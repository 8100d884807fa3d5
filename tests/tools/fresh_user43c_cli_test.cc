// Session 43's fresh-user gaps, third part: compare labelled piped scenarios "63" and "62" (from
// /dev/fd/63) and did not say which scenario a --set failed on; a piped sweep's relative
// scenario_file was looked for in /dev; --set's index messages (2147483648 "not decimal", [00]
// accepted, one skipped index reported once per --set); "+2" refused by --set and taken by
// --threads; compare --threads without a hint; the throttled GPUs listed out of index order.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tests/tools/pipe.h"

namespace traincast::cli {
namespace {

using test_support::count;
using test_support::has;
using test_support::Pipe;
using test_support::Result;
using test_support::run;

/// A small TP 8 job on `nodes` DGX H100 (DP = nodes) named `name` ("" for none).
std::string scenario(const std::string& name, int nodes = 1) {
  return (name.empty() ? std::string() : "name: \"" + name + "\"\n") +
         "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: " + std::to_string(nodes) +
         "\n}\nworkload {\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { tp: 8 dp: " +
         std::to_string(nodes) + " }\n  training { global_batch_size: 16 }\n}\n";
}

/// Makes `dir` the working directory while it lives (the shell's directory when it runs <(...)).
class InDirectory {
 public:
  explicit InDirectory(const std::filesystem::path& dir) : before_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~InDirectory() { std::filesystem::current_path(before_); }
  InDirectory(const InDirectory&) = delete;
  InDirectory& operator=(const InDirectory&) = delete;

 private:
  std::filesystem::path before_;
};

/// The number after the last "/" of a /dev/fd/N path.
std::string fd_number(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// ---- 1. compare labels a piped scenario by its name --------------------------------------------

// Before: the columns, the Prices lines and the verdict said "63" and "62".
TEST(FreshUser43cCompareLabels, APipedScenarioIsLabelledByItsName) {
  const Pipe a(scenario("alpha")), b(scenario("beta", 2));
  const Result r = run({"compare", a.path(), b.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string header = r.out.substr(0, r.out.find('\n'));
  EXPECT_TRUE(has(header, "alpha")) << header;
  EXPECT_TRUE(has(header, "beta")) << header;
  EXPECT_FALSE(has(header, fd_number(a.path()))) << header;
  EXPECT_TRUE(has(r.out, "  alpha rent: ")) << r.out;
  EXPECT_TRUE(has(r.out, "  beta trains ")) << r.out;
  // A file keeps its file name as its label beside a pipe.
  const traincast::test_support::TempDir dir("fresh_user43c_labels");
  const Pipe c(scenario("gamma"));
  const Result mixed = run({"compare", dir.write("file_one.textproto", scenario("alpha")), c.path()});
  ASSERT_EQ(mixed.status, 0) << mixed.err;
  EXPECT_TRUE(has(mixed.out.substr(0, mixed.out.find('\n')), "file_one")) << mixed.out;
  EXPECT_TRUE(has(mixed.out.substr(0, mixed.out.find('\n')), "gamma")) << mixed.out;
}

TEST(FreshUser43cCompareLabels, PipesWithoutANameOrOfOneNameStayApart) {
  const Pipe a(scenario("")), b(scenario("", 2));
  Result r = run({"compare", a.path(), b.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  " + a.path() + " rent: ")) << r.out;  // no name: the path as given
  const Pipe c(scenario("same")), d(scenario("same", 2));
  r = run({"compare", c.path(), d.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  same (" + c.path() + ") rent: ")) << r.out;
  EXPECT_TRUE(has(r.out, "  same (" + d.path() + ") trains ")) << r.out;
}

// ---- 2. compare says which scenario a --set failed on -------------------------------------------

// Before: "--set: cluster.overrides[0].select: no node1 (the cluster has node0)" alone.
TEST(FreshUser43cCompareSet, ASetThatFailsOnOneScenarioNamesIt) {
  const traincast::test_support::TempDir dir("fresh_user43c_set");
  const std::string one = dir.write("one.textproto", scenario("one"));
  const std::string two = dir.write("two.textproto", scenario("two", 2));
  Result r = run({"compare", one, two, "--set", "cluster.overrides[0].select=node1/gpu1", "--set",
                  "cluster.overrides[0].clock_factor=0.8"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "--set: cluster.overrides[0].select: no node1 (the cluster has node0)\n" + one +
                       ": note: --set cluster.overrides[0].select failed on this scenario; compare applies every "
                       "--set to each scenario\n")
      << r.err;
  // Failing on every scenario alike: nothing to tell them apart, no note.
  r = run({"compare", one, two, "--set", "workload.parallel.tpp=2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(count(r.err, "\n"), 1) << r.err;
  EXPECT_FALSE(has(r.err, "note:")) << r.err;
  // One message every scenario gives and one each gives its own way: the shared one first, so it
  // does not sit after the first scenario's note and read as the second's (second fresh user 43).
  r = run({"compare", one, two, "--set", "workload.parallel.dp=3"});
  EXPECT_EQ(r.status, 2);
  const std::size_t shared = r.err.find("--set: workload.training.global_batch_size:");
  ASSERT_NE(shared, std::string::npos) << r.err;
  EXPECT_LT(shared, r.err.find("--set: workload.parallel.dp:")) << r.err;
  EXPECT_EQ(count(r.err, "note: --set workload.parallel.dp failed on this scenario"), 2) << r.err;
}

// ---- 3. relative paths in an input that is not a regular file -----------------------------------

// Before: "/dev/fd/63:1:1: scenario_file: /dev/x.textproto: cannot read file".
TEST(FreshUser43cRelativePaths, APipedSweepTakesItsScenarioFileFromTheWorkingDirectory) {
  const traincast::test_support::TempDir dir("fresh_user43c_sweep");
  dir.write("x.textproto", scenario("x"));
  std::filesystem::create_directories(dir.path() / "sub");
  const std::string sweep =
      "scenario_file: \"x.textproto\"\naxis { path: \"workload.training.global_batch_size\" values: [\"16\", "
      "\"32\"] }\n";
  {
    const InDirectory here(dir.path());
    const Pipe p(sweep);
    const Result r = run({"sweep", p.path(), "--out", dir.file("s.csv"), "--progress", "never"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(count(traincast::test_support::slurp(dir.file("s.csv")), ",ok,"), 2);
  }
  // A regular file's relative path is still taken from its own directory, wherever the command runs.
  const std::string in_sub =
      dir.write("sub/s.sweep.textproto", "scenario_file: \"../x.textproto\"\n" + sweep.substr(sweep.find('\n') + 1));
  const Result r = run({"sweep", in_sub, "--out", dir.file("t.csv"), "--progress", "never"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Piped from another directory, the same relative path is the working directory's: not found there.
  const InDirectory here(dir.path() / "sub");
  const Pipe p(sweep);
  const Result missing = run({"sweep", p.path(), "--out", dir.file("u.csv"), "--progress", "never"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err, p.path() + ":1:1: scenario_file: x.textproto: cannot read file (No such file or directory)\n");
}

TEST(FreshUser43cRelativePaths, APipedCasesFileTakesItsScenarioFromTheWorkingDirectory) {
  const traincast::test_support::TempDir dir("fresh_user43c_cases");
  dir.write("x.textproto", scenario("x"));
  const InDirectory here(dir.path());
  const Pipe p(
      "source: \"a test\"\ncase { name: \"c\" scenario: \"x.textproto\" metric: \"iteration_time_s\" measured: 1 }\n");
  const Result r = run({"validate", p.path()});
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;  // 1: the made-up measurement is missed
  EXPECT_FALSE(has(r.err, "cannot read file")) << r.err;
}

// ---- 4. --set index messages ----------------------------------------------------------------------

// Before: 2147483648 and 99999999999999999999 got "invalid index ... (expected an entry's index in
// decimal, from 0)"; [00] was taken and echoed as [00]; one skipped index was reported per --set.
TEST(FreshUser43cSetIndex, ATooLargeIndexSaysTheCount) {
  for (const std::string index : {"2147483648", "99999999999999999999"}) {
    const Result r = run({"run", "--set", "cluster.overrides[" + index + "].select=node0"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "--set: cluster.overrides[" + index + "]: index " + index +
                         " is out of range (the scenario has no overrides entries: expected 0 to add one)\n");
  }
}

TEST(FreshUser43cSetIndex, ALeadingZeroIsRefused) {
  const Result r = run({"run", "--set", "cluster.overrides[00].select=node0/gpu1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: cluster.overrides: invalid index \"00\": has a leading zero (expected an entry's index in decimal "
            "without leading zeros, e.g. [0])\n");
  EXPECT_TRUE(has(run({"run", "--set", "workload.parallel.pipeline_stage_layers[007]=1"}).err, "e.g. [7])"));
  EXPECT_TRUE(has(run({"run", "--set", "cluster.overrides[-1].select=node0"}).err,
                  "invalid index \"-1\" (expected an entry's index in decimal, from 0)"));
}

TEST(FreshUser43cSetIndex, OneSkippedIndexSetTwiceIsReportedOnce) {
  const Result r =
      run({"run", "--set", "cluster.overrides[1].select=node0/gpu1", "--set", "cluster.overrides[1].clock_factor=0.5"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: cluster.overrides[1]: index 1 is out of range (the scenario has no overrides entries: expected 0 "
            "to add one)\n");
}

// ---- 5. '+' and the threads options ------------------------------------------------------------

// Before: --set options.threads=+2 "expected an integer from 0 to 1024" (no why); --threads +2 ran.
TEST(FreshUser43cPlusSign, RefusedAlikeBySetAndTheOptions) {
  Result r = run({"run", "--set", "options.threads=+2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: options.threads: invalid value \"+2\": a number takes no '+' sign, as in a scenario file "
            "(expected options.threads=2)\n");
  r = run({"run", "--threads", "+2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --threads: got \"+2\": a number takes no '+' sign, as in a scenario file and --set "
            "(expected 2)\n");
  r = run({"compare", "--vary", "workload.training.global_batch_size=8,16", "--tokens", "+1e9"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--tokens: got \"+1e9\": a number takes no '+' sign")) << r.err;
  r = run({"run", "--set", "cost.utilization=+0.5"});
  EXPECT_TRUE(has(r.err, "a number takes no '+' sign, as in a scenario file (expected cost.utilization=0.5)")) << r.err;
}

// Before: "traincast: unrecognised option '--threads'" with no hint.
TEST(FreshUser43cPlusSign, AnotherCommandsThreadsOptionNamesThisOnes) {
  Result r = run({"compare", "--threads", "2", "a.textproto", "b.textproto"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: unrecognised option '--threads', did you mean \"--jobs\"? (this command's name for "
            "--threads)\n");
  r = run({"run", "--jobs", "2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "did you mean \"--threads\"?")) << r.err;
  // The `=` form names the option with its value (second fresh user 43: no hint).
  r = run({"compare", "--threads=2", "a.textproto", "b.textproto"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "did you mean \"--jobs\"?")) << r.err;
}

// ---- 6. the throttled GPUs in index order -------------------------------------------------------

// Before (TP 4 x PP 2 x DP 2 on 2 DGX H100): "GPU 0 ... GPU 3 (...) GPU 8 ... GPU 11 (...) GPU 4 ...".
TEST(FreshUser43cThrottled, GpusListedInIndexOrder) {
  const traincast::test_support::TempDir dir("fresh_user43c_hot");
  const std::string hot = dir.write(
      "hot.textproto",
      "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 2\n  overrides { select: \"node0\" supply_c: 60 }\n"
      "  overrides { select: \"node1\" supply_c: 60 }\n}\nworkload {\n  model { num_layers: 8 hidden_size: 4096 "
      "num_attention_heads: 32 vocab_size: 32000 seq_length: 2048 }\n  parallel { tp: 4 pp: 2 dp: 2 }\n  training { "
      "global_batch_size: 16 }\n}\n");
  const Result r = run({"run", hot});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::size_t at = r.out.find(" GPU(s) throttled");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  std::vector<int> gpus;
  for (std::size_t p = line.find(" GPU ", 1); p != std::string::npos; p = line.find(" GPU ", p + 1))
    gpus.push_back(std::stoi(line.substr(p + 5)));
  ASSERT_EQ(gpus.size(), 16u) << line;
  for (std::size_t i = 0; i < gpus.size(); ++i) EXPECT_EQ(gpus[i], static_cast<int>(i)) << line;
}

}  // namespace
}  // namespace traincast::cli
