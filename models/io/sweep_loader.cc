// Reading and expanding a sweep file (sweep_loader.h): base scenario, `set` overrides, metrics,
// axes (sweep_axes.h), constraints bound to axes, derived names and scenario fields, the points
// that pass them, and the sweep's fingerprint.

#include "models/io/sweep_loader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <google/protobuf/text_format.h>

#include "models/hardware/catalog.h"
#include "models/io/file_kind.h"
#include "models/io/message_reader.h"
#include "models/io/node_template_io.h"
#include "models/io/overrides.h"
#include "models/io/scenario_io_internal.h"
#include "models/io/suggest.h"
#include "models/io/sweep_axes.h"
#include "models/io/sweep_csv.h"
#include "models/io/sweep_expr.h"
#include "models/io/sweep_fields.h"
#include "traincast.pb.h"

namespace traincast::io {

namespace pb = google::protobuf;
namespace tp = traincast::proto;
using detail::AxisBuild;
using detail::base_value;
using detail::clip;
using detail::find_scalar;
using detail::in_quotes;
using detail::name_info_of;
using detail::ScalarField;
using detail::scenario_scalars;

namespace {

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

/// 64-bit FNV-1a (Fowler/Noll/Vo), as 16 hex digits: a stable content fingerprint, not a
/// cryptographic hash.
std::string fnv1a_hex(std::string_view data) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

/// The fingerprint of an expanded sweep: everything that decides the points and the CSV columns.
/// The base enters as protobuf text (its written fields, TextFormat's printer), as in every
/// traincast so far: another serialization would change every hash, and CSVs written before
/// could no longer be resumed or merged with new rows.
std::string sweep_fingerprint(const tp::Scenario& base, const models::Sweep& sweep) {
  std::string base_text;
  pb::TextFormat::PrintToString(base, &base_text);
  std::string canonical = "traincast sweep v1\n" + base_text;
  for (const models::SweepAxis& a : sweep.axes) {
    canonical += "axis " + a.name + " " + a.path + "\n";
    for (const std::string& v : a.values) canonical += "  " + v + "\n";
  }
  for (const std::string& c : sweep.constraints) canonical += "constraint " + c + "\n";
  for (const std::string& metric : sweep.metrics) canonical += "metric " + metric + "\n";
  canonical += "points " + std::to_string(sweep.num_points()) + "\n";
  return fnv1a_hex(canonical);
}

/// Where a constraint name's value comes from.
struct NameSource {
  enum class Kind { axis, constant, gpus, gpus_per_node } kind = Kind::constant;
  std::size_t axis = 0;
  ExprValue constant;
};

/// The positions of a message held in one field of a parsed document (a sweep file's inline
/// `scenario`): its paths located under that field.
class UnderField final : public detail::SourceMap {
 public:
  UnderField(std::shared_ptr<const detail::SourceMap> outer, const pb::FieldDescriptor* field)
      : outer_(std::move(outer)), field_(field) {}
  detail::SourcePos locate(const std::vector<detail::PathStep>& path) const override {
    std::vector<detail::PathStep> full{detail::PathStep{field_, -1}};
    full.insert(full.end(), path.begin(), path.end());
    return outer_->locate(full);
  }
  bool scalars_at_value() const override { return outer_->scalars_at_value(); }

 private:
  std::shared_ptr<const detail::SourceMap> outer_;
  const pb::FieldDescriptor* field_;
};

class SweepLoader {
 public:
  SweepLoader(const tp::Sweep& message, detail::SweepErrors& errors, std::string base_dir)
      : m_(message), errors_(errors), base_dir_(std::move(base_dir)) {}

