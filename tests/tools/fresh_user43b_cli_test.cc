// Session 43's second set of fresh-user gaps: a selector with a leading space read "no GPU, NIC or
// link named", one with a trailing space "cannot read"; the order of several reasons in a sweep row
// varied between points; a point invalid through a micro_batch_size axis was placed at the base
// file's global_batch_size, not at the axis; compare's Prices called a --set price "scenario".

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::count;
using test_support::has;
using test_support::Result;
using test_support::run;

/// A small TP 8 x DP 2 job on 2 DGX H100: `training` and `parallel` the fields of those blocks,
/// written first in the workload (training on line 2, parallel on line 4), `cluster_lines` (each
/// ending in "\n") in the cluster block after it.
std::string scenario(const std::string& cluster_lines = "", const std::string& training = "global_batch_size: 16",
                     const std::string& parallel = "tp: 8 dp: 2") {
  return "workload {\n  training { " + training +
         " }\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { " +
         parallel + " }\n}\ncluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 2\n" + cluster_lines + "}\n";
}

/// The reason column of the CSV row of point `point` of an invalid point: the text after its status
/// and its empty metric cells ("invalid,,,"), quotes kept.
std::string reason(const std::string& csv, int point) {
  const std::size_t row = csv.find("\n" + std::to_string(point) + ",");
  const std::size_t status = row == std::string::npos ? row : csv.find(",invalid,", row);
  if (status == std::string::npos) return "";
  const std::size_t from = csv.find_first_not_of(',', status + 8);
  return csv.substr(from, csv.find('\n', from) - from);
}

// ---- 1. a selector with a space ----------------------------------------------------------------

