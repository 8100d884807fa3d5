// Tests of models/io/sweep_io: the constraint expression language, sweep file loading and
// expansion (every error kind with its exact message), points, outcomes and the sweep CSV.

#include "models/io/sweep_io.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "tests/tools/temp_dir.h"

namespace traincast::io {
namespace {

const std::string kSourceDir = TRAINCAST_SOURCE_DIR;
const std::string kDataDir = kSourceDir + "/tests/models/io/data";

// ------------------------------------------------------------------------------------------------
// Expressions
// ------------------------------------------------------------------------------------------------

/// Evaluates `text` with names bound in order of first use to `values` (numbers).
ExprValue eval(const std::string& text, const std::vector<ExprValue>& values = {}) {
  const Expression e = Expression::parse(text);
  std::vector<ExprNameInfo> infos;
  for (const ExprValue& v : values) infos.push_back({v.type, {}});
  e.check(infos);
  return e.evaluate(values);
}

double num(const std::string& text, const std::vector<ExprValue>& values = {}) {
  const ExprValue v = eval(text, values);
  EXPECT_EQ(v.type, ExprType::number) << text;
  return v.number;
}

bool truth(const std::string& text, const std::vector<ExprValue>& values = {}) {
  const ExprValue v = eval(text, values);
  EXPECT_EQ(v.type, ExprType::boolean) << text;
  return v.boolean;
}

ExprValue n(double v) { return ExprValue::of_number(v); }

/// "column: message" of the ExpressionError that parsing (and checking with `infos`) throws.
std::string expr_error(const std::string& text, const std::vector<ExprNameInfo>& infos = {}) {
  try {
    const Expression e = Expression::parse(text);
    std::vector<ExprNameInfo> all = infos;
    all.resize(e.names().size());
    e.check(all);
  } catch (const ExpressionError& x) {
    return std::to_string(x.column()) + ": " + x.what();
  }
  ADD_FAILURE() << "no ExpressionError for " << text;
  return {};
}

TEST(Expression, ArithmeticPrecedenceAndAssociativity) {
  EXPECT_EQ(num("1 + 2 * 3"), 7);      // * before +
  EXPECT_EQ(num("(1 + 2) * 3"), 9);    // parentheses
  EXPECT_EQ(num("10 - 4 - 3"), 3);     // left-associative: (10 - 4) - 3
  EXPECT_EQ(num("64 / 4 / 2"), 8);     // (64 / 4) / 2
  EXPECT_EQ(num("7 / 2"), 3.5);        // real division
  EXPECT_EQ(num("7 % 3"), 1);          // remainder
  EXPECT_EQ(num("-7 % 3"), -1);        // C remainder: sign of the dividend
  EXPECT_EQ(num("2 * -3"), -6);        // unary minus binds tighter than *
  EXPECT_EQ(num("1e3 + .5"), 1000.5);  // exponent and leading-dot numbers
}

TEST(Expression, ComparisonsAndLogic) {
  EXPECT_TRUE(truth("1 + 1 == 2"));
  EXPECT_TRUE(truth("3 != 4"));
  EXPECT_TRUE(truth("2 <= 2 && 2 >= 2 && 1 < 2 && 3 > 2"));
  EXPECT_TRUE(truth("false || true && true"));  // && before ||
  EXPECT_FALSE(truth("(false || true) && false"));
  EXPECT_TRUE(truth("!(1 > 2)"));
  EXPECT_TRUE(truth("'full' == \"full\""));  // both quote kinds
  EXPECT_TRUE(truth("true == !false"));
}

TEST(Expression, NamesTakeTheirValuesInOrderOfFirstUse) {
  const Expression e = Expression::parse("tp * pp * dp == gpus && tp <= 8");
  EXPECT_EQ(e.names(), (std::vector<std::string>{"tp", "pp", "dp", "gpus"}));
  EXPECT_EQ(e.name_column(2), 11);
  EXPECT_TRUE(truth("tp * pp * dp == gpus && tp <= 8", {n(2), n(4), n(8), n(64)}));   // 2*4*8 = 64
  EXPECT_FALSE(truth("tp * pp * dp == gpus && tp <= 8", {n(2), n(4), n(4), n(64)}));  // 32 != 64
  EXPECT_TRUE(truth("workload.model.num_layers % pp == 0", {n(96), n(8)}));           // dotted path
  EXPECT_TRUE(truth("recompute == 'full'", {ExprValue::of_string("full")}));
}

TEST(Expression, AndOrShortCircuitSoGuardsWork) {
  // tp = 0 would divide by zero, but the guard stops evaluation first.
  EXPECT_FALSE(truth("tp != 0 && 8 % tp == 0", {n(0)}));
  EXPECT_TRUE(truth("tp == 0 || 8 % tp == 0", {n(0)}));
}

TEST(Expression, SyntaxErrorsNameTheColumn) {
  EXPECT_EQ(expr_error("tp * * pp"), "6: unexpected \"*\" (expected a number, a name, a quoted string or \"(\")");
  EXPECT_EQ(expr_error("tp = 2"), "4: unexpected \"=\" (expected \"==\" to compare)");
  EXPECT_EQ(expr_error("tp & pp"), "4: unexpected \"&\" (expected \"&&\")");
  EXPECT_EQ(expr_error("(tp == 2"), "9: unexpected end of expression (expected \")\" to close the \"(\" at column 1)");
  EXPECT_EQ(expr_error("tp == 2)"), "8: unexpected \")\" (expected an operator or the end: no \"(\" is open)");
  EXPECT_EQ(expr_error("tp pp"), "4: unexpected \"pp\" (expected an operator or the end)");
  EXPECT_EQ(expr_error("1 < tp < 3"),
            "8: \"<\" cannot follow the comparison \"<\" (expected && or || between comparisons: they do not chain)");
  EXPECT_EQ(expr_error("2tp == 4"),
            "2: unexpected \"t\" after number \"2\" (expected an operator between a number "
            "and a name)");
  EXPECT_EQ(expr_error("workload. == 1"),
            "10: unexpected \" \" after \"workload.\" (expected a field name after the "
            "dot)");
  EXPECT_EQ(expr_error("recompute == 'full"), "14: unterminated string (expected a closing ')");
  EXPECT_EQ(expr_error("tp # 2"),
            "4: unexpected character \"#\" (expected numbers, names, quoted strings, operators "
            "+ - * / % == != < <= > >= && || ! and parentheses)");
  EXPECT_EQ(expr_error(""), "1: unexpected end of expression (expected a number, a name, a quoted string or \"(\")");
  EXPECT_EQ(expr_error(std::string(65, '(') + "1" + std::string(65, ')')),
            "65: nested too deeply (expected at most 64 levels of parentheses and unary operators)");
}

TEST(Expression, TypeErrors) {
  const ExprNameInfo number{ExprType::number, {}};
  const ExprNameInfo recompute{ExprType::string, {"none", "selective", "full"}};
  EXPECT_EQ(expr_error("tp + 'a' == 1", {number}), "4: \"+\" needs two numbers, got a number and a string");
  EXPECT_EQ(expr_error("tp && true", {number}),
            "4: \"&&\" needs two booleans (comparisons), got a number and a "
            "boolean");
  EXPECT_EQ(expr_error("!tp", {number}), "1: \"!\" needs a boolean, got a number");
  EXPECT_EQ(expr_error("tp == 'x'", {number}), "4: \"==\" compares values of one type, got a number and a string");
  EXPECT_EQ(expr_error("recompute == 'fulll'", {recompute}),
            "14: \"fulll\" is not a value of recompute, did you mean \"full\"? (expected one of: none, selective, "
            "full)");
  EXPECT_EQ(expr_error("recompute < 'full'", {recompute}), "11: \"<\" needs two numbers, got a string and a string");
}

TEST(Expression, EvaluationErrors) {
  auto eval_error = [](const std::string& text, const std::vector<ExprValue>& values) -> std::string {
    try {
      eval(text, values);
    } catch (const ExpressionError& x) {
      return std::to_string(x.column()) + ": " + x.what();
    }
    return "no error";
  };
  EXPECT_EQ(eval_error("8 % tp == 0", {n(0)}), "3: remainder by zero (expected a non-zero divisor)");
  EXPECT_EQ(eval_error("8 / tp == 0", {n(0)}), "3: division by zero (expected a non-zero divisor)");
  EXPECT_EQ(eval_error("x % 2 == 0", {n(1.5)}), "3: \"%\" needs integers, got 1.5 (expected whole numbers)");
}

// ------------------------------------------------------------------------------------------------
// Sweep files
// ------------------------------------------------------------------------------------------------

/// A one-line inline base: 1 DGX H100 (8 GPUs), 8 layers, 16 heads, batch 16; line 1 of every test sweep.
const std::string kBase =
    "scenario { cluster { node_template: \"dgx_h100\" num_nodes: 1 } workload { model { num_layers: 8 hidden_size: "
    "1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 } training { global_batch_size: 16 } } }\n";

models::Sweep load(const std::string& text, Format format = Format::text) {
  return load_sweep_text(text, format == Format::text ? "t.sweep.textproto" : "t.sweep.json", format, kDataDir);
}

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
                "zero_stage, dp_bucket_bytes, overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp)"});
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel\" values: \"1\" }\n"),
            std::vector<std::string>{
                "t.sweep.textproto:2:8: axis[0].path: workload.parallel is a message, not a scalar field (expected a "
                "path to one of its fields: tp, pp, dp, sequence_parallel, schedule, virtual_stages, uneven_stages, "
                "zero_stage, dp_bucket_bytes, overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp)"});
  EXPECT_EQ(sweep_errors(kBase + "axis { values: \"1\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:1: axis[0].path: not set (expected a scalar field path of "
                                     "the scenario, e.g. workload.parallel.tp)"});
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
  EXPECT_EQ(sweep_errors(kBase + "axis { path: \"workload.parallel.tp\" values: \"2\" values: \"2\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:49: axis[0].values[1]: value \"2\" repeats values[0] "
                                     "(expected distinct values)"});
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
  EXPECT_EQ(sweep_errors(kBase + "axes { path: \"workload.parallel.tp\" }\n"),
            std::vector<std::string>{"t.sweep.textproto:2:1: axes: unknown field, did you mean \"axis\"? (expected one "
                                     "of: name, description, scenario_file, scenario, set, axis, constraint, metric)"});
  EXPECT_EQ(sweep_errors(kBase + "set: \"workload.parallel.tpp=2\"\n" + axes),
            std::vector<std::string>{"t.sweep.textproto:2:1: workload.parallel.tpp: unknown field, did you mean "
                                     "\"tp\"? (expected one of: tp, pp, dp, sequence_parallel, schedule, "
                                     "virtual_stages, uneven_stages, zero_stage, dp_bucket_bytes, overlap_grad_reduce, "
                                     "tp_comm_overlap, overlap_param_gather, ep, cp)"});
}

