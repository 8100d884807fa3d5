// Loading scenarios: reading a file, parsing, applying overrides, converting (scenario_convert.h)
// and checking (scenario_checks.h); the embedded default scenario; scenarios written back as text
// and JSON (scenario_io.h).

#include "models/io/scenario_io.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include "models/io/file_kind.h"
#include "models/io/message_reader.h"
#include "models/io/node_template_io.h"
#include "models/io/overrides.h"
#include "models/io/profile_io.h"
#include "models/io/scenario_checks.h"
#include "models/io/scenario_convert.h"
#include "models/io/scenario_io_internal.h"
#include "traincast.pb.h"

namespace traincast::io {

namespace detail {
// Generated at build time from scenarios/default.textproto (models/io/embed_text.cmake).
extern const char kDefaultScenarioText[];
extern const std::size_t kDefaultScenarioTextSize;
}  // namespace detail

namespace {

namespace pb = google::protobuf;
namespace tp = traincast::proto;
using detail::kMaxInputBytes;
using detail::load_impl;
using detail::message_to_json;
using detail::Override;
using detail::PathStep;
using detail::SourceMap;
using detail::to_proto;

constexpr std::string_view kDefaultOrigin = "scenarios/default.textproto";

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

/// The overrides as --set gave them; the last from `last_option` instead when it is not empty
/// (compare's "--vary").
std::vector<Override> as_cli_overrides(const std::vector<std::string>& assignments,
                                       const std::string& last_option = "") {
  std::vector<Override> out;
  out.reserve(assignments.size());
  for (const std::string& a : assignments) out.push_back({a, "--set"});
  if (!out.empty() && !last_option.empty()) out.back().origin = last_option;
  return out;
}

/// The source map of a message that was never text: every field at 1:1.
class NoSource final : public detail::SourceMap {
 public:
  detail::SourcePos locate(const std::vector<PathStep>&) const override { return {1, 1}; }
};

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace

namespace detail {

models::Scenario load_impl(std::string_view text, std::string_view origin, Format format,
                           const std::vector<Override>& overrides, const ClusterUse* cluster_only,
                           std::vector<std::string>* layout_problems, bool* workload_given) {
  if (text.size() > kMaxInputBytes) {
    throw ScenarioError({std::string(origin) + ": input too large (" + std::to_string(text.size()) +
                         " bytes; expected at most " + std::to_string(kMaxInputBytes) + ")"});
  }
  tp::Scenario message;
  detail::ReadOutcome read = detail::read_message(text, origin, format, message);
  if (!read.errors.empty()) {
    if (auto other = detail::wrong_kind_message(text, origin, format, message.GetDescriptor()))
      throw ScenarioError({*other});
  }
  return load_parsed(message, *read.source_map, std::move(read.errors), origin, format, overrides, cluster_only,
                     layout_problems, text, workload_given);
}

std::string Checker::as_written(const std::string& path, const std::string& what) const {
  if (what.rfind("got ", 0) != 0) return what;
  const std::size_t end = std::min(what.find(' ', 4), what.size());
  const std::string shown = what.substr(4, end - 4);
  char* stop = nullptr;
  const double value = std::strtod(shown.c_str(), &stop);
  if (shown.empty() || stop != shown.c_str() + shown.size()) return what;
  if (overridden(path)) {
    // The value as typed after "field.path=" (--set, --vary, a case's `set`): "got 0x1p3", "got -0".
    if (override_values_ == nullptr) return what;
    const auto typed = override_values_->find(path);
    if (typed == override_values_->end()) return what;
    const std::size_t first = typed->second.find_first_not_of(" \t");
    if (first == std::string::npos) return what;
    const std::string raw = typed->second.substr(first, typed->second.find_last_not_of(" \t") + 1 - first);
    char* raw_stop = nullptr;
    const double read = std::strtod(raw.c_str(), &raw_stop);
    if (raw.empty() || raw_stop != raw.c_str() + raw.size() || read != value || raw == shown) return what;
    return "got " + raw + what.substr(end);
  }
  if (source_.empty()) return what;
  std::vector<PathStep> steps;
  if (!resolve_path(message_.GetDescriptor(), path, steps, nullptr) || steps.back().field->is_repeated() ||
      !present(path))
    return what;
  const SourcePos pos = map_.locate(steps);
  std::size_t i = 0;
  for (int line = 1; line < pos.line && i < source_.size(); ++i)
    if (source_[i] == '\n') ++line;
  for (int column = 1; column < pos.column && i < source_.size() && source_[i] != '\n'; ++i)
    column = source_[i] == '\t' ? (column + 7) / 8 * 8 + 1 : column + 1;
  // Text: the field's name is at pos, and its value follows the ':' after it; JSON: the value.
  if (!map_.scalars_at_value()) {
    i = source_.find(':', i);
    if (i == std::string_view::npos) return what;
    i = source_.find_first_not_of(" \t\r\n", i + 1);
  }
  const std::size_t stop_at = source_.find_first_not_of("0123456789+-.eExXabcdfABCDF", i);
  if (i == std::string_view::npos || stop_at == i) return what;
  const std::string raw(source_.substr(i, (stop_at == std::string_view::npos ? source_.size() : stop_at) - i));
  char* raw_stop = nullptr;
  const double read = std::strtod(raw.c_str(), &raw_stop);
  if (raw_stop != raw.c_str() + raw.size() || read != value || raw == shown) return what;
  return "got " + raw + what.substr(end);
}

models::Scenario load_parsed(tp::Scenario& message, const SourceMap& map, std::vector<std::string> errors,
                             std::string_view origin, Format format, const std::vector<Override>& overrides,
                             const ClusterUse* cluster_only, std::vector<std::string>* layout_problems,
                             std::string_view source, bool* workload_given) {
  std::map<std::string, std::string> override_origins, override_values;
  const bool file_has_workload = message.has_workload();
  detail::apply_overrides(message, overrides, errors, override_origins, &override_values);
  if (!errors.empty()) throw ScenarioError(std::move(errors));
  // traincast cluster: jobs of fixed duration_s are not simulated, so a job list whose every job
  // either has one or names its own workload needs no workload section (checked as a cluster-only
  // file, with its storage, reliability and cost sections); the first job that would run it:
  int job_needing_workload = -1;
  for (int i = 0; workload_given != nullptr && i < message.job_size() && job_needing_workload < 0; ++i)
    if (message.job(i).workload().empty() && !message.job(i).has_duration_s()) job_needing_workload = i;
  const bool job_list = workload_given != nullptr && message.job_size() > 0;
  // There a --set of workload.* would make a workload of that one field, refused as six "not set"
  // fields at 1:1; it changes nothing any job runs.
  if (!file_has_workload && message.has_workload() && job_list && job_needing_workload < 0) {
    for (const Override& o : overrides)
      if (o.assignment.rfind("workload.", 0) == 0)
        errors.push_back(o.origin + ": " + o.assignment.substr(0, o.assignment.find('=')) +
                         ": has no effect: the file has no workload section and every job has duration_s or names "
                         "its own workload (expected a field of the file's own sections, or the field in a job's "
                         "workload file)");
    if (!errors.empty()) throw ScenarioError(std::move(errors));
  }
  if (cluster_only != nullptr && (!message.has_cluster() || message.cluster().ByteSizeLong() == 0)) {
    // nccl-tests, explain and chakra run read only the cluster: a file without one (an empty file,
    // a workload-only scenario, an empty `cluster { }`) would silently simulate the default 1 x dgx_h100.
    const bool json = format == Format::json;
    const std::string block = json ? "a \"cluster\": {...} object" : "a cluster { ... } block";
    const std::string example = json ? "\"cluster\": {\"node_template\": \"dgx_h100\", \"num_nodes\": 2}"
                                     : "cluster { node_template: \"dgx_h100\" num_nodes: 2 }";
    const detail::SourcePos at =
        message.has_cluster() ? map.locate({detail::PathStep{message.GetDescriptor()->FindFieldByName("cluster"), -1}})
                              : detail::SourcePos{1, 1};
    throw ScenarioError({detail::format_pos(origin, at) + ": cluster: " +
                         (message.has_cluster() ? "the cluster section is empty" : "the file has no cluster section") +
                         " (expected " + block + ", e.g. " + example +
                         ": this command reads only the cluster, and without one it would simulate the default 1 x "
                         "dgx_h100)"});
  }
  const bool no_workload = cluster_only == nullptr && !message.has_workload();
  if (workload_given != nullptr) *workload_given = !no_workload;
  const bool job_list_only = no_workload && job_list;
  if (job_list_only && job_needing_workload >= 0) {
    const std::string job = "job[" + std::to_string(job_needing_workload) + "]";
    const detail::SourcePos at =
        map.locate({detail::PathStep{message.GetDescriptor()->FindFieldByName("job"), job_needing_workload}});
    const std::string block = format == Format::json ? "a \"workload\": {...} object" : "a workload { ... } block";
    errors.push_back(detail::format_pos(origin, at) + ": " + job + ": runs the scenario's own workload (it names no " +
                     job + ".workload and has no duration_s), and the file has no workload section (expected " + block +
                     " with model, parallel and training, " + job +
                     ".workload naming a zoo model or a scenario file, or " + job +
                     ".duration_s: a job of fixed run time is not simulated and needs no workload)");
  } else if (no_workload && !job_list_only) {
    // Without this, each required workload field reports "not set" at 1:1 (7 lines for one cause).
    const std::string block = format == Format::json ? "a \"workload\": {...} object" : "a workload { ... } block";
    const bool cluster = message.has_cluster();
    const std::string what =
        detail::format_pos(origin, {1, 1}) + ": workload: " +
        (cluster ? "the file describes only a cluster, it has no workload section (expected " + block +
                       " with model, parallel and training, as in scenarios/default.textproto; a cluster-only "
                       "file is read by traincast nccl-tests, traincast explain and traincast chakra run)"
                 : "the file has no workload section (expected " + block +
                       " with model, parallel and training, as in scenarios/default.textproto)");
    if (!cluster) throw ScenarioError({what});
    errors.push_back(what);  // and the cluster's own errors below, checked as a cluster-only file's
  }

  models::Scenario scenario;
  std::vector<std::string> bad_enums;
  Checker checker(message, map, origin, override_origins, errors);
  checker.set_source(source);
  checker.set_override_values(&override_values);
  // The scenario's own node templates first: what follows looks templates up by name in them.
  scenario.cluster.described_node_templates = read_scenario_node_templates(message, checker);
  to_struct(message, scenario, bad_enums);
  checker.set_layout_search(layout_problems);
  enum_errors(bad_enums, message, checker);
  check_scenario(scenario, checker, cluster_only == nullptr && !no_workload, job_list_only);
  // A forced algorithm or protocol is refused at run time, when a collective it cannot run is
  // issued (the op and group are known only then); the refusal cites where it was written.
  models::CollectiveSpec& collectives = scenario.cluster.collectives;
  if (checker.present("cluster.collectives.algorithm"))
    collectives.algorithm_origin = checker.where("cluster.collectives.algorithm");
  if (checker.present("cluster.collectives.protocol"))
    collectives.protocol_origin = checker.where("cluster.collectives.protocol");
  if (cluster_only != nullptr) unused_override_errors(override_origins, *cluster_only, checker);
  // The node templates' notes first, then those of the checks (cluster.overrides naming one element twice).
  std::vector<std::string> checks_notes = std::move(scenario.input_warnings);
  scenario.input_warnings = unused_node_template_notes(message, scenario, checker);
  scenario.input_warnings.insert(scenario.input_warnings.end(), checks_notes.begin(), checks_notes.end());
  if (cluster_only == nullptr && !no_workload) {
    for (std::string& note : unused_local_storage_notes(scenario, checker))
      scenario.input_warnings.push_back(std::move(note));
  }
  if (message.has_profile() && !message.profile().empty()) {
    // Relative to the scenario file's directory (origin is its path for files; the working
    // directory for a pipe: relative_base_dir).
    const std::filesystem::path rel(message.profile());
    const std::string resolved =
        rel.is_absolute() ? rel.string()
                          : (std::filesystem::path(detail::relative_base_dir(std::string(origin))) / rel).string();
    try {
      scenario.cluster.profile = load_profile_file(resolved);
    } catch (const ScenarioError& e) {
      checker.error("profile", "cannot use profile \"" + detail::clip(message.profile()) + "\" (" +
                                   std::to_string(e.errors().size()) + " error(s) follow)");
      errors.insert(errors.end(), e.errors().begin(), e.errors().end());
    }
  }
  if (!errors.empty()) throw ScenarioError(std::move(errors));
  return scenario;
}

models::Scenario load_scenario_message(const tp::Scenario& message, std::string_view origin,
                                       const std::vector<std::string>& overrides) {
  tp::Scenario copy = message;
  const NoSource no_source;
  return load_parsed(copy, no_source, {}, origin, Format::text, as_cli_overrides(overrides), nullptr);
}

std::string message_to_json(const pb::Message& message, bool all_fields, const char* what, bool indent) {
  pb::util::JsonPrintOptions options;
  options.add_whitespace = indent;
  options.always_print_primitive_fields = all_fields;
  options.preserve_proto_field_names = true;
  std::string out;
  const auto status = pb::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) throw std::runtime_error(std::string(what) + ": " + std::string(status.message()));
  if (indent && (out.empty() || out.back() != '\n')) out += '\n';
  return out;
}

}  // namespace detail

namespace {

/// ReadOnceScope's state: the scopes alive and the texts of the non-regular files read in them.
struct ReadOnce {
  std::mutex mutex;
  int scopes = 0;
  std::map<std::string, std::string> texts;  ///< by path as given
};
ReadOnce& read_once() {
  static ReadOnce state;
  return state;
}

std::string read_input_file_once(const std::string& path, std::string_view expected);

}  // namespace

ReadOnceScope::ReadOnceScope() {
  const std::lock_guard lock(read_once().mutex);
  ++read_once().scopes;
}

ReadOnceScope::~ReadOnceScope() {
  const std::lock_guard lock(read_once().mutex);
  if (--read_once().scopes == 0) read_once().texts.clear();
}

bool is_stream_input(const std::string& path) {
  if (path.empty()) return false;
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  return std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) && !std::filesystem::is_directory(st);
}

