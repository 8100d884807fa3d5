#pragma once
// Simulated time: a strong type over int64 nanoseconds (292 years of range).

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace traincast::sim {

/// A point in (or span of) simulated time, in integer nanoseconds.
/// Conversions from seconds round *up*, so that no positive delay becomes zero.
class Time {
 public:
  constexpr Time() = default;

  /// Exact: `ns` nanoseconds (may be negative, for differences).
  static constexpr Time from_ns(std::int64_t ns) { return Time(ns); }
  /// seconds: finite and >= 0. Rounds up to the next nanosecond.
  /// Throws std::invalid_argument for NaN/negative, std::overflow_error past Time::max().
  static Time from_seconds(double seconds) {
    if (!(seconds >= 0.0)) throw std::invalid_argument("Time::from_seconds: negative or NaN seconds");
    const double ns = std::ceil(seconds * 1e9 - 1e-6);  // tolerate binary noise of exact values
    if (ns >= 9.2e18) throw std::overflow_error("Time::from_seconds: beyond 292 years");
    return Time(ns <= 0.0 ? (seconds > 0.0 ? 1 : 0) : static_cast<std::int64_t>(ns));
  }
  /// 0 ns.
  static constexpr Time zero() { return Time(0); }
  /// The largest representable time (about 292 years); used as "never".
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  /// The value in integer nanoseconds.
  constexpr std::int64_t ns() const { return ns_; }
  /// The value in seconds (double; exact up to 2^53 ns, about 104 days).
  constexpr double seconds() const { return static_cast<double>(ns_) * 1e-9; }

  /// Ordering and integer arithmetic in ns; the caller keeps results inside int64 range.

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(ns_ + o.ns_); }
  constexpr Time operator-(Time o) const { return Time(ns_ - o.ns_); }
  constexpr Time& operator+=(Time o) {
    ns_ += o.ns_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ns_ -= o.ns_;
    return *this;
  }

 private:
  constexpr explicit Time(std::int64_t ns) : ns_(ns) {}
  std::int64_t ns_ = 0;
};

}  // namespace traincast::sim
