// Tests of models/io/sweep_loader: sweep file loading and expansion (points, ranges,
// constraints, base scenario, fingerprint) and every error kind with its exact message.

#include "models/io/sweep_loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/io/int_ranges.h"
#include "models/io/sweep_csv.h"
#include "models/io/sweep_point.h"
#include "tests/models/io/sweep_files.h"

namespace traincast::io {
namespace {

using test_support::kBase;
using test_support::load;

const std::string kSourceDir = TRAINCAST_SOURCE_DIR;
const std::string& kDataDir = test_support::kSweepDataDir;

std::vector<std::string> sweep_errors(const std::string& text, Format format = Format::text) {
  try {
    load(text, format);
  } catch (const ScenarioError& e) {
    return e.errors();
  }
  ADD_FAILURE() << "no ScenarioError for:\n" << text;
  return {};
}

std::vector<std::string> values_of(const models::Sweep& s, std::size_t axis) {
  std::vector<std::string> out;
  for (std::size_t p = 0; p < s.num_points(); ++p) out.push_back(s.value(p, axis));
  return out;
}

TEST(SweepFile, PointsAreTheProductInOrderLastAxisFastest) {
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"2\" }\n"
                               "axis { path: \"workload.training.recompute\" values: \"none\" values: \"full\" "
                               "values: \"selective\" }\n");
  ASSERT_EQ(s.num_points(), 6u);
  EXPECT_EQ(s.product_size, 6u);
  EXPECT_EQ(s.axes[0].name, "tp");  // default name: the last path segment
  EXPECT_EQ(s.axes[1].name, "recompute");
  EXPECT_EQ(values_of(s, 0), (std::vector<std::string>{"1", "1", "1", "2", "2", "2"}));
  EXPECT_EQ(values_of(s, 1), (std::vector<std::string>{"none", "full", "selective", "none", "full", "selective"}));
  EXPECT_EQ(s.metrics, default_sweep_metrics());
  EXPECT_EQ(s.hash.size(), 16u);
}

TEST(SweepFile, RangesAndLog2Ranges) {
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.parallel.dp\" log2_range { from: 1 to: 8 } }\n"
                               "axis { name: \"os\" path: \"cluster.fabric.oversubscription\" range { from: 1 to: 2 "
                               "step: 0.25 } }\n"
                               "axis { path: \"workload.training.global_batch_size\" range { from: 16 to: 40 step: 8 "
                               "} }\n");
  EXPECT_EQ(s.axes[0].values, (std::vector<std::string>{"1", "2", "4", "8"}));
  EXPECT_EQ(s.axes[1].values, (std::vector<std::string>{"1", "1.25", "1.5", "1.75", "2"}));
  EXPECT_EQ(s.axes[2].values, (std::vector<std::string>{"16", "24", "32", "40"}));
  EXPECT_EQ(s.num_points(), 4u * 5u * 4u);
}

TEST(SweepFile, ConstraintsFilterWithAxisDerivedAndFieldNames) {
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.parallel.tp\" log2_range { from: 1 to: 16 } }\n"
                               "axis { path: \"workload.parallel.pp\" log2_range { from: 1 to: 16 } }\n"
                               "axis { path: \"workload.parallel.dp\" log2_range { from: 1 to: 16 } }\n"
                               "constraint: \"tp * pp * dp == gpus\"\n"
                               "constraint: \"num_attention_heads % tp == 0 && workload.model.num_layers % pp == 0\"\n"
                               "constraint: \"tp <= gpus_per_node / 2\"\n");
  // 8 GPUs: (tp, pp, dp) with product 8 and each a power of two <= 16: 10 triples; heads 16 and
  // layers 8 divide every power of two up to 8; tp <= 4 drops (8, 1, 1): 9 points.
  ASSERT_EQ(s.num_points(), 9u);
  EXPECT_EQ(s.product_size, 125u);
  EXPECT_EQ(values_of(s, 0), (std::vector<std::string>{"1", "1", "1", "1", "2", "2", "2", "4", "4"}));
  EXPECT_EQ(values_of(s, 1), (std::vector<std::string>{"1", "2", "4", "8", "1", "2", "4", "1", "2"}));
  EXPECT_EQ(values_of(s, 2), (std::vector<std::string>{"8", "4", "2", "1", "4", "2", "1", "2", "1"}));
}

