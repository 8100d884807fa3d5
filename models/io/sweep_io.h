#pragma once
// Sweeps: reading and expanding sweep files (message Sweep in models/io/traincast.proto), the
// constraint expressions they contain, running one point, and the CSV that `traincast sweep`
// writes, resumes and merges. Format documentation: scenarios/README.md, "Sweeps".
//
// Error discipline as for scenarios (models/io/scenario_io.h): every problem in a sweep file is
// collected into one ScenarioError whose messages read
//     file:line:col: field.path: what is wrong (expected ...)
// e.g. "sweeps/a.sweep.textproto:7:3: axis[1].path: unknown field "tpp" in workload.parallel.tpp,
// did you mean "tp"? (expected one of: tp, pp, dp, ...)".

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/io/scenario_io.h"
#include "models/report.h"
#include "models/scenario.h"
#include "models/sweep.h"

namespace traincast::io {

// ------------------------------------------------------------------------------------------------
// Constraint expressions
// ------------------------------------------------------------------------------------------------

/// A problem in an expression: where (1-based byte column in the expression text) and what.
class ExpressionError : public std::runtime_error {
 public:
  /// column: 1-based column of the offending token (0 = the expression as a whole).
  ExpressionError(int column, const std::string& message) : std::runtime_error(message), column_(column) {}
  int column() const noexcept { return column_; }

 private:
  int column_;
};

/// The type of an expression value.
enum class ExprType { number, boolean, string };

/// A value while evaluating: a number (double; integers are exact up to 2^53), a boolean or a
/// string (enum and string fields).
struct ExprValue {
  ExprType type = ExprType::number;
  double number = 0.0;
  bool boolean = false;
  std::string text;

  static ExprValue of_number(double v) { return {ExprType::number, v, false, {}}; }
  static ExprValue of_bool(bool v) { return {ExprType::boolean, 0.0, v, {}}; }
  static ExprValue of_string(std::string v) { return {ExprType::string, 0.0, false, std::move(v)}; }
  friend bool operator==(const ExprValue&, const ExprValue&) = default;
};

/// What the type checker knows about a name: its type and, for enum fields, the allowed values
/// (a string literal compared with the name must be one of them; empty = any string).
struct ExprNameInfo {
  ExprType type = ExprType::number;
  std::vector<std::string> allowed;
};

/// A parsed constraint expression. Grammar (lowest precedence first):
///   or    := and { "||" and }          and  := cmp { "&&" cmp }
///   cmp   := sum [ ("=="|"!="|"<"|"<="|">"|">=") sum ]
///   sum   := prod { ("+"|"-") prod }     prod := unary { ("*"|"/"|"%") unary }
///   unary := ("-"|"!") unary | atom       atom := number | 'string' | "string" | true | false
///                                                  | name | "(" or ")"
/// Numbers: 12, 0.5, 1e9. Names: identifiers joined by dots (tp, workload.parallel.tp).
/// Semantics: + - * / on numbers (/ is real division); % on integers (C remainder: the sign of
/// the dividend); < <= > >= on numbers; == != on two values of the same type; && || (short
/// circuit) and ! on booleans. Nesting depth is limited to 64.
class Expression {
 public:
  /// Parses `text`. Throws ExpressionError for a syntax error, e.g. column 6 of "tp * * pp":
  /// `unexpected "*" (expected a number, a name, a quoted string or "(")`.
  static Expression parse(std::string_view text);

  /// The text parsed.
  const std::string& text() const { return text_; }
  /// The distinct names used, in order of first use; evaluate() takes their values in this order.
  const std::vector<std::string>& names() const { return names_; }
  /// 1-based column of the first use of names()[i].
  int name_column(std::size_t i) const { return name_columns_[i]; }

  /// Type-checks with names()[i] of type infos[i] (infos.size() == names().size()) and returns
  /// the type of the whole expression. Throws ExpressionError, e.g. `"+" needs two numbers, got
  /// a number and a string`, or for a string literal outside a name's allowed values.
  ExprType check(const std::vector<ExprNameInfo>& infos) const;

  /// Evaluates with names()[i] = values[i] (of the types given to check()). Throws
  /// ExpressionError for division or remainder by zero and for % of a non-integer.
  ExprValue evaluate(const std::vector<ExprValue>& values) const;

  /// One node of the syntax tree (internal; public only so the parser in sweep_io.cc can build it).
  struct Node {
    enum class Op {
      number,
      string,
      boolean,
      name,
      neg,
      logical_not,
      add,
      sub,
      mul,
      div,
      mod,
      eq,
      ne,
      lt,
      le,
      gt,
      ge,
      logical_and,
      logical_or
    };
    Op op = Op::number;
    int lhs = -1;  ///< index in nodes_ (unary operand, or left operand)
    int rhs = -1;  ///< index in nodes_ (right operand)
    double number = 0.0;
    bool boolean = false;
    std::string text;  ///< string literal, or the operator as written
    int slot = -1;     ///< names() index of a name
    int column = 0;    ///< 1-based column of the token
  };

