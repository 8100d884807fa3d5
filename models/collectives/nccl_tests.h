#pragma once
// nccl-tests, simulated: the sizes nccl-tests would run, the byte counts it prints, and the time,
// algbw and busbw of each collective on a cluster built from a ClusterSpec (one collective at a
// time on an idle network, as nccl-tests times them).
//
// Conventions follow NVIDIA/nccl-tests src/common.cu and src/*.cu (2.13+):
//  - sizes run from min to max, multiplied by `factor` when factor > 1, else increased by `step`;
//  - all_gather, reduce_scatter and alltoall round the size down to a multiple of
//    nranks x element size and print the per-rank element count; the others print size / element;
//  - algbw = bytes / time [GB/s = 1e9 B/s], busbw = algbw x busbw factor (DESIGN.md §4.3);
//  - sendrecv: every rank sends `bytes` to rank + 1 and receives from rank - 1 at once.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/collectives/collective_engine.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// The operations nccl-tests has a binary for (all_reduce_perf ... sendrecv_perf).
enum class NcclTestsOp { all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv };

/// "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv".
std::string_view nccl_tests_op_name(NcclTestsOp op);
/// Parses the names above; also accepts "allreduce", "allgather", "reducescatter", "all_to_all",
/// "send_recv" and a trailing "_perf" (the binary's name). Throws std::invalid_argument
/// "unknown nccl-tests operation 'x' (expected one of: all_reduce, ...)".
NcclTestsOp parse_nccl_tests_op(std::string_view name);
/// The CollectiveEngine operation that simulates op.
CollectiveOp collective_op_of(NcclTestsOp op);
/// nccl-tests' redop column as it prints it: "none" for all_gather, alltoall, broadcast; "sum" for
/// all_reduce, reduce_scatter, reduce and sendrecv (which prints its run's default op).
std::string_view nccl_tests_redop(NcclTestsOp op);
/// nccl-tests' root column: 0 for broadcast and reduce, -1 otherwise.
int nccl_tests_root(NcclTestsOp op);

/// A size argument as nccl-tests parses it: a number with an optional K, M or G suffix (binary:
/// 1K = 1024). "8" -> 8, "8G" -> 8589934592, "1.5M" -> 1572864. Throws std::invalid_argument
/// "bad size 'x' (expected a number with an optional K, M or G suffix, e.g. 8, 64K, 8G)", and
/// "size '0.5' is not a whole number of bytes (...)" for a size nccl-tests would truncate.
double parse_nccl_tests_size(std::string_view text);

/// Requested sizes [bytes] from min to max inclusive: x factor when factor > 1, else + step.
/// Throws std::invalid_argument when min < 0, max < min, or neither factor > 1 nor step > 0.
std::vector<double> nccl_tests_sizes(double min_bytes, double max_bytes, double factor, double step_bytes);

/// Element size [bytes] of an nccl-tests data type name (int8, uint8, int32, uint32, int64,
/// uint64, half, float, double, bfloat16, f8e4m3, f8e5m2; also fp16, fp32, fp64, bf16, fp8_e4m3,
/// fp8_e5m2).
/// Throws std::invalid_argument naming the known types.
int nccl_tests_type_bytes(std::string_view type);
/// true for the fp8 names among them (f8e4m3, f8e5m2, fp8_e4m3, fp8_e5m2; any case).
bool nccl_tests_type_is_fp8(std::string_view type);

/// What nccl-tests prints in its size and count columns for a requested size.
struct NcclTestsSize {
  double bytes = 0;     ///< size column [bytes]
  long long count = 0;  ///< count column [elements]
};
/// nccl-tests' rounding of a requested size for op over nranks (>= 1) ranks of word_bytes each.
NcclTestsSize nccl_tests_size(NcclTestsOp op, double requested_bytes, int nranks, int word_bytes);

/// One row of a simulated nccl-tests table.
struct NcclTestsResult {
  double bytes = 0;  ///< size column [bytes]
  long long count = 0;
  double time_s = 0;      ///< simulated duration of one collective [s]
  double algbw_gbps = 0;  ///< bytes / time / 1e9 [GB/s]; 0 when time is 0
  double busbw_gbps = 0;  ///< algbw x busbw factor [GB/s]
  /// true when NCCL returns before launching anything: a collective of count 0 (time 0; no
  /// choice, channels 0). send/recv and alltoall still launch at count 0 (simulate_nccl_tests).
  bool discarded = false;
  /// What the engine ran: algorithm and protocol, and as channels the thread blocks its kernel
  /// launches per GPU (CollectiveEngine::kernel_ctas: comm->nChannels for rings and trees, fewer
  /// below nChannels x threads x NCCL's thread threshold bytes (nccl_channel_cut), NVLS's 16,
  /// p2p's busy channels), where NCCL prints its channel count.
  CollectiveChoice choice;
};

