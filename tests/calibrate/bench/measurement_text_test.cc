// calibrate/bench/measurement_text.h: what traincast-bench prints must parse with the schema
// (message Measurements of models/io/traincast.proto) and give back every value exactly.

#include "calibrate/bench/measurement_text.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "traincast.pb.h"

namespace traincast::bench {
namespace {

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    errors += std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message + "\n";
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    errors += "warning " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message + "\n";
  }
  std::string errors;
};

/// Parses `text` with the schema; fails the test (with the text) on any error or warning.
proto::Measurements parse(const std::string& text) {
  proto::Measurements parsed;
  google::protobuf::TextFormat::Parser parser;
  CollectErrors errors;
  parser.RecordErrorsTo(&errors);
  EXPECT_TRUE(parser.ParseFromString(text, &parsed)) << errors.errors << "\n--- text:\n" << text;
  EXPECT_EQ(errors.errors, "") << text;
  return parsed;
}

/// Same double, bit for bit (NaN: any NaN).
void expect_same(double expected, double got, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(got)) << what;
    return;
  }
  EXPECT_EQ(std::memcmp(&expected, &got, sizeof expected), 0) << what << ": expected " << expected << " got " << got;
}

Measurements every_field() {
  Measurements m;
  MeasuredMachine machine;
  machine.hostname = "dgx-h200-07";
  machine.gpu_name = "NVIDIA H200";
  machine.gpu_count = 8;
  machine.compute_capability = "9.0";
  machine.driver_version = "560.35.03";
  machine.cuda_runtime_version = "13.0";
  machine.nccl_version = "2.28.9";
  machine.hbm_capacity_bytes = 150754820096.0;
  machine.sm_clock_max_mhz = 1980;
  machine.memory_clock_max_mhz = 3201;
  machine.sm_count = 132;
  machine.power_limit_w = 700;
  machine.started_utc = "2025-11-29T20:15:00Z";
  machine.bench_version = "traincast-bench 0.1.0; traincast-bench --budget-s 300";
  machine.description = "rack 4, liquid cooled";
  m.machine = machine;
  GemmMeasurement g;
  g.dtype = "bf16";
  g.m = 8192;
  g.n = 4096;
  g.k = 16384;
  g.time_s = 1.2345678901234567e-3;
  g.tflops = 2.0 * 8192 * 4096 * 16384 / 1.2345678901234567e-3 / 1e12;
  g.repeats = 25;
  m.gemm.push_back(g);
  BandwidthMeasurement b;
  b.kind = BandwidthKind::d2d_peer;
  b.size_bytes = 268435456;
  b.bytes = 268435456;
  b.time_s = 6.1e-4;
  b.gb_per_s = 268435456 / 6.1e-4 / 1e9;
  b.src_gpu = 0;
  b.dst_gpu = 7;
  b.repeats = 20;
  m.bandwidth.push_back(b);
  LaunchMeasurement l;
  l.empty_kernel_launch_s = 4.2e-6;
  l.back_to_back_kernel_s = 2.1e-6;
  m.launch = l;
  CollectiveMeasurement c;
  c.op = "all_reduce";
  c.num_ranks = 8;
  c.size_bytes = 8589934592.0;
  c.dtype = "float";
  c.time_us = 36612.5;
  c.algbw_gb_per_s = 8589934592.0 / 36612.5e-6 / 1e9;
  c.busbw_gb_per_s = *c.algbw_gb_per_s * 2 * 7 / 8;
  c.in_place_time_us = 36600.25;
  c.repeats = 3;
  c.algorithm = "Ring";
  c.protocol = "Simple";
  m.collective.push_back(c);
  PowerSample p;
  p.gpu = 3;
  p.t_s = -12.75;
  p.power_w = 71.234;
  p.temperature_c = 34;
  p.sm_clock_mhz = 345;
  p.throttle_reasons = 0x1;
  p.loaded = false;
  m.power.push_back(p);
  return m;
}

