#pragma once
// Internal to models/io: what the scenario loader, the semantic checks and the validation-case
// loader share (the Checker that positions semantic errors, the loader core, the JSON printer).

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "models/io/int_ranges.h"
#include "models/io/message_reader.h"
#include "models/io/overrides.h"
#include "models/io/scenario_io.h"

namespace traincast::proto {
class Scenario;  // traincast.pb.h
}  // namespace traincast::proto

namespace traincast::io::detail {

/// Inputs larger than this are refused before parsing (scenario_io.h).
using io::kMaxInputBytes;

/// Positions and presence of fields, and the error list, for the semantic checks.
class Checker {
 public:
  Checker(const google::protobuf::Message& message, const SourceMap& map, std::string_view origin,
          const std::map<std::string, std::string>& override_origins, std::vector<std::string>& errors)
      : message_(message), map_(map), origin_(origin), override_origins_(override_origins), errors_(errors) {}

  /// Names of the scenario's own node_template blocks that failed their checks (and so are not
  /// among its templates): a cluster or node group naming one gets no second "unknown node
  /// template" error.
  std::set<std::string> refused_node_templates;

  /// "origin:line:col" of the field at `path` (or of its deepest written ancestor), or the origin
  /// of the override that set it.
  std::string where(const std::string& path) const {
    if (const std::string* o = override_origin(path)) return *o;
    std::vector<PathStep> steps;
    if (!resolve_path(message_.GetDescriptor(), path, steps, nullptr)) return format_pos(origin_, {1, 1});
    return format_pos(origin_, map_.locate(steps));
  }

  /// Whether the field at `path` was written by an override (--set or a case's `set`).
  bool overridden(const std::string& path) const { return override_origin(path) != nullptr; }

  /// The origin of the override that set `path` or, for a list, one of its entries
  /// ("path[i]...", `--set workload.parallel.pipeline_stage_layers[0]=12`), or that added the list
  /// entry `path` lies in (`--set cluster.overrides[0].clock_factor=0.9` on a file without
  /// overrides: cluster.overrides[0].select); null when none did.
  const std::string* override_origin(const std::string& path) const {
    if (const auto it = override_origins_.find(path); it != override_origins_.end()) return &it->second;
    const std::string entry = path + "[";
    const auto it = override_origins_.lower_bound(entry);
    if (it != override_origins_.end() && it->first.compare(0, entry.size(), entry) == 0) return &it->second;
    // An enclosing entry "a.b[i]" is recorded only when an override added it (apply_overrides).
    for (std::size_t end = path.find("]."); end != std::string::npos; end = path.find("].", end + 1))
      if (const auto added = override_origins_.find(path.substr(0, end + 1)); added != override_origins_.end())
        return &added->second;
    return nullptr;
  }

  /// Whether the field at `path` was written (file or override).
  bool present(const std::string& path) const {
    std::vector<PathStep> steps;
    if (!resolve_path(message_.GetDescriptor(), path, steps, nullptr)) return false;
    const google::protobuf::Message* m = &message_;
    for (const PathStep& step : steps) {
      const google::protobuf::Reflection* r = m->GetReflection();
      const bool is_message = step.field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE;
      if (step.field->is_repeated()) {
        if (step.index < 0 || step.index >= r->FieldSize(*m, step.field)) return false;
        if (is_message) m = &r->GetRepeatedMessage(*m, step.field, step.index);
        continue;
      }
      if (!r->HasField(*m, step.field)) return false;
      if (is_message) m = &r->GetMessage(*m, step.field);
    }
    return true;
  }

  /// Appends "where(path): path: what" to the error list. A `what` that starts "got N" names the
  /// number as the file wrote it ("got 1e300", "got -0", "got .99999999999999999999") where N is
  /// the value read from it (1e+300, 0, 1): as_written.
  void error(const std::string& path, const std::string& what) {
    errors_.push_back(where(path) + ": " + path + ": " + as_written(path, what));
  }

  /// The document's text, for as_written (empty: messages keep the value as read).
  void set_source(std::string_view text) { source_ = text; }

  /// Each overridden path's value as typed (apply_overrides' `values`), for as_written; null: an
  /// overridden field's messages keep the value as read. Must outlive the checker.
  void set_override_values(const std::map<std::string, std::string>* values) { override_values_ = values; }