  models::Sweep load() {
    // The sweep's name and description print in its CSV and messages (session 36: accepted raw).
    if (!detail::valid_utf8(m_.name())) error("name", "is not valid UTF-8 (expected UTF-8 text)");
    if (!detail::valid_utf8(m_.description())) error("description", "is not valid UTF-8 (expected UTF-8 text)");
    load_base();
    apply_sets();
    // A point is one job on the whole cluster (as traincast run, which refuses a job list too).
    if (base_.job_size() > 0)
      error(m_.has_scenario() ? "scenario" : "scenario_file",
            "the base scenario holds several jobs (" + std::to_string(base_.job_size()) +
                " job entries) (expected a scenario without job entries: each sweep point simulates one job on the "
                "whole cluster, as traincast run; traincast cluster runs a job list)");
    // The base's own node templates: an axis may name one (its points load them again).
    described_ = detail::described_node_templates_of(base_);
    check_metrics();
    const std::size_t before_axes = errors_.list().size();
    axes_ = detail::read_axes(m_, errors_, sweep_.product_size);
    // Every field's errors in one pass: a constraint's syntax does not depend on the axes, its
    // names and types do (they are checked only when every axis was read).
    check_constraints(errors_.list().size() == before_axes);
    errors_.throw_if_any();
    check_base_overrides();
    errors_.throw_if_any();
    expand();
    errors_.throw_if_any();

    sweep_.name = m_.name();
    sweep_.description = m_.description();
    for (const AxisBuild& a : axes_) sweep_.axes.push_back(a.axis);
    for (int i = 0; i < m_.constraint_size(); ++i) sweep_.constraints.push_back(m_.constraint(i));
    sweep_.hash = sweep_fingerprint(base_, sweep_);
    sweep_.base = std::make_shared<const tp::Scenario>(std::move(base_));
    if (base_map_ != nullptr) {
      auto source = std::make_shared<models::SweepBaseSource>(base_source(sweep_.base_path, base_map_));
      source->text = std::move(base_text_);
      source->json = base_format_ == Format::json;
      sweep_.base_source = std::move(source);
    }
    return std::move(sweep_);
  }

  /// The base's positions (origin, map) with the file's `set` entries and their positions.
  models::SweepBaseSource base_source(const std::string& origin, std::shared_ptr<const detail::SourceMap> map) const {
    models::SweepBaseSource source;
    source.origin = origin;
    source.map = std::move(map);
    for (const detail::Override& o : sets()) {
      source.sets.push_back(o.assignment);
      source.set_origins.push_back(o.origin);
    }
    return source;
  }

 private:
  void error(const std::string& path, const std::string& what) { errors_.add(path, what); }

  void load_base() {
    const bool has_file = m_.has_scenario_file();
    if (has_file && m_.has_scenario()) {
      error("scenario",
            "given together with scenario_file (expected one base: scenario_file: \"path\" or "
            "scenario { ... })");
      return;
    }
    if (m_.has_scenario()) {
      base_ = m_.scenario();
      return;
    }
    if (!has_file) {
      error("scenario_file",
            "not set (expected a base scenario: scenario_file: \"path relative to the sweep "
            "file\" or scenario { ... })");
      return;
    }
    if (m_.scenario_file().empty()) {
      error("scenario_file", "is empty (expected a scenario file path relative to the sweep file)");
      return;
    }
    const std::string path = base_dir_.empty()
                                 ? m_.scenario_file()
                                 : (std::filesystem::path(base_dir_) / m_.scenario_file()).lexically_normal().string();
    std::string text;
    Format format = Format::text;
    try {
      InputText input = read_input(path);
      format = input.format;
      text = std::move(input.text);
    } catch (const ScenarioError& e) {
      error("scenario_file", e.what());
      return;
    }
    sweep_.base_path = path;
    detail::ReadOutcome read = detail::read_message(text, path, format, base_);
    if (read.errors.empty()) {  // as written, with its positions: check_base_overrides
      file_base_ = base_;
      base_map_ = std::move(read.source_map);
      base_text_ = std::move(text);
      base_format_ = format;
    } else {
      // Another kind of traincast file (a sweep, cases, a profile): one line naming it, not one
      // "unknown field" per top-level field.
      if (auto other = detail::wrong_kind_message(text, path, format, base_.GetDescriptor())) {
        error("scenario_file", "names a file that is not a scenario (expected a scenario file): " + *other);
        return;
      }
    }
    errors_.list().insert(errors_.list().end(), read.errors.begin(), read.errors.end());
  }

  std::vector<detail::Override> sets() const {
    std::vector<detail::Override> overrides;
    overrides.reserve(static_cast<std::size_t>(m_.set_size()));
    for (int j = 0; j < m_.set_size(); ++j) {
      overrides.push_back({m_.set(j), errors_.at("set[" + std::to_string(j) + "]")});
    }
    return overrides;
  }

  void apply_sets() {
    std::map<std::string, std::string> origins;
    detail::apply_overrides(base_, sets(), errors_.list(), origins);
  }

