// Session 42's fresh user, a hardware buyer: a liquid-cooled rack billed at the air-cooled default
// PUE without a word; a `compare --set cost.node_price_usd` charged per node of every column whatever
// its hardware; `nccl-tests --op` taking undocumented spellings yet refusing `all-reduce`; `--jobs 0`
// refused where `run --threads 0` means all hardware threads; a file's errors printed out of line
// order; the B200 rent's item reading 192 GB where the catalog says 180 GB.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::has;
using test_support::Result;
using test_support::run;

/// A 72-GPU TP 8 x DP 9 job of 4 small layers on `nodes` x `tmpl`, `extra` (lines) after the cluster.
std::string scenario(const std::string& tmpl, int nodes, const std::string& extra = "") {
  return "cluster {\n  node_template: \"" + tmpl + "\"\n  num_nodes: " + std::to_string(nodes) + "\n}\n" + extra +
         "workload {\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { tp: 8 dp: 9 }\n  training { global_batch_size: 72 }\n}\n";
}

/// `text` with each run of spaces and newlines made one space (--help wraps its columns).
std::string unwrapped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') c = ' ';
    if (c != ' ' || out.empty() || out.back() != ' ') out += c;
  }
  return out;
}

/// The lines of `text` that start with `prefix`, in order.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

class FreshUser42b : public ::testing::Test {
 protected:
  void SetUp() override {
    gb_ = dir_.write("gb.textproto", scenario("gb200_nvl72", 1, "thermal { cooling: liquid }\n"));
    h100_ = dir_.write("dgx_h100.textproto", scenario("dgx_h100", 9));
    b200_ = dir_.write("b200.textproto", scenario("dgx_b200", 9));
  }
  traincast::test_support::TempDir dir_{"fresh_user42b"};
  std::string gb_, h100_, b200_;
};

// Before: "PUE 1.58" for both columns and "dgx_h100 needs 21.1 kW less" without a word that the
// liquid-cooled rack was billed at the survey's average PUE, which cooling does not change.
TEST_F(FreshUser42b, CompareSaysWhenLiquidAndAirCooledColumnsShareTheDefaultPue) {
  const Result r = run({"compare", gb_, h100_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out,
                  "\nPUE: gb is liquid-cooled and dgx_h100 air-cooled, yet both use power.pue 1.58, its default (the "
                  "Uptime Institute Global Data Center Survey 2023's average over the data centers surveyed): "
                  "cooling does not change PUE, so their facility power and energy differ by IT power alone. Give "
                  "each scenario its facility's PUE: power { pue: ... } in its file (--set power.pue=X sets every "
                  "column alike).\n"))
      << r.out;
  // A PUE given (here to both) is the user's: no note; nor between two air-cooled columns.
  EXPECT_FALSE(has(run({"compare", gb_, h100_, "--set", "power.pue=1.3"}).out, "PUE:"));
  const Result air = run({"compare", h100_, b200_});
  ASSERT_EQ(air.status, 0) << air.err;
  EXPECT_FALSE(has(air.out, "PUE:")) << air.out;
}

TEST_F(FreshUser42b, RunOfALiquidCooledScenarioAtTheDefaultPueSaysSo) {
  const std::string note =
      "  PUE 1.58 is power.pue's default (the Uptime Institute Global Data Center Survey "
      "2023's average over the data centers surveyed); cooling: liquid does not change it: give "
      "your facility's PUE with power { pue: ... } (or --set power.pue=X)\n";
  const Result r = run({"run", gb_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "at PUE 1.58; energy")) << r.out;
  EXPECT_TRUE(has(r.out, note)) << r.out;
  EXPECT_FALSE(has(run({"run", gb_, "--set", "power.pue=1.2"}).out, "power.pue's default"));
  EXPECT_FALSE(has(run({"run", h100_}).out, "power.pue's default"));  // air-cooled
}

// Before: a GB200 NVL72 rack's USD 3.4M charged per DGX B200 server (capex $30.9M for 9) silently.
TEST_F(FreshUser42b, AHardwarePriceSetForColumnsOfDifferentHardwareIsWarned) {
  const Result r = run({"compare", gb_, b200_, "--set", "cost.node_price_usd=3.4e6"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.err,
                  "warning: --set: cost.node_price_usd: 3.4e6 is one price of a node for every column, but their "
                  "hardware differs: gb (gb200_nvl72: 72 x GB200 a node) and b200 (dgx_b200: 8 x B200 a node); each "
                  "column is charged it as its own (expected a price for each column's hardware: give cost { "
                  "node_price_usd: ... } in each scenario file instead of --set)\n"))
      << r.err;
  // A rent is per GPU-hour: warned where the GPUs differ.
  const Result rent = run({"compare", h100_, b200_, "--set", "cost.cloud_price_per_gpu_hour_usd=6"});
  ASSERT_EQ(rent.status, 0) << rent.err;
  EXPECT_TRUE(has(rent.err,
                  "warning: --set: cost.cloud_price_per_gpu_hour_usd: 6 is one price of a GPU-hour for every column, "
                  "but their hardware differs: dgx_h100 (H100-SXM5-80GB) and b200 (B200);"))
      << rent.err;
  // Columns of one node template, and a price that is not the hardware's: no warning.
  const Result same = run({"compare", b200_, "--vary", "workload.training.micro_batch_size=1,2", "--set",
                           "cost.node_price_usd=500000", "--set", "cost.energy_price_usd_per_kwh=0.1"});
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_FALSE(has(same.err, "hardware differs")) << same.err;
  EXPECT_FALSE(has(run({"compare", gb_, b200_, "--set", "cost.energy_price_usd_per_kwh=0.1"}).err, "warning: --set"));
}

