#pragma once
// Measured points of one machine as plain data (what message Measurements of
// models/io/traincast.proto holds, what nccl-tests logs and CSV files give): the input of
// calibrate/fit (`traincast calibrate fit`) and `traincast calibrate validate`.
// Units in names; times are medians as the bench measured them.

#include <string>
#include <vector>

#include "models/spec/scenario.h"

namespace traincast::models {

/// The largest GEMM dimension m, n, k (m with its batch folded in) a measurement or profile may
/// hold: 1e9 elements per side, 1e18 FLOP for one square GEMM, hours on any GPU (a one-GPU GEMM
/// larger than its memory: an H200's 141 GB holds a bf16 operand of 7e10 elements, so of at most
/// 2.6e5 x 2.6e5). models/io/profile_io.cc refuses profiles and measurements beyond it.
inline constexpr double kMaxGemmDimension = 1e9;

struct GemmSample {
  Precision dtype = Precision::bf16;
  double m = 0, n = 0, k = 0;  ///< > 0 (a batch of b GEMMs: m already multiplied by b)
  double time_s = 0;           ///< > 0
  std::string where;           ///< "file:line" of the point, for tables and messages
  /// The CSV's device_key of the row ("sm_90", "sm_100_B200", "gfx950"); "" when not given.
  std::string device{};
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
  double time_us = 0;     ///< measured time [us], > 0 (nccl-tests logs: calibrate::row_time_us)
  std::string dtype;      ///< nccl-tests type name ("float")
  std::string where;
};

/// One NVML sample of traincast-bench's burn part (message PowerSample): an idle baseline, a
/// sustained GEMM on every GPU (loaded), a cool-down. Input of the power-vs-load and thermal R/C
/// fit (calibrate/fit/power_fit.h).
struct PowerThermalSample {
  int gpu = 0;                              ///< CUDA device index, >= 0
  double t_s = 0;                           ///< since the burn started (< 0: idle baseline), increasing per GPU
  double power_w = 0;                       ///< board power (NVML; a 1 s average on H100/H200), >= 0
  double temperature_c = 0;                 ///< GPU core sensor [C] (NVML, whole degrees), > -273.15
  double sm_clock_mhz = 0;                  ///< 0 = not recorded
  unsigned long long throttle_reasons = 0;  ///< NVML clocks-event bit mask (0x4 SW power cap, 0x20/0x40 thermal)
  bool loaded = false;                      ///< the burn GEMM was running at this sample
  std::string where;                        ///< "file:line"
};

/// Everything read from the inputs of one fit.
struct MeasurementSet {
  std::string gpu_name;  ///< as the machine reported it ("" when unknown, e.g. from a log)
  std::vector<GemmSample> gemm;
  std::vector<BandwidthSample> bandwidth;
  double launch_back_to_back_s = 0;  ///< 0 = not measured
  double launch_empty_kernel_s = 0;
  std::vector<CollectiveSample> collectives;
  std::vector<PowerThermalSample> power;  ///< burn samples, in file order
  double sm_clock_max_mhz = 0;            ///< machine's maximum SM clock (0 = not recorded)
  double power_limit_w = 0;               ///< enforced power limit at the start (0 = not recorded)
  int power_samples_skipped = 0;          ///< burn samples without power or temperature (NVML read failed)
};

}  // namespace traincast::models
