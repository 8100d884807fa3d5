// Session 44's second fresh user: "rack inlet up to 25.0 C" beside a node whose own supply air was
// 42 C (cluster.overrides supply_c); compare --vary "tp=2,,4" asking for "at least two values"; a
// folded run counting its simulated GPUs as the cluster's throttled ones; a
// scenario's description printed as fact after --set changed the job.

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
using test_support::slurp;

const std::string kSrc = TRAINCAST_SOURCE_DIR;

/// A TP 8 x DP 2 job on 2 DGX H100 whose nodes `select` take in supply air at `supply_c`, the
/// model heavy enough (d 8192) that 50 C throttles some of their GPUs.
std::string hot_nodes(const std::string& select, const std::string& supply_c) {
  return "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 2\n  overrides { select: \"" + select +
         "\" supply_c: " + supply_c +
         " }\n}\nworkload {\n  model { num_layers: 4 hidden_size: 8192 num_attention_heads: 64 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { tp: 8 dp: 2 }\n  training { global_batch_size: 16 }\n}\n";
}

// ---- 1. the rack inlet includes a node's own supply air -------------------------------------------

// Before: "rack inlet up to 25.0 C" (the cluster's supply plus recirculation) while node0's GPUs took
// in 42 C air and throttled; a cooler override still read 25.
TEST(FreshUser44bRackInlet, IncludesEachNodesOwnSupplyAir) {
  const traincast::test_support::TempDir dir("fresh_user44b_inlet");
  Result r = run({"run", dir.write("hot.textproto", hot_nodes("node0", "42")), "--json", dir.file("hot.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  rack inlet up to 42.0 C;")) << r.out;
  EXPECT_TRUE(has(slurp(dir.file("hot.json")), "\"rack_inlet_max_c\": 42,")) << slurp(dir.file("hot.json"));
  // Both nodes cooler than the cluster's 25 C: the hottest inlet is theirs.
  r = run({"run", dir.write("cool.textproto", hot_nodes("node0-1", "18"))});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  rack inlet up to 18.0 C;")) << r.out;
  // Without overrides: the cluster's supply.
  r = run({"run", dir.write("plain.textproto", hot_nodes("node0", "25"))});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  rack inlet up to 25.0 C;")) << r.out;
}

// ---- 3. compare --vary names an empty value ------------------------------------------------------

// Before: "tp=2,,4" has three values, yet the error asked for "at least two values".
TEST(FreshUser44bVaryEmptyValue, NamesTheEmptyValuesPosition) {
  Result r = run({"compare", kSrc + "/scenarios/default.textproto", "--vary", "workload.parallel.tp=2,,4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --vary: value 2 of 3 in \"workload.parallel.tp=2,,4\" is empty (expected a value after every "
            "comma: drop the extra comma or put a value there)\n");
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = run({"compare", "--vary", "workload.parallel.tp=2,4,"});  // a trailing comma
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--vary: value 3 of 3 in \"workload.parallel.tp=2,4,\" is empty")) << r.err;
  r = run({"compare", "--vary", "workload.parallel.tp= ,4"});  // blank is empty too
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--vary: value 1 of 2 in")) << r.err;
  // One value and nothing else: still the count's message.
  r = run({"compare", "--vary", "workload.parallel.tp="});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "a scenario field and at least two values")) << r.err;
}

// ---- 4. the description is the file's text, marked after --set ------------------------------------

// Before: `--set cluster.num_nodes=512 --set workload.parallel.dp=64` printed the file's "1024 A100
// (128 DGX A100) ... DP 16" under the heading as if it were the job run (4096 A100, DP 64).
TEST(FreshUser44bDescription, MarkedAsTheFilesTextAfterSet) {
  const std::string file = kSrc + "/scenarios/default.textproto";
  const std::string text = "  Llama-3-8B-class model, bf16, one DGX H100, TP 2 x DP 4, ZeRO-1, selective recompute";
  Result r = run({"run", file, "--set", "workload.parallel.tp=4", "--set", "workload.parallel.dp=2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, text + "  (the scenario's description, not updated by --set)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "TP 4")) << r.out;  // the computed layout below it
  // Without --set, or with only options.*: the text alone.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"run", file},
                                               {"run", file, "--set", "options.threads=1"},
                                               {"run", file, "--set", "options.fold_symmetric=false"}}) {
    r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, text + "\n")) << r.out;
    EXPECT_FALSE(has(r.out, "not updated by --set")) << r.out;
  }
}

// ---- 2. the throttled-GPU count is of real GPUs, folded or not -----------------------------------

// Before: both nodes at 50 C, the two DP replicas alike and folded into one: "4 GPU(s) throttled"
// folded, "8 GPU(s) throttled" with fold_symmetric=false, the same iteration time.
TEST(FreshUser44bThrottledCount, FoldedAndUnfoldedCountTheSameRealGpus) {
  const traincast::test_support::TempDir dir("fresh_user44b_throttled");
  const std::string file = dir.write("hot.textproto", hot_nodes("node0-1", "50"));
  const Result folded = run({"run", file, "--json", dir.file("folded.json")});
  const Result unfolded =
      run({"run", file, "--set", "options.fold_symmetric=false", "--json", dir.file("unfolded.json")});
  ASSERT_EQ(folded.status, 0) << folded.err;
  ASSERT_EQ(unfolded.status, 0) << unfolded.err;
  ASSERT_TRUE(has(folded.out, "identical DP replicas simulated once")) << folded.out;  // it did fold
  EXPECT_TRUE(has(folded.out,
                  "8 GPU(s) throttled, up to 19.7 % of the iteration (GPUs listed: the simulated replicas): GPU 4 "
                  "(19.7 %) GPU 5 (19.7 %) GPU 6 (19.7 %) GPU 7 (19.7 %)\n"))
      << folded.out;
  EXPECT_TRUE(has(unfolded.out,
                  "8 GPU(s) throttled, up to 19.7 % of the iteration: GPU 4 (19.7 %) GPU 5 (19.7 %) GPU "
                  "6 (19.7 %) GPU 7 (19.7 %) GPU 12 (19.7 %)"))
      << unfolded.out;
  for (const char* json : {"folded.json", "unfolded.json"})
    EXPECT_TRUE(has(slurp(dir.file(json)), "\"throttled_gpus\": 8,")) << json;
}

}  // namespace
}  // namespace traincast::cli
