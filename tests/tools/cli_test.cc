// The CLI as a user drives it, in-process: exit codes, files written (never clobbered without
// --force), byte-identical JSON across runs and thread counts, trace output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"
#include "tools/cli/commands.h"

namespace traincast::cli {
namespace {

namespace fs = std::filesystem;
const std::string kSrc = TRAINCAST_SOURCE_DIR;

using test_support::Result;
using test_support::run;

using test_support::slurp;

using CliTest = traincast::test_support::TempDirTest;

TEST_F(CliTest, DefaultScenarioPrintsSummary) {
  const Result r = run({"run"});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* s : {"Iteration", "tokens/s", "MFU", "exposed TP communication", "Memory per GPU", "Busiest links"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST_F(CliTest, JsonHasDocumentedKeysAndIsByteIdenticalAcrossRunsAndThreads) {
  const fs::path a = dir_ / "a.json", b = dir_ / "b.json", c = dir_ / "c.json";
  ASSERT_EQ(run({"run", "--json", a.string()}).status, 0);
  ASSERT_EQ(run({"run", "--json", b.string()}).status, 0);
  ASSERT_EQ(run({"run", "--json", c.string(), "--threads", "2"}).status, 0);
  const std::string ja = slurp(a);
  EXPECT_EQ(ja, slurp(b));
  EXPECT_EQ(ja, slurp(c));
  for (const char* key : {"\"iteration_time_s\"", "\"tokens_per_s\"", "\"tflops_per_gpu\"", "\"mfu\"", "\"oom\"",
                          "\"peak_bytes_per_gpu\"", "\"breakdown\"", "\"tp_comm_exposed_s\"", "\"pipeline_bubble_s\"",
                          "\"busiest_links\""})
    EXPECT_NE(ja.find(key), std::string::npos) << key;
}

TEST_F(CliTest, RefusesToOverwriteWithoutForce) {
  const fs::path a = dir_ / "a.json";
  std::ofstream(a) << "precious";
  const Result r = run({"run", "--json", a.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("file exists (pass --force to overwrite it)"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(a), "precious");
  EXPECT_EQ(run({"run", "--json", a.string(), "--force"}).status, 0);
  EXPECT_NE(slurp(a), "precious");
}

TEST_F(CliTest, AnOutputThatCannotBeWrittenIsRefusedBeforeTheRun) {
  // /proc takes no new files, even from root (for whom access(W_OK) says yes): a fresh user's
  // `run --json /proc/foo.json` simulated the whole job, printed it, and only then failed.
  const Result r = run({"run", "--json", "/proc/traincast_probe.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("/proc/traincast_probe.json: cannot write: /proc does not take new files"), std::string::npos)
      << r.err;
  // An existing file there with --force: the same reason (it used to print the whole description
  // and then "cannot write (No such file or directory)" from the temporary file's creation).
  const Result e = run({"explain", kSrc + "/scenarios/nccl/dgx_h100.textproto", "--dot", "/proc/version", "--force"});
  EXPECT_EQ(e.status, 2);
  EXPECT_EQ(e.out, "");
  EXPECT_NE(e.err.find("/proc/version: cannot write: /proc does not take new files"), std::string::npos) << e.err;
  // A new file's probe leaves nothing behind; an existing one keeps its bytes.
  const fs::path a = dir_ / "probe.json";
  EXPECT_EQ(run({"run", "--json", a.string(), "--set", "workload.parallel.tp=3"}).status, 2);
  EXPECT_FALSE(fs::exists(a));
}

TEST_F(CliTest, ExplainPathNumbersNodesAsTheScenarioDoesBesideADrainedNode) {
  // scenarios/topology/missing_gpu.textproto: node1 of 4 is drained. nodeM is the scenario's node M
  // (as selectors and link names number it); it was read as the job's M-th node (fresh-user finding:
  // node1.gpu0 gave node2's links under the name node1).
  const std::string f = kSrc + "/scenarios/topology/missing_gpu.textproto";
  const Result drained = run({"explain", f, "--path", "node1.gpu0", "node0.gpu0"});
  EXPECT_EQ(drained.status, 2);
  EXPECT_EQ(drained.err,
            "traincast: --path: node1.gpu0: node1 is drained (a GPU of it is missing: cluster.overrides) (expected a "
            "node in service)\n");
  const Result last = run({"explain", f, "--path", "node3.gpu0", "node0.gpu0"});
  ASSERT_EQ(last.status, 0) << last.err;
  EXPECT_NE(last.out.find("Path gpu16 (node3.gpu0) -> gpu0 (node0.gpu0)"), std::string::npos) << last.out;
  EXPECT_NE(last.out.find("Bottleneck: node3.nic0.tx"), std::string::npos) << last.out;
  const Result job = run({"explain", f, "--path", "gpu8", "gpu0"});  // gpuN: the job's numbering
  ASSERT_EQ(job.status, 0) << job.err;
  EXPECT_NE(job.out.find("Path gpu8 (node2.gpu0) -> gpu0 (node0.gpu0)"), std::string::npos) << job.out;
  EXPECT_EQ(run({"explain", f, "--path", "node4.gpu0", "node0.gpu0"}).err,
            "traincast: --path: node4.gpu0 outside the cluster's 4 nodes (expected node0 to node3)\n");
}

TEST_F(CliTest, AModelRefusalNamingAFieldIsPositioned) {
  // A data-parallel stage across an A100 and an H100 node: refused by the training plan, which
  // knows no file; the command puts the field's position in front (a fresh user saw no position).
  const fs::path f = dir_ / "mix.textproto";
  std::ofstream(f) << "cluster {\n  node_group { node_template: \"dgx_a100\" num_nodes: 1 }\n"
                      "  node_group { node_template: \"dgx_h100\" num_nodes: 1 }\n  nic: \"IB-HDR-200\"\n}\n"
                      "workload {\n  model { num_layers: 4 hidden_size: 1024 num_attention_heads: 16 seq_length: 1024 "
                      "vocab_size: 32000 }\n  parallel { tp: 8 dp: 2 }\n  training { global_batch_size: 16 }\n}\n";
  const Result r = run({"run", f.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind(f.string() + ":2:3: cluster.node_group: pipeline stage 0 spans two GPU types", 0), 0u) << r.err;
}

TEST_F(CliTest, MixedPipelineNamesWhatTheSlowerGroupsCost) {
  // Two groups: the slow group's cost. Three: the difference is every slower group's, said so.
  const std::string model =
      "workload {\n  model { num_layers: 6 hidden_size: 1024 num_attention_heads: 16 seq_length: 1024 "
      "vocab_size: 32000 }\n  parallel { tp: 8 pp: PP }\n  training { global_batch_size: 8 }\n}\n";
  // Stage layers: most on the A100 so that its stage is the slowest (the last stage also holds the
  // output layer).
  const auto scenario = [&](const std::string& groups, const std::string& pp) {
    std::string w = model;
    w.replace(w.find("PP"), 2, pp == "2" ? "2 pipeline_stage_layers: [4, 2]" : "3 pipeline_stage_layers: [3, 1, 2]");
    return "cluster {\n" + groups + "  nic: \"IB-HDR-200\"\n}\n" + w;
  };
  const std::string a100 = "  node_group { node_template: \"dgx_a100\" num_nodes: 1 }\n";
  const std::string h100 = "  node_group { node_template: \"dgx_h100\" num_nodes: 1 }\n";
  const std::string h200 = "  node_group { node_template: \"dgx_h100\" num_nodes: 1 gpu: \"H200-SXM-141GB\" }\n";
  std::ofstream(dir_ / "two.textproto") << scenario(a100 + h100, "2");
  std::ofstream(dir_ / "three.textproto") << scenario(a100 + h100 + h200, "3");
  const Result two = run({"run", (dir_ / "two.textproto").string()});
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.out.find("  the slow group node_group[0] (A100-SXM4-80GB), holding the slowest stage"),
            std::string::npos)
      << two.out;
  const Result three = run({"run", (dir_ / "three.textproto").string()});
  ASSERT_EQ(three.status, 0) << three.err;
  EXPECT_NE(three.out.find("  the groups slower than node_group[1] (H100-SXM5-80GB) (the slowest stage on "
                           "node_group[0] (A100-SXM4-80GB)) cost "),
            std::string::npos)
      << three.out;
}

TEST_F(CliTest, TraceIsChromeTraceJson) {
  const fs::path t = dir_ / "t.json";
  ASSERT_EQ(run({"run", "--trace", t.string(), "--set", "workload.training.global_batch_size=8"}).status, 0);
  const std::string s = slurp(t);
  EXPECT_EQ(s.rfind("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", 0), 0u);
  EXPECT_NE(s.find("\"ph\":\"X\""), std::string::npos);
  EXPECT_NE(s.find("\"thread_name\""), std::string::npos);
  EXPECT_EQ(s.substr(s.size() - 4), "\n]}\n");
}

TEST_F(CliTest, BadInputExitsTwoWithMessage) {
  Result r = run({"run", (dir_ / "missing.textproto").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot read file"), std::string::npos) << r.err;
  r = run({"run", "--set", "workload.parallel.tp=3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("workload.parallel.tp"), std::string::npos) << r.err;
  r = run({"run", "--no-such-flag"});
  EXPECT_EQ(r.status, 2);
  r = run({"frobnicate"});
  EXPECT_EQ(r.status, 2);
  r = run({"run", "--threads", "1025"});
  EXPECT_EQ(r.status, 2);
  r = run({"validate"});
  EXPECT_EQ(r.status, 2);
}

// A power cap below the H100 SXM's Min Power Limit (200 W, nvidia-smi -q, shared data pt01) is
// refused as nvidia-smi -pl refuses it: exit 2, the --set and the field named, nothing simulated.
TEST_F(CliTest, PowerCapBelowTheBoardMinimumIsRefused) {
  const Result r = run({"run", "--set", "power.gpu_power_limit_w=100"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--set: power.gpu_power_limit_w: got 100 W (expected 0 for no cap, or 200 to 700 W"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("Iteration"), std::string::npos);
}

// --print-scenario with --json writes the scenario as a JSON scenario that loads back to the
// same scenario; with --trace (nothing to trace) it is refused.
TEST_F(CliTest, PrintScenarioWritesJsonScenario) {
  const fs::path j = dir_ / "s.json";
  const Result r = run({"run", "--print-scenario", "--json", j.string(), "--set", "power.pue=1.3"});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(fs::exists(j));
  EXPECT_NE(slurp(j).find("\"pue\": 1.3"), std::string::npos);
  const Result back = run({"run", j.string(), "--print-scenario"});
  ASSERT_EQ(back.status, 0) << back.err;
  EXPECT_EQ(back.out, r.out);
  EXPECT_EQ(run({"run", "--print-scenario", "--json", j.string()}).status, 2);  // exists: no --force
  EXPECT_EQ(run({"run", "--print-scenario", "--trace", (dir_ / "t.json").string()}).status, 2);
}

/// One published case (Korthikanti et al. 2022 Fig. 1, 22B, TP 8: 59.25 GiB of activations without
/// recomputation) with the measured value and tolerance given, written to `cases`.
void write_act_22b_case(const fs::path& cases, const std::string& measured, const std::string& tolerance) {
  std::ofstream(cases) << "case {\n  name: \"act-22B\"\n  scenario: \"" << kSrc
                       << "/scenarios/validation/selene_gpt.textproto\"\n"
                          "  set: \"workload.training.recompute=none\"\n"
                          "  metric: \"activation_memory_gib\"\n  measured: "
                       << measured << "\n  tolerance: " << tolerance << "\n}\n";
}

TEST_F(CliTest, ValidateFailsWhenThresholdIsExceeded) {
  // One published case (Korthikanti et al. 2022 Fig. 1, 22B, TP 8: 59.25 GiB of activations).
  const fs::path cases = dir_ / "one.cases.textproto";
  write_act_22b_case(cases, "59.25", "0.05");
  const Result ok = run({"validate", cases.string(), "--max-error", "5"});
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("activation_memory_gib"), std::string::npos);
  const Result fail = run({"validate", cases.string(), "--max-mape", "0"});
  EXPECT_EQ(fail.status, 1);
  EXPECT_NE(fail.out.find("FAIL: MAPE"), std::string::npos);
  // The limit is printed as given, not rounded to "0.0%" (fresh-user finding).
  const Result small = run({"validate", cases.string(), "--max-mape", "0.01"});
  EXPECT_EQ(small.status, 1);
  EXPECT_NE(small.out.find("% exceeds --max-mape 0.01%\n"), std::string::npos) << small.out;
}

TEST_F(CliTest, ValidateSetAppliesToEveryCaseAfterItsOwnSets) {
  // Korthikanti Fig. 1, 22B TP 8: the case sets recompute=none (59.25 GiB of activations);
  // --set recompute=full after it keeps only each layer's input, so the prediction falls.
  const fs::path cases = dir_ / "set.cases.textproto";
  write_act_22b_case(cases, "59.25", "0.05");
  const fs::path plain_csv = dir_ / "plain.csv";
  const fs::path full_csv = dir_ / "full.csv";
  ASSERT_EQ(run({"validate", cases.string(), "--csv", plain_csv.string()}).status, 0);
  const Result full =
      run({"validate", cases.string(), "--set", "workload.training.recompute=full", "--csv", full_csv.string()});
  EXPECT_EQ(full.status, 1) << full.out;  // outside the case's 5 % tolerance now
  const auto predicted = [](const fs::path& csv) {
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);  // header
    std::getline(in, line);
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cols.push_back(c);
    return cols.size() > 4 ? std::stod(cols[4]) : 0.0;
  };
  EXPECT_NEAR(predicted(plain_csv), 59.25, 0.05 * 59.25);
  EXPECT_LT(predicted(full_csv), 0.5 * predicted(plain_csv));
  // A bad --set names the flag.
  const Result bad = run({"validate", cases.string(), "--set", "workload.training.recompute=sometimes"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--set: workload.training.recompute"), std::string::npos) << bad.err;
}

// The header's node and GPU counts are those in service: a drained node (a missing GPU) is named
// beside them, not counted in them (fresh-user finding: "4 x dgx_h100 = 24 x H100").
TEST_F(CliTest, PlanAndClusterHeadersCountNodesInService) {
  const auto with_drained_node = [&](const std::string& file, const std::string& from, const std::string& to) {
    std::string text = slurp(kSrc + "/scenarios/" + file);
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << file;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    const fs::path out = dir_ / fs::path(file).filename();
    std::ofstream(out) << text;
    return out.string();
  };
  const std::string plan_file = with_drained_node(
      "default.textproto", "  num_nodes: 1\n}",
      "  num_nodes: 2\n  fabric { kind: fat_tree }\n  overrides { select: \"node1/gpu0\" missing: true }\n}");
  const Result plan = run({"plan", plan_file, "--top", "1"});
  EXPECT_NE(plan.out.find("Cluster    1 x dgx_h100 = 8 x H100-SXM5-80GB (8 per node; 1 more drained for a missing "
                          "GPU)\n"),
            std::string::npos)
      << plan.out << plan.err;
  const std::string cluster_file =
      with_drained_node("cluster/six_jobs_fifo_vs_backfill.textproto", "  num_nodes: 4\n}",
                        "  num_nodes: 5\n  fabric { kind: fat_tree }\n  overrides { select: \"node4/gpu0\" missing: "
                        "true }\n}");
  const Result cluster = run({"cluster", cluster_file});
  EXPECT_EQ(cluster.status, 0) << cluster.err;
  EXPECT_NE(cluster.out.find("Cluster    4 x dgx_h100 = 32 GPUs, 1 more node drained for a missing GPU, "),
            std::string::npos)
      << cluster.out;
}

// --force overwrites an output, never an input a file names: a sweep's base scenario, a case's
// scenario, calibrate fit's --base (fresh-user finding: each was replaced by CSV or profile text).
TEST_F(CliTest, ForceNeverOverwritesAnInputNamedInsideAFile) {
  const fs::path base = dir_ / "base.textproto";
  const std::string base_text = slurp(kSrc + "/scenarios/default.textproto");
  std::ofstream(base) << base_text;
  const fs::path sweep = dir_ / "s.sweep.textproto";
  std::ofstream(sweep) << "scenario_file: \"base.textproto\"\naxis { path: \"workload.parallel.tp\" values: [\"1\", "
                          "\"2\"] }\n";
  Result r = run({"sweep", sweep.string(), "--out", base.string(), "--force"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is one of the input files"), std::string::npos) << r.err;
  const fs::path cases = dir_ / "c.cases.textproto";
  std::ofstream(cases) << "case {\n  name: \"c\"\n  scenario: \"base.textproto\"\n  metric: \"iteration_time_s\"\n"
                          "  measured: 14\n}\n";
  r = run({"validate", cases.string(), "--csv", base.string(), "--force"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is one of the input files"), std::string::npos) << r.err;
  r = run({"calibrate", "fit", kSrc + "/tests/calibrate/data/h100_burn_sim.textproto", "--base", base.string(), "--out",
           base.string(), "--force"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is one of the input files"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(base.string()), base_text);
}

// Boost's own wording named no flag first and no expectation (fresh-user finding).
TEST_F(CliTest, OptionParserErrorsNameTheFlagAndWhatIsExpected) {
  Result r = run({"run", "--threads", "abc"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --threads: got \"abc\" (expected a whole number, written in digits; see --help for the "
            "option's range)\n");
  r = run({"run", kSrc + "/scenarios/default.textproto", kSrc + "/scenarios/default.textproto"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: too many file names on the command line (expected at most 1 file; options take the form "
            "--name value)\n");
}

TEST_F(CliTest, ValidateTableKeepsWideFiguresApart) {
  // A measured figure of 12 characters (formatted with 3 decimals) used to touch the next column
  // ("11092200.00012534524.299").
  const fs::path cases = dir_ / "wide.cases.textproto";
  write_act_22b_case(cases, "11092200", "1");
  const Result r = run({"validate", cases.string()});
  EXPECT_NE(r.out.find("activation_memory_gib    11092200.000 "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace traincast::cli
