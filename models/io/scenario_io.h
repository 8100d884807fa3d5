#pragma once
// Reading scenarios and validation cases, writing reports. The public face of models/io: plain
// structs in and out (models/spec/scenario.h, models/spec/report.h, models/io/validation_case.h); the
// protobuf schema (models/io/traincast.proto) stays behind this header. Reports are written by
// models/io/report_io.h and validation cases read by models/io/validation_cases_io.h, both
// included here.
//
// Error discipline (DESIGN §6, SST-style): every problem found in an input is collected, then one
// ScenarioError carries them all. Each message reads
//     file:line:col: field.path: what is wrong (expected ...)
// with 1-based line and column (a tab advances the column to the next multiple of 8, as protobuf's
// tokenizer counts). Values that came from an override name the override's origin instead of the
// file ("--set: workload.parallel.tp: ..."). Problems with the file itself have no position
// ("path: cannot read file (No such file or directory)"). Syntax errors outside any field have no
// field path. Parse errors (syntax, unknown fields, wrong types) are reported on their own:
// semantic checks run only on a document that parsed cleanly, so that one misspelled key does not
// also produce a "missing value" error.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/io/report_io.h"
#include "models/io/validation_cases_io.h"
#include "models/spec/scenario.h"

namespace traincast::io {

/// Largest workload.training.train_tokens: 1e15, about 28x the largest published pretraining run
/// (Qwen3: about 36T tokens, Qwen3 Technical Report, arXiv:2505.09388, 2025; Llama 3: 15.6T,
/// arXiv:2407.21783, 2024). Beyond it a time-to-train is not a plan, and 1e30-style typos would
/// print 10^20-day trainings.
inline constexpr double kMaxTrainTokens = 1e15;
inline constexpr std::string_view kTrainTokensWhy =
    "about 28x the largest published pretraining runs: Qwen3 36T tokens (Qwen3 Technical Report 2025), "
    "Llama 3 15.6T (Meta 2024)";

/// Range of options.threads and of `traincast run --threads`: 0 (all hardware threads) or 1 to
/// kMaxThreads threads for the run (ECMP draws, op-graph generation, failure draws). More threads
/// than the host's hardware threads do not make it faster; 1024 is above the largest two-socket
/// server's 768 (2 x AMD EPYC 9965, 192 cores with 2-way SMT each, AMD datasheet). kThreadsWhy is
/// that reason as the error messages quote it.
inline constexpr int kMaxThreads = 1024;
inline constexpr std::string_view kThreadsWhy =
    "0 for all hardware threads; more threads than hardware threads do not speed up a run; 1024 is above a "
    "two-socket AMD EPYC 9965 server's 768";

/// Largest input file or text any loader takes: 64 MiB (67,108,864 bytes). A scenario, sweep,
/// case file, profile or measurement file is a few kB (the largest shipped file is under 1 MiB);
/// the limit only stops a wrong path (a device such as /dev/zero, a multi-GB log) from being
/// read until memory runs out. read_input_file reads at most kMaxInputBytes + 1 bytes of any file;
/// the load_*_text functions refuse longer text. The one definition for models/io (calibrate's
/// nccl-tests log reader, std-only by docs/layout.md, keeps its own copy of the value).
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

/// Every error found in one input: each file's positioned messages ("FILE:LINE:COL: ...") in
/// line:column order, stable for ties, the others where they were found. what() is the messages
/// joined by '\n'.
class ScenarioError : public std::runtime_error {
 public:
  /// errors: at least one message, each in the format described at the top of this header.
  explicit ScenarioError(std::vector<std::string> errors);
  /// The individual messages, without trailing newlines.
  const std::vector<std::string>& errors() const noexcept { return errors_; }