TEST(MeasurementText, EveryMessageKindAndFieldRoundTrips) {
  const Measurements m = every_field();
  const proto::Measurements parsed = parse(measurements_text(m, {"a comment"}));

  const proto::MeasuredMachine& pm = parsed.machine();
  const MeasuredMachine& x = *m.machine;
  EXPECT_EQ(pm.hostname(), *x.hostname);
  EXPECT_EQ(pm.gpu_name(), *x.gpu_name);
  EXPECT_EQ(pm.gpu_count(), *x.gpu_count);
  EXPECT_EQ(pm.compute_capability(), *x.compute_capability);
  EXPECT_EQ(pm.driver_version(), *x.driver_version);
  EXPECT_EQ(pm.cuda_runtime_version(), *x.cuda_runtime_version);
  EXPECT_EQ(pm.nccl_version(), *x.nccl_version);
  expect_same(*x.hbm_capacity_bytes, pm.hbm_capacity_bytes(), "hbm_capacity_bytes");
  expect_same(*x.sm_clock_max_mhz, pm.sm_clock_max_mhz(), "sm_clock_max_mhz");
  expect_same(*x.memory_clock_max_mhz, pm.memory_clock_max_mhz(), "memory_clock_max_mhz");
  EXPECT_EQ(pm.sm_count(), *x.sm_count);
  expect_same(*x.power_limit_w, pm.power_limit_w(), "power_limit_w");
  EXPECT_EQ(pm.started_utc(), *x.started_utc);
  EXPECT_EQ(pm.bench_version(), *x.bench_version);
  EXPECT_EQ(pm.description(), *x.description);

  ASSERT_EQ(parsed.gemm_size(), 1);
  const proto::GemmMeasurement& pg = parsed.gemm(0);
  EXPECT_EQ(pg.dtype(), "bf16");
  EXPECT_EQ(pg.m(), 8192);
  EXPECT_EQ(pg.n(), 4096);
  EXPECT_EQ(pg.k(), 16384);
  expect_same(*m.gemm[0].time_s, pg.time_s(), "gemm.time_s");
  expect_same(*m.gemm[0].tflops, pg.tflops(), "gemm.tflops");
  EXPECT_EQ(pg.repeats(), 25);

  ASSERT_EQ(parsed.bandwidth_size(), 1);
  const proto::BandwidthMeasurement& pb = parsed.bandwidth(0);
  EXPECT_EQ(pb.kind(), proto::d2d_peer);
  expect_same(*m.bandwidth[0].size_bytes, pb.size_bytes(), "size_bytes");
  expect_same(*m.bandwidth[0].bytes, pb.bytes(), "bytes");
  expect_same(*m.bandwidth[0].time_s, pb.time_s(), "bandwidth.time_s");
  expect_same(*m.bandwidth[0].gb_per_s, pb.gb_per_s(), "gb_per_s");
  EXPECT_TRUE(pb.has_src_gpu());  // 0 written explicitly is kept as "set"
  EXPECT_EQ(pb.src_gpu(), 0);
  EXPECT_EQ(pb.dst_gpu(), 7);
  EXPECT_EQ(pb.repeats(), 20);

  ASSERT_TRUE(parsed.has_launch());
  expect_same(*m.launch->empty_kernel_launch_s, parsed.launch().empty_kernel_launch_s(), "empty_kernel_launch_s");
  expect_same(*m.launch->back_to_back_kernel_s, parsed.launch().back_to_back_kernel_s(), "back_to_back_kernel_s");

  ASSERT_EQ(parsed.collective_size(), 1);
  const proto::CollectiveMeasurement& pc = parsed.collective(0);
  const CollectiveMeasurement& c = m.collective[0];
  EXPECT_EQ(pc.op(), "all_reduce");
  EXPECT_EQ(pc.num_ranks(), 8);
  expect_same(*c.size_bytes, pc.size_bytes(), "collective.size_bytes");
  EXPECT_EQ(pc.dtype(), "float");
  expect_same(*c.time_us, pc.time_us(), "time_us");
  expect_same(*c.algbw_gb_per_s, pc.algbw_gb_per_s(), "algbw");
  expect_same(*c.busbw_gb_per_s, pc.busbw_gb_per_s(), "busbw");
  expect_same(*c.in_place_time_us, pc.in_place_time_us(), "in_place_time_us");
  EXPECT_EQ(pc.repeats(), 3);
  EXPECT_EQ(pc.algorithm(), "Ring");
  EXPECT_EQ(pc.protocol(), "Simple");

  ASSERT_EQ(parsed.power_size(), 1);
  const proto::PowerSample& pp = parsed.power(0);
  EXPECT_EQ(pp.gpu(), 3);
  expect_same(-12.75, pp.t_s(), "t_s");
  expect_same(71.234, pp.power_w(), "power_w");
  expect_same(34, pp.temperature_c(), "temperature_c");
  expect_same(345, pp.sm_clock_mhz(), "sm_clock_mhz");
  EXPECT_EQ(pp.throttle_reasons(), 1u);
  EXPECT_TRUE(pp.has_loaded());
  EXPECT_FALSE(pp.loaded());
}

