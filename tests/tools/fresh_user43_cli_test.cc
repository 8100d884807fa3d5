// Session 43's fresh-user gaps: `--set` could not add an entry to a list (`cluster.overrides[0]` on
// a scenario without overrides was refused, so one GPU could not be slowed from the command line or
// a sweep); compare's PUE note was in its text only, not its JSON and CSV, and keyed on the value
// 1.58 rather than on the user not writing power.pue; `traincast run <(cat scenario.textproto)` was
// refused because /dev/fd/63 has no extension.

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"
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

/// A small TP 8 x DP 2 job on 2 DGX H100, `cluster_lines` (each ending in "\n") in its cluster
/// block, `extra` sections after it.
std::string scenario(const std::string& cluster_lines = "", const std::string& extra = "",
                     const std::string& parallel = "tp: 8 dp: 2") {
  return "cluster {\n  node_template: \"dgx_h100\"\n  num_nodes: 2\n" + cluster_lines + "}\n" + extra +
         "workload {\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { " +
         parallel + " }\n  training { global_batch_size: 16 }\n}\n";
}

/// A run's report from its iteration time to before its wall-clock line (which varies run to run).
std::string report(const std::string& out) {
  const std::size_t from = out.find("Iteration");
  return out.substr(from, out.find("\nSimulated ") - from);
}

// ---- 1. --set adds a list entry ---------------------------------------------------------------

// Before: "--set: cluster.overrides[0]: the scenario has no overrides entry (a --set changes an entry
// the scenario writes; expected the entry written in the file)".
TEST(FreshUser43SetAddsAnEntry, TwoSetsOfTheNextIndexMakeOneOverride) {
  const traincast::test_support::TempDir dir("fresh_user43_add");
  const std::string plain = dir.write("plain.textproto", scenario());
  const Result r = run({"run", plain, "--set", "cluster.overrides[0].select=node1/gpu3", "--set",
                        "cluster.overrides[0].clock_factor=0.9"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "  [0] node1/gpu3 clock_factor 0.9: SM clock")) << r.out;
  EXPECT_EQ(count(r.out, "  [1] "), 0) << r.out;  // one entry, not two
  // The same as the entry written in the file.
  const std::string written =
      dir.write("written.textproto", scenario("  overrides { select: \"node1/gpu3\" clock_factor: 0.9 }\n"));
  const Result w = run({"run", written});
  ASSERT_EQ(w.status, 0) << w.err;
  EXPECT_EQ(report(r.out), report(w.out));
  // The order of the fields does not matter.
  const Result swapped = run({"run", plain, "--set", "cluster.overrides[0].clock_factor=0.9", "--set",
                              "cluster.overrides[0].select=node1/gpu3"});
  ASSERT_EQ(swapped.status, 0) << swapped.err;
  EXPECT_EQ(report(swapped.out), report(w.out));
  // After the file's one entry, index 1 adds a second; index 0 still changes the file's.
  const Result more =
      run({"run", written, "--set", "cluster.overrides[1].select=node0/nic0", "--set",
           "cluster.overrides[1].bandwidth_factor=0.5", "--set", "cluster.overrides[0].clock_factor=0.8"});
  ASSERT_EQ(more.status, 0) << more.err;
  EXPECT_TRUE(has(more.out, "  [0] node1/gpu3 clock_factor 0.8: ")) << more.out;
  EXPECT_TRUE(has(more.out, "  [1] node0/nic0 bandwidth_factor 0.5: ")) << more.out;
}

