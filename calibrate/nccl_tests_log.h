#pragma once
// Reading nccl-tests stdout (NVIDIA/nccl-tests *_perf) as people paste it, into measurements.
//
// Accepted input (all seen in published logs):
//  - the 2.13+ layout (size count type redop root, then out-of-place and in-place time algbw busbw
//    #wrong) and the older ones: without the root column, without redop, with an `error` column
//    instead of `#wrong`; `cputime` instead of `time`. The column header line decides the layout.
//  - line prefixes of launchers: Open MPI's `[1,0]<stdout>:` (orte_tag_output) and srun -l's
//    ` 0: `; Windows line ends.
//  - anything else between rows is skipped: NCCL INFO/WARN lines, shell prompts and command lines,
//    kubectl and ssh noise, MPI help text.
//  - several runs in one paste (one per column header), each with its operation taken from the
//    last mention before its header: `# Collective test starting: all_gather_perf`, a command
//    line naming `all_gather_perf`, or a `# command: ...` note.
//  - a truncated tail: a last row that stops inside the in-place half keeps its out-of-place
//    numbers (all four present, each followed by more text, so none is cut; noted).
// Refused, with line-numbered reasons: a data row with the wrong number of fields or a field that
// is not a number, a last row cut inside its out-of-place half ("data row cut short: 7 of 13
// fields ...: delete the partial row"), a data row with text in front of it inside a table ("data row
// with leading unexpected text \"host3:\" ...": skipping it would drop a size silently), a data
// row before any column header, a row whose numbers disagree as nccl-tests prints them (#wrong > 0;
// algbw != size / time or busbw != algbw x the op's factor beyond print rounding + 1%; algbw or
// busbw > 0 at time 0: nccl_tests_row_check.h), a size > 0 printed again in the same table, a
// size > 0 of time 0 in both halves, a row whose size, root, or type / redop / root block is not as
// nccl-tests prints it for its table (nccl_tests_table.h), and a log with no
// data row at all (naming the failure line when the run failed, e.g. "Test NCCL failure").
//
// Units as nccl-tests prints them: time [us], algbw and busbw [GB/s = 1e9 B/s], size [bytes].

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace traincast::calibrate {

/// The out-of-place or in-place half of a data row.
struct NcclTestsResultColumns {
  bool present = false;  ///< all four fields were there
  double time_us = 0;    ///< [us]
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::string wrong;  ///< "#wrong" ("0", "N/A") or old "error" ("2e-07") as printed
};

/// One data row.
struct NcclTestsRow {
  int line = 0;           ///< 1-based line in the input
  double size_bytes = 0;  ///< size column [bytes]
  long long count = 0;    ///< count column [elements]
  std::string type;       ///< "float", "double", ...
  std::string redop;      ///< "sum", "none", ...; "" when the layout has no redop column
  int root = -1;          ///< root column; -1 when printed so or absent
  NcclTestsResultColumns out_of_place;
  NcclTestsResultColumns in_place;  ///< present = false when the row was cut short
};

/// One table (from one column header to the next header or the end).
struct NcclTestsRun {
  std::string op;                    ///< "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
                                     ///< "reduce", "sendrecv", ... (the *_perf name without _perf); "" if unknown
  int header_line = 0;               ///< line of the column header
  int op_line = 0;                   ///< line that named `op` (1-based); 0 when op is ""
  int num_ranks = 0;                 ///< from "#  Rank N ..." lines (largest N + 1), or "# ranks: N"; 0 if unknown
  int num_hosts = 0;                 ///< distinct hosts on the Rank lines (or "nodes: M"); 0 if unknown
  std::vector<std::string> devices;  ///< device name per Rank line, in order
  std::vector<std::string> columns;  ///< the column header's names, e.g. size count type redop root time ...
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw_gbps;  ///< "# Avg bus bandwidth : X"
  std::string check;                     ///< "OK" or "FAILED" from "# Out of bounds values"; "" if absent
};

struct NcclTestsLog {
  std::vector<NcclTestsRun> runs;  ///< at least one, each with at least one row
  /// What was accepted but is worth knowing, "origin:line: ..." (cut rows, runs without rows).
  std::vector<std::string> notes;
};

/// Every problem found in one log. what() is the messages joined by '\n'.
class NcclTestsLogError : public std::runtime_error {
 public:
  explicit NcclTestsLogError(std::vector<std::string> errors);
  /// Each "origin:line: what is wrong (expected ...)" or "origin: ..." for the whole input.
  const std::vector<std::string>& errors() const noexcept { return errors_; }

 private:
  std::vector<std::string> errors_;
};

/// nccl-tests times the same operation twice per size, out-of-place and in-place. Where the two
/// differ by more than this factor the row is taken as disturbed (another job, OS jitter, a
/// congested link: interference only adds time) and its faster time is the measurement. Chosen
/// from the shared logs' own spread, not from any model: of their 397 rows with both times, 386
/// agree within 1.33x (median 1.008x) and 11 differ by 1.41x to 3.96x (n03 8 B, 256 B, 512 B,
/// 2 MiB; n04a 8 MiB; n11c 1 MiB; n18 4, 8, 32, 128, 512 KiB).
inline constexpr double kDisturbedRowRatio = 1.4;

/// The time one row measured [us]: the out-of-place time, or the in-place time where that is
/// present and more than kDisturbedRowRatio times faster (row_disturbed). 0 when the out-of-place
/// time is 0 (size-0 rows).
double row_time_us(const NcclTestsRow& row);

/// True when the row's in-place time replaces its out-of-place time (see row_time_us).
bool row_disturbed(const NcclTestsRow& row);

/// "" when `op` (an operation given from outside the log: --op, a case's nccl_tests.op; "" for
/// none) agrees with the operation `run` names or either is empty; else the error
/// "path:line: the log names operation X for the table at line N; <op_field> Y differs (...)"
/// (the log's own name wins over a guess: fitting an all_reduce table as all_gather would use the
/// wrong busbw factor and algorithm).
std::string op_conflict(const NcclTestsRun& run, std::string_view op, std::string_view path, std::string_view op_field);

/// Parses nccl-tests output in memory; origin names the input in messages (a path, "<stdin>").
/// Throws NcclTestsLogError with every malformed line, or the reason there is no data row.
NcclTestsLog parse_nccl_tests_log(std::string_view text, std::string_view origin);

/// Reads and parses a file. Throws NcclTestsLogError("path: cannot read file (reason)") when it
/// cannot be read, or with parse errors as parse_nccl_tests_log.
NcclTestsLog read_nccl_tests_log(const std::string& path);

}  // namespace traincast::calibrate