std::string read_input_file(const std::string& path, std::string_view expected) {
  // A pipe or a FIFO can be read once: kept in a scope.
  if (!is_stream_input(path)) return read_input_file_once(path, expected);
  ReadOnce& state = read_once();
  {
    const std::lock_guard lock(state.mutex);
    if (const auto it = state.texts.find(path); it != state.texts.end()) return it->second;
  }
  std::string text = read_input_file_once(path, expected);
  const std::lock_guard lock(state.mutex);
  if (state.scopes > 0) state.texts.emplace(path, text);
  return text;
}

namespace {

std::string read_input_file_once(const std::string& path, std::string_view expected) {
  if (path.empty()) throw ScenarioError({"\"\": an empty file name (expected the path of an input file)"});
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ScenarioError(
        {path + ": cannot read file (" + std::make_error_code(std::errc::is_a_directory).message() + ")"});
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno != 0 ? errno : ENOENT;
    throw ScenarioError({path + ": cannot read file (" + std::generic_category().message(err) + ")"});
  }
  // At most kMaxInputBytes + 1 bytes, whatever the file claims: /dev/zero, a FIFO or a /proc file
  // has no size to check up front, and would otherwise be read until memory runs out. A NUL byte
  // never occurs in text (the test git and grep use to call a file binary); without this the
  // parsers report a puzzle such as "1:1: unexpected end of file" (the tokenizer stops at NUL).
  std::string text;
  std::vector<char> chunk(std::size_t{1} << 16);
  while (in) {
    const std::size_t want = std::min(chunk.size(), kMaxInputBytes + 1 - text.size());
    in.read(chunk.data(), static_cast<std::streamsize>(want));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (const void* nul = std::memchr(chunk.data(), '\0', got); nul != nullptr) {
      const auto in_chunk = static_cast<std::size_t>(static_cast<const char*>(nul) - chunk.data());
      const std::size_t at = text.size() + in_chunk;
      const auto line =
          1 + std::count(text.begin(), text.end(), '\n') + std::count(chunk.data(), chunk.data() + in_chunk, '\n');
      throw ScenarioError({path + ":" + std::to_string(line) + ": not a text file (a NUL byte at offset " +
                           std::to_string(at) + "; expected " + std::string(expected) + ")"});
    }
    text.append(chunk.data(), got);
    if (text.size() > kMaxInputBytes) {
      throw ScenarioError({path + ": input too large (more than " + std::to_string(kMaxInputBytes) +
                           " bytes; expected at most " + std::to_string(kMaxInputBytes) + ", 64 MiB)"});
    }
  }
  if (in.bad()) throw ScenarioError({path + ": cannot read file (read error)"});
  return text;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Public API
// ------------------------------------------------------------------------------------------------

std::optional<detail::MessagePosition> detail::message_position(const std::string& m) {
  const auto digits = [&m](std::size_t from, long& value) {
    std::size_t at = from;
    value = 0;
    while (at < m.size() && at - from < 9 && std::isdigit(static_cast<unsigned char>(m[at])))
      value = value * 10 + (m[at++] - '0');
    return at > from && at < m.size() && m[at] == ':' ? at : std::string::npos;
  };
  for (std::size_t colon = m.find(':'); colon != std::string::npos; colon = m.find(':', colon + 1)) {
    if (m.compare(colon, 2, ": ") == 0) return std::nullopt;  // a field or message separator first
    MessagePosition p;
    const std::size_t line_end = colon > 0 ? digits(colon + 1, p.line) : std::string::npos;
    if (line_end == std::string::npos) continue;
    p.file = m.substr(0, colon);
    if (m.compare(line_end, 2, ": ") == 0) return p;
    if (const std::size_t col_end = digits(line_end + 1, p.column);
        col_end != std::string::npos && m.compare(col_end, 2, ": ") == 0)
      return p;
  }
  return std::nullopt;
}

namespace {

using detail::message_position;
using detail::MessagePosition;

/// `errors` with each file's positioned messages in line:column order (stable for ties), each in
/// a place one of that file's messages had: a check that runs later may find an earlier line
/// (fresh user, session 42: a sweep file's `metric[0]` error at line 5 came before lines 2 to 4).
/// Messages without a position, and the order of files, stay as found.
std::vector<std::string> by_position(std::vector<std::string> errors) {
  std::vector<std::optional<MessagePosition>> at(errors.size());
  std::transform(errors.begin(), errors.end(), at.begin(), message_position);
  std::vector<bool> done(errors.size(), false);
  std::vector<std::string> out = errors;
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!at[i] || done[i]) continue;
    std::vector<std::size_t> slots;  // this file's messages, in the order found
    for (std::size_t j = i; j < errors.size(); ++j)
      if (at[j] && !done[j] && at[j]->file == at[i]->file) slots.push_back(j), done[j] = true;
    std::vector<std::size_t> order = slots;
    std::stable_sort(order.begin(), order.end(), [&at](std::size_t a, std::size_t b) {
      return std::pair(at[a]->line, at[a]->column) < std::pair(at[b]->line, at[b]->column);
    });
    for (std::size_t k = 0; k < slots.size(); ++k) out[slots[k]] = errors[order[k]];
  }
  return out;
}

}  // namespace

