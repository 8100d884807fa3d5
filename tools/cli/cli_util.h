#pragma once
// What every subcommand shares: the usage-error type, the exception-to-exit-status mapping, and
// output files that never clobber what the user has.

#include <boost/program_options.hpp>
#include <functional>

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace traincast::models {
struct ClusterSpec;
struct CostReport;
struct Scenario;
enum class NcclTestsOp;
}  // namespace traincast::models

namespace traincast::cli {

/// A usage problem (bad flag, missing argument, unusable output path): exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Parses a subcommand's arguments with boost::program_options (options + positionals) and
/// runs notify(); any program_options error becomes a UsageError (exit status 2).
boost::program_options::variables_map parse_options(const std::vector<std::string>& args,
                                                    const boost::program_options::options_description& opts,
                                                    const boost::program_options::positional_options_description& pos);

/// Why a count of simulations run at once (`--jobs`, `cluster --threads`) stops at io::kMaxThreads.
inline constexpr std::string_view kSimulationsWhy =
    "0 for all hardware threads; one thread per simulation at once, and more threads than hardware threads do not make "
    "it faster; 1024 is "
    "above a two-socket AMD EPYC 9965 server's 768";

/// Checks a worker-thread count given as `flag` (`--threads`, `--jobs`): `min` (1, or 0 where 0 means
/// all hardware threads) to io::kMaxThreads (1024; models/io/scenario_io.h). Throws UsageError
/// "FLAG: got N (expected an integer from MIN to 1024: WHY)".
void check_thread_count(const std::string& flag, int n, std::string_view why, int min = 1);

/// A count of threads or simulations at once (`--jobs`, `--threads`) as given, checked as
/// check_thread_count does with min 0, and 0 made the host's hardware threads (at least 1): 0
/// means all hardware threads for every such option, as `run --threads 0` does.
int thread_count_option(const std::string& flag, int n, std::string_view why);

/// The `--op` of nccl-tests and calibrate fit/validate: exactly one of the names nccl-tests' binaries
/// have without "_perf" (models::nccl_tests_op_name: all_reduce, all_gather, reduce_scatter,
/// alltoall, broadcast, reduce, sendrecv), as every other enum-valued option takes exactly its names.
/// Throws UsageError "--op: got "allreduce", did you mean "all_reduce"? (expected one of ...)".
models::NcclTestsOp nccl_op_option(const std::string& flag, const std::string& text);

/// Checks a whole-number option `flag` (`--top`, `--replicate`, `--max-nodes`, ...) is at least
/// `min`. Throws UsageError "FLAG: got N (expected a whole number >= MIN: WHAT)", as every option
/// names the value given and what it takes.
void check_at_least(const std::string& flag, int n, int min, std::string_view what);

/// Checks a percentage option `flag` (`--estimate-slack`, `--max-mape`) is finite and >= 0.
/// Throws UsageError "FLAG: got X (expected a percentage >= 0: WHAT)"; X as given.
void check_percentage(const std::string& flag, double percent, std::string_view what);

/// Keeps freed memory in the process instead of handing it back to the kernel after every
/// simulation (glibc: large blocks from the heaps, the heap top never trimmed), so the next
/// simulation or ECMP draw reuses pages already faulted in. Process-wide and permanent; `sweep`
/// and `run` call it (docs/speed.md). No effect on other C libraries.
void keep_freed_memory();

/// Runs `body` and maps exceptions to exit statuses: models::Interrupted (Ctrl-C) prints one line
/// and gives 128 + the signal (130 for SIGINT); io::ScenarioError, UsageError,
/// std::invalid_argument and std::overflow_error (bad or out-of-range input) print their message
/// and give 2; any other std::exception is an internal error, 1.
int guarded(std::ostream& err, int (*body)(void*), void* ctx);
template <typename F>
int guarded(std::ostream& err, F&& body) {
  return guarded(
      err, [](void* c) -> int { return (*static_cast<F*>(c))(); }, &body);
}

/// Refuses an output `path` that exists and is not a regular file (or a link to one): a directory
/// is named as such ("<path>: is a directory (expected a file path ...)"), a device, FIFO or socket
/// as not a regular file. Throws UsageError; a missing path passes.
void refuse_non_file_output(const std::string& path);

/// Checks, before any work is done, that `path` may receive output: it must not exist unless
/// `force` (and then must be a regular file, or a symlink to one — never a directory, device,
/// FIFO or socket), it must not be "-" (no output goes to standard output), its directory must exist, and it must not
/// name any of `inputs` (compared after resolving links) nor another output in `other_outputs`. Throws UsageError.
void check_output_path(const std::string& path, bool force, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& other_outputs = {});

/// The files a loaded scenario was read from, for check_output_path's `inputs`: `scenario_path`
/// (unless empty: the embedded default) and the calibration profile's file (from the scenario's
/// `profile` field or --profile), so that no output overwrites either.
/// Throws io::ScenarioError at the scenario's first `job` when it holds a job list: `command`
/// (run, compare, plan) simulates one job on the whole cluster; `traincast cluster` takes the list.
void refuse_job_list(const models::Scenario& sc, const std::string& scenario_path, const std::string& command);

/// Throws UsageError "COMMAND: FILE is given twice (expected EXPECTED)" when a file of `files`
/// repeats, as the same path or the same file by another path (compare's scenarios, validate's
/// case files: a repeat would give the same answer twice, or count its cases twice).
void refuse_repeated_files(const std::vector<std::string>& files, const std::string& command,
                           const std::string& expected);

/// Warns on `err` when the TP (or TP x CP) groups and the node's GPUs (its NVLink domain) do not
/// nest: neither size divides the other (TP 8 on `gb200_nvl72/36`), so some groups span two nodes
/// and their collectives cross the NICs, which the report then shows as slow GPUs or communication.
void warn_groups_straddle_nodes(const models::Scenario& sc, std::ostream& err);

/// `note` ("workload.parallel.uneven_stages has no effect: ...") with the position of the field it
/// starts with in front (scenario_field_origin: "FILE:LINE:COL: " of the field or of its nearest
/// written ancestor), or "--set: " where an override set it; unchanged when it starts
/// with no field path, or when `scenario_path` is "" (the embedded default) and no override set it.
std::string note_at_field(const std::string& note, const std::string& scenario_path,
                          const std::vector<std::string>& overrides);

/// Warns on `err` for each input warning of the scenario (Scenario::input_warnings, positioned: a
/// node_template block no node uses), each fabric setting the cluster ignores
/// (models::Cluster::settings_without_effect: fabric fields on one node, an oversubscription no
/// leaf up-link feels), each thermal field the cooling ignores (models::thermal_settings_without_effect:
/// supply air or airflow under liquid cooling, a coolant temperature under air), each
/// cluster.overrides power_cap_w at or above its GPUs' limit (models::power_caps_without_effect), and the node's
/// NICs where they spread unevenly (warn_nic_spread); all but the first positioned (note_at_field) when `scenario_path`
/// names the file the scenario was read from (with `overrides`, its --set values). `gpu_overrides_act` false (a
/// command that reads no GPU override, nccl-tests, which warns of each itself): no power_cap_w note.
void warn_settings_without_effect(const models::Scenario& sc, std::ostream& err, const std::string& scenario_path = {},
                                  const std::vector<std::string>& overrides = {}, bool gpu_overrides_act = true);
/// One "warning: ..." line when the cluster's nodes spread their NICs unevenly over their PCIe
/// switches (models::Cluster::nic_spread_notes: the GPUs without a NIC on their switch, the cost,
/// the counts that avoid it); nothing for one node, an even spread or a spec Cluster refuses (the
/// command's own Cluster says why). Positioned as warn_settings_without_effect's.
void warn_nic_spread(const models::ClusterSpec& cluster, std::ostream& err, const std::string& scenario_path = {},
                     const std::vector<std::string>& overrides = {});
/// Prints one "warning: ..." line per workload field without effect for this layout
/// (models/workload/settings_notes.h), for the commands that simulate the workload (run, compare),
/// positioned as warn_settings_without_effect's.
void warn_workload_settings_without_effect(const models::Scenario& sc, std::ostream& err,
                                           const std::string& scenario_path = {},
                                           const std::vector<std::string>& overrides = {});

std::vector<std::string> scenario_input_files(const models::Scenario& sc, const std::string& scenario_path);

/// Writes `text` to `path` atomically: a unique temporary file (mkstemp) in the same directory,
/// then a rename over the target (over a symlink's target, so the link stays). Call
/// check_output_path first. Throws UsageError naming the path and the system's reason.
void write_output_file(const std::string& path, const std::string& text);

/// A note for stderr when a Chrome/Perfetto trace of `bytes` written to `path` may be too large
/// for the browser's Perfetto UI (above 256 MiB; perfetto.dev/docs/visualization/large-traces:
/// about 2 GB of browser memory per trace, its in-memory form 2-4x the file), and of the memory
/// traincast needed to write it (peak RSS about 3x the file: 2.6x for a 1.9 GiB trace of
/// llama3_70b_dgx_h100_8nodes unfolded, 3.1x for 0.3 GiB of models/gpt3_175b), else "".
std::string large_trace_note(const std::string& path, std::size_t bytes);

/// Where the scenario field `field` (e.g. "workload.parallel.cp") got its value, for refusing a
/// valid scenario a command cannot handle: "--set field=value" when an override set it (the last
/// one), else "file:line:col" of the field (or of its deepest written ancestor) in `scenario_path`;
/// "(embedded default)" when `scenario_path` is empty. Never throws for bad input.
std::string scenario_field_origin(const std::string& scenario_path, const std::string& field,
                                  const std::vector<std::string>& overrides);

/// The option that gave scenario field `field` (e.g. "cost.node_price_usd") its value, as a price's
/// source names it: "--set" when one of `overrides` ("path=value", blanks around the path ignored)
/// set it, `last_option` ("--vary") when the last one did and `last_option` is not empty; "" when
/// none did (the file, or the default).
std::string option_that_set(const std::string& field, const std::vector<std::string>& overrides,
                            const std::string& last_option = "");

/// `cost`'s price sources (node_price_source, cloud_price_source) that say "scenario" made the option
/// that set the price (option_that_set: "--set", "--vary") where an override did, for run's and
/// compare's reports alike (fresh user 43: compare called a --set price "scenario").
void name_price_options(models::CostReport& cost, const std::vector<std::string>& overrides,
                        const std::string& last_option = "");

/// A model's refusal of a valid-looking scenario (std::invalid_argument) whose message starts with
/// a scenario field path ("cluster.node_group: pipeline stage 0 spans two GPU types ...") is
/// rethrown as io::ScenarioError with that field's position (scenario_field_origin) in front, so
/// it reads as a load error does; any other message is rethrown unchanged.
[[noreturn]] void rethrow_at_field(const std::invalid_argument& e, const std::string& scenario_path,
                                   const std::vector<std::string>& overrides);

/// models::check_network_size(sc.cluster) with the refusal positioned: throws io::ScenarioError
/// "<where cluster.num_nodes was set>: cluster.num_nodes: ... network resources ..." (exit 2) when
/// the network would be over models::kMaxNetworkResources; a spec the count cannot read passes
/// (the command's own Cluster then reports it). Builds nothing.
void check_network_size_at(const models::Scenario& sc, const std::string& scenario_path,
                           const std::vector<std::string>& overrides);

/// The --profile option's file ("" when not given). An empty name given is a UsageError (exit 2),
/// not a silent "no --profile".
std::string profile_option(const boost::program_options::variables_map& vm);

/// When cs has a profile fitted on other hardware (io::profile_hardware_mismatch), one
/// "warning: " line per difference on err; a field that cannot apply (a GEMM surface without the
/// GPU's peak, a power/thermal fit of another GPU) throws, alone (exit 2).
void warn_profile_hardware(const models::ClusterSpec& cs, std::ostream& err);

/// Uses a calibration profile for scenario `sc`: the one at `profile_path` (--profile; "" = the
/// scenario's own `profile` field, already loaded). When the profile records --set overrides of
/// its fit (CalibrationProfile::base_sets), `sc` is reloaded through `reload` with those first
/// and the command's `overrides` after them (the command's win), and a note on err names them;
/// then warn_profile_hardware. Throws io::ScenarioError as the loaders (exit 2).
void use_profile(models::Scenario& sc, const std::string& profile_path, const std::vector<std::string>& overrides,
                 const std::function<models::Scenario(const std::vector<std::string>&)>& reload, std::ostream& err);

/// `s` as a JSON string literal, quotes included: `"` and `\\` escaped, newline as \\n, other
/// control characters as \\u00XX; bytes >= 0x80 pass through (UTF-8 stays UTF-8). Never throws
/// but std::bad_alloc.
std::string json_string(const std::string& s);

}  // namespace traincast::cli