// Before: allreduce, AllReduce, all_to_all and all_reduce_perf ran; all-reduce was refused; --help
// listed only the canonical names. Now exactly those, as --policy and --half take exactly theirs.
TEST_F(FreshUser42b, NcclTestsOpTakesExactlyTheCanonicalNames) {
  const std::string nccl = std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/nccl/dgx_h100.textproto";
  const std::string expected =
      " (expected one of all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv: the names of "
      "nccl-tests' binaries without _perf)\n";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"allreduce", "all_reduce"}, {"AllReduce", "all_reduce"},       {"all-reduce", "all_reduce"},
      {"all_to_all", "alltoall"},  {"all_reduce_perf", "all_reduce"}, {"allgather", "all_gather"}};
  for (const auto& [given, meant] : refused) {
    const Result r = run({"nccl-tests", nccl, "--op", given, "-b", "1M", "-e", "1M"});
    EXPECT_EQ(r.status, 2) << given;
    EXPECT_EQ(r.err, "traincast: --op: got \"" + given + "\", did you mean \"" + meant + "\"?" + expected) << given;
  }
  const Result bogus = run({"nccl-tests", nccl, "--op", "bogus"});
  EXPECT_EQ(bogus.err, "traincast: --op: got \"bogus\"" + expected);
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv"})
    EXPECT_EQ(run({"nccl-tests", nccl, "--op", op, "-b", "1M", "-e", "1M"}).status, 0) << op;
  EXPECT_TRUE(has(unwrapped(run({"nccl-tests", "--help"}).out), "(exactly these: the binaries' names without _perf)"));
  // calibrate's --op names the same operations.
  const Result cal = run({"calibrate", "validate", dir_.file("p.textproto"), "--op", "AllReduce"});
  EXPECT_EQ(cal.status, 2);
  EXPECT_EQ(cal.err, "traincast: --op: got \"AllReduce\", did you mean \"all_reduce\"?" + expected);
}

// Before: "--jobs: got 0 (expected an integer from 1 to 1024: ...)" from sweep, compare, plan and
// validate, while run and cluster --threads 0 meant all hardware threads.
TEST_F(FreshUser42b, JobsZeroMeansAllHardwareThreadsLikeThreadsZero) {
  const std::string sweep =
      dir_.write("s.sweep.textproto",
                 "scenario_file: \"dgx_h100.textproto\"\naxis { path: \"workload.training.micro_batch_size\" "
                 "values: \"1\" values: \"2\" }\nmetric: \"iteration_time_s\"\n");
  ASSERT_EQ(run({"sweep", sweep, "--out", dir_.file("j1.csv"), "--jobs", "1"}).status, 0);
  const Result zero = run({"sweep", sweep, "--out", dir_.file("j0.csv"), "--jobs", "0"});
  ASSERT_EQ(zero.status, 0) << zero.err;
  const auto body = [](const std::string& csv) { return csv.substr(csv.find('\n')); };  // past the # line
  EXPECT_EQ(body(test_support::slurp(dir_.file("j0.csv"))), body(test_support::slurp(dir_.file("j1.csv"))));
  const Result c0 = run({"compare", h100_, b200_, "--jobs", "0"});
  ASSERT_EQ(c0.status, 0) << c0.err;
  EXPECT_EQ(c0.out, run({"compare", h100_, b200_, "--jobs", "1"}).out);
  EXPECT_EQ(run({"plan", h100_, "--jobs", "0", "--top", "1", "--max-simulations", "2"}).status, 0);
  // validate checks --jobs before reading its files: the file's error, not --jobs'.
  const Result v = run({"validate", dir_.file("none.cases.textproto"), "--jobs", "0"});
  EXPECT_EQ(v.status, 2);
  EXPECT_TRUE(has(v.err, "none.cases.textproto: cannot read file")) << v.err;
  const std::string why =
      " (expected an integer from 0 to 1024: 0 for all hardware threads; one thread per simulation at once, and "
      "more threads than hardware threads do not make it faster; 1024 is above a two-socket AMD EPYC 9965 server's "
      "768)\n";
  EXPECT_EQ(run({"compare", h100_, b200_, "--jobs", "-1"}).err, "traincast: --jobs: got -1" + why);
  EXPECT_EQ(run({"plan", h100_, "--jobs", "-1"}).err, "traincast: --jobs: got -1" + why);
  EXPECT_TRUE(has(unwrapped(run({"sweep", "--help"}).out), "1 to 1024, 0 for all hardware threads (the default"));
  EXPECT_TRUE(has(unwrapped(run({"validate", "--help"}).out), "1 to 1024, 0 for all hardware threads"));
}