// Before: " node1/gpu3" read "no GPU, NIC or link named \" node1/gpu3\" (...)", "node1/gpu3 "
// "cannot read \"node1/gpu3 \" (...)".
TEST(FreshUser43bSelectorSpace, LeadingTrailingAndInnerSpacesGetOneMessageWithThePlace) {
  const traincast::test_support::TempDir dir("fresh_user43b_space");
  const std::string plain = dir.write("plain.textproto", scenario());
  const std::vector<std::pair<std::string, std::string>> cases = {{" node1/gpu3", "has a space at character 1 of 11"},
                                                                  {"node1/gpu3 ", "has a space at character 11 of 11"},
                                                                  {"node1 /gpu3", "has a space at character 6 of 11"}};
  for (const auto& [select, where] : cases) {
    const Result r = run({"run", plain, "--set", "cluster.overrides[0].select=" + select, "--set",
                          "cluster.overrides[0].clock_factor=0.9"});
    EXPECT_EQ(r.status, 2) << select;
    EXPECT_TRUE(has(r.err, "--set: cluster.overrides[0].select: a selector has no spaces: \"" + select + "\" " + where +
                               " (expected node<N>/gpu<K>, "))
        << r.err;
    EXPECT_FALSE(has(r.err, "no GPU, NIC or link named")) << r.err;
    EXPECT_FALSE(has(r.err, "cannot read")) << r.err;
  }
  // In a file: positioned at the select field.
  const std::string file =
      dir.write("lead.textproto", scenario("  overrides { select: \" node1/gpu3\" clock_factor: 0.9 }\n"));
  const Result f = run({"run", file});
  EXPECT_EQ(f.status, 2);
  EXPECT_TRUE(has(f.err, file + ":9:15: cluster.overrides[0].select: a selector has no spaces: \" node1/gpu3\" has a "
                                "space at character 1 of 11"))
      << f.err;
  // Without the space it runs.
  const Result ok = run({"run", plain, "--set", "cluster.overrides[0].select=node1/gpu3", "--set",
                         "cluster.overrides[0].clock_factor=0.9"});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

// ---- 2. the order of a sweep row's reasons -------------------------------------------------------

// Before: point tp=1 listed "tp * pp * dp" (sweep file) before global_batch_size (base line 2), point
// tp=4 after it, as its tp_comm_overlap message (base line 4) took the base file's first place.
TEST(FreshUser43bSweepReasons, TheSameChecksListInTheSameOrderAtEveryPoint) {
  const traincast::test_support::TempDir dir("fresh_user43b_order");
  dir.write("base.textproto",
            scenario("", "global_batch_size: 16 micro_batch_size: 3", "tp: 8 dp: 2 tp_comm_overlap: true"));
  const std::string sweep = dir.write("s.sweep.textproto",
                                      "scenario_file: \"base.textproto\"\n"
                                      "axis { path: \"workload.parallel.tp\" values: [\"1\", \"4\"] }\n");
  const Result r = run({"sweep", sweep, "--out", dir.file("s.csv")});
  EXPECT_EQ(r.status, 2) << r.err;  // every point invalid
  const std::string csv = test_support::slurp(dir.file("s.csv"));
  const std::string base = dir.file("base.textproto");
  const std::string gpus = sweep + ":2:";
  const std::string gbs = base + ":2:14: workload.training.global_batch_size: ";
  const std::string overlap = base + ":4:26: workload.parallel.tp_comm_overlap: ";
  for (int point : {0, 1}) {
    const std::string why = reason(csv, point);
    ASSERT_TRUE(has(why, gpus)) << csv;
    ASSERT_TRUE(has(why, gbs)) << csv;
    // The sweep file's reason (the axis value), then the base file's by line.
    EXPECT_LT(why.find(gpus), why.find(gbs)) << why;
    if (point == 1) {
      EXPECT_LT(why.find(gbs), why.find(overlap)) << why;
    }
  }
  EXPECT_FALSE(has(reason(csv, 0), overlap)) << csv;  // tp 1: no TP to overlap
}

// ---- 3. a micro_batch_size axis is where its batch reason points ----------------------------------

// Before: "base.textproto:2:14: workload.training.global_batch_size: 16 is not divisible by ...".
TEST(FreshUser43bSweepReasons, AMicroBatchAxisIsWhereTheBatchReasonPoints) {
  const traincast::test_support::TempDir dir("fresh_user43b_mbs");
  dir.write("base.textproto", scenario());
  const std::string sweep = dir.write("s.sweep.textproto",
                                      "scenario_file: \"base.textproto\"\n"
                                      "axis { path: \"workload.training.micro_batch_size\" values: [\"1\", \"3\"] }\n");
  const Result r = run({"sweep", sweep, "--out", dir.file("s.csv")});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string csv = test_support::slurp(dir.file("s.csv"));
  EXPECT_EQ(reason(csv, 1), sweep +
                                ":2:65: workload.training.global_batch_size: 16 is not divisible by dp * "
                                "micro_batch_size = 2 * 3 = 6 (expected a multiple of 6); micro_batch_size as changed "
                                "by workload.training.micro_batch_size=3")
      << csv;
  // --set does the same; a base global_batch_size the axis changes stays at that axis.
  const Result s = run({"run", dir.file("base.textproto"), "--set", "workload.training.micro_batch_size=3"});
  EXPECT_EQ(s.status, 2);
  EXPECT_TRUE(
      has(s.err, "--set: workload.training.global_batch_size: 16 is not divisible by dp * micro_batch_size = 2 * 3"))
      << s.err;
}

// ---- 4. a price --set gave is named so ------------------------------------------------------------

// Before: compare's Prices read "A node: scenario"; run's "node price    USD 250,000 (scenario)" and
// "rent          scenario".
TEST(FreshUser43bPriceSource, RunAndCompareNameTheOptionThatGaveAPrice) {
  const traincast::test_support::TempDir dir("fresh_user43b_price");
  const std::string a = dir.write("a.textproto", scenario());
  const std::string b = dir.write("b.textproto", scenario("", "global_batch_size: 32"));
  const Result r = run({"run", a, "--set", "cost.node_price_usd=250000", "--set",
                        "cost.cloud_price_per_gpu_hour_usd=2.5", "--json", dir.file("r.json")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  node price    USD 250,000 (--set); per dgx_h100 node of 8 GPUs\n")) << r.out;
  EXPECT_TRUE(has(r.out, "  rent          USD 2.500/GPU-hour (--set)\n")) << r.out;
  const std::string json = test_support::slurp(dir.file("r.json"));
  EXPECT_TRUE(has(json, "\"node_price_source\": \"--set\"")) << json;
  EXPECT_TRUE(has(json, "\"cloud_price_source\": \"--set\"")) << json;
  const Result c = run({"compare", a, b, "--set", "cost.node_price_usd=250000", "--json", dir.file("c.json"), "--csv",
                        dir.file("c.csv")});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(count(c.out, " node: USD 250,000 (--set)\n"), 2) << c.out;
  EXPECT_FALSE(has(c.out, "node: scenario")) << c.out;
  EXPECT_EQ(count(test_support::slurp(dir.file("c.json")), "\"node_price_source\": \"--set\""), 2);
  EXPECT_TRUE(has(test_support::slurp(dir.file("c.csv")), ",--set")) << test_support::slurp(dir.file("c.csv"));
  // --vary names itself; a price the file writes stays "scenario", in both commands.
  const Result v = run({"compare", a, "--vary", "cost.cloud_price_per_gpu_hour_usd=2,3"});
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_TRUE(has(v.out, "cost.cloud_price_per_gpu_hour_usd=3 rent: USD 3.000/GPU-hour (--vary)\n")) << v.out;
  const std::string priced = dir.write("priced.textproto", scenario() + "cost { node_price_usd: 250000 }\n");
  const Result f = run({"compare", priced, b});
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_TRUE(has(f.out, "priced rent: ")) << f.out;
  EXPECT_TRUE(has(f.out, "priced node: USD 250,000 (scenario)\n")) << f.out;
  const Result fr = run({"run", priced});
  ASSERT_EQ(fr.status, 0) << fr.err;
  EXPECT_TRUE(has(fr.out, "  node price    USD 250,000 (scenario); per ")) << fr.out;
}

}  // namespace
}  // namespace traincast::cli