TEST(MeasurementText, UnsetFieldsStayUnset) {
  Measurements m;
  m.gemm.emplace_back();
  m.gemm[0].dtype = "fp8";
  m.bandwidth.emplace_back();
  m.bandwidth[0].kind = BandwidthKind::h2d;
  m.power.emplace_back();
  const proto::Measurements parsed = parse(measurements_text(m));
  EXPECT_FALSE(parsed.has_machine());
  EXPECT_FALSE(parsed.has_launch());
  ASSERT_EQ(parsed.gemm_size(), 1);
  EXPECT_FALSE(parsed.gemm(0).has_m());
  EXPECT_FALSE(parsed.gemm(0).has_time_s());
  ASSERT_EQ(parsed.bandwidth_size(), 1);
  EXPECT_FALSE(parsed.bandwidth(0).has_src_gpu());
  EXPECT_EQ(parsed.bandwidth(0).kind(), proto::h2d);
  ASSERT_EQ(parsed.power_size(), 1);
  EXPECT_FALSE(parsed.power(0).has_loaded());
  EXPECT_EQ(parse(measurements_text(Measurements{})).ByteSizeLong(), 0u);
}

TEST(MeasurementText, EveryBandwidthKindByName) {
  const std::vector<std::pair<BandwidthKind, proto::BandwidthKind>> kinds = {
      {BandwidthKind::hbm_copy, proto::hbm_copy},
      {BandwidthKind::hbm_read, proto::hbm_read},
      {BandwidthKind::hbm_write, proto::hbm_write},
      {BandwidthKind::h2d, proto::h2d},
      {BandwidthKind::d2h, proto::d2h},
      {BandwidthKind::d2d_peer, proto::d2d_peer},
  };
  Measurements m;
  for (const auto& [kind, _] : kinds) {
    m.bandwidth.emplace_back();
    m.bandwidth.back().kind = kind;
  }
  const proto::Measurements parsed = parse(measurements_text(m));
  ASSERT_EQ(parsed.bandwidth_size(), static_cast<int>(kinds.size()));
  for (size_t i = 0; i < kinds.size(); ++i) {
    EXPECT_EQ(parsed.bandwidth(static_cast<int>(i)).kind(), kinds[i].second);
    EXPECT_EQ(proto::BandwidthKind_Name(kinds[i].second), bandwidth_kind_name(kinds[i].first));
  }
}

TEST(MeasurementText, AwkwardStringsComeBackByteForByte) {
  const std::vector<std::string> strings = {
      "",
      "say \"hi\"",
      "C:\\path\\to\\file \\\" \\n",
      "line one\nline two\r\n\ttabbed",
      std::string("nul\0inside", 10),
      "\x01\x02\x1f\x7f control",
      "Zürich — 東京 — 🚀",                   // 2-, 3- and 4-byte UTF-8
      "#not a comment { } : ' \" \\' done",  // text-format syntax inside a string
      "trailing backslash \\",
  };
  Measurements m;
  for (const std::string& s : strings) {
    CollectiveMeasurement c;
    c.op = s;
    m.collective.push_back(c);
  }
  MeasuredMachine machine;
  machine.description = strings[3];
  m.machine = machine;
  const std::string text = measurements_text(m);
  const proto::Measurements parsed = parse(text);
  ASSERT_EQ(parsed.collective_size(), static_cast<int>(strings.size()));
  for (size_t i = 0; i < strings.size(); ++i) EXPECT_EQ(parsed.collective(static_cast<int>(i)).op(), strings[i]) << i;
  EXPECT_EQ(parsed.machine().description(), strings[3]);
  // One message per line: no raw line break inside a string.
  size_t lines = 0;
  for (char ch : text) lines += ch == '\n';
  EXPECT_EQ(lines, 1 + strings.size());
}

