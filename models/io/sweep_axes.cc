// Reading and checking the axes of a sweep file (sweep_axes.h), and the positioned error list.

#include "models/io/sweep_axes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "models/io/int_ranges.h"
#include "models/io/overrides.h"
#include "models/io/scenario_io.h"
#include "models/io/suggest.h"
#include "models/io/sweep_csv.h"

namespace traincast::io::detail {

namespace pb = google::protobuf;
namespace tp = traincast::proto;

std::string SweepErrors::at(const std::string& path) const {
  std::vector<PathStep> steps;
  if (!resolve_path(sweep_.GetDescriptor(), path, steps, nullptr)) return format_pos(origin_, {1, 1});
  return format_pos(origin_, map_.locate(steps));
}

void SweepErrors::add(const std::string& path, const std::string& what) {
  messages_.push_back(at(path) + ": " + path + ": " + what);
}

void SweepErrors::throw_if_any() {
  if (!messages_.empty()) throw ScenarioError(std::move(messages_));
}

namespace {

/// Values one range may generate.
constexpr std::size_t kMaxRangeValues = 100'000;

class AxisReader {
 public:
  AxisReader(const tp::Sweep& message, SweepErrors& errors) : m_(message), errors_(errors) {}

  std::vector<AxisBuild> read(std::uint64_t& product) {
    product = 1;
    if (m_.axis_size() == 0) {
      error("axis", "no axes (expected at least one axis { path: \"field.path\" values: \"...\" })");
      product = 0;
      return {};
    }
    bool product_ok = true;
    for (int i = 0; i < m_.axis_size(); ++i) {
      const tp::Sweep::Axis& a = m_.axis(i);
      const std::string at = "axis[" + std::to_string(i) + "]";
      AxisBuild build;
      build.axis.path = a.path();
      bool ok = check_path(at, a, build);
      ok = check_name(at, a, build) && ok;
      ok = read_values(at, a, build, ok);
      if (ok && product_ok) {
        product *= build.axis.values.size();
        if (product > kMaxProductPoints) {
          error("axis", "the axes make more than " + std::to_string(kMaxProductPoints) +
                            " points before constraints (expected fewer values, or several sweeps)");
          product_ok = false;
        }
      }
      axes_.push_back(std::move(build));
    }
    return std::move(axes_);
  }

 private:
  void error(const std::string& path, const std::string& what) { errors_.add(path, what); }