ScenarioError::ScenarioError(std::vector<std::string> errors)
    : ScenarioError(Ordered{}, by_position(std::move(errors))) {}

ScenarioError::ScenarioError(Ordered /*tag*/, std::vector<std::string> ordered)
    : std::runtime_error(join_lines(ordered)), errors_(std::move(ordered)) {}

namespace {

/// format_for_path's format; nullopt for a file that exists and whose name has no extension (read
/// it to tell: format_of_text).
std::optional<Format> format_by_name(const std::string& path) {
  // An empty name (`traincast run ''`, an unset shell variable) would print as ": cannot read".
  if (path.empty()) throw ScenarioError({"\"\": an empty file name (expected the path of a scenario file)"});
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ScenarioError({path + ": is a directory (expected a .textproto, .txtpb, .pbtxt, .txt or .json file)"});
  }
  const std::string ext = extension_of(path);
  if (ext == ".textproto" || ext == ".txtpb" || ext == ".pbtxt" || ext == ".txt") return Format::text;
  if (ext == ".json") return Format::json;
  // A missing file is named as missing, whatever its extension (`traincast run nosuchfile`).
  if (!std::filesystem::exists(path, ec) && !std::filesystem::is_symlink(path, ec))
    throw ScenarioError({path + ": cannot read file (No such file or directory)"});
  if (ext.empty()) return std::nullopt;
  throw ScenarioError(
      {path + ": unknown file extension \"" + ext + "\" (expected .textproto, .txtpb, .pbtxt, .txt or .json)"});
}

}  // namespace