// Before: the metric[0] error (line 5) came first, then lines 2, 3 and 4.
TEST_F(FreshUser42b, ASweepFilesErrorsArePrintedInLineOrder) {
  const std::string path = dir_.write("bad.sweep.textproto",
                                      "scenario_file: \"dgx_h100.textproto\"\n"
                                      "axis { path: \"workload.parallel.tpx\" values: \"1\" values: \"2\" }\n"
                                      "axis { path: \"workload.parallel.pp\" values: \"1\" values: \"1\" }\n"
                                      "constraint: \"tp * * pp\"\n"
                                      "metric: \"iteration_tim_s\"\n");
  const Result r = run({"sweep", path, "--out", dir_.file("bad.csv")});
  EXPECT_EQ(r.status, 2);
  const std::vector<std::string> lines = lines_starting(r.err, path + ":");
  ASSERT_EQ(lines.size(), 4u) << r.err;
  EXPECT_TRUE(has(lines[0], ":2:8: axis[0].path: unknown field \"tpx\"")) << r.err;
  EXPECT_TRUE(has(lines[1], ":3:49: axis[1].values[1]: value \"1\" repeats values[0]")) << r.err;
  EXPECT_TRUE(has(lines[2], ":4:1: constraint[0]: ")) << r.err;
  EXPECT_TRUE(has(lines[3], ":5:1: metric[0]: unknown metric \"iteration_tim_s\"")) << r.err;
}

// Scenario checks ran cluster, power, then workload: lines 9, 6, 3. A case file's own checks came
// before its scenario's (lines 8, 11, 13, then 6), positioned at the case's `set`.
TEST_F(FreshUser42b, ScenarioAndCaseFileErrorsArePrintedInLineOrder) {
  const std::string path =
      dir_.write("order.textproto",
                 "workload {\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
                 "seq_length: 2048 }\n  parallel { tp: 3 dp: 2 }\n  training { global_batch_size: 16 }\n}\n"
                 "power { pue: 0.5 }\ncluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 0\n}\n");
  const Result r = run({"run", path});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, path +
                       ":3:14: workload.parallel.tp: 3 does not divide num_attention_heads 16 (expected a divisor of "
                       "16)\n" +
                       path + ":6:9: power.pue: got 0.5 (expected 1 to 3 (facility / IT power; 1 = no overhead))\n" +
                       path + ":9:3: cluster.num_nodes: got 0 (expected an integer from 1 to 2147483647)\n");
  const std::string cases = dir_.write("bad.cases.textproto",
                                       "group: \"g\"\nsource: \"s\"\ncase {\n  name: \"a\"\n  scenario: "
                                       "\"dgx_h100.textproto\"\n  set: \"workload.parallel.tp=3\"\n  metric: "
                                       "\"tokens_per_s\"\n  measured: -1\n}\ncase {\n  name: \"a\"\n  scenario: "
                                       "\"missing.textproto\"\n  metric: \"tokens_per_sec\"\n  measured: 5\n}\n");
  const Result v = run({"validate", cases});
  EXPECT_EQ(v.status, 2);
  const std::vector<std::string> lines = lines_starting(v.err, cases + ":");
  ASSERT_GE(lines.size(), 5u) << v.err;
  std::vector<int> at;
  for (const std::string& l : lines) at.push_back(std::stoi(l.substr(cases.size() + 1)));
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << v.err;
  EXPECT_EQ(at.front(), 6) << v.err;
  EXPECT_EQ(at.back(), 13) << v.err;
}

// Before: "NVIDIA B200 192 GB" (the chip's HBM3e) beside the catalog's 180 GB (HGX B200 datasheet).
TEST(FreshUser42bPrices, TheB200RentNamesTheCatalogsMemory) {
  const traincast::test_support::TempDir dir("fresh_user42b_prices");
  const Result r = run({"catalog", "--json", dir.file("c.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string json = test_support::slurp(dir.file("c.json"));
  EXPECT_TRUE(has(json, "\"what\": \"NVIDIA B200 SXM 180 GB, on-demand, per GPU-hour (read 2026-08-26)\"")) << json;
  EXPECT_FALSE(has(json, "B200 192 GB"));
}

}  // namespace
}  // namespace traincast::cli