  /// Resolves an axis path to a scalar field; reports why not.
  const ScalarField* resolve_axis_path(const std::string& at, const std::string& path) {
    const pb::Descriptor* type = tp::Scenario::descriptor();
    std::string walked;
    std::size_t start = 0;
    while (true) {
      const std::size_t dot = path.find('.', start);
      const std::string segment = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (type == nullptr) {
        error(at, walked + " is not a message, it has no field " + in_quotes(clip(segment)) +
                      " (expected a path to a scalar field of the scenario, e.g. workload.parallel.tp)");
        return nullptr;
      }
      const pb::FieldDescriptor* f = type->FindFieldByName(segment);
      if (const std::size_t open = segment.find('['); f == nullptr && open != std::string::npos) {
        // "node_group[1]": --set's indexed form; an axis takes no index (the repeated-field error below).
        if (const pb::FieldDescriptor* list = type->FindFieldByName(segment.substr(0, open));
            list != nullptr && list->is_repeated())
          f = list;
      }
      std::vector<std::string> names;
      names.reserve(static_cast<std::size_t>(type->field_count()));
      for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
      if (f == nullptr) {
        error(at, "unknown field " + in_quotes(clip(segment)) + (walked.empty() ? "" : " in " + walked) +
                      detail::did_you_mean(segment, names) + " (expected one of: " + detail::field_list(type) + ")");
        return nullptr;
      }
      if (!walked.empty()) walked += ".";
      walked += f->name();
      if (f->is_repeated()) {
        // A list (node groups, overrides, per-stage layers): its entries exist only in a scenario,
        // not in the schema an axis is checked against. What does vary one: compare's --vary takes
        // an entry's field (with --set for the entry's other fields); a sweep's `set` gives every
        // point the same entry; a job list is `traincast cluster`'s, which takes --set alone.
        std::string what = walked;
        what +=
            " is a repeated field, a sweep axis names a singular scalar field (expected a path such as "
            "workload.parallel.tp";
        const std::string entry = walked + "[i]" + (f->message_type() != nullptr ? ".FIELD" : "");
        if (walked == "job") {
          what += "; a job list is traincast cluster's: traincast cluster --set " + entry + "=value changes one job)";
        } else {
          what += "; to compare values of one entry, traincast compare --vary " + entry + "=v1,v2";
          if (f->message_type() != nullptr) what += " with --set for the entry's other fields";
          what += "; to give every point the same entry, this sweep file's set: \"" + entry + "=value\")";
        }
        error(at, what);
        return nullptr;
      }
      type = f->message_type();
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (type != nullptr) {
      error(at, walked + " is a message, not a scalar field (expected a path to one of its fields: " +
                    detail::field_list(type) + ")");
      return nullptr;
    }
    const ScalarField* field = find_scalar(walked);
    if (field == nullptr)  // every singular scalar of the schema is listed: not reached
      error(at, walked + " is not a scalar field of the scenario (expected a path such as workload.parallel.tp)");
    return field;
  }

  /// Checks one value for the axis field: reports and returns false when the field cannot take it.
  bool typed_value(const std::string& at, const ScalarField& field, const std::string& value, ExprValue& out,
                   const std::string& what) {
    tp::Scenario scratch;
    std::vector<std::string> problems;
    std::map<std::string, std::string> origins;
    detail::apply_overrides(scratch, {{field.path + "=" + value, "x"}}, problems, origins);
    if (!problems.empty() && problems.front().find("out of range as written") != std::string::npos) {
      // 1e309, 1e-400: as a scenario file or --set names them, not "expected a number".
      error(at, what + " " + in_quotes(clip(value)) + " is out of range as written for " + field.path + " (expected " +
                    std::string(detail::kDoubleRangeExpected) + ")");
      return false;
    }
    if (!problems.empty()) {
      error(at, what + " " + in_quotes(clip(value)) + " is not valid for " + field.path +
                    detail::value_suggestion(field.field(), value) + " (expected " +
                    detail::expected_value(field.field(), Format::text) + ")");
      return false;
    }
    out = *written_value(scratch, field);
    // An integer the type holds but the field does not take (tp 0): refused here, at the axis,
    // with the words the scenario check would use (int_ranges.h), rather than at every point.
    if (is_integer(field.field())) {
      const detail::IntRange r = detail::int_range(field.field());
      if (out.number < static_cast<double>(r.minimum) || out.number > static_cast<double>(r.maximum)) {
        error(at, what + " " + in_quotes(clip(value)) + " is not valid for " + field.path + " (expected " +
                      detail::expected_value(field.field(), Format::text) + ")");
        return false;
      }
    }
    return true;
  }

  /// Values of a range on a numeric field, formatted as --set reads them.
  bool range_values(const std::string& at, const tp::Sweep::Axis& a, const ScalarField& field,
                    std::vector<std::string>& out) {
    const bool log2 = a.has_log2_range();
    const std::string r = at + (log2 ? ".log2_range" : ".range");
    if (!is_numeric(field.field())) {
      const auto t = field.field()->cpp_type();
      const std::string kind = t == pb::FieldDescriptor::CPPTYPE_ENUM   ? "an enum"
                               : t == pb::FieldDescriptor::CPPTYPE_BOOL ? "a boolean"
                                                                        : "a string";
      error(r, field.path + " is " + kind + " field, not a number (expected values: \"...\" for it)");
      return false;
    }
    const bool has_from = log2 ? a.log2_range().has_from() : a.range().has_from();
    const bool has_to = log2 ? a.log2_range().has_to() : a.range().has_to();
    const double from = log2 ? a.log2_range().from() : a.range().from();
    const double to = log2 ? a.log2_range().to() : a.range().to();
    const double step = log2 ? 2.0 : (a.range().has_step() ? a.range().step() : 1.0);
    bool ok = true;
    if (!has_from || !std::isfinite(from) || (log2 && from <= 0)) {
      error(r + ".from", (has_from ? "got " + shortest_text(from) : std::string("not set")) +
                             (log2 ? " (expected a finite number > 0)" : " (expected a finite number)"));
      ok = false;
    }
    if (!has_to || !std::isfinite(to)) {
      error(r + ".to", (has_to ? "got " + shortest_text(to) : std::string("not set")) + " (expected a finite number)");
      ok = false;
    } else if (ok && to < from) {
      error(r + ".to",
            "got " + shortest_text(to) + ", below from = " + shortest_text(from) + " (expected a number >= from)");
      ok = false;
    }
    if (!log2 && !(std::isfinite(step) && step > 0)) {
      error(r + ".step", "got " + shortest_text(step) + " (expected a finite number > 0)");
      ok = false;
    }
    if (!ok) return false;
    const double count_d =
        log2 ? std::floor(std::log2(to / from) + 1e-9) + 1 : std::floor((to - from) / step + 1e-9) + 1;
    if (!(count_d <= static_cast<double>(kMaxRangeValues))) {
      // (to - from) / step can overflow to infinity (step 1e-300): say "more than", not "inf".
      const std::string how_many =
          std::isfinite(count_d) ? shortest_text(count_d) + " values" : "more than " + shortest_text(1e308) + " values";
      error(r, how_many + " (expected at most " + std::to_string(kMaxRangeValues) + ": a larger " +
                   (log2 ? "from or a smaller to)" : "step)"));
      return false;
    }
    const auto count = static_cast<std::size_t>(count_d);
    for (std::size_t k = 0; k < count; ++k) {
      const double v = log2 ? from * std::ldexp(1.0, static_cast<int>(k)) : from + static_cast<double>(k) * step;
      if (is_integer(field.field())) {
        const double rounded = std::round(v);
        if (std::fabs(v - rounded) > 1e-9 * std::max(1.0, std::fabs(v))) {
          error(r, "value " + shortest_text(v) + " is not an integer, as " + field.path + " needs (expected " +
                       detail::expected_value(field.field(), Format::text) + ")");
          return false;
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", rounded);
        out.push_back(buf);
      } else {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.12g", v);  // drop the last bits of accumulated rounding
        out.push_back(buf);
      }
    }
    return true;
  }

  /// The axis's field (build.field); reports a missing or bad path and a field swept twice.
  bool check_path(const std::string& at, const tp::Sweep::Axis& a, AxisBuild& build) {
    bool ok = true;
    if (!a.has_path() || a.path().empty()) {
      error(at + ".path", std::string(a.has_path() ? "is empty" : "not set") +
                              " (expected a scalar field path of the scenario, e.g. workload.parallel.tp)");
      ok = false;
    } else {
      build.field = resolve_axis_path(at + ".path", a.path());
      ok = build.field != nullptr;
      if (ok) {
        for (std::size_t j = 0; j < axes_.size(); ++j) {
          if (axes_[j].field == build.field) {
            error(at + ".path",
                  a.path() + " is already swept by axis[" + std::to_string(j) + "] (expected each field in one axis)");
            ok = false;
          }
        }
      }
    }
    return ok;
  }

  /// The axis's name (build.axis.name: given, or the last path segment); reports a bad one.
  bool check_name(const std::string& at, const tp::Sweep::Axis& a, AxisBuild& build) {
    static const std::set<std::string> reserved_columns = {"point", "status", "reason"};
    static const std::set<std::string> derived = {"gpus", "gpus_per_node", "true", "false"};
    bool ok = true;
    build.axis.name = a.has_name() ? a.name() : a.path().substr(a.path().rfind('.') + 1);
    const std::string name_at = at + (a.has_name() ? ".name" : ".path");
    if (a.has_name() && !is_identifier(a.name())) {
      error(at + ".name",
            in_quotes(clip(a.name())) + " is not a name (expected letters, digits and _, not starting with a digit)");
      ok = false;
    } else if (!build.axis.name.empty()) {
      const std::string& n = build.axis.name;
      const std::vector<std::string>& metrics = sweep_metric_names();
      if (reserved_columns.count(n) != 0 || std::find(metrics.begin(), metrics.end(), n) != metrics.end()) {
        error(name_at, "axis name " + in_quotes(n) +
                           " is also a CSV column of its own (expected another name: set "
                           "name: \"...\")");
        ok = false;
      } else if (derived.count(n) != 0) {
        error(name_at, "axis name " + in_quotes(n) +
                           " is reserved in constraints (expected another name: set "
                           "name: \"...\")");
        ok = false;
      } else {
        for (std::size_t j = 0; j < axes_.size(); ++j) {
          if (axes_[j].axis.name == n) {
            error(name_at, "axis name " + in_quotes(n) + " is used by axis[" + std::to_string(j) +
                               "] (expected a unique name: set name: \"...\")");
            ok = false;
          }
        }
      }
    }
    return ok;
  }

  /// The axis's values (build.axis.values and build.typed). `ok`: the axis so far; values are
  /// checked one by one only while it stays true. Returns it, false after any problem.
  bool read_values(const std::string& at, const tp::Sweep::Axis& a, AxisBuild& build, bool ok) {
    const int kinds = (a.values_size() > 0 ? 1 : 0) + (a.has_range() ? 1 : 0) + (a.has_log2_range() ? 1 : 0);
    if (kinds == 0) {
      error(at,
            "no values (expected values: \"...\", range { from: ... to: ... step: ... } or "
            "log2_range { from: ... to: ... })");
      ok = false;
    } else if (kinds > 1) {
      const std::string second = a.has_range() && a.values_size() > 0 ? "range" : "log2_range";
      error(at + "." + second, "given together with " + std::string(a.values_size() > 0 ? "values" : "range") +
                                   " (expected exactly one of values, range, log2_range)");
      ok = false;
    } else if (build.field != nullptr) {
      std::vector<std::string> raw;
      std::vector<std::string> where;
      if (a.values_size() > 0) {
        for (int j = 0; j < a.values_size(); ++j) {
          raw.push_back(a.values(j));
          where.push_back(at + ".values[" + std::to_string(j) + "]");
        }
      } else {
        if (!range_values(at, a, *build.field, raw)) ok = false;
        where.assign(raw.size(), at + (a.has_range() ? ".range" : ".log2_range"));
      }
      for (std::size_t j = 0; j < raw.size() && ok; ++j) {
        // The CSV writes a line break as "; " (csv_field), so such a value could not be read back
        // by --resume or merge: refused here instead.
        if (!valid_utf8(raw[j])) {  // echoed raw, and kept so in the CSV (session 36)
          error(where[j], "value is not valid UTF-8 (expected UTF-8 text: the CSV keeps the value as written)");
          ok = false;
          continue;
        }
        if (raw[j].find_first_of("\r\n") != std::string::npos) {
          error(where[j], "value " + in_quotes(clip(raw[j])) +
                              " holds a line break (expected one line: the CSV keeps one row per point)");
          ok = false;
          continue;
        }
        // The CSV keeps the value as written: " 4" beside "4" would split one group in two.
        if (!raw[j].empty() && (std::isspace(static_cast<unsigned char>(raw[j].front())) != 0 ||
                                std::isspace(static_cast<unsigned char>(raw[j].back())) != 0)) {
          error(where[j], "value " + in_quotes(clip(raw[j])) +
                              " has spaces around it (expected the value alone: the CSV keeps it as written)");
          ok = false;
          continue;
        }
        ExprValue v;
        if (!typed_value(where[j], *build.field, raw[j], v, "value")) {
          ok = false;
          continue;
        }
        const auto dup = std::find(build.typed.begin(), build.typed.end(), v);
        if (dup != build.typed.end()) {
          const auto first = static_cast<std::size_t>(dup - build.typed.begin());
          error(where[j], "value " + in_quotes(clip(raw[j])) + " repeats " +
                              (a.values_size() > 0 ? "values[" + std::to_string(first) + "]"
                                                   : "the value " + in_quotes(raw[first])) +
                              " (expected distinct values)");
          ok = false;
          continue;
        }
        build.typed.push_back(std::move(v));
        build.axis.values.push_back(raw[j]);
        build.axis.value_origins.push_back(errors_.at(where[j]));
      }
    }
    return ok;
  }

  const tp::Sweep& m_;
  SweepErrors& errors_;
  std::vector<AxisBuild> axes_;
};

}  // namespace

std::vector<AxisBuild> read_axes(const tp::Sweep& sweep, SweepErrors& errors, std::uint64_t& product) {
  return AxisReader(sweep, errors).read(product);
}

}  // namespace traincast::io::detail