TEST(MeasurementText, InvalidUtf8BecomesReplacementCharacter) {
  // Truncated 2-byte sequence, lone continuation byte, overlong "/", UTF-16 surrogate, > U+10FFFF.
  const std::string bad = std::string("a\xC3") + "b\x80" + "c\xC0\xAF" + "d\xED\xA0\x80" + "e\xF4\x90\x80\x80";
  const std::string fffd = "\xEF\xBF\xBD";
  Measurements m;
  m.collective.emplace_back();
  m.collective[0].op = bad;
  const proto::Measurements parsed = parse(measurements_text(m));
  ASSERT_EQ(parsed.collective_size(), 1);
  EXPECT_EQ(parsed.collective(0).op(),
            "a" + fffd + "b" + fffd + "c" + fffd + fffd + "d" + fffd + fffd + fffd + "e" + fffd + fffd + fffd + fffd);
}

TEST(MeasurementText, DoublesKeepFullPrecision) {
  const std::vector<double> values = {
      0.0,
      -0.0,
      0.1,
      1.0 / 3.0,
      2.0 / 3.0 * 1e-7,
      123456789.12345678,
      8589934592.0,
      9007199254740993.0,  // 2^53 + 1 rounds to 2^53
      1e-300,
      std::numeric_limits<double>::denorm_min(),
      std::numeric_limits<double>::min(),
      std::numeric_limits<double>::max(),
      -std::numeric_limits<double>::max(),
      std::numeric_limits<double>::epsilon(),
      1e22,
      1.7976931348623157e308,
      std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity(),
      std::numeric_limits<double>::quiet_NaN(),
  };
  Measurements m;
  for (double v : values) {
    PowerSample p;
    p.t_s = v;
    m.power.push_back(p);
  }
  const proto::Measurements parsed = parse(measurements_text(m));
  ASSERT_EQ(parsed.power_size(), static_cast<int>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    expect_same(values[i], parsed.power(static_cast<int>(i)).t_s(), "value " + text_double(values[i]));
  }
  EXPECT_EQ(text_double(0.1), "0.1");  // shortest form, readable
  EXPECT_EQ(text_double(-0.0), "-0");
}

TEST(MeasurementText, IntegerExtremes) {
  Measurements m;
  GemmMeasurement g;
  g.m = std::numeric_limits<int64_t>::max();
  g.n = std::numeric_limits<int64_t>::min();
  g.repeats = std::numeric_limits<int>::min();
  m.gemm.push_back(g);
  PowerSample p;
  p.throttle_reasons = std::numeric_limits<uint64_t>::max();
  p.loaded = true;
  m.power.push_back(p);
  const proto::Measurements parsed = parse(measurements_text(m));
  EXPECT_EQ(parsed.gemm(0).m(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parsed.gemm(0).n(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(parsed.gemm(0).repeats(), std::numeric_limits<int>::min());
  EXPECT_EQ(parsed.power(0).throttle_reasons(), std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(parsed.power(0).loaded());
}

TEST(MeasurementText, CommentLinesStayComments) {
  Measurements m;
  m.launch = LaunchMeasurement{};
  m.launch->empty_kernel_launch_s = 5e-6;
  const std::string text =
      measurements_text(m, {"first", "two\nlines with launch { } inside", "gemm: FAILED: \"quoted\""});
  EXPECT_EQ(text.rfind("# first\n", 0), 0u);
  const proto::Measurements parsed = parse(text);
  EXPECT_EQ(parsed.gemm_size(), 0);
  expect_same(5e-6, parsed.launch().empty_kernel_launch_s(), "launch");
}

}  // namespace
}  // namespace traincast::bench