// The base's own node templates (docs/hardware.md, "User-described nodes"): an axis names them, a
// constraint's gpus_per_node reads them, and each point runs on the one it names.
TEST(SweepFile, AxisAndConstraintNameTheBasesOwnTemplates) {
  const std::string box =
      "  node_template { name: \"box%d\" gpu: \"A100-PCIe-80GB\" gpus_per_node: %d scale_up: none "
      "nic: \"IB-HDR-200\" nics: 1 sockets: 1 pcie_switches: 1 pcie_generation: 4 source: \"t\" }\n";
  std::string blocks;
  for (const int gpus : {2, 4}) {
    std::string b = box;
    b.replace(b.find("%d"), 2, std::to_string(gpus));
    b.replace(b.find("%d"), 2, std::to_string(gpus));
    blocks += b;
  }
  const models::Sweep s = load("scenario {\n" + blocks +
                               "  cluster { node_template: \"box2\" num_nodes: 1 } workload { model { num_layers: 8 "
                               "hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 } "
                               "parallel { tp: 2 } training { global_batch_size: 16 } } }\n"
                               "axis { path: \"cluster.node_template\" values: [\"box2\", \"box4\", \"dgx_a100\"] }\n"
                               "axis { path: \"workload.parallel.dp\" values: [\"1\", \"2\", \"4\"] }\n"
                               "constraint: \"tp * dp == gpus && gpus_per_node <= 4\"\n");
  ASSERT_EQ(s.num_points(), 2u);  // (box2, 1), (box4, 2); the DGX A100's 8 GPUs are left out
  EXPECT_EQ(s.value(1, 0), "box4");
  EXPECT_EQ(s.value(1, 1), "2");
  const models::Scenario four = sweep_point_scenario(s, 1);
  EXPECT_EQ(models::cluster_node_template(four.cluster).gpus_per_node, 4);
}

// A mixed cluster's gpus and num_nodes in a constraint are its node groups' sum (1 DGX A100 + 2
// DGX H100: 24 GPUs on 3 nodes); they were cluster.num_nodes' unset 1 and 8 GPUs, so the valid
// layout was dropped without a word.
TEST(SweepFile, MixedClusterGpusAreTheGroupsSum) {
  const models::Sweep s = load(
      "scenario { cluster { node_group { node_template: \"dgx_a100\" num_nodes: 1 } node_group { node_template: "
      "\"dgx_h100\" num_nodes: 2 } nic: \"IB-HDR-200\" }\n"
      "  workload { model { num_layers: 6 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: "
      "2048 } parallel { tp: 8 pp: 3 dp: 1 } training { global_batch_size: 8 } } }\n"
      "axis { path: \"workload.parallel.pp\" values: \"1\" values: \"2\" values: \"3\" }\n"
      "constraint: \"tp * pp * dp == gpus && num_nodes == 3 && node_template == 'dgx_a100'\"\n");
  ASSERT_EQ(s.num_points(), 1u);
  EXPECT_EQ(s.value(0, 0), "3");
}

TEST(SweepFile, EnumAndBoolAxesInConstraints) {
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.training.recompute\" values: \"none\" values: \"full\" }\n"
                               "axis { path: \"workload.parallel.sequence_parallel\" values: \"true\" values: "
                               "\"false\" }\n"
                               "constraint: \"recompute == 'full' || !sequence_parallel\"\n");
  ASSERT_EQ(s.num_points(), 3u);  // (none, false), (full, true), (full, false)
  EXPECT_EQ(values_of(s, 0), (std::vector<std::string>{"none", "full", "full"}));
  EXPECT_EQ(values_of(s, 1), (std::vector<std::string>{"false", "true", "false"}));
}

