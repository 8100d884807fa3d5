// Tests for sim::Time: integer nanoseconds, seconds conversion rounding up.

#include "sim/time.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace traincast::sim {
namespace {

TEST(TimeTest, DefaultIsZero) {
  EXPECT_EQ(Time().ns(), 0);
  EXPECT_EQ(Time(), Time::zero());
}

TEST(TimeTest, NanosecondsRoundTrip) {
  EXPECT_EQ(Time::from_ns(1234).ns(), 1234);
  // 1.5e9 ns = 1.5 s exactly.
  EXPECT_DOUBLE_EQ(Time::from_ns(1'500'000'000).seconds(), 1.5);
}

TEST(TimeTest, FromSecondsExactValues) {
  // 1 s = 1e9 ns; 1 ms = 1e6 ns; 2.5 us = 2500 ns (no spurious +1 from binary noise).
  EXPECT_EQ(Time::from_seconds(1.0).ns(), 1'000'000'000);
  EXPECT_EQ(Time::from_seconds(1e-3).ns(), 1'000'000);
  EXPECT_EQ(Time::from_seconds(2.5e-6).ns(), 2500);
  EXPECT_EQ(Time::from_seconds(0.1).ns(), 100'000'000);
  EXPECT_EQ(Time::from_seconds(0.0).ns(), 0);
}

TEST(TimeTest, FromSecondsRoundsUp) {
  // 1.2 ns -> 2 ns; 0.1 ns -> 1 ns; any positive delay is at least 1 ns.
  EXPECT_EQ(Time::from_seconds(1.2e-9).ns(), 2);
  EXPECT_EQ(Time::from_seconds(1e-10).ns(), 1);
  EXPECT_EQ(Time::from_seconds(1e-30).ns(), 1);
  EXPECT_EQ(Time::from_seconds(std::numeric_limits<double>::denorm_min()).ns(), 1);
}

TEST(TimeTest, FromSecondsRejectsBadInput) {
  try {
    Time::from_seconds(-1.0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "Time::from_seconds: negative or NaN seconds");
  }
  EXPECT_THROW(Time::from_seconds(std::nan("")), std::invalid_argument);
  try {
    Time::from_seconds(1e10);  // 317 years
    FAIL() << "expected std::overflow_error";
  } catch (const std::overflow_error& e) {
    EXPECT_STREQ(e.what(), "Time::from_seconds: beyond 292 years");
  }
  EXPECT_THROW(Time::from_seconds(std::numeric_limits<double>::infinity()), std::overflow_error);
}

TEST(TimeTest, ArithmeticAndOrder) {
  const Time a = Time::from_ns(10);
  const Time b = Time::from_ns(25);
  EXPECT_EQ((a + b).ns(), 35);
  EXPECT_EQ((b - a).ns(), 15);
  Time c = a;
  c += b;
  EXPECT_EQ(c.ns(), 35);
  c -= a;
  EXPECT_EQ(c, b);
  EXPECT_LT(a, b);
  EXPECT_GT(b, a);
  EXPECT_LE(a, a);
  EXPECT_LT(b, Time::max());
  EXPECT_EQ(Time::max().ns(), std::numeric_limits<std::int64_t>::max());
}

}  // namespace
}  // namespace traincast::sim
