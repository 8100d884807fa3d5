#pragma once
// The documented ranges of a models::MeasurementSet (models/calibration/measurements.h), checked on
// what a measurement reader returned: the fuzz targets of the calibration inputs trap on any value
// a reader let through outside them (a fit would take it as a measurement).

#include <cmath>

#include "models/calibration/measurements.h"

namespace traincast::fuzz {

/// Traps unless every sample of `m` is in its documented range.
inline void check_measurements(const models::MeasurementSet& m) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  auto at_least_zero = [](double v) { return std::isfinite(v) && v >= 0; };
  for (const models::GemmSample& s : m.gemm) {
    if (!positive(s.m) || !positive(s.n) || !positive(s.k) || !positive(s.time_s)) __builtin_trap();
  }
  for (const models::BandwidthSample& s : m.bandwidth) {
    if (!positive(s.bytes) || !positive(s.time_s) || !at_least_zero(s.size_bytes)) __builtin_trap();
  }
  for (const models::CollectiveSample& s : m.collectives) {
    if (s.num_ranks < 0 || !positive(s.size_bytes) || !positive(s.time_us)) __builtin_trap();
  }
  for (const models::PowerThermalSample& s : m.power) {
    if (s.gpu < 0 || !std::isfinite(s.t_s) || !at_least_zero(s.power_w) || !std::isfinite(s.temperature_c) ||
        s.temperature_c <= -273.15 || !at_least_zero(s.sm_clock_mhz))
      __builtin_trap();
  }
}

}  // namespace traincast::fuzz
