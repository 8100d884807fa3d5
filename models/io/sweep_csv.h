#pragma once
// The sweep CSV that `traincast sweep` writes, resumes and `traincast merge` joins: the metrics
// a row may record, the outcome of one point, the comment, header and row lines, and reading a
// CSV back. RFC 4180 quoting; one line per row; '\n' line ends. No protobuf here.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/io/sweep.h"
#include "models/spec/report.h"

namespace traincast::io {

/// Every metric a sweep may record, in documentation order: iteration_time_s, tokens_per_s,
/// tflops_per_gpu, hardware_tflops_per_gpu, mfu, hfu, time_to_train_s [s], the breakdown
/// (compute_s, tp_comm_exposed_s, dp_comm_exposed_s, pp_comm_exposed_s, pipeline_bubble_s,
/// optimizer_s, ep_comm_exposed_s, cp_comm_exposed_s, input_copy_exposed_s, straggler_wait_s) [s],
/// memory per GPU in GiB (peak_memory_gib, activation_memory_gib,
/// weights_memory_gib, grads_memory_gib, optimizer_memory_gib, capacity_memory_gib), num_gpus,
/// micro_batches, events, busiest_link (name), busiest_link_utilization (0..1); routing_seeds,
/// iteration_time_s_min, iteration_time_s_max (ECMP hash draws: iteration_time_s is their mean); storage_stall_s,
/// data_stall_s, checkpoint_write_s [s], interruptions, goodput (0..1), wall_clock_s [s] (Monte-Carlo
/// means), capex_usd, own_cost_to_train_usd, cloud_cost_to_train_usd, payback_years (empty when never),
/// payback_never (true/false), breakeven_utilization. Empty cells where the value is not known:
/// time_to_train_s and the costs to train without train_tokens, the costs on a side not priced.
const std::vector<std::string>& sweep_metric_names();

/// The metrics recorded when a sweep file lists none: iteration_time_s, tokens_per_s,
/// tflops_per_gpu, mfu, peak_memory_gib, compute_s, tp_comm_exposed_s, dp_comm_exposed_s,
/// pp_comm_exposed_s, pipeline_bubble_s.
const std::vector<std::string>& default_sweep_metrics();

/// Outcome of one point. ok: simulated and fits in memory; oom: simulated, does not fit;
/// invalid: the scenario fails a check (io::ScenarioError), the models refuse it
/// (std::invalid_argument) or it is beyond the simulator's range (std::overflow_error); error: any
/// other exception (a bug; the reason says what).
enum class SweepStatus { ok, oom, invalid, error };

/// "ok", "oom", "invalid", "error".
std::string_view to_string(SweepStatus status);

/// What running one point gave (cli::run_sweep_point, tools/cli/sweep_run.h): what its row records.
struct SweepOutcome {
  SweepStatus status = SweepStatus::ok;
  std::string reason;     ///< one line: why invalid/oom/error (empty when ok)
  models::Report report;  ///< meaningful for ok and oom
};

/// Shortest decimal text that reads back as exactly `v` ("0.1", "1e+20", "3"): how rows write
/// numbers (and how sweep messages quote them).
std::string shortest_text(double v);

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

/// Reads a sweep CSV. The header must be "point,<axes>,status,<metrics>,reason" with known metric
/// names. Rows must have the header's number of fields, a point index < points that belongs to
/// the shard (a point twice is an error), a status sweep_csv_row writes (ok, oom, invalid, error)
/// and metric cells as it writes them: for ok/oom rows a finite number >= 0 (no metric is
/// negative; a whole number for the counts num_gpus, micro_batches, events, routing_seeds;
/// true/false for payback_never; any text for busiest_link), empty only where the report may
/// leave the field out (payback_years); for invalid/error rows empty; the reason empty for ok
/// rows and not empty for the others. Axis cells are not checked here (the CSV does not hold the
/// sweep): check_sweep_csv_axes does that. Throws ScenarioError("path:line: what
/// (expected ...)"; a bad cell names its column) for an unreadable file, a first line that is
/// not a traincast sweep comment or names more than models::kMaxSweepPoints points, a missing or
/// foreign header, or a bad row.
SweepCsv read_sweep_csv(const std::string& path);

/// Checks every row of `csv` (read from `path` by read_sweep_csv) against the sweep that wrote
/// it: each axis cell must be the value sweep_csv_row writes for the row's point. Call it once
/// csv.hash, csv.points and csv.header are known to be `sweep`'s (the caller's messages for a
/// foreign CSV say more). Throws ScenarioError with one "path:line: column <axis>: ..." message
/// per bad row (at most 10, then a count), naming the value found and the one expected (and, for
/// a value the axis does not have, the axis's values); a header that is not sweep_csv_header's
/// is refused at line 2.
void check_sweep_csv_axes(const SweepCsv& csv, const std::string& path, const models::Sweep& sweep);

}  // namespace traincast::io
