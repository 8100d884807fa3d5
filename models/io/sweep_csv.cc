// The sweep CSV (sweep_csv.h): the metric table (report fields named by path, report_fields.h),
// outcome names, comment, header and row lines, and reading a CSV back for --resume and merge.

#include "models/io/sweep_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "models/io/int_ranges.h"
#include "models/io/message_reader.h"
#include "models/io/report_fields.h"
#include "models/io/scenario_io.h"

namespace traincast::io {

using detail::clip;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// One metric a sweep may record: a report field (report_fields.h), or a value derived from the
/// report's lists.
struct MetricDef {
  std::string_view name;
  std::string_view report_path;  ///< the report field shown (empty: `derived`)
  double per_unit = 1.0;         ///< a floating report value is shown divided by this (bytes -> GiB)
  std::string (*derived)(const models::Report&) = nullptr;
  /// The cell is empty where this is false (a 0 there would read as "free" or "at once").
  bool (*known)(const models::Report&) = nullptr;
};

/// Trained: the scenario gives workload.training.train_tokens and the run fits in memory (else
/// time_to_train_s is 0, and so is every cost to train).
bool trained(const models::Report& r) { return r.time_to_train_s > 0; }
bool own_priced(const models::Report& r) { return r.cost.own_modelled; }
bool own_trained(const models::Report& r) { return r.cost.own_modelled && r.cost.train_gpu_hours > 0; }
bool rent_trained(const models::Report& r) { return r.cost.rent_modelled && r.cost.train_gpu_hours > 0; }
/// Payback and break-even compare owning with renting: known only where both sides are priced.
bool both_priced(const models::Report& r) { return r.cost.own_modelled && r.cost.rent_modelled; }

std::string busiest_link(const models::Report& r) {
  return r.busiest_links.empty() ? std::string() : r.busiest_links[0].name;
}

std::string busiest_link_utilization(const models::Report& r) {
  return r.busiest_links.empty() ? std::string("0") : shortest_text(r.busiest_links[0].utilization);
}

// Order: documentation order (sweep_csv.h).
constexpr MetricDef kMetrics[] = {
    {"iteration_time_s", "iteration_time_s"},
    {"tokens_per_s", "tokens_per_s"},
    {"tflops_per_gpu", "tflops_per_gpu"},
    {"hardware_tflops_per_gpu", "hardware_tflops_per_gpu"},
    {"mfu", "mfu"},
    {"hfu", "hfu"},
    // Empty without train_tokens (or when out of memory): 0 would read as "at once".
    {"time_to_train_s", "time_to_train_s", 1.0, nullptr, &trained},
    {"compute_s", "breakdown.compute_s"},
    {"tp_comm_exposed_s", "breakdown.tp_comm_exposed_s"},
    {"dp_comm_exposed_s", "breakdown.dp_comm_exposed_s"},
    {"pp_comm_exposed_s", "breakdown.pp_comm_exposed_s"},
    {"pipeline_bubble_s", "breakdown.pipeline_bubble_s"},
    {"optimizer_s", "breakdown.optimizer_s"},
    {"ep_comm_exposed_s", "breakdown.ep_comm_exposed_s"},
    {"cp_comm_exposed_s", "breakdown.cp_comm_exposed_s"},
    {"input_copy_exposed_s", "breakdown.input_copy_exposed_s"},
    {"straggler_wait_s", "breakdown.straggler_wait_s"},
    {"peak_memory_gib", "memory.peak_bytes_per_gpu", kGiB},
    {"activation_memory_gib", "memory.activations_bytes", kGiB},
    {"weights_memory_gib", "memory.weights_bytes", kGiB},
    {"grads_memory_gib", "memory.grads_bytes", kGiB},
    {"optimizer_memory_gib", "memory.optimizer_bytes", kGiB},
    {"capacity_memory_gib", "memory.capacity_bytes", kGiB},
    {"num_gpus", "num_gpus"},
    {"micro_batches", "micro_batches"},
    {"events", "events"},
    {"busiest_link", "", 1.0, &busiest_link},
    {"busiest_link_utilization", "", 1.0, &busiest_link_utilization},
    // ECMP hash draws: iteration_time_s is their mean; min and max give the spread.
    {"routing_seeds", "routing.seeds"},
    {"iteration_time_s_min", "routing.iteration_time_s_min"},
    {"iteration_time_s_max", "routing.iteration_time_s_max"},
    // Storage, failures (0 when the scenario has no such section), cost.
    {"storage_stall_s", "breakdown.storage_stall_s"},
    {"data_stall_s", "storage.data_stall_s_per_iteration"},
    {"checkpoint_write_s", "storage.checkpoint_write_s"},
    {"interruptions", "reliability.interruptions_mean"},
    {"goodput", "reliability.goodput_mean"},
    {"wall_clock_s", "reliability.wall_clock_s_mean"},
    // Cost: empty where that side is not priced (no cost section, no price) or, to train, without
    // a training time (no train_tokens): 0 would read as "free".
    {"capex_usd", "cost.capex_usd", 1.0, nullptr, &own_priced},
    {"own_cost_to_train_usd", "cost.own_cost_to_train_usd", 1.0, nullptr, &own_trained},
    {"cloud_cost_to_train_usd", "cost.cloud_cost_to_train_usd", 1.0, nullptr, &rent_trained},
    // Never paying back is an empty cell (0 would read as "at once": the report field is left
    // out then) and payback_never true.
    {"payback_years", "cost.payback_years", 1.0, nullptr, &both_priced},
    {"payback_never", "cost.payback_never", 1.0, nullptr, &both_priced},
    {"breakeven_utilization", "cost.breakeven_utilization", 1.0, nullptr, &both_priced},
};

/// A report value as a cell: numbers in shortest round-trip form (integers in decimal), bools as
/// true/false; empty where the report leaves the field out.
std::string cell_text(const std::optional<detail::FieldValue>& value, double per_unit) {
  if (!value) return std::string();
  if (const auto* d = std::get_if<double>(&*value)) return shortest_text(per_unit == 1.0 ? *d : *d / per_unit);
  if (const auto* i = std::get_if<std::int64_t>(&*value)) return std::to_string(*i);
  if (const auto* u = std::get_if<std::uint64_t>(&*value)) return std::to_string(*u);
  if (const auto* b = std::get_if<bool>(&*value)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&*value)) return *s;
  return std::to_string(std::get<detail::EnumNumber>(*value).number);
}