Format format_for_path(const std::string& path) {
  if (const std::optional<Format> format = format_by_name(path)) return *format;
  // ".json" is a hidden file's whole name to std::filesystem, without an extension (fresh user 39).
  const std::string name = std::filesystem::path(path).filename().string();
  const std::string hidden =
      name.size() > 1 && name[0] == '.' ? " (a name that starts with its only dot, \"" + name + "\", has none)" : "";
  throw ScenarioError(
      {path + ": unknown file extension \"\"" + hidden + " (expected .textproto, .txtpb, .pbtxt, .txt or .json)"});
}

Format format_of_text(std::string_view text) {
  std::size_t i = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // a UTF-8 byte-order mark, as read_message skips it
  i = text.find_first_not_of(" \t\r\n", i);
  return i != std::string_view::npos && text[i] == '{' ? Format::json : Format::text;
}

std::string detail::relative_base_dir(const std::string& path) {
  return is_stream_input(path) ? std::string() : std::filesystem::path(path).parent_path().string();
}

InputText read_input(const std::string& path) {
  const std::optional<Format> by_name = format_by_name(path);
  std::string text = read_input_file(path);
  const Format format = by_name ? *by_name : format_of_text(text);
  return {std::move(text), format};
}

namespace {

/// load_impl on `text` read from `origin`; an error positioned in `origin` (a file the user named,
/// or the embedded default) gets a note after it saying what read it: `lead` (", the embedded
/// default ...") and the --set / --vary overrides that changed it, since a check across fields
/// is reported at the field it names even where an override set the other one. Without overrides
/// and without a lead, no note.
models::Scenario load_noting_overrides(std::string_view text, const std::string& origin, Format format,
                                       const std::vector<Override>& cli, const std::string& lead,
                                       const ClusterUse* cluster_only, std::vector<std::string>* layout_problems,
                                       bool* workload_given = nullptr) {
  try {
    return load_impl(text, origin, format, cli, cluster_only, layout_problems, workload_given);
  } catch (const ScenarioError& e) {
    // --threads (traincast run) is an override too, but no check of a file reads it: left out.
    std::vector<Override> changes;
    std::copy_if(cli.begin(), cli.end(), std::back_inserter(changes),
                 [](const Override& o) { return o.origin != "--threads"; });
    if (changes.empty() && lead.empty()) throw;
    std::vector<std::string> errors = e.errors();
    const bool in_origin = std::any_of(errors.begin(), errors.end(),
                                       [&origin](const std::string& m) { return m.rfind(origin + ":", 0) == 0; });
    if (!in_origin) throw;
    std::string note = origin + ": note: " + (lead.empty() ? "the file" : lead);
    if (!changes.empty()) {
      note += lead.empty() ? " as changed by" : ", as changed by";
      for (const Override& o : changes)
        note.append(" ").append(o.origin).append(" ").append(detail::clip(o.assignment));
    }
    errors.push_back(note);
    throw ScenarioError(std::move(errors));
  }
}

/// default_scenario, with layout_problems as load_impl takes it. An error positioned in
/// scenarios/default.textproto points at a file the user never named: the note says that it is the
/// embedded default and which --set options changed it.
models::Scenario load_default(const std::vector<std::string>& overrides, std::vector<std::string>* layout_problems,
                              const std::string& last_option = "") {
  return load_noting_overrides(
      default_scenario_text(), std::string(kDefaultOrigin), Format::text, as_cli_overrides(overrides, last_option),
      "this is traincast's embedded default scenario (no scenario file was given)", nullptr, layout_problems);
}

}  // namespace