TEST(SweepFileErrors, JsonPositions) {
  EXPECT_EQ(sweep_errors("{\"scenario_file\": \"small.textproto\",\n \"axis\": [{\"path\": \"workload.parallel.tpp\", "
                         "\"values\": [\"1\"]}]}\n",
                         Format::json),
            std::vector<std::string>{
                "t.sweep.json:2:12: axis[0].path: unknown field \"tpp\" in workload.parallel, did you mean \"tp\"? "
                "(expected one of: tp, pp, dp, sequence_parallel, schedule, virtual_stages, uneven_stages, zero_stage, "
                "dp_bucket_bytes, overlap_grad_reduce, tp_comm_overlap, overlap_param_gather, ep, cp)"});
}

// ------------------------------------------------------------------------------------------------
// Points and CSV
// ------------------------------------------------------------------------------------------------

TEST(SweepPoint, OutcomesOkInvalidAndOom) {
  const models::Sweep s = load(kBase +
                               "set: \"workload.parallel.dp=8\"\n"
                               "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"3\" }\n"
                               "axis { path: \"workload.model.hidden_size\" values: \"1024\" values: \"65536\" }\n"
                               "metric: \"num_gpus\"\nmetric: \"micro_batches\"\n");
  ASSERT_EQ(s.num_points(), 4u);
  const SweepOutcome ok = run_sweep_point(s, 0);  // tp 1, h 1024: 8 GPUs of DP
  EXPECT_EQ(ok.status, SweepStatus::ok) << ok.reason;
  EXPECT_EQ(ok.reason, "");
  // dp 8 x micro-batch 1 over 16 sequences: 2 micro-batches per pipeline.
  EXPECT_EQ(sweep_csv_row(s, 0, ok), "0,1,1024,ok,8,2,\n");
  const SweepOutcome oom = run_sweep_point(s, 1);  // h 65536: ~400B parameters on one GPU each
  EXPECT_EQ(oom.status, SweepStatus::oom);
  EXPECT_EQ(oom.reason.rfind("peak ", 0), 0u) << oom.reason;
  const SweepOutcome invalid = run_sweep_point(s, 2);  // tp 3: 3 * 1 * 8 != 8 and 3 does not divide 16 heads
  EXPECT_EQ(invalid.status, SweepStatus::invalid);
  EXPECT_EQ(invalid.reason,
            "workload.parallel.tp: 3 does not divide num_attention_heads 16 (expected a divisor of 16); "
            "workload.parallel.tp: tp * pp * dp = 3 * 1 * 8 = 24 but the cluster has 8 GPUs (1 x dgx_h100 with 8 "
            "GPUs each) (expected tp * pp * dp = 8)");
  EXPECT_EQ(sweep_csv_row(s, 2, invalid),
            "2,3,1024,invalid,,,workload.parallel.tp: 3 does not divide num_attention_heads 16 (expected a divisor "
            "of 16); workload.parallel.tp: tp * pp * dp = 3 * 1 * 8 = 24 but the cluster has 8 GPUs (1 x dgx_h100 "
            "with 8 GPUs each) (expected tp * pp * dp = 8)\n");
  // The same point twice: the same row (deterministic).
  EXPECT_EQ(sweep_csv_row(s, 0, run_sweep_point(s, 0)), sweep_csv_row(s, 0, ok));
}