std::string metric_text(const models::Report& r, std::string_view name) {
  for (const MetricDef& m : kMetrics) {
    if (m.name != name) continue;
    if (m.derived != nullptr) return m.derived(r);
    if (m.known != nullptr && !m.known(r)) return std::string();
    return cell_text(detail::report_field(m.report_path).value(r), m.per_unit);
  }
  throw std::invalid_argument("unknown sweep metric \"" + std::string(name) + "\"");
}

/// `line` without its line end ("\n" or "\r\n"): quoted, the end would show as "?" (clip).
std::string_view without_eol(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

/// clip(text) between double quotes, as messages quote input.
std::string quoted_clip(std::string_view text) { return '"' + clip(text) + '"'; }

}  // namespace

std::string shortest_text(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

const std::vector<std::string>& sweep_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const MetricDef& m : kMetrics) out.emplace_back(m.name);
    return out;
  }();
  return names;
}

const std::vector<std::string>& default_sweep_metrics() {
  static const std::vector<std::string> names = {
      "iteration_time_s",  "tokens_per_s",     "tflops_per_gpu",    "mfu",
      "peak_memory_gib",   "compute_s",        "tp_comm_exposed_s", "dp_comm_exposed_s",
      "pp_comm_exposed_s", "pipeline_bubble_s"};
  return names;
}

std::string_view to_string(SweepStatus status) {
  switch (status) {
    case SweepStatus::ok:
      return "ok";
    case SweepStatus::oom:
      return "oom";
    case SweepStatus::invalid:
      return "invalid";
    case SweepStatus::error:
      return "error";
  }
  return "error";
}

std::string csv_field(std::string_view text) {
  std::string one_line;
  one_line.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      one_line += "; ";
    } else {
      one_line += c;
    }
  }
  if (one_line.find_first_of(",\"") == std::string::npos) return one_line;
  std::string out = "\"";
  for (const char c : one_line) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string sweep_csv_comment(const models::Sweep& sweep, models::SweepShard shard) {
  std::string out = "# traincast sweep " + sweep.hash + " points " + std::to_string(sweep.num_points());
  if (shard.count > 1) out += " shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count);
  return out + "\n";
}