models::Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides,
                                    const std::string& last_option) {
  const InputText input = read_input(path);
  return load_noting_overrides(input.text, path, input.format, as_cli_overrides(overrides, last_option), "", nullptr,
                               nullptr);
}

models::Scenario load_scenario_text(std::string_view text, std::string_view origin, Format format,
                                    const std::vector<std::string>& overrides) {
  return load_impl(text, origin, format, as_cli_overrides(overrides));
}

models::Scenario load_cluster_scenario_file(const std::string& path, const std::vector<std::string>& overrides,
                                            const ClusterUse& use) {
  const InputText input = read_input(path);
  return load_noting_overrides(input.text, path, input.format, as_cli_overrides(overrides), "", &use, nullptr);
}

namespace detail {

models::Scenario load_job_list_file(const std::string& path, const std::vector<std::string>& overrides,
                                    bool& workload_given) {
  const InputText input = read_input(path);
  return load_noting_overrides(input.text, path, input.format, as_cli_overrides(overrides), "", nullptr, nullptr,
                               &workload_given);
}

}  // namespace detail

std::string_view default_scenario_text() { return {detail::kDefaultScenarioText, detail::kDefaultScenarioTextSize}; }

models::Scenario default_scenario(const std::vector<std::string>& overrides, const std::string& last_option) {
  return load_default(overrides, nullptr, last_option);
}