TEST(SweepCsv, FieldsCommentAndHeader) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("one\ntwo\r\nthree"), "one; two; three");
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"2\" }\n"
                               "metric: \"mfu\"\nmetric: \"busiest_link\"\n");
  EXPECT_EQ(sweep_csv_comment(s, {}), "# traincast sweep " + s.hash + " points 2\n");
  EXPECT_EQ(sweep_csv_comment(s, {1, 3}), "# traincast sweep " + s.hash + " points 2 shard 1/3\n");
  EXPECT_EQ(sweep_csv_header(s), "point,tp,status,mfu,busiest_link,reason\n");
}

// Owning that never pays back is an empty payback_years cell (0 would read as "pays back at
// once") with payback_never true; one that does prints its years and false.
TEST(SweepCsv, PaybackNeverIsAnEmptyCellAndAFlag) {
  const models::Sweep s = load(kBase +
                               "axis { path: \"workload.parallel.tp\" values: \"1\" }\n"
                               "metric: \"payback_years\"\nmetric: \"payback_never\"\n");
  SweepOutcome never;
  never.report.cost.payback_never = true;
  EXPECT_EQ(sweep_csv_row(s, 0, never), "0,1,ok,,true,\n");
  SweepOutcome pays;
  pays.report.cost.payback_years = 2.5;
  EXPECT_EQ(sweep_csv_row(s, 0, pays), "0,1,ok,2.5,false,\n");
}