std::string sweep_csv_header(const models::Sweep& sweep) {
  std::string out = "point";
  for (const models::SweepAxis& a : sweep.axes) {
    out += ',';
    out += csv_field(a.name);
  }
  out += ",status";
  for (const std::string& m : sweep.metrics) {
    out += ',';
    out += csv_field(m);
  }
  return out + ",reason\n";
}

std::string sweep_csv_row(const models::Sweep& sweep, std::size_t point, const SweepOutcome& outcome) {
  std::string out = std::to_string(point);
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    out += ',';
    out += csv_field(sweep.value(point, a));
  }
  out += ",";
  out += to_string(outcome.status);
  const bool simulated = outcome.status == SweepStatus::ok || outcome.status == SweepStatus::oom;
  for (const std::string& m : sweep.metrics) {
    out += ",";
    if (simulated) out += csv_field(metric_text(outcome.report, m));
  }
  out += ',';
  out += csv_field(outcome.reason);
  out += '\n';
  return out;
}

namespace {

/// Fields in one CSV line (quote-aware); -1 when a quote is left open.
int csv_field_count(std::string_view line) {
  int fields = 1;
  bool quoted_field = false;
  for (const char c : line) {
    if (c == '"') {
      quoted_field = !quoted_field;
    } else if (c == ',' && !quoted_field) {
      ++fields;
    }
  }
  return quoted_field ? -1 : fields;
}

/// The fields of one CSV line, unquoted ("" inside a quoted field is one quote). The line has no
/// open quote (csv_field_count checked it).
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

/// What a metric's cell may hold, as sweep_csv_row writes it. Every number a sweep records is a
/// time, a memory size, a rate, a fraction, a count or a cost: none is negative
/// (std::to_chars writes -0.0 as "-0", which reads as 0 and passes). whole: an integer report
/// field (num_gpus, micro_batches, events, routing_seeds), written by std::to_string.
enum class CellKind { text, boolean, number, whole };
struct MetricCell {
  CellKind kind = CellKind::number;
  bool may_be_empty = false;  ///< the report leaves the field out at times (ReportField::when)
  bool at_most_one = false;   ///< a fraction of a whole that cannot pass 1 (goodput, link utilization)
};

/// The cell rule of metric `name`, or nullopt when no metric has that name.
std::optional<MetricCell> metric_cell(std::string_view name) {
  for (const MetricDef& m : kMetrics) {
    if (m.name != name) continue;
    if (m.derived == &busiest_link) return MetricCell{CellKind::text, true};
    // busiest_link_utilization: bytes carried / (capacity x run time) of one link, 0..1 (no link
    // carries more than its capacity).
    if (m.derived == &busiest_link_utilization) return MetricCell{CellKind::number, false, true};
    if (m.derived != nullptr) return MetricCell{CellKind::number, false};
    const detail::ReportField& f = detail::report_field(m.report_path);
    const bool integer = f.kind == detail::FieldKind::integer || f.kind == detail::FieldKind::unsigned_integer;
    const CellKind kind = f.kind == detail::FieldKind::string    ? CellKind::text
                          : f.kind == detail::FieldKind::boolean ? CellKind::boolean
                          : integer                              ? CellKind::whole
                                                                 : CellKind::number;
    // goodput is useful / wall clock, in (0, 1] (ReliabilityReport). MFU and HFU are not bounded:
    // their FLOP count is SC21 eq. 3's convention (full, not causal, attention scores), which can
    // pass the FLOPs a causal kernel runs at long sequences, so a simulated mfu above 1 is possible.
    // breakeven_utilization is not either: above 1, renting is cheaper even at 100 % (docs/outputs.md).
    return MetricCell{kind, f.when != nullptr || m.known != nullptr, name == "goodput"};
  }
  return std::nullopt;
}

/// `s` read as a finite number in the text sweep_csv_row writes (std::to_chars /
/// std::to_string), or nullopt.
std::optional<double> finite_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// True when `s` is a number in decimal or scientific notation that a double cannot hold
/// (1e-400, 1e400): std::from_chars consumed it all and said result_out_of_range.
bool number_out_of_range(std::string_view s) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc::result_out_of_range && ptr == s.data() + s.size();
}