  /// For a rule that ties the scenario's parallel layout (tp, pp, dp, schedule, virtual_stages,
  /// uneven_stages, sequence_parallel, zero_stage, micro_batch_size and the overlap flags that
  /// depend on them) to its model, batch or cluster: an error as error() makes it, or, while a
  /// layout search loads the scenario (set_layout_search), a layout problem instead. `causes`: the
  /// other fields the rule reads; when an override (a sweep's axis value or `set` entry, --set)
  /// wrote one of them and not `path`, the message is placed at the first such override (fresh
  /// user 43: an axis over micro_batch_size was placed at the base file's global_batch_size). When
  /// an override wrote one of `causes`, the message ends naming every override of `path` and
  /// `causes` with its value (session 44: with several --set, "--set:" alone did not say which),
  /// as the note after a file's error names them: "; micro_batch_size and dp as changed by --set
  /// workload.training.micro_batch_size=3 --set workload.parallel.dp=2"; a sweep's axis value or
  /// `set` entry by its field and value, and its position where that is not the message's
  /// ("; dp as changed by workload.parallel.dp=8").
  void layout_error(const std::string& path, const std::string& what, std::initializer_list<const char*> causes = {}) {
    std::string at = where(path);
    const auto set_cause =
        std::find_if(causes.begin(), causes.end(), [this](const char* cause) { return overridden(cause); });
    if (!overridden(path) && set_cause != causes.end()) at = *override_origin(*set_cause);
    std::string message = at + ": " + path + ": " + what;
    if (set_cause != causes.end()) message += changed_by(at, path, causes);
    (layout_problems_ != nullptr ? *layout_problems_ : errors_).push_back(std::move(message));
  }

  /// From now on layout_error() appends to `problems` (null: to the errors again), for
  /// load_scenario_for_layout_search.
  void set_layout_search(std::vector<std::string>* problems) { layout_problems_ = problems; }

  /// The integer field at `path` within its own range (int_ranges.h, the table the parsers' messages
  /// quote too), else "not set" / "got V" (expected that range). Cross-field limits are checked by
  /// the caller after this.
  bool int_field(const std::string& path, std::int64_t value) {
    std::vector<PathStep> steps;
    if (!resolve_path(message_.GetDescriptor(), path, steps, nullptr))
      throw std::logic_error("Checker::int_field: no field " + path);
    const google::protobuf::FieldDescriptor* field = steps.back().field;
    const IntRange r = int_range(field);
    if (value >= r.minimum && value <= r.maximum) return true;
    const std::string expected = "(expected " + expected_integer(field) + ")";
    error(path, present(path) ? "got " + std::to_string(value) + " " + expected : "not set " + expected);
    return false;
  }

  /// finite value >= minimum (or > minimum when strict).
  bool finite_at_least(const std::string& path, double value, double minimum, bool strict) {
    if (std::isfinite(value) && (strict ? value > minimum : value >= minimum)) return true;
    error(path,
          "got " + number(value) + " (expected a finite number " + (strict ? "> " : ">= ") + number(minimum) + ")");
    return false;
  }

  /// finite minimum <= value <= maximum (minimum < value when strict); `why` says where the
  /// maximum comes from (appended as ": why").
  bool finite_within(const std::string& path, double value, double minimum, bool strict, double maximum,
                     const std::string& why) {
    if (std::isfinite(value) && (strict ? value > minimum : value >= minimum) && value <= maximum) return true;
    error(path, "got " + number(value) + " (expected a finite number " + (strict ? "> " : ">= ") + number(minimum) +
                    " and <= " + number(maximum) + ": " + why + ")");
    return false;
  }

  /// `v` in the fewest digits that read back as `v` (std::to_chars: 1.0000001, 0.1, 1e+15), for
  /// messages: a value as written, never rounded to one that passes ("got 1" for 1.0000001).
  static std::string number(double v) {
    std::array<char, 32> buf{};
    const auto end = std::to_chars(buf.data(), buf.data() + buf.size(), v).ptr;
    return std::string(buf.data(), end);
  }

 private:
  /// For layout_error: "; dp as changed by --set workload.parallel.dp=2" for the fields among
  /// `path` and `causes` an override wrote (by their last segment, then each override: a flag's
  /// origin ("--set", "--vary") before its assignment, a position after it unless it is `at`).
  std::string changed_by(const std::string& at, const std::string& path,
                         std::initializer_list<const char*> causes) const {
    std::vector<std::string> fields{path};
    fields.insert(fields.end(), causes.begin(), causes.end());
    std::vector<std::string> names;
    std::string overrides;
    for (const std::string& field : fields) {
      const std::string* origin = override_origin(field);
      if (origin == nullptr) continue;
      std::string assignment = field;
      if (override_values_ != nullptr)
        if (const auto v = override_values_->find(field); v != override_values_->end()) assignment += "=" + v->second;
      const bool flag = origin->rfind("--", 0) == 0;
      names.push_back(field.substr(field.rfind('.') + 1));
      overrides += overrides.empty() ? "" : " ";
      overrides += flag ? *origin + " " + assignment : assignment + (*origin == at ? "" : " at " + *origin);
    }
    std::string named = names.front();
    for (std::size_t i = 1; i < names.size(); ++i) named += (i + 1 == names.size() ? " and " : ", ") + names[i];
    return "; " + named + " as changed by " + overrides;
  }