TEST(FreshUser43SetAddsAnEntry, AnIndexPastTheCountIsRefusedWithTheCount) {
  const traincast::test_support::TempDir dir("fresh_user43_past");
  const std::string plain = dir.write("plain.textproto", scenario());
  Result r = run({"run", plain, "--set", "cluster.overrides[1].select=node1/gpu3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: cluster.overrides[1]: index 1 is out of range (the scenario has no overrides entries: expected 0 "
            "to add one)\n");
  const std::string one =
      dir.write("one.textproto", scenario("  overrides { select: \"node1/gpu3\" clock_factor: 0.9 }\n"));
  r = run({"run", one, "--set", "cluster.overrides[2].select=node1/gpu3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: cluster.overrides[2]: index 2 is out of range (the scenario has 1 overrides entry: expected 0 to "
            "change one, or 1 to add one)\n");
}

// The added entry is checked as one the file writes; its errors name the --set.
TEST(FreshUser43SetAddsAnEntry, AnAddedEntryIsCheckedAndItsErrorsNameTheSet) {
  const traincast::test_support::TempDir dir("fresh_user43_check");
  const std::string plain = dir.write("plain.textproto", scenario());
  Result r = run({"run", plain, "--set", "cluster.overrides[0].select=node9/gpu3", "--set",
                  "cluster.overrides[0].clock_factor=0.9"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("--set: cluster.overrides[0].select: ", 0), 0u) << r.err;
  EXPECT_TRUE(has(r.err, "node9")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // A required select left unset: at the --set that made the entry, not at a line of the file.
  r = run({"run", plain, "--set", "cluster.overrides[0].clock_factor=0.9"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("--set: cluster.overrides[0].select: required (expected a GPU", 0), 0u) << r.err;
  // A value out of range, as in a file.
  r = run({"run", plain, "--set", "cluster.overrides[0].select=node1/gpu3", "--set",
           "cluster.overrides[0].clock_factor=1.5"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--set: cluster.overrides[0].clock_factor: got 1.5 (expected 0.1 <= f <= 1")) << r.err;
  // A bad value adds nothing: the next --set of index 0 is refused as the entry's own error, not
  // followed by an entry of defaults.
  r = run({"run", plain, "--set", "cluster.overrides[0].clock_factor=x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "--set: cluster.overrides[0].clock_factor: invalid value \"x\" (expected a number)\n");
}

// A list of numbers, and a list inside an added entry.
TEST(FreshUser43SetAddsAnEntry, ScalarListsTakeTheNextIndexToo) {
  const traincast::test_support::TempDir dir("fresh_user43_scalar");
  const std::string pp2 = dir.write("pp2.textproto", scenario("", "", "tp: 8 pp: 2 dp: 1"));
  Result r = run({"run", pp2, "--print-scenario", "--set", "workload.parallel.pipeline_stage_layers[0]=1", "--set",
                  "workload.parallel.pipeline_stage_layers[1]=3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "pipeline_stage_layers: 1")) << r.out;
  EXPECT_TRUE(has(r.out, "pipeline_stage_layers: 3")) << r.out;
  // A list check on the added entries is reported at a --set.
  r = run({"run", pp2, "--set", "workload.parallel.pipeline_stage_layers[0]=1", "--set",
           "workload.parallel.pipeline_stage_layers[1]=1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--set: workload.parallel.pipeline_stage_layers: sums to 2 layers (expected num_layers = 4)"))
      << r.err;
  r = run({"run", pp2, "--set", "workload.parallel.pipeline_stage_layers[1]=1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "--set: workload.parallel.pipeline_stage_layers[1]: index 1 is out of range (the scenario has no "
            "pipeline_stage_layers entries: expected 0 to add one)\n");
}

// compare's --set and --vary, and a sweep file's `set`, share the code.
TEST(FreshUser43SetAddsAnEntry, CompareVaryAndSweepSetAddTheEntryToo) {
  const traincast::test_support::TempDir dir("fresh_user43_compare");
  const std::string plain = dir.write("plain.textproto", scenario());
  const Result c = run({"compare", plain, "--set", "cluster.overrides[0].select=node1/gpu3", "--vary",
                        "cluster.overrides[0].clock_factor=0.5,0.9"});
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_TRUE(has(c.out, "Overrides of cluster.overrides[0].clock_factor=0.5")) << c.out;
  EXPECT_TRUE(has(c.out, "  [0] node1/gpu3 clock_factor 0.9: ")) << c.out;
  // A sweep's `set` adds the entry at every point; a bad one is refused once, at that `set`.
  const std::string sweep = dir.write("s.sweep.textproto",
                                      "scenario_file: \"plain.textproto\"\n"
                                      "set: \"cluster.overrides[0].select=node1/gpu3\"\n"
                                      "set: \"cluster.overrides[0].clock_factor=0.5\"\n"
                                      "axis { path: \"workload.training.global_batch_size\" values: \"16\" values: "
                                      "\"32\" }\n");
  const Result s = run({"sweep", sweep, "--out", dir.file("s.csv")});
  ASSERT_EQ(s.status, 0) << s.err;
  const std::string bad = dir.write("bad.sweep.textproto",
                                    "scenario_file: \"plain.textproto\"\n"
                                    "set: \"cluster.overrides[0].select=node7/gpu3\"\n"
                                    "set: \"cluster.overrides[0].clock_factor=0.5\"\n"
                                    "axis { path: \"workload.training.global_batch_size\" values: \"16\" values: "
                                    "\"32\" }\n");
  const Result b = run({"sweep", bad, "--out", dir.file("b.csv")});
  EXPECT_EQ(b.status, 2);
  EXPECT_EQ(count(b.err, "cluster.overrides[0].select: "), 1) << b.err;
  EXPECT_TRUE(has(b.err, bad + ":2:1: cluster.overrides[0].select: no node7 (the cluster has node0-1)")) << b.err;
}

// ---- 2. compare's PUE note in JSON and CSV, keyed on presence -----------------------------------

/// A 72-GPU job on `nodes` x `tmpl`, `extra` (sections) after the cluster.
std::string rack(const std::string& tmpl, int nodes, const std::string& extra = "") {
  return "cluster {\n  node_template: \"" + tmpl + "\"\n  num_nodes: " + std::to_string(nodes) + "\n}\n" + extra +
         "workload {\n  model { num_layers: 4 hidden_size: 2048 num_attention_heads: 16 vocab_size: 32000 "
         "seq_length: 2048 }\n  parallel { tp: 8 dp: 9 }\n  training { global_batch_size: 72 }\n}\n";
}

TEST(FreshUser43PueNote, CompareWritesThePueNotePerRowInJsonAndCsv) {
  const traincast::test_support::TempDir dir("fresh_user43_pue");
  const std::string gb = dir.write("gb.textproto", rack("gb200_nvl72", 1, "thermal { cooling: liquid }\n"));
  const std::string h100 = dir.write("dgx_h100.textproto", rack("dgx_h100", 9));
  const std::string json = dir.file("c.json"), csv = dir.file("c.csv");
  const Result r = run({"compare", gb, h100, "--json", json, "--csv", csv});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string note =
      "gb is liquid-cooled and dgx_h100 air-cooled, yet both use power.pue 1.58, its default (the Uptime Institute "
      "Global Data Center Survey 2023's average over the data centers surveyed): cooling does not change PUE, so "
      "their facility power and energy differ by IT power alone. Give each scenario its facility's PUE: power { "
      "pue: ... } in its file (--set power.pue=X sets every column alike).";
  EXPECT_TRUE(has(r.out, "\nPUE: " + note + "\n")) << r.out;
  const std::string j = test_support::slurp(json);
  EXPECT_EQ(count(j, "\"pue_note\": \"" + note + "\""), 2) << j;  // both rows it names
  const std::string c = test_support::slurp(csv);
  const std::string header = c.substr(0, c.find('\n'));
  EXPECT_EQ(header.substr(header.size() - std::string(",model_error_band_absent,pue_note").size()),
            ",model_error_band_absent,pue_note")
      << header;
  EXPECT_EQ(count(c, ",\"" + note + "\"\n"), 2) << c;  // quoted: the note has commas
  // Without a note: the key and the column are there, empty.
  const std::string b200 = dir.write("b200.textproto", rack("dgx_b200", 9));
  ASSERT_EQ(run({"compare", h100, b200, "--json", json, "--csv", csv, "--force"}).status, 0);
  EXPECT_EQ(count(test_support::slurp(json), "\"pue_note\": \"\""), 2);
  const std::string c2 = test_support::slurp(csv);
  EXPECT_EQ(count(c2, "\n"), 3) << c2;
  EXPECT_EQ(count(c2, ",\n"), 2) << c2;  // each row's last cell, empty
}

// Before: `pue: 1.58` written in the file still read as "its default" (the note keyed on the value).
TEST(FreshUser43PueNote, APueWrittenAtTheDefaultsValueIsTheUsersAndGetsNoNote) {
  const traincast::test_support::TempDir dir("fresh_user43_pue_written");
  const std::string gb = dir.write("gb.textproto", rack("gb200_nvl72", 1, "thermal { cooling: liquid }\n"));
  const std::string gb_written =
      dir.write("gbw.textproto", rack("gb200_nvl72", 1, "thermal { cooling: liquid }\npower { pue: 1.58 }\n"));
  const std::string h100 = dir.write("dgx_h100.textproto", rack("dgx_h100", 9));
  const std::string json = dir.file("c.json");
  Result r = run({"compare", gb_written, h100, "--json", json});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(has(r.out, "PUE:")) << r.out;
  EXPECT_EQ(count(test_support::slurp(json), "\"pue_note\": \"\""), 2);
  // --set power.pue=1.58 states it for every column alike.
  r = run({"compare", gb, h100, "--set", "power.pue=1.58"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(has(r.out, "PUE:")) << r.out;
  // run's line for liquid cooling likewise.
  r = run({"run", gb_written});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "at PUE 1.58; energy")) << r.out;
  EXPECT_FALSE(has(r.out, "power.pue's default")) << r.out;
  r = run({"run", gb});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "power.pue's default")) << r.out;
  EXPECT_FALSE(has(run({"run", gb, "--set", "power.pue=1.58"}).out, "power.pue's default"));
}

// ---- 3. a scenario path without an extension: read by content -------------------------------

// Before: "/dev/fd/63: unknown file extension "" (expected .textproto, .txtpb, .pbtxt, .txt or .json)".
TEST(FreshUser43NoExtension, APipedScenarioIsReadByContent) {
  const std::string text = scenario();
  const traincast::test_support::TempDir dir("fresh_user43_pipe");
  const Result file = run({"run", dir.write("s.textproto", text)});
  ASSERT_EQ(file.status, 0) << file.err;
  const Pipe p(text);
  const Result r = run({"run", p.path()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(report(r.out), report(file.out));
  // Errors name the path as given, with their positions.
  const Pipe bad("cluster { num_nodez: 2 }\n");
  const Result e = run({"run", bad.path()});
  EXPECT_EQ(e.status, 2);
  EXPECT_EQ(e.err.rfind(bad.path() + ":1:11: cluster.num_nodez: unknown field", 0), 0u) << e.err;
}

TEST(FreshUser43NoExtension, AFileWithoutAnExtensionIsJsonWhenItStartsWithABrace) {
  const traincast::test_support::TempDir dir("fresh_user43_noext");
  const std::string text_file = dir.write("scenario", "# a comment\n" + scenario());
  Result r = run({"run", text_file});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string json_file = dir.write("scenario_json",
                                          "\n  {\"cluster\": {\"node_template\": \"dgx_h100\", \"num_nodes\": 2},\n"
                                          " \"workload\": {\"model\": {\"num_layers\": 4, \"hidden_size\": 2048, "
                                          "\"num_attention_heads\": 16, \"vocab_size\": 32000, \"seq_length\": 2048},"
                                          " \"parallel\": {\"tp\": 8, \"dp\": 2}, \"training\": "
                                          "{\"global_batch_size\": 16}}}\n");
  const Result j = run({"run", json_file});
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(report(j.out), report(r.out));
  // JSON's own errors, positioned: it was read as JSON.
  const std::string bad_json = dir.write("bad_json", "{\"cluster\": {\"num_nodes\": \"two\"}}\n");
  r = run({"run", bad_json});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind(bad_json + ":1:27: cluster.num_nodes: ", 0), 0u) << r.err;
  EXPECT_EQ(io::format_of_text("\xEF\xBB\xBF \r\n{}"), io::Format::json);
  EXPECT_EQ(io::format_of_text(""), io::Format::text);
  EXPECT_EQ(io::format_of_text("# {\n"), io::Format::text);
  // Another extension is still refused, and a missing file named as missing.
  r = run({"run", dir.write("s.yaml", scenario())});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, ": unknown file extension \".yaml\"")) << r.err;
  r = run({"run", dir.file("nosuch")});
  EXPECT_EQ(r.err, dir.file("nosuch") + ": cannot read file (No such file or directory)\n");
}

// compare reads its one scenario for its defaults and for every --vary column: a pipe is read once.
TEST(FreshUser43NoExtension, ComparePipedWithVaryReadsThePipeOncePerCommand) {
  const Pipe p(scenario());
  const Result r = run({"compare", p.path(), "--vary", "workload.training.global_batch_size=16,32"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "workload.training.global_batch_size=32")) << r.out;
  // Outside a command nothing is kept: the pipe, read, is empty now.
  const Result again = run({"run", p.path()});
  EXPECT_EQ(again.status, 2) << again.out;
}

}  // namespace
}  // namespace traincast::cli