 private:
  std::string text_;
  std::vector<std::string> names_;
  std::vector<int> name_columns_;
  std::vector<Node> nodes_;  // nodes_.back() is the root
  friend class ExpressionParser;
  ExprType check_node(int node, const std::vector<ExprNameInfo>& infos) const;
  ExprValue eval_node(int node, const std::vector<ExprValue>& values) const;
};

// ------------------------------------------------------------------------------------------------
// Sweep files
// ------------------------------------------------------------------------------------------------

/// Reads a sweep file (text format or JSON by extension, as for scenarios), reads its base
/// scenario (scenario_file, relative to the sweep file's directory, or the inline scenario),
/// applies its `set` overrides, checks the axes, constraints and metrics, and expands the points.
/// Names usable in constraints: axis names; `gpus` (num_nodes x GPUs per node of the node
/// template) and `gpus_per_node`; any scalar scenario field by its path or, when unambiguous, by
/// its last segment (num_attention_heads, global_batch_size, ...), with the point's value.
/// Throws ScenarioError with every problem found: unreadable files, syntax, unknown fields,
/// unknown axis path, axis without values, a value the field cannot take, duplicate values or
/// names, constraint syntax, unknown names and type errors, constraints that no point satisfies,
/// unknown metrics, more than 10,000,000 points before constraints.
models::Sweep load_sweep_file(const std::string& path);

/// As load_sweep_file, for text in memory. origin names the text in messages; a scenario_file is
/// resolved relative to base_dir.
models::Sweep load_sweep_text(std::string_view text, std::string_view origin, Format format,
                              const std::string& base_dir);

/// Every metric a sweep may record, in documentation order: iteration_time_s, tokens_per_s,
/// tflops_per_gpu, hardware_tflops_per_gpu, mfu, hfu, time_to_train_s [s], the breakdown
/// (compute_s, tp_comm_exposed_s, dp_comm_exposed_s, pp_comm_exposed_s, pipeline_bubble_s,
/// optimizer_s, ep_comm_exposed_s, cp_comm_exposed_s, input_copy_exposed_s, straggler_wait_s) [s],
/// memory per GPU in GiB (peak_memory_gib, activation_memory_gib,
/// weights_memory_gib, grads_memory_gib, optimizer_memory_gib, capacity_memory_gib), num_gpus,
/// micro_batches, events, busiest_link (name), busiest_link_utilization (0..1); storage_stall_s,
/// data_stall_s, checkpoint_write_s [s], interruptions, goodput (0..1), wall_clock_s [s] (Monte-Carlo
/// means), own_cost_to_train_usd, cloud_cost_to_train_usd, payback_years (empty when never),
/// payback_never (true/false), breakeven_utilization.
const std::vector<std::string>& sweep_metric_names();

/// The metrics recorded when a sweep file lists none: iteration_time_s, tokens_per_s,
/// tflops_per_gpu, mfu, peak_memory_gib, compute_s, tp_comm_exposed_s, dp_comm_exposed_s,
/// pp_comm_exposed_s, pipeline_bubble_s.
const std::vector<std::string>& default_sweep_metrics();

/// The scenario of point `point` (< sweep.num_points()): the base with the point's axis values,
/// validated as a scenario file is, with options.threads = 1 (one thread per simulation).
/// Throws ScenarioError with the scenario checks' messages (their origin is "<sweep point>" for
/// fields of the base and "--set" for axis values).
models::Scenario sweep_point_scenario(const models::Sweep& sweep, std::size_t point);

/// Outcome of one point. ok: simulated and fits in memory; oom: simulated, does not fit;
/// invalid: the scenario fails a check (io::ScenarioError), the models refuse it
/// (std::invalid_argument) or it is beyond the simulator's range (std::overflow_error); error: any
/// other exception (a bug; the reason says what).
enum class SweepStatus { ok, oom, invalid, error };

/// "ok", "oom", "invalid", "error".
std::string_view to_string(SweepStatus status);

struct SweepOutcome {
  SweepStatus status = SweepStatus::ok;
  std::string reason;     ///< one line: why invalid/oom/error (empty when ok)
  models::Report report;  ///< meaningful for ok and oom
};

/// Builds, validates and simulates point `point`. Never throws for a bad point: failures are
/// outcomes. Deterministic: the same sweep and point give the same outcome.
SweepOutcome run_sweep_point(const models::Sweep& sweep, std::size_t point);

// ------------------------------------------------------------------------------------------------
// CSV (RFC 4180 quoting; one line per row; '\n' line ends)
// ------------------------------------------------------------------------------------------------

/// `text` as one CSV field: quoted (with "" for ") when it holds a comma, a quote or a line
/// break; line breaks inside are replaced by "; " so a row is always one line.
std::string csv_field(std::string_view text);

/// First line of a sweep CSV: "# traincast sweep <hash> points <P>\n", with " shard <i>/<N>"
/// before the newline when shard.count > 1.
std::string sweep_csv_comment(const models::Sweep& sweep, models::SweepShard shard);

/// Header line: "point,<axis names>,status,<metrics>,reason\n".
std::string sweep_csv_header(const models::Sweep& sweep);

/// One row: point index, the point's axis values, status, metric values (numbers in shortest
/// round-trip form; empty for invalid/error points), reason. Ends with '\n'.
std::string sweep_csv_row(const models::Sweep& sweep, std::size_t point, const SweepOutcome& outcome);

/// A sweep CSV as read back (to resume or merge it).
struct SweepCsv {
  std::string comment;  ///< first line with its '\n'
  std::string header;   ///< second line with its '\n'
  std::string hash;     ///< from the comment
  std::size_t points = 0;
  models::SweepShard shard;  ///< {0, 1} when the comment names none
  struct Row {
    std::size_t point = 0;
    std::string line;  ///< with its '\n'
    int line_number = 0;
  };
  std::vector<Row> rows;             ///< complete rows, in file order
  std::uint64_t complete_bytes = 0;  ///< bytes up to the end of the last complete line
  bool partial_last_line = false;    ///< the file ends inside a line (an interrupted write)
};

/// Reads a sweep CSV. Rows must have the header's number of fields and a point index < points
/// that belongs to the shard; a point twice is an error. Throws ScenarioError("path:line: what
/// (expected ...)") for an unreadable file, a first line that is not a traincast sweep comment,
/// a missing header, or a bad row.
SweepCsv read_sweep_csv(const std::string& path);

}  // namespace traincast::io