/// Decimal digits only, as std::to_string writes a count that is not negative.
bool is_whole_number(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

/// The error for one number cell ("" when it is one sweep_csv_row writes); `at` is "column c: ".
std::string number_cell_error(const std::string& at, const std::string& v, const MetricCell& cell) {
  const std::string or_empty = cell.may_be_empty ? ", or an empty cell where the report has none" : "";
  if (cell.kind == CellKind::whole && !is_whole_number(v))
    return at + quoted_clip(v) + " is not a count (expected a whole number >= 0" + or_empty +
           ", as traincast sweep writes)";
  const std::optional<double> number = finite_number(v);
  if (!number && number_out_of_range(v))
    return at + quoted_clip(v) + " is out of range as written (expected " + std::string(detail::kDoubleRangeExpected) +
           ", as traincast sweep writes)";
  if (!number)
    return at + quoted_clip(v) + " is not a number (expected a finite number" + or_empty +
           ", as traincast sweep writes)";
  if (*number < 0)
    return at + quoted_clip(v) +
           " is negative (expected a number >= 0: no time, memory, rate, fraction, count or cost a sweep "
           "records is negative)";
  if (cell.at_most_one && *number > 1)
    return at + quoted_clip(v) +
           " is more than 1 (expected a fraction in [0, 1], as traincast sweep writes: 0.5 for 50 %)";
  return "";
}

/// The header's columns the rows are checked against: where status is, and each metric's rule.
struct RowColumns {
  std::size_t status = 0;
  std::vector<std::pair<std::size_t, MetricCell>> metrics;  ///< column index, its rule
  std::vector<std::string> names;                           ///< every column's name
};

/// Reads the header "point,<axes>,status,<metrics>,reason": the metrics are the known metric
/// names right before "reason", status the column before them. Returns an error message ("" when
/// the header is one sweep_csv_header writes).
std::string row_columns(std::string_view header, RowColumns& c) {
  c.names = csv_fields(header);
  const std::vector<std::string>& n = c.names;
  if (n.size() < 3 || n.back() != "reason")
    return "header does not end with a \"reason\" column (expected the header traincast sweep writes)";
  std::size_t i = n.size() - 1;
  while (i > 1 && n[i - 1] != "status") {
    --i;
    const std::optional<MetricCell> cell = metric_cell(n[i]);
    if (!cell)
      return "header column " + quoted_clip(n[i]) +
             " is not a sweep metric (expected the header traincast sweep writes: status, the metrics, reason)";
    c.metrics.emplace_back(i, *cell);
  }
  if (i <= 1) return "header has no \"status\" column (expected the header traincast sweep writes)";
  c.status = i - 1;
  return "";
}

/// Checks one row's status and metric cells; returns the error ("" when the row is one
/// sweep_csv_row writes).
std::string row_error(const std::vector<std::string>& f, const RowColumns& c) {
  const std::string& status = f[c.status];
  const bool simulated = status == "ok" || status == "oom";
  if (!simulated && status != "invalid" && status != "error")
    return "column status: " + quoted_clip(status) +
           " is not a status (expected ok, oom, invalid or error, as traincast sweep writes)";
  for (const auto& [col, cell] : c.metrics) {
    const std::string& v = f[col];
    const std::string at = "column " + c.names[col] + ": ";
    if (!simulated) {
      if (!v.empty()) {
        std::string e = at;
        e += quoted_clip(v);
        e += " in a row of status ";
        e += status;
        e += " (expected an empty cell: invalid and error rows have no metrics)";
        return e;
      }
      continue;
    }
    if (v.empty() && (cell.may_be_empty || cell.kind == CellKind::text)) continue;
    if (cell.kind == CellKind::boolean && v != "true" && v != "false")
      return at + quoted_clip(v) + " is not a boolean (expected true or false" +
             (cell.may_be_empty ? ", or an empty cell" : "") + ")";
    if (cell.kind == CellKind::number || cell.kind == CellKind::whole) {
      if (std::string e = number_cell_error(at, v, cell); !e.empty()) return e;
    }
  }
  const std::string& reason = f.back();
  if (status == "ok" && !reason.empty())
    return "column reason: " + quoted_clip(reason) +
           " in a row of status ok (expected an empty cell: ok rows have no reason)";
  if (status != "ok" && reason.empty()) {
    return "column reason: empty in a row of status " + status + " (expected why the point is " + status +
           ", as traincast sweep writes)";
  }
  return "";
}

bool parse_size(std::string_view s, std::size_t& out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

SweepCsv read_sweep_csv(const std::string& path) {
  const std::string text = read_input_file(path, "a sweep CSV, text as traincast sweep writes it");
  SweepCsv csv;
  auto fail = [&](int line, const std::string& what) {
    throw ScenarioError({path + ":" + std::to_string(line) + ": " + what});
  };
  // A part saved by a spreadsheet or a Windows editor ends its lines in CR LF; without this, the
  // CR would surface as a stray character in some cell's error.
  if (const std::size_t cr = text.find("\r\n"); cr != std::string::npos) {
    fail(1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(cr), '\n')),
         "line ends in CR LF (Windows line ends, as a spreadsheet or Windows editor saves them) (expected the "
         "LF line ends traincast sweep writes; `sed -i 's/\\r$//' " +
             path + "` removes the CRs)");
  }
  // A UTF-8 byte order mark (EF BB BF), as Excel's "CSV UTF-8" and some Windows editors write.
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) {
    fail(1,
         "the file starts with a UTF-8 byte order mark (as a spreadsheet's \"CSV UTF-8\" saves it) (expected the "
         "first line \"# traincast sweep ...\" that traincast sweep writes; `sed -i '1s/^\\xEF\\xBB\\xBF//' " +
             path + "` removes it)");
  }
  // Classic Mac OS line ends (CR alone): the whole file would read as one unfinished line.
  if (text.find('\r') != std::string::npos && text.find('\n') == std::string::npos) {
    fail(1,
         "lines end in CR alone (old Mac line ends) (expected the LF line ends traincast sweep writes; "
         "`sed -i 's/\\r/\\n/g' " +
             path + "` converts them)");
  }
  std::size_t pos = 0;
  int line_number = 0;
  auto next_line = [&](std::string& line) -> bool {  // false at the end or for a partial line
    if (pos >= text.size()) return false;
    const std::size_t nl = text.find('\n', pos);
    ++line_number;
    if (nl == std::string::npos) {
      csv.partial_last_line = true;
      return false;
    }
    line = text.substr(pos, nl + 1 - pos);
    pos = nl + 1;
    return true;
  };
  const std::string expected_first =
      "(expected a first line \"# traincast sweep <hash> points <count>\", as "
      "traincast sweep writes)";
  if (!next_line(csv.comment)) fail(1, "not a traincast sweep CSV: no complete first line " + expected_first);
  {
    std::istringstream words(csv.comment.substr(0, csv.comment.size() - 1));
    std::string hash_mark, tool, kind, hash, points_word, points, shard_word, shard;
    words >> hash_mark >> tool >> kind >> hash >> points_word >> points;
    const bool has_shard = static_cast<bool>(words >> shard_word >> shard);
    std::string rest;
    words >> rest;
    bool ok = hash_mark == "#" && tool == "traincast" && kind == "sweep" && hash.size() == 16 &&
              points_word == "points" && parse_size(points, csv.points) && rest.empty();
    if (ok && has_shard) {
      const std::size_t slash = shard.find('/');
      ok = shard_word == "shard" && slash != std::string::npos &&
           parse_size(std::string_view(shard).substr(0, slash), csv.shard.index) &&
           parse_size(std::string_view(shard).substr(slash + 1), csv.shard.count) && csv.shard.count >= 1 &&
           csv.shard.index < csv.shard.count;
    }
    if (!ok) fail(1, "not a traincast sweep CSV: " + quoted_clip(without_eol(csv.comment)) + " " + expected_first);
    if (csv.points > models::kMaxSweepPoints) {
      fail(1, "points " + points + " is more than a sweep has (expected at most " +
                  std::to_string(models::kMaxSweepPoints) + ", as traincast sweep writes)");
    }
    csv.hash = hash;
  }
  if (!next_line(csv.header)) {
    fail(2, "no complete header line (the file was cut while it was created: start over with --force)");
  }
  if (csv.header.rfind("point,", 0) != 0) {
    fail(2, "header " + quoted_clip(without_eol(csv.header)) +
                " does not start with \"point,\" (expected the header traincast "
                "sweep writes)");
  }
  const int columns = csv_field_count(without_eol(csv.header));
  RowColumns row_columns_found;
  if (columns < 0) fail(2, "header has an unclosed quote (expected the header traincast sweep writes)");
  if (const std::string why = row_columns(without_eol(csv.header), row_columns_found); !why.empty()) fail(2, why);
  csv.complete_bytes = pos;
  std::unordered_map<std::size_t, int> seen;
  std::string line;
  while (next_line(line)) {
    const std::string_view body(line.data(), line.size() - 1);
    const int fields = csv_field_count(body);
    if (fields != columns) {
      fail(line_number, (fields < 0 ? std::string("unclosed quote") : std::to_string(fields) + " fields") +
                            " (expected " + std::to_string(columns) + " fields, as in the header)");
    }
    std::size_t point = 0;
    const std::string_view first = body.substr(0, body.find(','));
    if (!parse_size(first, point) || point >= csv.points) {
      fail(line_number, "point " + quoted_clip(first) + " is not a point index (expected an integer in [0, " +
                            std::to_string(csv.points) + "))");
    }
    if (point % csv.shard.count != csv.shard.index) {
      fail(line_number, "point " + std::to_string(point) + " is not in shard " + std::to_string(csv.shard.index) + "/" +
                            std::to_string(csv.shard.count) + " (expected point % " + std::to_string(csv.shard.count) +
                            " == " + std::to_string(csv.shard.index) + ")");
    }
    if (const auto [it, inserted] = seen.emplace(point, line_number); !inserted) {
      fail(line_number, "point " + std::to_string(point) + " appears again (first on line " +
                            std::to_string(it->second) + "; expected each point once)");
    }
    if (const std::string why = row_error(csv_fields(body), row_columns_found); !why.empty()) fail(line_number, why);
    csv.rows.push_back({point, line, line_number});
    csv.complete_bytes = pos;
  }
  return csv;
}