  /// A bad cluster.overrides entry of a base scenario file (or one a `set` entry adds to it, at
  /// that `set`) is refused once, here, positioned in that file as `traincast run` refuses it (fresh user 41: every
  /// point's CSV row said it, without a position, and the sweep exited 2 after running them all). Not when an axis
  /// varies a field the override checks read (cluster.*, power.*, thermal.*, profile): the entry may be good at some
  /// points, and each point says where it is not. An inline base (scenario { }) has no positions of its own: its points
  /// say it.
  void check_base_overrides() {
    // Entries the file writes, or that a `set` adds (set: "cluster.overrides[0].select=node1/gpu3").
    const bool set_adds = std::any_of(m_.set().begin(), m_.set().end(),
                                      [](const std::string& s) { return s.rfind("cluster.overrides[", 0) == 0; });
    if (base_map_ == nullptr || (file_base_.cluster().overrides_size() == 0 && !set_adds)) return;
    for (const AxisBuild& a : axes_) {
      const std::string& path = a.axis.path;
      if (path.rfind("cluster.", 0) == 0 || path.rfind("power.", 0) == 0 || path.rfind("thermal.", 0) == 0 ||
          path == "profile")
        return;
    }
    tp::Scenario copy = file_base_;
    try {
      detail::load_parsed(copy, *base_map_, {}, sweep_.base_path, base_format_, sets(), nullptr, nullptr, base_text_);
    } catch (const ScenarioError& e) {
      // Only the overrides' errors: the base alone may miss what the axes give it.
      for (const std::string& line : e.errors())
        if (positioned_at(line, "cluster.overrides[")) errors_.list().push_back(line);
    }
  }

  /// Whether `line` reads "ORIGIN:LINE:COL: <field>..." with a field path starting `field`.
  static bool positioned_at(const std::string& line, const std::string& field) {
    const std::size_t at = line.find(": " + field);
    if (at == std::string::npos) return false;
    std::size_t i = at;
    for (int numbers = 0; numbers < 2; ++numbers) {
      const std::size_t end = i;
      while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9') --i;
      if (i == end || i == 0 || line[i - 1] != ':') return false;
      --i;
    }
    return true;
  }

  void check_metrics() {
    const std::vector<std::string>& known = sweep_metric_names();
    if (m_.metric_size() == 0) {
      sweep_.metrics = default_sweep_metrics();
      return;
    }
    for (int i = 0; i < m_.metric_size(); ++i) {
      const std::string& name = m_.metric(i);
      const std::string at = "metric[" + std::to_string(i) + "]";
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        error(at, "unknown metric " + in_quotes(clip(name)) + detail::did_you_mean(name, known) +
                      " (expected one of: " + join(known) + ")");
      } else if (std::find(sweep_.metrics.begin(), sweep_.metrics.end(), name) != sweep_.metrics.end()) {
        error(at, in_quotes(name) + " is listed twice (expected each metric once)");
      } else {
        sweep_.metrics.push_back(name);
      }
    }
  }

