// Defects a new user hit on first contact: output options given '-', enums given as numbers in
// JSON. Each is a refusal with exit status 2 naming where and what was expected.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::Result;
using test_support::run;

using test_support::slurp;

class NewUserCli : public traincast::test_support::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    old_cwd_ = fs::current_path();
    fs::current_path(dir_);  // a file named '-' would land here
  }
  void TearDown() override {
    fs::current_path(old_cwd_);
    TempDirTest::TearDown();
  }
  fs::path old_cwd_;
};

// '-' is not standard output for any output option (none of them writes there: the summary
// does): refused before anything is simulated, and no file named '-' appears.
TEST_F(NewUserCli, DashAsAnOutputFileIsRefused) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--trace", "-"},
        {"run", "--json", "-"},
        {"run", "--print-scenario", "--json", "-"},
        {"nccl-tests", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--csv", "-"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << args[1] << " " << args[2];
    EXPECT_NE(r.err.find("-: output to standard output is not supported (expected a file name"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("Iteration"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir_ / "-"));
  }
}

// README: enums are strings. A number for an enum field is refused at its position with the names.
TEST_F(NewUserCli, JsonEnumGivenAsANumberIsRefused) {
  const fs::path j = dir_ / "s.json";
  ASSERT_EQ(run({"run", "--print-scenario", "--json", j.string()}).status, 0);
  std::string text = slurp(j);
  const std::string named = "\"precision\": \"bf16\"";
  const std::size_t at = text.find(named);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_EQ(run({"run", j.string(), "--print-scenario"}).status, 0);  // the names load
  text.replace(at, named.size(), "\"precision\": 3");                 // bf16's number in traincast.proto
  std::ofstream(j, std::ios::trunc) << text;
  const std::size_t line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  const std::size_t column = at - text.rfind('\n', at) + 13;  // 1-based, after "precision":
  const Result r = run({"run", j.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, j.string() + ":" + std::to_string(line) + ":" + std::to_string(column) +
                       ": workload.training.precision: invalid value 3: a number is not accepted for a name (expected "
                       "one of: fp32, tf32, fp16, bf16, fp8)\n");
}

// A number a double cannot hold is refused as written, not reported as "got inf" (text and JSON).
TEST_F(NewUserCli, NumberBeyondADoubleIsOutOfRangeAsWritten) {
  const fs::path t = dir_ / "s.textproto";
  std::ofstream(t) << "power {\n  pue: 1e400\n}\n";
  Result r = run({"run", t.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, t.string() +
                       ":2:8: power.pue: 1e400 is out of range as written (expected 0 or a finite number of magnitude "
                       "2.2e-308 to 1.8e308: a double holds no larger one, and smaller ones only subnormal, "
                       "with digits lost)\n");
  const fs::path j = dir_ / "s.json";
  std::ofstream(j) << "{\n  \"power\": {\n    \"pue\": -1e400\n  }\n}\n";
  r = run({"run", j.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            j.string() +
                ":3:12: power.pue: -1e400 is out of range as written (expected 0 or a finite number of magnitude "
                "2.2e-308 to 1.8e308: a double holds no larger one, and smaller ones only subnormal, "
                "with digits lost)\n");
}

// protobuf's text format reads 010 as octal 8 (C's rule): refused at the literal, with both readings
// (fresh-user finding: `tp: 010` ran TP 8). A literal with an 8 or 9 is protobuf's own error.
TEST_F(NewUserCli, IntegerWithALeadingZeroIsRefusedNotReadAsOctal) {
  const fs::path t = dir_ / "s.textproto";
  std::ofstream(t) << "workload {\n  parallel {\n    tp: 010\n  }\n}\n";
  Result r = run({"run", t.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, t.string() +
                       ":3:9: workload.parallel.tp: 010 has a leading zero (expected a decimal number without "
                       "leading zeros, e.g. 10; protobuf's text format reads 010 as octal 8)\n");
  // --set takes the same rule and words (it would otherwise read 10).
  r = run({"run", "--set", "workload.parallel.tp=010"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: workload.parallel.tp: 010 has a leading zero (expected a decimal number without leading zeros, "
            "e.g. 10; protobuf's text format reads 010 as octal 8)\n");
  std::ofstream(t) << "workload {\n  parallel {\n    tp: 0\n  }\n}\n";  // a lone 0 is decimal
  r = run({"run", t.string()});
  EXPECT_EQ(r.err.find("leading zero"), std::string::npos) << r.err;
}

// A non-ASCII letter in a field name (fresh-user finding: `nodé: 2` printed protobuf's "interpreting
// non ascii codepoint 195", an unknown field "nod" and a stray byte): one positioned line; a
// non-ASCII character inside a string or a comment is not refused by the parser.
TEST_F(NewUserCli, NonAsciiFieldNameIsOneClearError) {
  const fs::path t = dir_ / "s.textproto";
  std::ofstream(t) << "# caf\xc3\xa9 is fine here\ncluster {\n  nod\xc3\xa9: 2\n}\nworkload { x: 1 }\n";
  Result r = run({"run", t.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, t.string() +
                       ":3:6: cluster: non-ASCII character outside a quoted string (expected ASCII field names and "
                       "values; other characters only inside \"...\" strings or # comments)\n");
  std::ofstream(t) << "# caf\xc3\xa9\ncluster {\n  gpu: \"H100\xc3\xa9\"\n}\n";
  r = run({"nccl-tests", t.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.find("non-ASCII"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(":3:3: cluster.gpu: unknown GPU"), std::string::npos) << r.err;
}

// Fabric settings the built fabric ignores were accepted silently (fresh-user finding): a fabric
// field on one node; oversubscription where every node is under one leaf, or where whole up-link
// ports round it away (rail-optimized, nodes_per_leaf 1: 1 down port, ceil(1 / 2) = 1 up port).
TEST_F(NewUserCli, FabricSettingsWithoutEffectAreNamed) {
  const std::string two = kSrc + "/scenarios/nccl/h100_ib400_2node.textproto";
  Result r = run({"nccl-tests", two, "--set", "cluster.fabric.oversubscription=2", "--set",
                  "cluster.fabric.nodes_per_leaf=1", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(
      r.err.find("warning: --set: cluster.fabric.oversubscription 2:1 acts as 1:1: a leaf has 1 down port and up-links "
                 "are whole ports at the NIC line rate, ceil(1 / 2) = 1"),
      std::string::npos)
      << r.err;
  r = run({"nccl-tests", two, "--set", "cluster.fabric.oversubscription=2", "-b", "1M", "-e", "1M"});
  EXPECT_NE(
      r.err.find("warning: --set: cluster.fabric.oversubscription 2:1 has no effect: all 2 nodes sit under one leaf "
                 "group (nodes_per_leaf 32 >= num_nodes 2)"),
      std::string::npos)
      << r.err;
  // fat_tree with nodes_per_leaf 1: 8 NICs down, ceil(8 / 2) = 4 up, 2:1 acts: no warning.
  r = run({"nccl-tests", two, "--set", "cluster.fabric.oversubscription=2", "--set", "cluster.fabric.nodes_per_leaf=1",
           "--set", "cluster.fabric.kind=fat_tree", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  r = run(
      {"run", "--set", "cluster.num_nodes=1", "--set", "workload.parallel.dp=4", "--set", "cluster.fabric.sharp=true"});
  EXPECT_NE(r.err.find("warning: --set: cluster.fabric.sharp has no effect: the cluster is one node"),
            std::string::npos)
      << r.err;
}

// Session 22's fresh user: a torus given a tree's oversubscription printed "torus fabric (2.0:1)" and
// answered as 1:1 without a word (torus_dims on a tree is refused by the loader).
TEST_F(NewUserCli, TreeSettingsOnATorusAreNamed) {
  const std::string two = kSrc + "/scenarios/nccl/h100_ib400_2node.textproto";
  Result r = run({"nccl-tests", two, "--set", "cluster.fabric.kind=torus", "--set", "cluster.fabric.oversubscription=2",
                  "--set", "cluster.fabric.tiers=3", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(
                "warning: --set: cluster.fabric.oversubscription has no effect: a torus has no leaf or spine switches"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warning: --set: cluster.fabric.tiers has no effect: a torus"), std::string::npos) << r.err;
  r = run({"nccl-tests", two, "--set", "cluster.fabric.kind=torus", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

// nccl-tests --op alltoall on 50,000 DGX H100 ran for hours without a word (n x (n - 1) flows a call).
TEST_F(NewUserCli, AlltoallBeyondItsPairLimitIsRefusedUpFront) {
  const std::string f = kSrc + "/scenarios/nccl/dgx_h100.textproto";
  Result r = run({"nccl-tests", f, "--set", "cluster.num_nodes=1024", "--op", "alltoall", "-b", "1G", "-e", "1G"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--op alltoall on 8192 GPUs: one call is 8192 x 8191 = 67.1 million GPU pairs"),
            std::string::npos)
      << r.err;
  // The same cluster with an all-reduce (one flow per rank and channel): no pair limit.
  r = run({"nccl-tests", f, "--set", "cluster.num_nodes=1024", "--op", "all_reduce", "-b", "1M", "-e", "1M"});
  EXPECT_EQ(r.status, 0) << r.err;
}

// compare --vary X=a,b --set X=c answered for a and b and dropped c without a word.
TEST_F(NewUserCli, CompareRefusesASetOfTheVariedField) {
  const Result r = run({"compare", "--vary", "cluster.gpu=H100-SXM5-80GB,H200-SXM-141GB", "--set", "cluster.gpu=H20"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--set cluster.gpu=H20: sets the field --vary varies (expected one of them for cluster.gpu)"),
            std::string::npos)
      << r.err;
}

// explain --max-nodes without --dot did nothing, without a word.
TEST_F(NewUserCli, ExplainMaxNodesWithoutDotIsRefused) {
  const Result r = run({"explain", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--max-nodes", "3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--max-nodes: limits the DOT file's drawing, and no --dot FILE is given"), std::string::npos)
      << r.err;
}

// A cluster file with its jobs deleted was blamed for the default workload's TP x PP x DP on the
// whole cluster instead of the missing jobs (its scheduler block names it a traincast cluster file).
TEST_F(NewUserCli, SchedulerWithoutJobsNamesTheMissingJobs) {
  std::ifstream in(kSrc + "/scenarios/cluster/six_jobs_fifo_vs_backfill.textproto");
  std::ofstream out(dir_ / "no_jobs.textproto");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("job {", 0) != 0) out << line << "\n";
  out.close();
  const Result r = run({"cluster", (dir_ / "no_jobs.textproto").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(": scheduler: is set but the file has no job (expected at least one job"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("workload.parallel.dp"), std::string::npos) << r.err;
}

// plan on a cluster of an A100 group and an H100 group described it as "2 x dgx_a100" and searched
// as if every node were an A100 (14 of 19 simulations failed, unexplained): refused at the group.
TEST_F(NewUserCli, PlanRefusesNodeGroupsOfDifferentKinds) {
  const std::string f = kSrc + "/scenarios/cluster/a100_h100_one_pipeline.textproto";
  const Result r = run({"plan", f});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("a100_h100_one_pipeline.textproto:15:3: cluster.node_group: 1 x dgx_a100 and 1 x dgx_h100: "
                       "traincast plan searches clusters of one node kind (expected every node_group"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("Best layouts"), std::string::npos) << r.out;
}

// plan where every simulated layout is over the op-graph limit said "No layout fits in memory"
// (memory was not the reason): the first failure is the answer.
TEST_F(NewUserCli, PlanWhereEveryLayoutFailsSaysWhy) {
  const Result r = run({"plan", "--set", "options.iterations=1000", "--jobs", "1", "--max-simulations", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("Every simulated layout failed; the first: TP "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("million ops to simulate (limit 40 million)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("No layout fits in memory"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "traincast: plan: every simulated layout failed (exit status 1)\n");
}

// plan on a MoE model left the exposed EP all-to-all out of the winner's breakdown (Mixtral: 12.523
// + 0.138 + 0.040 s of a 13.224 s iteration) and its JSON, and never said which EP it used.
TEST_F(NewUserCli, PlanBreakdownOfAMoeModelAddsUp) {
  const Result r = run({"plan", kSrc + "/scenarios/models/mixtral_8x7b.textproto", "--max-simulations", "2", "--jobs",
                        "1", "--json", (dir_ / "p.json").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("; 8 experts, EP 8 in every layout (not searched)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", exposed EP all-to-all "), std::string::npos) << r.out;
  EXPECT_NE(slurp((dir_ / "p.json").string()).find("\"ep_comm_exposed_s\": "), std::string::npos);
}

// validate given one case file twice scored every case twice and weighed it twice in each mean.
TEST_F(NewUserCli, ValidateRefusesACaseFileGivenTwice) {
  const std::string f = kSrc + "/scenarios/validation/megatron_sc21_table1.cases.textproto";
  const Result r = run({"validate", f, f});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is given twice (expected each case file once)"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("MAPE"), std::string::npos) << r.out;
}

// Fresh-user findings (session 17), each refused up front with its range: --replicate beyond the
// cluster (1,000,000 held 19.5 GB for minutes before the same refusal), a number beyond an option's
// type ("expected a number" for 99999999999), --tokens beyond the field's own 1e15, and a
// validation measurement of 1e308 (scored as a -inf % error, exit 0).
TEST_F(NewUserCli, OutOfRangeInputsAreRefusedWithTheirRange) {
  const std::string chakra = kSrc + "/scenarios/chakra/gpt_small_export.textproto";
  ASSERT_EQ(run({"chakra", "export", chakra, "--out", (dir_ / "t").string(), "--name", "one"}).status, 0);
  Result r = run({"chakra", "run", chakra, (dir_ / "t" / "one.0.et").string(), "--replicate", "1000000"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --replicate: 1000000 ranks but scenario gpt-small-export has 8 GPUs (expected 1 to 8; rank r "
            "runs on GPU r)\n");
  r = run({"explain", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--max-nodes", "99999999999"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--max-nodes: got \"99999999999\" (expected a whole number in the option's range, not one "
                       "this large; see --help for the option's range)"),
            std::string::npos)
      << r.err;
  r = run({"validate", "x.cases.textproto", "--max-error", "1e309"});
  EXPECT_NE(
      r.err.find(
          "--max-error: got \"1e309\": out of range as written (expected 0 or a finite number of magnitude 2.2e-308"),
      std::string::npos)
      << r.err;
  const std::string def = kSrc + "/scenarios/default.textproto";
  r = run({"compare", def, def, "--tokens", "1e16"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--tokens: got 1e+16 (expected a whole number of tokens from 1 to 1e15"), std::string::npos)
      << r.err;
  r = run({"compare", def, def, "--tokens", "1.5"});  // was rounded to 2 and shown as "2.00 tokens"
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--tokens: got 1.5 (expected a whole number of tokens"), std::string::npos) << r.err;
  const fs::path cases = dir_ / "c.cases.textproto";
  std::ofstream(cases) << "case {\n  name: \"a\"\n  scenario: \"" << def
                       << "\"\n  metric: \"tokens_per_s\"\n  measured: 1e308\n}\n";
  r = run({"validate", cases.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(":5:3: case[0].measured: got 1e308 (expected a finite number > 0 and <= 1e+12"),
            std::string::npos)
      << r.err;
}

// nccl-tests on one GPU times a device-local copy kernel, which is not modelled: refused, not 0 us.
TEST_F(NewUserCli, NcclTestsOnOneGpuIsRefused) {
  const Result r = run({"nccl-tests", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--gpus", "0"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("gpus: all_reduce on 1 GPU is not simulated: nccl-tests times a device-local copy kernel "
                       "there, which traincast does not model (expected at least 2 GPUs"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(run({"nccl-tests", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--gpus", "0,1"}).status, 0);
}

// Time to train counts whole iterations: 1 token costs one iteration; tokens per iteration + 1, two.
TEST_F(NewUserCli, TimeToTrainCountsWholeIterations) {
  auto json_number = [](const std::string& json, const std::string& key) {
    const std::size_t at = json.find("\"" + key + "\": ");
    return at == std::string::npos ? -1.0 : std::stod(json.substr(at + key.size() + 4));
  };
  // The embedded default: global_batch_size 128 x seq_length 8192 = 1,048,576 tokens per iteration.
  const Result p = run({"run", "--print-scenario"});
  ASSERT_NE(p.out.find("global_batch_size: 128"), std::string::npos) << p.out;
  ASSERT_NE(p.out.find("seq_length: 8192"), std::string::npos) << p.out;
  for (const auto& [tokens, iterations] : {std::pair<std::string, double>{"1", 1}, {"1048576", 1}, {"1048577", 2}}) {
    const fs::path j = dir_ / ("r" + tokens + ".json");
    const Result r = run({"run", "--set", "workload.training.train_tokens=" + tokens, "--json", j.string()});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string json = slurp(j);
    EXPECT_DOUBLE_EQ(json_number(json, "time_to_train_s"), iterations * json_number(json, "iteration_time_s"))
        << tokens;
  }
}

// Less than one token is refused, by run and by every sweep point (the loader's one check).
TEST_F(NewUserCli, SubOneTokenBudgetIsRefusedByRunAndSweep) {
  const std::string expected =
      "workload.training.train_tokens: got 0.1 (expected 0 for no token budget, or a whole number of tokens from 1 to "
      "1e15";
  const Result r = run({"run", "--set", "workload.training.train_tokens=0.1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  const fs::path sweep = dir_ / "t.sweep.textproto";
  std::ofstream(sweep) << "name: \"t\"\nscenario_file: \"" << kSrc
                       << "/scenarios/default.textproto\"\n"
                          "axis { path: \"workload.training.train_tokens\" values: \"0.1\" values: \"1e9\" }\n"
                          "metric: \"time_to_train_s\"\n";
  // As every invalid point of a sweep (a layout that does not divide, ...): a row with the reason.
  const Result s = run({"sweep", sweep.string(), "--out", (dir_ / "o.csv").string()});
  EXPECT_EQ(s.status, 0) << s.err;
  const std::string csv = slurp(dir_ / "o.csv");
  // Positioned at the axis value (line 3, `values: "0.1"`; the field alone before session 42).
  EXPECT_NE(csv.find("\n0,0.1,invalid,,\"" + sweep.string() + ":3:47: " + expected), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,1e9,ok,"), std::string::npos) << csv;
}

// Catalog columns are sized to their longest entry: every name is followed by at least two spaces.
TEST_F(NewUserCli, CatalogColumnsNeverRunTogether) {
  const Result r = run({"catalog"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string name = "pcie_8gpu_2socket_h100_nvlink_bridge";  // 36 characters, then "8 x H100"
  const std::size_t at = r.out.find("  " + name + " ");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(at + 2 + name.size(), 2), "  ") << r.out.substr(at, 120);
  std::istringstream lines(r.out);
  std::string line;
  std::size_t hw_column = 0;
  bool in_templates = false;
  while (std::getline(lines, line)) {
    if (line.rfind("Node templates", 0) == 0) {
      in_templates = true;
      continue;
    }
    if (!in_templates || line.empty()) continue;
    const std::size_t end = line.find(' ', 2);
    const std::size_t hw = line.find_first_not_of(' ', end);
    ASSERT_GE(hw - end, 2u) << line;
    if (hw_column == 0) hw_column = hw;
    EXPECT_EQ(hw, hw_column) << line;  // one column for all rows
  }
  EXPECT_GT(hw_column, 0u);
}

// `--profile` (and a scenario) given a directory or a binary file: says what it is and what is
// expected, instead of 'unknown file extension ""' or "1:1: unexpected end of file".
TEST_F(NewUserCli, ProfileThatIsADirectoryOrBinaryIsNamedAsSuch) {
  fs::create_directories(dir_ / "profiles");
  const std::string folder = (dir_ / "profiles").string();
  Result r = run({"run", "--profile", folder});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, folder + ": is a directory (expected a .textproto, .txtpb, .pbtxt, .txt or .json file)\n");
  const std::string binary = (dir_ / "p.textproto").string();
  std::ofstream(binary, std::ios::binary) << std::string(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0",
      10);
  r = run({"run", "--profile", binary});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            binary + ":1: not a text file (a NUL byte at offset 7; expected text, e.g. a .textproto or .json file)\n");
  r = run({"run", binary});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            binary + ":1: not a text file (a NUL byte at offset 7; expected text, e.g. a .textproto or .json file)\n");
}

// A cluster-only gallery file given to run/plan: one line naming the missing workload and the
// commands that take such a file (used to be 7 "not set" lines at 1:1).
TEST_F(NewUserCli, ClusterOnlyFileToRunSaysSoOnce) {
  const std::string torus = kSrc + "/scenarios/topology/torus_4x4.textproto";
  for (const char* command : {"run", "plan"}) {
    const Result r = run({command, torus});
    EXPECT_EQ(r.status, 2) << command;
    EXPECT_EQ(r.err,
              torus +
                  ":1:1: workload: the file describes only a cluster, it has no workload section (expected a "
                  "workload { ... } block with model, parallel and training, as in scenarios/default.textproto; "
                  "a cluster-only file is read by traincast nccl-tests, traincast explain and traincast chakra run)\n")
        << command;
  }
  EXPECT_EQ(run({"nccl-tests", torus, "-b", "1M", "-e", "1M"}).status, 0);
}

// `cd /tmp && traincast run --set workload.parallel.tp=4`: the error names the --set and tp, not
// dp at a line of the embedded default (default tp 2 x pp 1 x dp 4 = 8 GPUs).
TEST_F(NewUserCli, SetThatBreaksTheDefaultIsBlamed) {
  const Result r = run({"run", "--set", "workload.parallel.tp=4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "--set: workload.parallel.tp: tp * pp * dp = 4 * 1 * 4 = 16 but the cluster has 8 GPUs (1 x dgx_h100 with 8 "
      "GPUs each) (expected tp * pp * dp = 8)\n");
}

// Issue 16: `plan --set cluster.num_nodes=N` was refused because the scenario's own layout
// (TP 2 x DP 4 = 8 GPUs) no longer matched: the layout plan is about to replace. It now searches,
// and a note says why the own layout is not valid; everything else is still checked.
TEST_F(NewUserCli, PlanSearchesWhenTheScenariosOwnLayoutNoLongerFits) {
  const Result r = run({"plan", "--set", "cluster.num_nodes=2", "--max-simulations", "2", "--jobs", "1", "--top", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Cluster    2 x dgx_h100 = 16 x H100-SXM5-80GB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("The scenario's own layout is not valid here (the search replaces it):\n  --set: "
                       "cluster.num_nodes: tp * pp * dp = 2 * 1 * 4 = 8 but the cluster has 16 GPUs (2 x dgx_h100 "
                       "with 8 GPUs each) (expected tp * pp * dp = 16)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Best layouts (fastest first):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("The scenario's own layout is not valid: tp * pp * dp = 8 but the cluster has 16 GPUs"),
            std::string::npos)
      << r.out;
  // A rule that is not the layout's is still an error.
  const Result bad = run({"plan", "--set", "cluster.num_nodes=2", "--set", "workload.model.num_query_groups=5"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err.substr(0, bad.err.find('\n')),
            "--set: workload.model.num_query_groups: 5 does not divide num_attention_heads 32 (expected a divisor of "
            "32)");
  // No layout at all: 24 GPUs with even stages only; refused with why, exit 2.
  const Result none = run({"plan", "--set", "cluster.num_nodes=3", "--no-uneven"});
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.err,
            "--set cluster.num_nodes=3: cluster.num_nodes: no parallel layout is valid on 24 GPUs for this model and "
            "batch (29 TP x PP x DP splits with TP up to 16 tried at micro-batch 1, e.g. TP 1 x PP 1 x DP 24: "
            "global_batch_size 128 is not divisible by dp * mb = 24; TP 1 x PP 2 x DP 12: global_batch_size 128 is "
            "not divisible by dp * mb = 12; TP 1 x PP 3 x DP 8: pp 3 does not divide num_layers 32) (expected a "
            "cluster, batch and model that some layout fits: docs/scenarios.md, \"Checks\")\n");
}

}  // namespace
}  // namespace traincast::cli