void check_sweep_csv_axes(const SweepCsv& csv, const std::string& path, const models::Sweep& sweep) {
  if (csv.header != sweep_csv_header(sweep)) {
    const std::string header = sweep_csv_header(sweep);
    throw ScenarioError(
        {path + ":2: header differs from the sweep's (expected \"" + std::string(without_eol(header)) + "\")"});
  }
  constexpr std::size_t kMaxShown = 10;
  std::vector<std::string> problems;
  std::size_t bad_rows = 0;
  for (const SweepCsv::Row& row : csv.rows) {
    if (row.point >= sweep.num_points()) {
      throw ScenarioError({path + ":" + std::to_string(row.line_number) + ": point " + std::to_string(row.point) +
                           " is not a point of the sweep (expected an index below " +
                           std::to_string(sweep.num_points()) + ")"});
    }
    const std::vector<std::string> fields = csv_fields(without_eol(row.line));
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      const models::SweepAxis& axis = sweep.axes[a];
      const std::string& found = fields[1 + a];
      const std::string& expected = sweep.value(row.point, a);
      if (found == expected) continue;
      ++bad_rows;
      if (problems.size() >= kMaxShown) break;
      std::string what =
          path + ":" + std::to_string(row.line_number) + ": column " + axis.name + ": " + quoted_clip(found);
      const bool on_axis = std::find(axis.values.begin(), axis.values.end(), found) != axis.values.end();
      if (on_axis) {
        what += " is not point " + std::to_string(row.point) + "'s value (expected " + quoted_clip(expected) +
                ", as the sweep gives point " + std::to_string(row.point) + ")";
      } else {
        std::string values;
        for (std::size_t k = 0; k < axis.values.size() && k < 8; ++k) values += (k ? ", " : "") + clip(axis.values[k]);
        if (axis.values.size() > 8) values += ", ...";
        what += " is a value no point of the sweep has on axis " + axis.name + " (expected " + quoted_clip(expected) +
                " for point " + std::to_string(row.point) + "; the axis has " + values + ")";
      }
      problems.push_back(what);
      break;  // one message per row
    }
  }
  if (bad_rows > problems.size()) {
    problems.push_back(path + ": " + std::to_string(bad_rows - problems.size()) +
                       " more rows whose axis values are not their point's");
  }
  if (!problems.empty()) throw ScenarioError(problems);
}

}  // namespace traincast::io