  /// Resolves a constraint name; on failure reports and returns false.
  bool resolve_name(const std::string& at, const Expression& e, std::size_t i, NameSource& source, ExprNameInfo& info) {
    const std::string& name = e.names()[i];
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      if (axes_[a].axis.name == name) {
        source = {NameSource::Kind::axis, a, {}};
        info = name_info_of(axes_[a].field->field());
        return true;
      }
    }
    if (name == "gpus" || name == "gpus_per_node") {
      source.kind = name == "gpus" ? NameSource::Kind::gpus : NameSource::Kind::gpus_per_node;
      info = {ExprType::number, {}};
      return true;
    }
    const ScalarField* field = nullptr;
    if (name.find('.') != std::string::npos) {
      field = find_scalar(name);
    } else {
      std::vector<const ScalarField*> matches;
      for (const ScalarField& f : scenario_scalars()) {
        if (f.field()->name() == name) matches.push_back(&f);
      }
      if (matches.size() > 1) {
        std::vector<std::string> paths;
        paths.reserve(matches.size());
        for (const ScalarField* f : matches) paths.push_back(f->path);
        error(at, "at column " + std::to_string(e.name_column(i)) + " of " + in_quotes(clip(e.text())) + ": name " +
                      in_quotes(name) + " is ambiguous (expected the full path: " + join(paths, " or ") + ")");
        return false;
      }
      if (matches.size() == 1) field = matches[0];
    }
    if (field == nullptr) {
      std::vector<std::string> candidates = {"gpus", "gpus_per_node"};
      std::vector<std::string> axis_names;
      for (const AxisBuild& a : axes_) axis_names.push_back(a.axis.name);
      candidates.insert(candidates.end(), axis_names.begin(), axis_names.end());
      for (const ScalarField& f : scenario_scalars()) {
        candidates.push_back(name.find('.') != std::string::npos ? f.path : f.field()->name());
      }
      error(at, "at column " + std::to_string(e.name_column(i)) + " of " + in_quotes(clip(e.text())) +
                    ": unknown name " + in_quotes(clip(name)) + detail::did_you_mean(name, candidates) +
                    " (expected an axis name (" + join(axis_names) +
                    "), gpus, gpus_per_node, or a scenario field such as num_attention_heads or "
                    "workload.model.num_layers)");
      return false;
    }
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      if (axes_[a].field == field) {
        source = {NameSource::Kind::axis, a, {}};
        info = name_info_of(field->field());
        return true;
      }
    }
    const std::optional<ExprValue> constant = base_value(base_, *field);
    if (!constant) {
      error(at, "at column " + std::to_string(e.name_column(i)) + " of " + in_quotes(clip(e.text())) + ": " +
                    field->path +
                    " has no value in the base scenario: it is not written there and has no default outside its "
                    "section (e.g. MoE fields of a dense model) (expected it written in the sweep's `scenario`, or "
                    "an axis over it)");
      return false;
    }
    source = {NameSource::Kind::constant, 0, *constant};
    info = name_info_of(field->field());
    return true;
  }

  /// Parses each constraint; with `axes_read` (no axis error) also resolves its names and checks
  /// its type. Every problem is added to errors_.
  void check_constraints(bool axes_read) {
    for (int i = 0; i < m_.constraint_size(); ++i) {
      const std::string at = "constraint[" + std::to_string(i) + "]";
      const std::string& text = m_.constraint(i);
      std::optional<Expression> e;
      try {
        e = Expression::parse(text);
      } catch (const ExpressionError& x) {
        error(at, "at column " + std::to_string(x.column()) + " of " + in_quotes(clip(text)) + ": " + x.what());
        continue;
      }
      if (!axes_read) continue;
      std::vector<NameSource> sources(e->names().size());
      std::vector<ExprNameInfo> infos(e->names().size());
      bool ok = true;
      for (std::size_t n = 0; n < e->names().size(); ++n) ok = resolve_name(at, *e, n, sources[n], infos[n]) && ok;
      if (!ok) continue;
      try {
        const ExprType type = e->check(infos);
        if (type != ExprType::boolean) {
          error(at, in_quotes(clip(text)) + " is " + std::string(type_name(type)) +
                        ", not a condition (expected a comparison such as tp * pp == 8)");
          continue;
        }
      } catch (const ExpressionError& x) {
        error(at, "at column " + std::to_string(x.column()) + " of " + in_quotes(clip(text)) + ": " + x.what());
        continue;
      }
      constraints_.push_back(std::move(*e));
      sources_.push_back(std::move(sources));
    }
  }

  /// The point's value of a field: from its axis, else the base.
  struct FieldAt {
    int axis = -1;
    ExprValue constant;
  };
  FieldAt field_source(const std::string& path) const {
    const ScalarField* f = find_scalar(path);
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      if (axes_[a].field == f) return {static_cast<int>(a), {}};
    }
    // cluster.num_nodes and cluster.node_template are always written (the defaults write them).
    return {-1, base_value(base_, *f).value()};
  }
  const ExprValue& value_at(const FieldAt& f, const std::vector<std::uint32_t>& idx) const {
    return f.axis < 0 ? f.constant
                      : axes_[static_cast<std::size_t>(f.axis)].typed[idx[static_cast<std::size_t>(f.axis)]];
  }

  double gpus_per_node_at(const std::vector<std::uint32_t>& idx, int column) {
    const std::string& name = value_at(template_, idx).text;
    if (const auto it = gpus_per_node_.find(name); it != gpus_per_node_.end()) return it->second;
    try {
      return gpus_per_node_[name] = models::find_node_template(name, described_).gpus_per_node;
    } catch (const std::exception&) {
      throw ExpressionError(column, "node template " + in_quotes(clip(name)) + " is unknown (expected one of: " +
                                        join(models::node_template_names(described_)) + ")");
    }
  }

  std::string describe_point(const std::vector<std::uint32_t>& idx) const {
    std::string out;
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      out += (a == 0 ? "" : ", ") + axes_[a].axis.name + "=" + axes_[a].axis.values[idx[a]];
    }
    return out;
  }

  void expand() {
    nodes_ = field_source("cluster.num_nodes");
    template_ = field_source("cluster.node_template");
    const std::size_t n_axes = axes_.size();
    std::vector<std::uint32_t> idx(n_axes, 0);
    std::vector<std::uint64_t> passed(constraints_.size(), 0);
    std::vector<std::vector<ExprValue>> values(constraints_.size());
    for (std::size_t c = 0; c < constraints_.size(); ++c) values[c].resize(constraints_[c].names().size());
    for (std::uint64_t p = 0; p < sweep_.product_size; ++p) {
      bool keep = true;
      for (std::size_t c = 0; c < constraints_.size() && keep; ++c) {
        const Expression& e = constraints_[c];
        try {
          for (std::size_t n = 0; n < values[c].size(); ++n) {
            const NameSource& s = sources_[c][n];
            switch (s.kind) {
              case NameSource::Kind::axis:
                values[c][n] = axes_[s.axis].typed[idx[s.axis]];
                break;
              case NameSource::Kind::constant:
                values[c][n] = s.constant;
                break;
              case NameSource::Kind::gpus:
                values[c][n] =
                    ExprValue::of_number(value_at(nodes_, idx).number * gpus_per_node_at(idx, e.name_column(n)));
                break;
              case NameSource::Kind::gpus_per_node:
                values[c][n] = ExprValue::of_number(gpus_per_node_at(idx, e.name_column(n)));
                break;
            }
          }
          keep = e.evaluate(values[c]).boolean;
        } catch (const ExpressionError& x) {
          error("constraint[" + std::to_string(c) + "]", "at column " + std::to_string(x.column()) + " of " +
                                                             in_quotes(clip(e.text())) + ", for " +
                                                             describe_point(idx) + ": " + x.what());
          return;
        }
        if (keep) ++passed[c];
      }
      if (keep) sweep_.value_indices.insert(sweep_.value_indices.end(), idx.begin(), idx.end());
      // Next tuple: the last axis varies fastest.
      for (std::size_t a = n_axes; a-- > 0;) {
        if (++idx[a] < axes_[a].axis.values.size()) break;
        idx[a] = 0;
      }
    }
    if (!sweep_.value_indices.empty()) return;
    for (std::size_t c = 0; c < constraints_.size(); ++c) {
      if (passed[c] != 0) continue;
      const std::uint64_t before = c == 0 ? sweep_.product_size : passed[c - 1];
      error("constraint[" + std::to_string(c) + "]",
            "no point satisfies " + in_quotes(clip(constraints_[c].text())) + ": it rejects all " +
                std::to_string(before) + " points" +
                (c == 0 ? std::string(" of the axes") : " that pass the constraints before it") +
                " (expected a constraint that some point satisfies)");
      return;
    }
  }

  const tp::Sweep& m_;
  detail::SweepErrors& errors_;
  std::string base_dir_;
  tp::Scenario base_;
  tp::Scenario file_base_;                             ///< the base file as written (no `set`), when read cleanly
  std::shared_ptr<const detail::SourceMap> base_map_;  ///< its positions; null for an inline base
  std::string base_text_;
  Format base_format_ = Format::text;
  models::DescribedNodeTemplates described_;  ///< base_'s node_template blocks
  std::vector<AxisBuild> axes_;
  std::vector<Expression> constraints_;
  std::vector<std::vector<NameSource>> sources_;
  FieldAt nodes_;
  FieldAt template_;
  std::map<std::string, double> gpus_per_node_;
  models::Sweep sweep_;
};

}  // namespace