models::Scenario load_scenario_for_layout_search(const std::string& path, const std::vector<std::string>& overrides,
                                                 std::vector<std::string>& layout_problems) {
  layout_problems.clear();
  if (path.empty()) return load_default(overrides, &layout_problems);
  const InputText input = read_input(path);
  return load_noting_overrides(input.text, path, input.format, as_cli_overrides(overrides), "", nullptr,
                               &layout_problems);
}

std::string scenario_to_text(const models::Scenario& scenario) {
  std::string out;
  pb::TextFormat::Printer printer;
  printer.PrintToString(to_proto(scenario), &out);
  return out;
}

std::string scenario_to_json(const models::Scenario& scenario) {
  return message_to_json(to_proto(scenario), false, "scenario_to_json");
}

std::string field_position(const std::string& path, const std::string& field_path) {
  try {
    const InputText input = read_input(path);
    tp::Scenario message;
    const detail::ReadOutcome read = detail::read_message(input.text, path, input.format, message);
    std::vector<PathStep> steps;
    if (!detail::resolve_path(message.GetDescriptor(), field_path, steps, nullptr))
      return detail::format_pos(path, {1, 1});
    return detail::format_pos(path, read.source_map->locate(steps));
  } catch (const std::exception&) {
    return detail::format_pos(path, {1, 1});
  }
}

}  // namespace traincast::io