TEST(SweepFile, ScenarioFileRelativeToTheSweepFileSetAndJson) {
  // small.textproto: 2 nodes, TP 2 x PP 2 x DP 4 (16 GPUs).
  const std::string text =
      "scenario_file: \"small.textproto\"\n"
      "set: \"workload.training.global_batch_size=128\"\n"
      "axis { path: \"workload.parallel.dp\" values: \"2\" values: \"4\" }\n"
      "constraint: \"tp * pp * dp == gpus && global_batch_size == 128\"\n"
      "metric: \"mfu\"\n";
  const models::Sweep s = load(text);
  ASSERT_EQ(s.num_points(), 1u);  // 2 * 2 * 4 = 16
  EXPECT_EQ(s.value(0, 0), "4");
  EXPECT_EQ(s.metrics, (std::vector<std::string>{"mfu"}));
  const models::Scenario sc = sweep_point_scenario(s, 0);
  EXPECT_EQ(sc.name, "small");
  EXPECT_EQ(sc.training.global_batch_size, 128);
  EXPECT_EQ(sc.parallel.dp, 4);
  EXPECT_EQ(sc.options.threads, 1);

  const models::Sweep j = load(
      "{\"scenario_file\": \"small.textproto\", \"set\": [\"workload.training.global_batch_size=128\"],\n"
      " \"axis\": [{\"path\": \"workload.parallel.dp\", \"values\": [\"2\", \"4\"]}],\n"
      " \"constraint\": [\"tp * pp * dp == gpus && global_batch_size == 128\"], \"metric\": [\"mfu\"]}\n",
      Format::json);
  EXPECT_EQ(j.hash, s.hash);  // same sweep, same fingerprint, whatever the syntax
}

TEST(SweepFile, HashFollowsContent) {
  const std::string axis = "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"2\" }\n";
  const models::Sweep a = load(kBase + axis);
  EXPECT_EQ(load("# a comment changes nothing\n" + kBase + axis).hash, a.hash);
  EXPECT_NE(load(kBase + "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"4\" }\n").hash, a.hash);
  EXPECT_NE(load(kBase + axis + "metric: \"mfu\"\n").hash, a.hash);
  EXPECT_NE(load(kBase + "set: \"workload.training.global_batch_size=32\"\n" + axis).hash, a.hash);
}

TEST(SweepFile, EveryShippedSweepLoads) {
  // scenarios/sweeps/*.sweep.textproto (the notebooks' included): each loads and has points.
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSourceDir + "/scenarios/sweeps")) {
    const std::string path = entry.path().string();
    if (!path.ends_with(".sweep.textproto") && !path.ends_with(".sweep.json")) continue;
    SCOPED_TRACE(path);
    try {
      EXPECT_GT(load_sweep_file(path).num_points(), 0u);
      ++loaded;
    } catch (const ScenarioError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(loaded, 2);
  // The acceptance sweep has exactly 1,000 points.
  EXPECT_EQ(load_sweep_file(kSourceDir + "/scenarios/sweeps/gpt_6p7b_64gpu_1000.sweep.textproto").num_points(), 1000u);
}

// One test per kind of bad input, each asserting the exact message.

TEST(SweepFileErrors, UnknownAxisPath) {
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tpp\" values: \"1\" }\n"),
            std::vector<std::string>{
                "t.sweep.textproto:2:8: axis[0].path: unknown field \"tpp\" in workload.parallel, did you mean "
                "\"tp\"? (expected one of: tp, pp, dp, sequence_parallel, schedule, virtual_stages, uneven_stages, "
                "zero_stage, dp_bucket_bytes, overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp, "
                "reshard_after_forward, reshard_after_backward, param_gather_bytes, grad_sync_every_microbatch, "
                "pipeline_stage_layers, zero_implementation, reduce_bucket_elements, tp_overlap_implementation, "
                "moe_shared_expert_overlap, activation_layout, overlap_tp_grad_reduce)"});
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel\" values: \"1\" }\n"),
            std::vector<std::string>{
                "t.sweep.textproto:2:8: axis[0].path: workload.parallel is a message, not a scalar field (expected a "
                "path to one of its fields: tp, pp, dp, sequence_parallel, schedule, virtual_stages, uneven_stages, "
                "zero_stage, dp_bucket_bytes, overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp, "
                "reshard_after_forward, reshard_after_backward, param_gather_bytes, grad_sync_every_microbatch, "
                "pipeline_stage_layers, zero_implementation, reduce_bucket_elements, tp_overlap_implementation, "
                "moe_shared_expert_overlap, activation_layout, overlap_tp_grad_reduce)"});
  EXPECT_EQ(sweep_errors(kBase + "axis { values: \"1\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:1: axis[0].path: not set (expected a scalar field path of "
                                     "the scenario, e.g. workload.parallel.tp)"});
}