/// Options of a simulated nccl-tests run.
struct NcclTestsOptions {
  NcclTestsOp op = NcclTestsOp::all_reduce;
  std::vector<int> gpus;  ///< global GPU ids in rank order; empty = every GPU of the cluster
  int word_bytes = 4;     ///< element size (float)
  bool fp8 = false;       ///< an fp8 type (f8e4m3, f8e5m2): NCCL reduces it only from sm_90
};

/// Simulates op at each requested size on `cluster` (built once; collectives run one after another
/// on the idle network; cluster.collectives forces algorithm/protocol as NCCL_ALGO/NCCL_PROTO). Returns one result per
/// requested size, in order. Throws std::invalid_argument for a bad cluster (Cluster's messages), a GPU id outside the
/// cluster ("gpus: 17 outside [0, 16)"), duplicate GPU ids ("gpus: 3 listed twice"), fewer than 2
/// GPUs for any op (one rank times a device-local copy kernel, not modelled), word_bytes < 1, or
/// an fp8 reduction (all_reduce, reduce_scatter, reduce) of count > 0 on a communicator with an
/// NVIDIA GPU below sm_90 ("fp8 all_reduce: NCCL reduces fp8 only on sm_90 or newer; GPU 0 is
/// A100-SXM4-80GB, sm_80 ..."), as NCCL refuses it. A collective of count 0 costs nothing
/// (NcclTestsResult::discarded).
std::vector<NcclTestsResult> simulate_nccl_tests(const ClusterSpec& cluster, const NcclTestsOptions& options,
                                                 const std::vector<double>& requested_bytes);

/// One measured row of a nccl-tests log (plain data, from calibrate/nccl_tests_log.h).
struct NcclTestsMeasurement {
  double bytes = 0;    ///< size column [bytes]
  double time_us = 0;  ///< out-of-place time [us]
  int line = 0;        ///< line in the log (for messages)
};

/// Predicted against measured busbw, per size and in summary (issue 3 acceptance).
struct NcclTestsComparison {
  struct Row {
    double bytes = 0;
    int line = 0;
    double measured_busbw_gbps = 0;  ///< bytes / time x busbw factor, from the printed time
    double predicted_busbw_gbps = 0;
    double error = 0;  ///< predicted / measured - 1
    NcclTestsResult predicted;
  };
  std::vector<Row> rows;                                     ///< rows of size 0 or time 0 are left out
  int large_rows = 0;                                        ///< rows with bytes >= kLargeBytes
  int small_rows = 0;                                        ///< rows with bytes <= kSmallBytes
  double large_error = 0;                                    ///< geometric-mean |error| over large rows (0 when none)
  double small_error = 0;                                    ///< ... over small rows
  static constexpr double kLargeBytes = 32.0 * 1024 * 1024;  ///< ">= 32 MB" of the acceptance: 32 MiB
  static constexpr double kSmallBytes = 64.0 * 1024;         ///< "<= 64 KB": 64 KiB
};

/// Geometric-mean relative error of predicted/measured ratios: exp(mean |ln ratio|) - 1; 0 for
/// none. Symmetric: a prediction 2x too high and one 2x too low both count as 100%.
double geometric_mean_error(std::span<const double> ratios);

/// Simulates the measured sizes and compares busbw. measured busbw = bytes / time x the busbw
/// factor of options.op over the ranks taking part (not the log's rounded busbw column).
/// Throws as simulate_nccl_tests.
NcclTestsComparison compare_nccl_tests(const ClusterSpec& cluster, const NcclTestsOptions& options,
                                       const std::vector<NcclTestsMeasurement>& measured);

/// Parses a GPU list "0,1,8-15" (ids and inclusive ranges, in that order; decimal without leading
/// zeros). Throws std::invalid_argument "bad GPU list 'x' (expected ids and ranges such as 0,1,8-15)",
/// or for an id with a leading zero "bad GPU list '01': 01 has a leading zero (expected ...)".
std::vector<int> parse_gpu_list(std::string_view text);

}  // namespace traincast::models