class SweepCsvFile : public traincast::test_support::TempDirTest {
 protected:
  std::string write(const std::string& text) { return TempDirTest::write("r.csv", text); }
  std::string error_of(const std::string& text) {
    try {
      read_sweep_csv(write(text));
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(SweepCsvFile, ReadsRowsAndAPartialLastLine) {
  const std::string head = "# traincast sweep 0123456789abcdef points 4 shard 1/2\npoint,tp,status,mfu,reason\n";
  const SweepCsv csv = read_sweep_csv(write(head + "1,2,ok,0.5,\n3,8,invalid,,\"a, b\"\n3,8,o"));
  EXPECT_EQ(csv.hash, "0123456789abcdef");
  EXPECT_EQ(csv.points, 4u);
  EXPECT_EQ(csv.shard.index, 1u);
  EXPECT_EQ(csv.shard.count, 2u);
  ASSERT_EQ(csv.rows.size(), 2u);
  EXPECT_EQ(csv.rows[1].point, 3u);
  EXPECT_EQ(csv.rows[1].line, "3,8,invalid,,\"a, b\"\n");
  EXPECT_TRUE(csv.partial_last_line);
  EXPECT_EQ(csv.complete_bytes, head.size() + std::string("1,2,ok,0.5,\n3,8,invalid,,\"a, b\"\n").size());
}

TEST_F(SweepCsvFile, BadFiles) {
  const std::string head = "# traincast sweep 0123456789abcdef points 4\npoint,tp,status,reason\n";
  const std::string path = (dir_ / "r.csv").string();
  // The quoted line has no line end: it used to show as "?" (the '\n', or '\r\n' of a Windows copy).
  const std::string expected_first =
      " (expected a first line \"# traincast sweep <hash> points <count>\", as traincast sweep writes)";
  EXPECT_EQ(error_of("point,tp\n"), path + ":1: not a traincast sweep CSV: \"point,tp\"" + expected_first);
  EXPECT_EQ(error_of("# traincast sweep 0123 points 39\r\npoint,tp\n"),
            path + ":1: not a traincast sweep CSV: \"# traincast sweep 0123 points 39\"" + expected_first);
  // Clipped at 40 bytes, but never inside a UTF-8 character (\xc3\xa9, e-acute, spans bytes 39-40).
  EXPECT_EQ(error_of(std::string(39, 'x') + "\xc3\xa9yy\npoint,tp\n"),
            path + ":1: not a traincast sweep CSV: \"" + std::string(39, 'x') + "...\"" + expected_first);
  EXPECT_EQ(error_of("# traincast sweep 0123456789abcdef points 4\r\nhdr,x\r\n"),
            path + ":2: header \"hdr,x\" does not start with \"point,\" (expected the header traincast sweep writes)");
  EXPECT_EQ(error_of(head + "0,1,ok\n"), path + ":3: 3 fields (expected 4 fields, as in the header)");
  EXPECT_EQ(error_of(head + "x,1,ok,\n"),
            path + ":3: point \"x\" is not a point index (expected an integer in [0, 4))");
  EXPECT_EQ(error_of(head + "4,1,ok,\n"),
            path + ":3: point \"4\" is not a point index (expected an integer in [0, 4))");
  EXPECT_EQ(error_of(head + "1,1,ok,\n1,1,ok,\n"),
            path + ":4: point 1 appears again (first on line 3; expected each point once)");
  EXPECT_EQ(error_of("# traincast sweep 0123456789abcdef points 4 shard 0/2\npoint,tp,status,reason\n1,1,ok,\n"),
            path + ":3: point 1 is not in shard 0/2 (expected point % 2 == 0)");
  EXPECT_EQ(error_of("# traincast sweep 0123456789abcdef points 4\npoint,tp"),
            path + ":2: no complete header line (the file was cut while it was created: start over with --force)");
}

}  // namespace
}  // namespace traincast::io