// A list (pipeline_stage_layers, node_group, overrides) is not an axis: its entries exist only in a
// scenario. These paths once passed unreported and the sweep crashed on its first point.
TEST(SweepFileErrors, RepeatedFieldAxisPath) {
  for (const std::string path :
       {"workload.parallel.pipeline_stage_layers", "cluster.node_group.num_nodes", "cluster.node_group[1].num_nodes"}) {
    const std::string list =
        path.rfind("workload", 0) == 0 ? "workload.parallel.pipeline_stage_layers" : "cluster.node_group";
    // What varies one: compare --vary (an entry of messages also --set for its other fields), or
    // the sweep's `set` for one entry at every point (session 44; before: "traincast run --set",
    // which varies nothing).
    const bool messages = list == "cluster.node_group";
    const std::string entry = list + (messages ? "[i].FIELD" : "[i]");
    EXPECT_EQ(sweep_errors(kBase + "axis { path: \"" + path + "\" values: \"1\" }\n"),
              std::vector<std::string>{"t.sweep.textproto:2:8: axis[0].path: " + list +
                                       " is a repeated field, a sweep axis names a singular scalar field (expected a "
                                       "path such as workload.parallel.tp; to compare values of one entry, traincast "
                                       "compare --vary " +
                                       entry + "=v1,v2" + (messages ? " with --set for the entry's other fields" : "") +
                                       "; to give every point the same entry, this sweep file's set: \"" + entry +
                                       "=value\")"})
        << path;
  }
}

TEST(SweepFileErrors, EmptyAxisAndNoAxes) {
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:1: axis[0]: no values (expected values: \"...\", range { "
                                     "from: ... to: ... step: ... } or log2_range { from: ... to: ... })"});
  EXPECT_EQ(sweep_errors(kBase),
            std::vector<std::string>{"t.sweep.textproto:1:1: axis: no axes (expected at least one axis { path: "
                                     "\"field.path\" values: \"...\" })"});
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" values: \"1\" range { from: 1 to: 2 } }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:49: axis[0].range: given together with values (expected "
                                     "exactly one of values, range, log2_range)"});
}

TEST(SweepFileErrors, ValueTheFieldCannotTake) {
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"two\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:49: axis[0].values[1]: value \"two\" is not valid for "
                                     "workload.parallel.tp (expected an integer from 1 to 2147483647)"});
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.training.recompute\" values: \"ful\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:44: axis[0].values[0]: value \"ful\" is not valid for "
                                     "workload.training.recompute, did you mean \"full\"? (expected one of: none, "
                                     "selective, full)"});
  // A number a double cannot hold, named as a scenario file names it (was "expected a number").
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"power.pue\" values: \"1e309\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:26: axis[0].values[0]: value \"1e309\" is out of range as "
                                     "written for power.pue (expected " +
                                     std::string(detail::kDoubleRangeExpected) + ")"});
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" values: \"2\" values: \"2\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:49: axis[0].values[1]: value \"2\" repeats values[0] "
                                     "(expected distinct values)"});
  // A fresh user's "e\nf": written as "e; f", then refused by --resume and merge as not a point's.
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"name\" values: \"e\\nf\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:21: axis[0].values[0]: value \"e?f\" holds a line break "
                                     "(expected one line: the CSV keeps one row per point)"});
  // A fresh user's " 4": simulated as 4 but written to the CSV as " 4", beside the other rows' "1" and "2".
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" values: \" 4\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:37: axis[0].values[0]: value \" 4\" has spaces around it "
                                     "(expected the value alone: the CSV keeps it as written)"});
}

