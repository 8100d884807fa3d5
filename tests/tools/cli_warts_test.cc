// Defects a new-user test found in the command line (absurd magnitudes, options named as --set,
// the wrong kind of file, overrides a command ignores, unpositioned refusals): each must be a
// clear error naming where and what was expected, exit status 2.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::Result;
using test_support::run;

TEST(CliWarts, TrainTokensOfAnAbsurdMagnitudeAreRefused) {
  const Result r = run({"run", "--set", "workload.training.train_tokens=1e30"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "--set: workload.training.train_tokens: got 1e30 (expected 0 for no token budget, or a whole number of "
            "tokens from 1 to 1e15: "
            "about 28x the largest "
            "published pretraining runs: Qwen3 36T tokens (Qwen3 Technical Report 2025), Llama 3 15.6T (Meta "
            "2024))\n");
}

TEST(CliWarts, TrainTokensAtTheBoundPrintFiniteFigures) {
  // 1e15 tokens is 1.0P in the summary's count format (K, M, B, T, P); nothing may print as inf or nan.
  const Result r = run({"run", "--set", "workload.training.train_tokens=1e15"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(" for 1.0P tokens"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("inf"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
}

TEST(CliWarts, ThreadsOutOfRangeNameTheOptionTyped) {
  const std::string expected =
      " (expected an integer from 0 to 1024: 0 for all hardware threads; more threads than hardware threads do "
      "not speed up a run; 1024 is above a two-socket AMD EPYC 9965 server's 768)\n";
  for (const char* n : {"100000", "1025"}) {
    const Result r = run({"run", "--threads", n});
    EXPECT_EQ(r.status, 2) << n;
    EXPECT_EQ(r.err, std::string("traincast: --threads: got ") + n + expected) << n;
  }
  // The same bound through --set names the scenario field (and --set).
  const Result set = run({"run", "--set", "options.threads=100000"});
  EXPECT_EQ(set.status, 2);
  EXPECT_EQ(set.err, "--set: options.threads: got 100000" + expected);
  const Result negative = run({"run", "--set", "options.threads=-1"});
  EXPECT_EQ(negative.status, 2);
  EXPECT_EQ(negative.err, "--set: options.threads: got -1" + expected);
  EXPECT_EQ(run({"run", "--threads", "0", "--print-scenario"}).status, 0);  // 0: all hardware threads
  EXPECT_EQ(run({"run", "--threads", "1024", "--print-scenario"}).status, 0);
}

TEST(CliWarts, ChakraExportRefusesContextParallelismAtTheField) {
  const std::string file = kSrc + "/scenarios/whatif/llama3_8b_128k_context_parallel.textproto";
  const std::string out = ::testing::TempDir() + "cli_warts_chakra_cp";
  const std::string why =
      ": workload.parallel.cp: chakra export: context parallelism (cp = 2) is not exported: its ring send/recvs "
      "are shared by several workers (expected cp: 1)\n";
  // "    cp: 2" is line 40 of the file, the field name at column 5.
  const Result r = run({"chakra", "export", file, "--out", out});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, file + ":40:5" + why);
  // Set on the command line: the --set is named instead.
  const Result set = run({"chakra", "export", file, "--out", out, "--set", "workload.parallel.cp=2"});
  EXPECT_EQ(set.status, 2);
  EXPECT_EQ(set.err, "--set workload.parallel.cp=2" + why);
  // Input copies from host memory: "  data_loader {" is line 40 of the ResNet what-if.
  const std::string resnet = kSrc + "/scenarios/whatif/resnet50_numa_binding.textproto";
  const Result loader = run({"chakra", "export", resnet, "--out", out});
  EXPECT_EQ(loader.status, 2);
  EXPECT_EQ(loader.err, resnet +
                            ":40:3: workload.data_loader: chakra export: host-to-device input copies have no Chakra "
                            "form here (expected a scenario without data_loader)\n");
  // Async TP's chunk copies between the TP ranks of one worker: named at the --set that asked.
  const std::string tp = kSrc + "/scenarios/llama3_70b_dgx_h100_8nodes.textproto";
  const Result async_tp =
      run({"chakra", "export", tp, "--out", out, "--set", "workload.parallel.tp_overlap_implementation=async_tp"});
  EXPECT_EQ(async_tp.status, 2);
  EXPECT_EQ(async_tp.err,
            "--set workload.parallel.tp_overlap_implementation=async_tp: workload.parallel.tp_overlap_implementation: "
            "chakra export: async TP's chunk copies between TP ranks are not exported (expected userbuffers)\n");
}

TEST(CliWarts, ClusterOnlyCommandsRefuseOverridesTheyWouldIgnore) {
  const std::string file = kSrc + "/scenarios/default.textproto";
  const Result nccl = run({"nccl-tests", file, "--set", "workload.training.global_batch_size=3"});
  EXPECT_EQ(nccl.status, 2);
  EXPECT_EQ(nccl.out, "");
  EXPECT_EQ(nccl.err,
            "--set: workload.training.global_batch_size: has no effect: traincast nccl-tests uses only the scenario's "
            "cluster (expected a cluster.* field)\n");
  // A cluster field is taken as before.
  EXPECT_EQ(
      run({"nccl-tests", file, "--set", "cluster.num_nodes=2", "--set", "cluster.fabric.kind=rail_optimized"}).status,
      0);
  const Result explain = run({"explain", file, "--set", "options.iterations=3"});
  EXPECT_EQ(explain.status, 2);
  EXPECT_EQ(explain.err,
            "--set: options.iterations: has no effect: traincast explain uses only the scenario's cluster (expected "
            "a cluster.* field)\n");
  // chakra run also reads the precision (compute-timed nodes); the scenario loads before the traces.
  const Result chakra = run({"chakra", "run", file, "/nonexistent/trace", "--set", "workload.parallel.tp=4"});
  EXPECT_EQ(chakra.status, 2);
  EXPECT_EQ(chakra.err,
            "--set: workload.parallel.tp: has no effect: traincast chakra run uses only the scenario's cluster and "
            "workload.training.precision (expected a cluster.* field or workload.training.precision)\n");
  const Result calibrate = run({"calibrate", "fit", "m.csv", "--base", "dgx_h100", "--set", "cluster.num_nodes=2",
                                "--out", ::testing::TempDir() + "cli_warts_profile.textproto"});
  EXPECT_EQ(calibrate.status, 2);
  EXPECT_EQ(calibrate.err,
            "--set: cluster.num_nodes: has no effect: --base dgx_h100 is not a scenario file (expected --set only "
            "with a scenario file --base)\n");
}

TEST(CliWarts, AFileOfAnotherKindIsNamedWithTheCommandThatTakesIt) {
  const std::string sweep = kSrc + "/scenarios/sweeps/notebook_fabric.sweep.textproto";
  const std::string scenario = kSrc + "/scenarios/default.textproto";
  const std::string cases = kSrc + "/scenarios/validation/korthikanti2022.cases.textproto";
  // The sweep's first field only a sweep has: "scenario {" at line 8 (name and description at
  // lines 6-7 are fields of a scenario too).
  const Result run_sweep = run({"run", sweep});
  EXPECT_EQ(run_sweep.status, 2);
  EXPECT_EQ(run_sweep.err, sweep +
                               ":8:1: scenario: this is a sweep file, not a scenario (top-level fields scenario, "
                               "axis, constraint, metric); run it with `traincast sweep " +
                               sweep + " --out RESULTS.csv`\n");
  // A scenario given to sweep: "cluster {" at line 9 (name, description: fields of a sweep too).
  const Result sweep_scenario = run({"sweep", scenario, "--out", ::testing::TempDir() + "cli_warts_sweep.csv"});
  EXPECT_EQ(sweep_scenario.status, 2);
  EXPECT_EQ(sweep_scenario.err, scenario +
                                    ":9:1: cluster: this is a scenario, not a sweep file (top-level fields cluster, "
                                    "workload); run it with `traincast run " +
                                    scenario + "` (or plan, nccl-tests, explain, chakra)\n");
  // A cases file has no `name`: the scenario's name at line 7 is the first field a cases file lacks.
  const Result validate_scenario = run({"validate", scenario});
  EXPECT_EQ(validate_scenario.status, 2);
  EXPECT_EQ(validate_scenario.err, scenario +
                                       ":7:1: name: this is a scenario, not a validation cases file (top-level "
                                       "fields name, cluster, workload); run it with `traincast run " +
                                       scenario + "` (or plan, nccl-tests, explain, chakra)\n");
  // A cases file given to run ("group:" at line 7) and to nccl-tests (cluster-only loading).
  const std::string as_cases = cases +
                               ":7:1: group: this is a validation cases file, not a scenario (top-level fields "
                               "source, case, group); run it with `traincast validate " +
                               cases + "`\n";
  const Result run_cases = run({"run", cases});
  EXPECT_EQ(run_cases.status, 2);
  EXPECT_EQ(run_cases.err, as_cases);
  EXPECT_EQ(run({"nccl-tests", cases}).err, as_cases);
  // A scenario with a misspelt top-level field is still a scenario: its own error stands.
  const std::string typo = ::testing::TempDir() + "cli_warts_typo.textproto";
  {
    std::ofstream f(typo);
    f << "clustr { num_nodes: 1 }\n";
  }
  const Result misspelt = run({"run", typo});
  EXPECT_EQ(misspelt.status, 2);
  EXPECT_EQ(misspelt.err.rfind(typo + ":1:1: clustr: unknown field", 0), 0u) << misspelt.err;
}

TEST(CliWarts, TrainTokensBeyondTheFailureDrawsRangeAreRefusedNotGround) {
  // 1e15 tokens at this job's ~73,000 tokens/s is ~1.4e10 s of training, 43x the draws' 3.2e8 s:
  // every failure in it would be drawn (minutes of run time), so the run stops with exit 2.
  const Result r = run({"run", kSrc + "/scenarios/operations/buy_vs_rent_60pct.textproto", "--set",
                        "workload.training.train_tokens=1e15", "--set", "reliability.horizon_s=0"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("traincast: reliability: workload.training.train_tokens need ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" days of failure-free training, beyond the failure draws' range of 3.2e8 s, about 10 years "
                       "(expected fewer train_tokens, or reliability.horizon_s > 0 for a window of at most 3.2e8 s)\n"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace traincast::cli
