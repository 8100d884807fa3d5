#pragma once
// Measured points of one machine as plain data (what message Measurements of
// models/io/traincast.proto holds, what nccl-tests logs and CSV files give): the input of
// calibrate/fit (`traincast calibrate fit`) and `traincast calibrate validate`.
// Units in names; times are medians as the bench measured them.

#include <string>
#include <vector>

#include "models/scenario.h"

namespace traincast::models {

struct GemmSample {
  Precision dtype = Precision::bf16;
  double m = 0, n = 0, k = 0;  ///< > 0 (a batch of b GEMMs: m already multiplied by b)
  double time_s = 0;           ///< > 0
  std::string where;           ///< "file:line" of the point, for tables and messages
};

enum class BandwidthSampleKind { hbm_copy, hbm_read, hbm_write, h2d, d2h, d2d_peer };

struct BandwidthSample {
  BandwidthSampleKind kind = BandwidthSampleKind::hbm_copy;
  double size_bytes = 0;  ///< buffer size
  double bytes = 0;       ///< bytes moved (hbm_copy: read + write)
  double time_s = 0;      ///< > 0
  std::string where;
};

struct CollectiveSample {
  std::string op;         ///< nccl-tests name: all_reduce, all_gather, ... (models/collectives/nccl_tests.h)
  int num_ranks = 0;      ///< 0 = unknown (the fit uses the cluster's GPUs or --gpus)
  double size_bytes = 0;  ///< nccl-tests size column [bytes], > 0
  double time_us = 0;     ///< out-of-place time [us], > 0
  std::string dtype;      ///< nccl-tests type name ("float")
  std::string where;
};

/// Everything read from the inputs of one fit.
struct MeasurementSet {
  std::string gpu_name;  ///< as the machine reported it ("" when unknown, e.g. from a log)
  std::vector<GemmSample> gemm;
  std::vector<BandwidthSample> bandwidth;
  double launch_back_to_back_s = 0;  ///< 0 = not measured
  double launch_empty_kernel_s = 0;
  std::vector<CollectiveSample> collectives;
};

}  // namespace traincast::models