TEST(SweepFileErrors, BadRanges) {
  EXPECT_EQ(
      sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" range { from: 1 to: 4 step: 0 } }\n"),
      std::vector<std::string>{"t.sweep.textproto:2:59: axis[0].range.step: got 0 (expected a finite number > 0)"});
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" range { from: 4 to: 1 } }\n"),
            std::vector<std::string>{
                "t.sweep.textproto:2:53: axis[0].range.to: got 1, below from = 4 (expected a number >= from)"});
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" log2_range { from: 0 to: 8 } }\n"),
            std::vector<std::string>{
                "t.sweep.textproto:2:50: axis[0].log2_range.from: got 0 (expected a finite number > 0)"});
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" range { from: 1 to: 2 step: 0.5 } }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:37: axis[0].range: value 1.5 is not an integer, as "
                                     "workload.parallel.tp needs (expected an integer from 1 to 2147483647)"});
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.training.recompute\" range { from: 1 to: 2 } }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:44: axis[0].range: workload.training.recompute is an enum "
                                     "field, not a number (expected values: \"...\" for it)"});
  // A step so small that the count overflows (fresh-user finding: "inf values").
  const std::vector<std::string> tiny = sweep_errors(
      kBase + "axis { path: \"cluster.fabric.oversubscription\" range { from: 1 to: 1e10 step: 1e-300 } }\n");
  ASSERT_EQ(tiny.size(), 1u);
  EXPECT_NE(tiny[0].find("axis[0].range: more than 1e+308 values (expected at most"), std::string::npos) << tiny[0];
  EXPECT_NE(tiny[0].find(": a larger step)"), std::string::npos) << tiny[0];
}

TEST(SweepFileErrors, AxisNames) {
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" values: \"1\" }\n"
                                 "axis { path: \"workload.parallel.dp\" name: \"tp\" values: \"1\" }\n"
                                 "axis { path: \"workload.parallel.pp\" name: \"p p\" values: \"1\" }\n"
                                 "axis { path: \"workload.parallel.zero_stage\" name: \"gpus\" values: \"1\" }\n"
                                 "axis { path: \"workload.training.micro_batch_size\" name: \"status\" values: \"1\" "
                                 "}\n"
                                 "axis { path: \"workload.parallel.tp\" name: \"tp2\" values: \"1\" }\n"),
            (std::vector<std::string>{
                "t.sweep.textproto:3:37: axis[1].name: axis name \"tp\" is used by axis[0] (expected a unique name: "
                "set name: \"...\")",
                "t.sweep.textproto:4:37: axis[2].name: \"p p\" is not a name (expected letters, digits and _, not "
                "starting with a digit)",
                "t.sweep.textproto:5:45: axis[3].name: axis name \"gpus\" is reserved in constraints (expected another "
                "name: set name: \"...\")",
                "t.sweep.textproto:6:51: axis[4].name: axis name \"status\" is also a CSV column of its own (expected "
                "another name: set name: \"...\")",
                "t.sweep.textproto:7:8: axis[5].path: workload.parallel.tp is already swept by axis[0] (expected each "
                "field in one axis)"}));
}

TEST(SweepFileErrors, ConstraintSyntaxNamesAndTypes) {
  const std::string axes = "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"2\" }\n";
  EXPECT_EQ(sweep_errors(kBase + axes + "constraint: \"tp * * 2 == 4\"\n"),
            std::vector<std::string>{"t.sweep.textproto:3:1: constraint[0]: at column 6 of \"tp * * 2 == 4\": "
                                     "unexpected \"*\" (expected a number, a name, a quoted string or \"(\")"});
  EXPECT_EQ(sweep_errors(kBase + axes + "constraint: \"tpp == 2\"\n"),
            std::vector<std::string>{
                "t.sweep.textproto:3:1: constraint[0]: at column 1 of \"tpp == 2\": unknown name \"tpp\", did you mean "
                "\"tp\"? (expected an axis name (tp), gpus, gpus_per_node, or a scenario field such as "
                "num_attention_heads or workload.model.num_layers)"});
  EXPECT_EQ(sweep_errors(kBase + axes + "constraint: \"name == 'x'\"\n"),
            std::vector<std::string>{"t.sweep.textproto:3:1: constraint[0]: at column 1 of \"name == 'x'\": name "
                                     "\"name\" is ambiguous (expected the full path: name or workload.model.name)"});
  EXPECT_EQ(sweep_errors(kBase + axes + "constraint: \"tp * 2\"\n"),
            std::vector<std::string>{"t.sweep.textproto:3:1: constraint[0]: \"tp * 2\" is a number, not a condition "
                                     "(expected a comparison such as tp * pp == 8)"});
  EXPECT_EQ(sweep_errors(kBase + axes + "constraint: \"recompute == 2\"\n"),
            std::vector<std::string>{"t.sweep.textproto:3:1: constraint[0]: at column 11 of \"recompute == 2\": \"==\" "
                                     "compares values of one type, got a string and a number"});
}