 private:
  struct Ordered {};
  /// `ordered`: the messages already in their printed order (what() joins them).
  ScenarioError(Ordered, std::vector<std::string> ordered);
  std::vector<std::string> errors_;
};

/// Whether `path` names an input that exists and is neither a regular file nor a directory: a pipe
/// such as the shell's <(cmd), /dev/fd/N, a FIFO, /dev/stdin. Such an input can be read only once
/// (ReadOnceScope), and its name says nothing about where its text came from (relative paths in it
/// are taken from the working directory; compare labels its column by the scenario's name).
bool is_stream_input(const std::string& path);

/// The whole contents of a file (bytes as stored). Throws ScenarioError "PATH: cannot read file (reason)"
/// when missing, a directory, unreadable or a read fails; "PATH: input too large (more than 67108864
/// bytes; expected at most 67108864, 64 MiB)" after reading kMaxInputBytes + 1 bytes of a longer
/// file, regular or not (/dev/zero, a FIFO); "PATH:LINE: not a text file (a NUL byte at offset N;
/// expected EXPECTED)" for a NUL byte, LINE counting from 1 and `expected` saying what text the
/// caller reads ("a sweep CSV, text as traincast sweep writes it").
std::string read_input_file(const std::string& path,
                            std::string_view expected = "text, e.g. a .textproto or .json file");

/// Input syntax: protobuf text format or proto3 JSON (same schema, same field names; JSON also
/// accepts protobuf's lowerCamel names).
enum class Format { text, json };

/// The format a file name implies: .textproto, .txtpb, .pbtxt, .txt -> text; .json -> json.
/// Throws ScenarioError("path: unknown file extension ...") for anything else. For output paths
/// (and inputs whose name must say it); an input is read with read_input.
Format format_for_path(const std::string& path);

/// The format of a document by its content: JSON when its first byte that is not blank (after a
/// UTF-8 byte-order mark) is '{', the text format otherwise (a text-format scenario cannot start
/// with '{'; an empty or comment-only one is text).
Format format_of_text(std::string_view text);

/// An input's text and format (read_input).
struct InputText {
  std::string text;
  Format format = Format::text;
};

/// Reads an input file (a scenario, a sweep or cases file, a profile) with its format: by its
/// extension as format_for_path, or, for a name without one (/dev/fd/63 from the shell's <(cmd),
/// a FIFO, a file named `scenario`), by its content (format_of_text). Throws as format_for_path (a
/// directory, a missing file, an unknown extension such as .yaml) and read_input_file do; every
/// message names the path as given. A FIFO without a writer blocks, as `cat` does.
InputText read_input(const std::string& path);

/// While one lives (main_dispatch holds one for each command), read_input_file reads a file that
/// is not a regular file (a pipe such as the shell's <(cmd), a FIFO, /dev/stdin) once: a later read
/// of the same path in the scope gets the same text, where a second read of a pipe would get
/// nothing (compare reads a scenario again for its defaults and for each --vary column). Outside
/// every scope nothing is kept (the Python module's calls read each time). Scopes may nest.
class ReadOnceScope {
 public:
  ReadOnceScope();
  ~ReadOnceScope();
  ReadOnceScope(const ReadOnceScope&) = delete;
  ReadOnceScope& operator=(const ReadOnceScope&) = delete;
};

/// Reads, parses, overrides and validates a scenario file.
/// overrides: "field.path=value" assignments (the CLI's --set), applied in order after parsing and
/// before validation; the last assignment to a field wins. Paths are proto field names from the
/// root, e.g. "workload.parallel.tp=4", "cluster.num_nodes=2", "workload.training.precision=fp16",
/// "cluster.fabric.kind=fat_tree", "workload.model.gated_mlp=true", "name=my-run".
/// Unset fields keep the defaults of models/spec/scenario.h.
/// Throws ScenarioError with every problem found (file unreadable, syntax, unknown field, wrong
/// type, bad override, failed semantic check).
/// `last_option`: the command-line option that gave the last of `overrides`, when not --set
/// (`traincast compare --vary`, one column's value): its messages name that option ("--vary:
/// cluster.num_nodes: ..."). Empty: every override is a --set.
models::Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides = {},
                                    const std::string& last_option = "");

