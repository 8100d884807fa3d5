#pragma once
// Measured points from nccl-tests logs and plain CSV files, as models::MeasurementSet (the
// Measurements text files of traincast-bench are read by models/io/profile_io.h).
//
// CSV (comma-separated, first line a header naming the columns, any order, '#' lines skipped).
// The header decides what the rows are:
//  - collectives: op, size_bytes, time_us; optional num_ranks, dtype.
//      op: nccl-tests name (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce,
//      sendrecv); size_bytes: nccl-tests size column; time_us: the measured time (out-of-place).
//  - GEMMs: m, n, k, dtype and one of time_s, time_us, tflops, flops_per_s; optional b (batch,
//      folded into m) and device_key (or device, gpu: rows filtered by `device`).
//      dtype: fp32, tf32, fp16, bf16, fp8, or openxla's names (bf16xbf16->bf16 = bf16,
//      f16xf16->f16 = fp16, f8e4m3fnxf8e4m3fn->bf16 = fp8, f32xf32->f32 = tf32 because XLA runs
//      f32 dots on TF32 tensor cores by default: 403 TFLOP/s measured on sm_90, 6x H100's FP32
//      peak); other openxla dtypes (mixed fp8 inputs, other output types) are skipped and counted.
//      The time of a row with tflops/flops_per_s is 2 b m n k / rate.
//  - bandwidth: kind (hbm_copy, hbm_read, hbm_write, h2d, d2h, d2d_peer), bytes, time_s;
//      optional size_bytes.
// Fields may be quoted as RFC 4180 says ("m","n",... ; "" is one quote inside quotes).
// Errors: "path:line: column 'x': 'v' is not a number > 0", unknown header, a header column named
// twice, wrong field count, GEMM m, n, k, b or b x m above models::kMaxGemmDimension or not
// whole, a GEMM row whose time and rate columns disagree by more than 1%, an unknown op or
// dtype, a collective size_bytes that is not whole bytes (whole elements of its dtype when
// given), and a repeated point: the same (op, num_ranks, size_bytes) or (device, dtype, m, n,
// k, b) as an earlier row of the file (a row is one measurement; the format does not average rows).

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/nccl_tests_log.h"
#include "models/calibration/measurements.h"

namespace traincast::calibrate {

/// Every problem in one input, each "path:line: what (expected ...)". what() joins them.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<std::string> errors);
  const std::vector<std::string>& errors() const noexcept { return errors_; }

 private:
  std::vector<std::string> errors_;
};

/// What was read besides the points: rows skipped and why (counted per reason).
struct InputNotes {
  std::vector<std::string> notes;
  int skipped = 0;
};

/// Every run of a parsed log as collective samples (row_time_us: the out-of-place time, or the
/// in-place time of a disturbed row, noted; rows of size 0 or time 0 skipped and counted). Throws InputError
/// "path:line: the log names no operation (...)" for a run without an operation when `op` is empty; a non-empty `op`
/// names the operation of the runs whose log names none, and a run whose log names another one is refused
/// ("path:line: the log names all_reduce ...; --op all_gather differs", line = the line naming it). op_field
/// names where `op` came from in that message ("--op", "nccl_tests.op"). A run whose log names no
/// operation but gives its rank count is refused where its busbw / algbw is not `op`'s factor
/// (check_op_bus_factor: "path:line: busbw / algbw is 1.75, the factor of all_reduce for 8 ranks, ...").
models::MeasurementSet samples_from_nccl_log(const NcclTestsLog& log, const std::string& path, const std::string& op,
                                             InputNotes& notes, const std::string& op_field = "--op");

/// Parses a CSV file's text as described above. device: value of device_key to keep ("" = the
/// only one; an error listing them when there are several).
models::MeasurementSet read_measurement_csv(std::string_view text, const std::string& path, const std::string& device,
                                            InputNotes& notes);

}  // namespace traincast::calibrate
