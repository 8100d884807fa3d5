// Session 42's fresh-user leftovers on cluster.overrides: `compare` showed no Overrides section
// for a side with overrides; `explain --path node3/gpu0` (the selector form) was refused; an
// invalid sweep point's reason named the field but not FILE:LINE:COL; a JSON scenario's range
// error pointed at the key where its type error pointed at the value; the `Folding:` line named
// one setting of a class whose GPUs had several ("clock_factor 0.9 on node3/gpu0 (+7 more GPUs)"
// with a 0.5 and a power cap among them).

#include <gtest/gtest.h>

#include <string>

#include "tests/support/fixtures.h"
#include "tests/tools/cli_run.h"

namespace traincast::cli {
namespace {

using test_support::count;
using test_support::has;
using test_support::Result;
using test_support::run;

/// A small TP 8 x DP `nodes` job on `nodes` DGX H100, `lines` (each ending in "\n") in its cluster
/// block from line 4 on. Without `lines`: "parallel { tp: 8 ..." is line 7, tp at column 14.
std::string scenario(const std::string& lines, int nodes = 2) {
  return "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: " + std::to_string(nodes) + "\n" + lines +
         "}\nworkload {\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { tp: 8 dp: " +
         std::to_string(nodes) + " }\n  training { global_batch_size: 16 }\n}\n";
}

/// "FILE:LINE:COL" of the first `what` in `text` (1-based, no tabs), which must occur.
std::string position(const std::string& file, const std::string& text, const std::string& what) {
  const std::size_t at = text.find(what);
  EXPECT_NE(at, std::string::npos) << what;
  const std::size_t line_start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  return file + ":" + std::to_string(count(text.substr(0, at), "\n") + 1) + ":" + std::to_string(at - line_start + 1);
}

// Before: compare's output had no word of the overrides of either side (`run` prints them).
TEST(FreshUser42Compare, ASideWithOverridesGetsItsOverridesSectionInTextAndJson) {
  const traincast::test_support::TempDir dir("fresh_user42_compare");
  const std::string plain = dir.write("plain.textproto", scenario(""));
  const std::string slow =
      dir.write("slow.textproto", scenario("  overrides { select: \"node1/gpu5\" clock_factor: 0.9 }\n"
                                           "  overrides { select: \"node0/nic0\" bandwidth_factor: 0.5 }\n"));
  const std::string json = dir.file("c.json");
  const Result r = run({"compare", plain, slow, "--json", json});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\nOverrides of slow (cluster.overrides): +")) << r.out;
  EXPECT_TRUE(has(r.out, "per iteration (+")) << r.out;
  EXPECT_TRUE(has(r.out, "  [0] node1/gpu5 clock_factor 0.9: SM clock 1,782 of 1,980 MHz while computing")) << r.out;
  EXPECT_TRUE(has(r.out, "  [1] node0/nic0 bandwidth_factor 0.5: ")) << r.out;
  EXPECT_FALSE(has(r.out, "Overrides of plain")) << r.out;
  // Under the table, before the prices.
  EXPECT_LT(r.out.find("Overrides of slow"), r.out.find("\nPrices")) << r.out;
  const std::string j = test_support::slurp(json);
  EXPECT_EQ(count(j, "\"overrides\": "), 1) << j;  // the plain row's keys are as before
  EXPECT_TRUE(has(j,
                  "\"overrides\": {\"entries\":[{\"index\":0,\"select\":\"node1/gpu5\",\"setting\":\"clock_factor "
                  "0.9\",\"sm_clock_mhz\":"))
      << j;
  EXPECT_TRUE(has(j, "\"override_effects\": [\"SM clock 1,782 of 1,980 MHz while computing")) << j;
  // The object is run --json's own `overrides`, byte for byte once run's indentation is removed
  // (one writer: until session 42's review compare wrote its entries by hand, 1386 for run's
  // 1386.0000000006535 and null for run's 0).
  const std::string run_json = dir.file("r.json");
  ASSERT_EQ(run({"run", slow, "--json", run_json}).status, 0);
  std::string compact;  // run's JSON without whitespace outside strings
  bool in_string = false;
  for (const char c : test_support::slurp(run_json)) {
    if (in_string || (c != ' ' && c != '\n')) compact += c;
    if (c == '"' && (compact.size() < 2 || compact[compact.size() - 2] != '\\')) in_string = !in_string;
  }
  const std::size_t from = j.find("\"overrides\": ") + std::string("\"overrides\": ").size();
  const std::string object = j.substr(from, j.find(", \"override_effects\"") - from);
  EXPECT_TRUE(has(compact, "\"overrides\":" + object)) << object << "\n" << compact;
  // The plain row ends as it did: its last key is model_error_band_absent.
  const std::size_t second_row = j.find("\"label\": \"slow\"");
  ASSERT_NE(second_row, std::string::npos) << j;
  EXPECT_FALSE(has(j.substr(0, second_row), "\"overrides\"")) << j;
}

// Before: `--path: bad GPU 'node1/gpu2' (expected gpuN, N or nodeM.gpuK)`.
TEST(FreshUser42Explain, PathTakesTheSelectorFormOfAGpuAndNamesWhatElseItGot) {
  const traincast::test_support::TempDir dir("fresh_user42_explain");
  const std::string path = dir.write("e.textproto", scenario(""));
  Result r = run({"explain", path, "--path", "node0/gpu1", "node1/gpu2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\nPath gpu1 (node0.gpu1) -> gpu10 (node1.gpu2), ")) << r.out;
  const Result dotted = run({"explain", path, "--path", "node0.gpu1", "node1.gpu2"});
  EXPECT_EQ(dotted.out, r.out);
  r = run({"explain", path, "--path", "node1/nic0", "gpu0"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --path: 'node1/nic0' is a NIC: the path runs from GPU to GPU and lists the NICs it crosses "
            "(expected gpuN, N, nodeM.gpuK or nodeM/gpuK, e.g. node1/gpu0)\n");
  EXPECT_EQ(r.out, "");
  r = run({"explain", path, "--path", "gpu0", "node1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --path: 'node1' names a node, not one GPU (expected gpuN, N, nodeM.gpuK or nodeM/gpuK, e.g. "
            "node1/gpu0)\n");
  r = run({"explain", path, "--path", "gpu0", "node0-1/gpu2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --path: 'node0-1/gpu2' names a range of nodes, not one GPU (expected gpuN, N, nodeM.gpuK or "
            "nodeM/gpuK, e.g. node0/gpu0)\n");
  r = run({"explain", path, "--path", "gpu0", "node1/gpux"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "traincast: --path: bad GPU 'node1/gpux' (expected gpuN, N, nodeM.gpuK or nodeM/gpuK, e.g. node1/gpu0)\n");
  // A node number past int range: refused as a bad GPU (std::stoi threw out_of_range before).
  r = run({"explain", path, "--path", "gpu0", "node99999999999/gpu0"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "traincast: --path: bad GPU 'node99999999999/gpu0' (expected ")) << r.err;
  r = run({"explain", path, "--path", "gpu0", "node1/gpu8"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "traincast: --path: node1/gpu8: a node has 8 GPUs (expected gpu0 to gpu7)\n");
}

// Before: the reason column read "workload.parallel.tp: 3 does not divide ...", no place.
TEST(FreshUser42Sweep, AnInvalidPointsReasonNamesTheAxisValueSetOrBaseFieldThatWroteIt) {
  const traincast::test_support::TempDir dir("fresh_user42_sweep");
  const std::string base_text = scenario("");
  const std::string base = dir.write("base.textproto", base_text);
  // An axis value: the point's own value, in the sweep file.
  const std::string axis_text =
      "scenario_file: \"base.textproto\"\n"
      "axis { path: \"workload.parallel.tp\" values: [\"8\", \"3\"] }\n";
  const std::string axis = dir.write("axis.sweep.textproto", axis_text);
  Result r = run({"sweep", axis, "--out", dir.file("axis.csv"), "--jobs", "2", "--progress", "never"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string csv = test_support::slurp(dir.file("axis.csv"));
  EXPECT_TRUE(has(csv, "\n1,3,invalid,") &&
              has(csv, position(axis, axis_text, "\"3\"") + ": workload.parallel.tp: 3 does not divide "
                                                            "num_attention_heads 16 (expected a divisor of 16)"))
      << csv;
  EXPECT_FALSE(has(csv, ",workload.parallel.tp:")) << csv;  // no reason without its place

  // A base field: tp 8 of the base file does not divide the axis's 12 heads.
  const std::string heads_text =
      "scenario_file: \"base.textproto\"\n"
      "axis { path: \"workload.model.num_attention_heads\" values: [\"16\", \"12\"] }\n";
  const std::string heads = dir.write("heads.sweep.textproto", heads_text);
  r = run({"sweep", heads, "--out", dir.file("heads.csv"), "--jobs", "1", "--progress", "never"});
  ASSERT_EQ(r.status, 0) << r.err;
  csv = test_support::slurp(dir.file("heads.csv"));
  EXPECT_TRUE(has(csv, base + ":7:14: workload.parallel.tp: 8 does not divide num_attention_heads 12")) << csv;

  // An inline base with a `set` of tp: the set entry, in the sweep file.
  const std::string inline_text = "scenario {\n" + base_text +
                                  "}\n"
                                  "set: \"workload.parallel.tp=8\"\n"
                                  "axis { path: \"workload.model.num_attention_heads\" values: [\"16\", \"12\"] }\n";
  const std::string inline_sweep = dir.write("inline.sweep.textproto", inline_text);
  r = run({"sweep", inline_sweep, "--out", dir.file("inline.csv"), "--jobs", "1", "--progress", "never"});
  ASSERT_EQ(r.status, 0) << r.err;
  csv = test_support::slurp(dir.file("inline.csv"));
  EXPECT_TRUE(has(csv, position(inline_sweep, inline_text, "set:") +
                           ": workload.parallel.tp: 8 does not divide num_attention_heads 12"))
      << csv;
  // Without the set: the inline base's own tp, in the sweep file (line 8: "scenario {" first).
  const std::string own_text = "scenario {\n" + base_text +
                               "}\n"
                               "axis { path: \"workload.model.num_attention_heads\" values: [\"16\", \"12\"] }\n";
  const std::string own = dir.write("own.sweep.textproto", own_text);
  r = run({"sweep", own, "--out", dir.file("own.csv"), "--jobs", "1", "--progress", "never"});
  ASSERT_EQ(r.status, 0) << r.err;
  csv = test_support::slurp(dir.file("own.csv"));
  EXPECT_TRUE(has(csv, own + ":8:14: workload.parallel.tp: 8 does not divide num_attention_heads 12")) << csv;
}

// Before: "t.json:5:17: workload.parallel.tp: got -5" (the key) beside "t.json:5:23: ...: invalid
// value \"x\"" (the value) for the same field.
TEST(FreshUser42Json, ARangeErrorAndATypeErrorBothPointAtTheValue) {
  const traincast::test_support::TempDir dir("fresh_user42_json");
  const auto json = [](const std::string& tp) {
    return "{\n  \"cluster\": {\"node_template\": \"dgx_h100\", \"num_nodes\": 1},\n  \"workload\": {\n"
           "    \"model\": {\"num_layers\": 4, \"hidden_size\": 2048, \"num_attention_heads\": 16, "
           "\"vocab_size\": 32000, \"seq_length\": 2048},\n"
           "    \"parallel\": {\"tp\": " +
           tp + "},\n    \"training\": {\"global_batch_size\": 16}\n  }\n}\n";
  };
  const std::string range_text = json("-5"), type_text = json("\"x\"");
  const std::string range = dir.write("range.json", range_text), type = dir.write("type.json", type_text);
  const Result r = run({"run", range});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, position(range, range_text, "-5") + ": workload.parallel.tp: got -5 (expected ")) << r.err;
  const Result t = run({"run", type});
  EXPECT_EQ(t.status, 2);
  EXPECT_TRUE(has(t.err, position(type, type_text, "\"x\"") + ": workload.parallel.tp: invalid value \"x\"")) << t.err;
  // The same column for both.
  EXPECT_EQ(position(range, range_text, "-5").substr(range.size()),
            position(type, type_text, "\"x\"").substr(type.size()));
  // A number as written in the JSON is still quoted as written ("got 1e1" where 10 was read).
  const std::string dp_text = json("8, \"dp\": 1e1");
  const Result d = run({"run", dir.write("dp.json", dp_text)});
  EXPECT_EQ(d.status, 2);
  EXPECT_TRUE(has(d.err, position(dir.file("dp.json"), dp_text, "1e1") + ": workload.parallel.dp: ")) << d.err;
  // Text format unchanged: at the field's name.
  const std::string text = scenario("").replace(scenario("").find("tp: 8"), 5, "tp: -5");
  const Result x = run({"run", dir.write("t.textproto", text)});
  EXPECT_EQ(x.status, 2);
  EXPECT_TRUE(has(x.err, dir.file("t.textproto") + ":7:14: workload.parallel.tp: got -5")) << x.err;
}

// Before: "replicas 3 (clock_factor 0.9 on node3/gpu0 (+7 more GPUs))", the 0.5 and the cap hidden.
TEST(FreshUser42Folding, TheFoldingLineNamesEachDistinctSettingOfAClass) {
  const traincast::test_support::TempDir dir("fresh_user42_folding");
  const std::string path =
      dir.write("f.textproto", scenario("  overrides { select: \"node3\" clock_factor: 0.9 }\n"
                                        "  overrides { select: \"node3/gpu3\" clock_factor: 0.5 }\n"
                                        "  overrides { select: \"node3/gpu1\" power_cap_w: 500 }\n",
                                        4));
  const Result r = run({"run", path});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out,
                  "replicas 3 (clock_factor 0.9 on node3/gpu0 (+6 more GPUs), 0.5 on node3/gpu3; power_cap_w 500 "
                  "on node3/gpu1)"))
      << r.out;
  // One setting: as before, with the singular for one more GPU.
  const Result one =
      run({"run", dir.write("one.textproto", scenario("  overrides { select: \"node3/gpu0\" clock_factor: 0.9 }\n"
                                                      "  overrides { select: \"node3/gpu2\" clock_factor: 0.9 }\n",
                                                      4))});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_TRUE(has(one.out, "(clock_factor 0.9 on node3/gpu0 (+1 more GPU))")) << one.out;
  // Five settings: four named, then a count, so the line stays bounded.
  std::string five;
  for (int g = 0; g < 5; ++g)
    five += "  overrides { select: \"node3/gpu" + std::to_string(g) + "\" clock_factor: 0." + std::to_string(9 - g) +
            " }\n";
  const Result many = run({"run", dir.write("five.textproto", scenario(five, 4))});
  ASSERT_EQ(many.status, 0) << many.err;
  EXPECT_TRUE(has(many.out,
                  "(clock_factor 0.9 on node3/gpu0, 0.8 on node3/gpu1, 0.7 on node3/gpu2, 0.6 on node3/gpu3 (+1 more "
                  "setting))\n"))
      << many.out;
}

}  // namespace
}  // namespace traincast::cli

namespace traincast::cli {
namespace {

// Second fresh user of session 42: with node0/gpu5 at 0.8 and node0/gpu3 at 0.7 in one TP group,
// the 0.8 entry said "(its TP group computes at its pace)" although gpu3 sets it (as on a TP-1
// job, where there is no group). Now only the GPU that sets the pace says so, with its peers.
TEST(FreshUser42bPace, OnlyTheGpuThatSetsItsGroupsPaceSaysSo) {
  const traincast::test_support::TempDir dir("fresh_user42_pace");
  const std::string two =
      dir.write("two.textproto", scenario("  overrides { select: \"node0/gpu5\" clock_factor: 0.8 }\n"
                                          "  overrides { select: \"node0/gpu3\" clock_factor: 0.7 }\n",
                                          1));
  const Result r = run({"run", two});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  [0] node0/gpu5 clock_factor 0.8: SM clock 1,584 of 1,980 MHz while computing\n")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "  [1] node0/gpu3 clock_factor 0.7: SM clock 1,386 of 1,980 MHz while computing (its TP "
                  "group computes at its pace: 7 other GPUs wait for it up to "))
      << r.out;
  // `node01` is not node1 in a selector; --path said nothing and read it as node1.
  const Result z = run({"explain", two, "--path", "node00/gpu1", "node0/gpu2"});
  EXPECT_EQ(z.status, 2);
  EXPECT_TRUE(has(z.err, "--path: 'node00/gpu1': 00 has a leading zero (expected ")) << z.err;
  // clock_factor 1 changes nothing: warned at its position, as a power cap at the limit is.
  const std::string one_text = scenario("  overrides { select: \"node0/gpu5\" clock_factor: 1 }\n", 1);
  const std::string one = dir.write("one.textproto", one_text);
  const Result w = run({"run", one});
  ASSERT_EQ(w.status, 0) << w.err;
  EXPECT_TRUE(has(w.err, "warning: " + position(one, one_text, "clock_factor") +
                             ": cluster.overrides[0].clock_factor has no effect: 1 is the full boost clock"))
      << w.err;
}

}  // namespace
}  // namespace traincast::cli