models::Sweep load_sweep_text(std::string_view text, std::string_view origin, Format format,
                              const std::string& base_dir) {
  if (text.size() > kMaxInputBytes) {
    throw ScenarioError({std::string(origin) + ": input too large (" + std::to_string(text.size()) +
                         " bytes; expected at most " + std::to_string(kMaxInputBytes) + ")"});
  }
  tp::Sweep message;
  detail::ReadOutcome read = detail::read_message(text, origin, format, message);
  if (!read.errors.empty()) {
    if (auto other = detail::wrong_kind_message(text, origin, format, message.GetDescriptor()))
      throw ScenarioError({*other});
    throw ScenarioError(std::move(read.errors));
  }
  const std::shared_ptr<const detail::SourceMap> map = std::move(read.source_map);
  detail::SweepErrors errors(message, *map, origin);
  SweepLoader loader(message, errors, base_dir);
  models::Sweep sweep = loader.load();
  sweep.path = std::string(origin);
  if (message.has_scenario()) {  // an inline base: its fields are positioned in the sweep file
    auto source = std::make_shared<models::SweepBaseSource>(loader.base_source(
        sweep.path, std::make_shared<UnderField>(map, message.GetDescriptor()->FindFieldByName("scenario"))));
    source->text = std::string(text);
    source->json = format == Format::json;
    sweep.base_source = std::move(source);
  }
  return sweep;
}

models::Sweep load_sweep_file(const std::string& path) {
  const InputText input = read_input(path);
  return load_sweep_text(input.text, path, input.format, detail::relative_base_dir(path));
}

}  // namespace traincast::io