  /// `what` with its leading "got N" replaced by the number as written at `path` when that reads
  /// back as N (scenario_io.cc): the override's value as typed when an override set `path`
  /// (set_override_values), else the file's text; `what` unchanged otherwise (a list, no source).
  std::string as_written(const std::string& path, const std::string& what) const;

  const google::protobuf::Message& message_;
  const SourceMap& map_;
  std::string_view source_;
  const std::map<std::string, std::string>* override_values_ = nullptr;
  std::string_view origin_;
  const std::map<std::string, std::string>& override_origins_;
  std::vector<std::string>& errors_;
  std::vector<std::string>* layout_problems_ = nullptr;
};

/// `names` joined by ", ", for "(expected one of: ...)".
inline std::string names_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Parse, override, convert, check. Throws ScenarioError with everything found. cluster_only:
/// null for a whole scenario; else what a cluster-only command reads (the workload is not checked).
/// overrides: applied in order; each names its own origin for messages ("--set", or a cases file
/// position).
/// layout_problems: null for a whole check; else the scenario's own layout is not checked against
/// its model, batch and cluster and what those rules find lands here (Checker::layout_error).
/// workload_given: null for every command but traincast cluster; else the file may have no
/// workload section when every job that would run it (no `workload` of its own) has a fixed
/// `duration_s` (nothing is simulated for it): the workload is then not checked (its defaults stay
/// in the struct), and *workload_given says whether the file had one. A job that needs the missing
/// workload is an error at that job.
models::Scenario load_impl(std::string_view text, std::string_view origin, Format format,
                           const std::vector<Override>& overrides, const ClusterUse* cluster_only = nullptr,
                           std::vector<std::string>* layout_problems = nullptr, bool* workload_given = nullptr);

/// load_impl after parsing: `message` as read from `origin` (`map` positions its fields; `errors`
/// are the reader's; `source` is the text read, for values as written, or empty), then override,
/// convert, check. `format` only words the message for a file without a workload. Throws
/// ScenarioError with everything found.
models::Scenario load_parsed(proto::Scenario& message, const SourceMap& map, std::vector<std::string> errors,
                             std::string_view origin, Format format, const std::vector<Override>& overrides,
                             const ClusterUse* cluster_only, std::vector<std::string>* layout_problems = nullptr,
                             std::string_view source = {}, bool* workload_given = nullptr);

/// As load_scenario_file (with load_impl's workload_given), for `traincast cluster`'s job list
/// (cluster_jobs_io.cc). Throws ScenarioError as load_scenario_file.
models::Scenario load_job_list_file(const std::string& path, const std::vector<std::string>& overrides,
                                    bool& workload_given);

/// A scenario from a message that was never text (a sweep point: the sweep's base message): as
/// load_scenario_text(text of `message`, origin, Format::text, overrides), the "field.path=value"
/// overrides applied in order to a copy (their errors name "--set"), converted and checked as a
/// scenario file is. Messages about the message's own fields are positioned "origin:1:1" (it has
/// no source). Throws ScenarioError with every problem found.
models::Scenario load_scenario_message(const proto::Scenario& message, std::string_view origin,
                                       const std::vector<std::string>& overrides);

/// The directory a relative path written in the input at `path` is taken from (a sweep's
/// scenario_file, a cases file's scenario and logs, a scenario's profile, a profile's base, a
/// job's workload): the input's own directory for a regular file (or one that does not exist); ""
/// (the working directory) for an input that is not a regular file: a pipe such as the shell's
/// <(cat x), /dev/fd/N, a FIFO, /dev/stdin, whose directory (/dev/fd) says nothing about where its
/// text came from.
std::string relative_base_dir(const std::string& path);

/// `message` as indented JSON with proto field names, ending in a newline (`indent` false: on one
/// line, without whitespace or the newline); `all_fields` prints fields at their default too.
/// Throws std::runtime_error naming `what` if protobuf refuses.
std::string message_to_json(const google::protobuf::Message& message, bool all_fields, const char* what,
                            bool indent = true);

/// Where a message "FILE:LINE:COL: ..." or "FILE:LINE: ..." points: its FILE, LINE and COL (0 when
/// it has none); nullopt for a message without a position ("--set: ...", "FILE: cannot read file").
/// FILE is what comes before the first ":LINE:" that a space or ":COL: " follows, and holds no ": "
/// (the separator after a position or field: "--set: a.b: 3:4: ..." is not positioned).
struct MessagePosition {
  std::string file;
  long line = 0, column = 0;
};
std::optional<MessagePosition> message_position(const std::string& m);

}  // namespace traincast::io::detail