TEST(SweepFileErrors, ConstraintThatNothingSatisfies) {
  const std::string axes =
      "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"2\" }\n"
      "axis { path: \"workload.parallel.dp\" values: \"1\" values: \"2\" }\n";
  EXPECT_EQ(sweep_errors(kBase + axes + "constraint: \"tp * dp <= 2\"\nconstraint: \"tp * dp == 3\"\n"),
            std::vector<std::string>{"t.sweep.textproto:5:1: constraint[1]: no point satisfies \"tp * dp == 3\": it "
                                     "rejects all 3 points that pass the constraints before it (expected a constraint "
                                     "that some point satisfies)"});
  EXPECT_EQ(sweep_errors(kBase + axes + "constraint: \"tp > 4\"\n"),
            std::vector<std::string>{"t.sweep.textproto:4:1: constraint[0]: no point satisfies \"tp > 4\": it rejects "
                                     "all 4 points of the axes (expected a constraint that some point satisfies)"});
}

TEST(SweepFileErrors, ConstraintThatCannotBeEvaluated) {
  // zero_stage takes 0 (tp does not: a tp of 0 is refused at its axis, int_ranges.h).
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.zero_stage\" values: \"1\" values: \"0\" }\n"
                                 "constraint: \"num_attention_heads % zero_stage == 0\"\n"),
            std::vector<std::string>{"t.sweep.textproto:3:1: constraint[0]: at column 21 of \"num_attention_heads % "
                                     "zero_stage == 0\", for zero_stage=0: remainder by zero (expected a non-zero "
                                     "divisor)"});
  EXPECT_EQ(
      sweep_errors(kBase + "axis { path: \"cluster.node_template\" values: \"dgx_h100\" values: \"dgx_h1000\" "
                           "}\nconstraint: \"gpus == 8\"\n"),
      std::vector<std::string>{"t.sweep.textproto:3:1: constraint[0]: at column 1 of \"gpus == 8\", for "
                               "node_template=dgx_h1000: node template \"dgx_h1000\" is unknown (expected one of: " +
                               [] {
                                 std::string list;
                                 for (const std::string& name : models::node_template_names()) {
                                   list += (list.empty() ? "" : ", ") + name;
                                 }
                                 return list;
                               }() +
                               ")"});
}