/// What a command that simulates only the hardware reads of a scenario, so that an override it
/// would ignore is refused (exit 2) instead of silently dropped.
struct ClusterUse {
  /// The command as messages name it, e.g. "traincast nccl-tests".
  std::string command = "this command";
  /// Fields it reads besides cluster.*, name, description and profile, e.g.
  /// "workload.training.precision" for `traincast chakra run`.
  std::vector<std::string> also_reads;
};

/// As load_scenario_file for commands that use only the hardware (`traincast nccl-tests`,
/// `traincast explain`, `traincast chakra run`, `traincast calibrate fit --base`, nccl-tests
/// validation cases): the workload may be absent and is not checked (its defaults stay in the
/// struct); cluster and options are checked as usual. An override of any other field than
/// cluster.*, name, description, profile and use.also_reads is an error
///   "--set: workload.training.global_batch_size: has no effect: traincast nccl-tests uses only the
///    scenario's cluster (expected a cluster.* field)".
/// Throws ScenarioError as load_scenario_file.
models::Scenario load_cluster_scenario_file(const std::string& path, const std::vector<std::string>& overrides = {},
                                            const ClusterUse& use = {});

/// As load_scenario_file, for text already in memory. origin: the name used in messages (a path,
/// or e.g. "<stdin>"). Never throws anything but ScenarioError for bad input, whatever the bytes.
models::Scenario load_scenario_text(std::string_view text, std::string_view origin, Format format,
                                    const std::vector<std::string>& overrides = {});

/// The embedded default scenario (scenarios/default.textproto compiled into the library at build
/// time), with overrides applied and validated as for a file. Its origin in messages is
/// "scenarios/default.textproto".
/// `last_option` as for load_scenario_file.
models::Scenario default_scenario(const std::vector<std::string>& overrides = {}, const std::string& last_option = "");

/// For `traincast plan`, which replaces the scenario's parallel layout by the layouts it searches:
/// as load_scenario_file (default_scenario when `path` is empty), except that the rules tying the
/// scenario's own layout (tp, pp, dp, schedule, virtual_stages, uneven_stages, sequence_parallel,
/// zero_stage, micro_batch_size, and tp_comm_overlap / overlap_param_gather, which depend on them)
/// to its model, batch and cluster are not errors: what they find is put in layout_problems
/// (cleared first; positioned as errors are, e.g. "--set: cluster.num_nodes: tp * pp * dp = 64
/// but the cluster has 128 GPUs ..."), empty when the own layout is valid. Every other rule
/// applies, and a layout field outside its own range (tp: 0) is still an error. Throws
/// ScenarioError as load_scenario_file.
models::Scenario load_scenario_for_layout_search(const std::string& path, const std::vector<std::string>& overrides,
                                                 std::vector<std::string>& layout_problems);

/// The embedded text of scenarios/default.textproto, byte for byte.
std::string_view default_scenario_text();

/// The scenario as protobuf text format, defaults filled in, in schema order (fields without
/// presence whose value is 0, false or empty are left out, as the text printer does).
/// load_scenario_text(scenario_to_text(s), ...) gives back s (after validation). A calibration profile is written as
/// its file's absolute path (`profile:`), so the text loads the same profile from any directory; a profile built in
/// memory (empty origin) has no file and is not written.
std::string scenario_to_text(const models::Scenario& scenario);

/// The same scenario as JSON (protobuf's printer, proto field names, trailing newline), loadable
/// as a .json scenario: load_scenario_text(scenario_to_json(s), "x.json", Format::json) gives back s.
std::string scenario_to_json(const models::Scenario& scenario);

/// "file:line:col" of the field at `field_path` (e.g. "workload.model.family") in the scenario
/// file `path`, or of its deepest written ancestor ("file:1:1" when none is written): for
/// commands that refuse a valid scenario for what they cannot do (e.g. `traincast plan` on a
/// ResNet). Never throws for bad input: an unreadable or unparsable file gives "path:1:1".
std::string field_position(const std::string& path, const std::string& field_path);

}  // namespace traincast::io
