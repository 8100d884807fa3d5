#pragma once
// Words the topology descriptions share (Cluster::describe, describe_fabric, describe_switches,
// to_dot). Internal to models/hardware.

#include <sstream>
#include <string>

namespace traincast::models::detail {

/// Bytes per second as GB/s (10^9 bytes) to 4 significant digits: "450 GB/s", "12.5 GB/s".
inline std::string gbps(double bytes_per_s) {
  std::ostringstream s;
  s.precision(4);
  s << bytes_per_s / 1e9 << " GB/s";
  return s.str();
}

/// A count and its noun, plural unless 1: "1 spine", "2 spines", "2 aggregation switches".
inline std::string count_of(long long n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : what.back() == 'h' ? "es" : "s");
}

}  // namespace traincast::models::detail