TEST(SweepFileErrors, MetricsBaseScenarioAndSyntax) {
  const std::string axes = "axis { path: \"workload.parallel.tp\" values: \"1\" }\n";
  EXPECT_EQ(sweep_errors(kBase + axes + "metric: \"mfu\"\nmetric: \"iteration_time\"\nmetric: \"mfu\"\n"),
            (std::vector<std::string>{
                "t.sweep.textproto:4:1: metric[1]: unknown metric \"iteration_time\", did you mean "
                "\"iteration_time_s\"? (expected one of: " +
                    [] {
                      std::string list;
                      for (const std::string& m : sweep_metric_names()) list += (list.empty() ? "" : ", ") + m;
                      return list;
                    }() +
                    ")",
                "t.sweep.textproto:5:1: metric[2]: \"mfu\" is listed twice (expected each metric once)"}));
  EXPECT_EQ(sweep_errors(axes),
            std::vector<std::string>{"t.sweep.textproto:1:1: scenario_file: not set (expected a base scenario: "
                                     "scenario_file: \"path relative to the sweep file\" or scenario { ... })"});
  EXPECT_EQ(sweep_errors("scenario_file: \"small.textproto\"\n" + kBase + axes),
            std::vector<std::string>{"t.sweep.textproto:2:1: scenario: given together with scenario_file (expected one "
                                     "base: scenario_file: \"path\" or scenario { ... })"});
  EXPECT_EQ(sweep_errors("scenario_file: \"missing.textproto\"\n" + axes),
            std::vector<std::string>{"t.sweep.textproto:1:1: scenario_file: " + kDataDir +
                                     "/missing.textproto: cannot read file (No such file or directory)"});
  // A sweep named as the base: one line that says so, not one "unknown field" per top-level field.
  const std::vector<std::string> sweep_base =
      sweep_errors("scenario_file: \"../../../../scenarios/sweeps/notebook_fabric.sweep.textproto\"\n" + axes);
  ASSERT_EQ(sweep_base.size(), 1U);
  EXPECT_EQ(sweep_base[0].rfind("t.sweep.textproto:1:1: scenario_file: names a file that is not a scenario (expected "
                                "a scenario file): ",
                                0),
            0U)
      << sweep_base[0];
  EXPECT_NE(sweep_base[0].find("notebook_fabric.sweep.textproto:8:1: scenario: this is a sweep file, not a scenario"),
            std::string::npos)
      << sweep_base[0];
  EXPECT_EQ(sweep_errors(kBase + "axes { path: \"workload.parallel.tp\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:1: axes: unknown field, did you mean \"axis\"? (expected one "
                                     "of: name, description, scenario_file, scenario, set, axis, constraint, metric)"});
  EXPECT_EQ(sweep_errors(kBase + "set: \"workload.parallel.tpp=2\"\n" + axes),
            std::vector<std::string>{
                "t.sweep.textproto:2:1: workload.parallel.tpp: unknown field, did you mean "
                "\"tp\"? (expected one of: tp, pp, dp, sequence_parallel, schedule, "
                "virtual_stages, uneven_stages, zero_stage, dp_bucket_bytes, overlap_grad_reduce, "
                "tp_comm_overlap, overlap_param_gather, ep, cp, reshard_after_forward, "
                "reshard_after_backward, param_gather_bytes, grad_sync_every_microbatch, "
                "pipeline_stage_layers, zero_implementation, reduce_bucket_elements, "
                "tp_overlap_implementation, moe_shared_expert_overlap, activation_layout, overlap_tp_grad_reduce)"});
}

TEST(SweepFileErrors, JsonPositions) {
  EXPECT_EQ(sweep_errors("{\"scenario_file\": \"small.textproto\",\n \"axis\": [{\"path\": \"workload.parallel.tpp\", "
                         "\"values\": [\"1\"]}]}\n",
                         Format::json),
            std::vector<std::string>{
                "t.sweep.json:2:20: axis[0].path: unknown field \"tpp\" in workload.parallel, did you mean \"tp\"? "
                "(expected one of: tp, pp, dp, sequence_parallel, schedule, virtual_stages, uneven_stages, zero_stage, "
                "dp_bucket_bytes, overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp, "
                "reshard_after_forward, reshard_after_backward, param_gather_bytes, grad_sync_every_microbatch, "
                "pipeline_stage_layers, zero_implementation, reduce_bucket_elements, tp_overlap_implementation, "
                "moe_shared_expert_overlap, activation_layout, overlap_tp_grad_reduce)"});
}

// A constraint naming a field the dense base does not write and that has no default outside its
// section (moe_top_k): refused at the constraint (it ended in "internal error: std::bad_alloc").
TEST(SweepFileErrors, ConstraintOnAFieldWithoutABaseValue) {
  const std::string axes = "axis { path: \"workload.model.num_experts\" values: \"0\" values: \"8\" }\n";
  EXPECT_EQ(sweep_errors(kBase + axes + "constraint: \"num_experts >= moe_top_k\"\n"),
            std::vector<std::string>{
                "t.sweep.textproto:3:1: constraint[0]: at column 16 of \"num_experts >= moe_top_k\": "
                "workload.model.moe_top_k has no value in the base scenario: it is not written there and has no "
                "default outside its section (e.g. MoE fields of a dense model) (expected it written in the sweep's "
                "`scenario`, or an axis over it)"});
  // Written in the base, or swept, it has a value.
  EXPECT_NO_THROW(load(kBase + axes + "axis { path: \"workload.model.moe_top_k\" values: \"2\" }\n" +
                       "constraint: \"num_experts >= moe_top_k\"\n"));
}

}  // namespace
}  // namespace traincast::io
