#pragma once
// The measurement file that traincast-bench writes: plain structs mirroring message `Measurements`
// of models/io/traincast.proto, and a printer of protobuf TEXT format written by hand, because
// bench/ includes only CUDA/NCCL (DESIGN §2). No CUDA, no protobuf here, so a GoogleTest
// (tests/calibrate/bench/) can check that what this prints parses with the schema.
//
// Field names, numbers' units and meanings: see the schema (units are in the names). Every field is
// std::optional and printed only when set, as proto3 `optional` fields are (so a reader can tell
// "not measured" from 0). Doubles are printed in the shortest form that reads back to the same
// bits (std::to_chars); NaN and infinities as `nan`, `inf`, `-inf` (text format accepts those).
// Strings are quoted with text-format escapes; valid UTF-8 is kept as is (readable), an invalid
// UTF-8 byte becomes U+FFFD (proto3 strings must be valid UTF-8), control bytes are escaped.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace traincast::bench {

/// message MeasuredMachine.
struct MeasuredMachine {
  std::optional<std::string> hostname;
  std::optional<std::string> gpu_name;
  std::optional<int> gpu_count;
  std::optional<std::string> compute_capability;  ///< "9.0"
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_runtime_version;
  std::optional<std::string> nccl_version;
  std::optional<double> hbm_capacity_bytes;
  std::optional<double> sm_clock_max_mhz;
  std::optional<double> memory_clock_max_mhz;
  std::optional<int> sm_count;
  std::optional<double> power_limit_w;
  std::optional<std::string> started_utc;  ///< ISO 8601
  std::optional<std::string> bench_version;
  std::optional<std::string> description;
};

/// message GemmMeasurement.
struct GemmMeasurement {
  std::optional<std::string> dtype;  ///< fp32, tf32, fp16, bf16, fp8
  std::optional<int64_t> m, n, k;
  std::optional<double> time_s;
  std::optional<double> tflops;
  std::optional<int> repeats;
};

/// enum BandwidthKind (names as in the schema; printed by name).
enum class BandwidthKind { bandwidth_unspecified, hbm_copy, hbm_read, hbm_write, h2d, d2h, d2d_peer };

/// Schema name of `kind`.
inline const char* bandwidth_kind_name(BandwidthKind kind) {
  switch (kind) {
    case BandwidthKind::hbm_copy:
      return "hbm_copy";
    case BandwidthKind::hbm_read:
      return "hbm_read";
    case BandwidthKind::hbm_write:
      return "hbm_write";
    case BandwidthKind::h2d:
      return "h2d";
    case BandwidthKind::d2h:
      return "d2h";
    case BandwidthKind::d2d_peer:
      return "d2d_peer";
    case BandwidthKind::bandwidth_unspecified:
      break;
  }
  return "bandwidth_unspecified";
}

/// message BandwidthMeasurement.
struct BandwidthMeasurement {
  std::optional<BandwidthKind> kind;
  std::optional<double> size_bytes;
  std::optional<double> bytes;
  std::optional<double> time_s;
  std::optional<double> gb_per_s;
  std::optional<int> src_gpu;
  std::optional<int> dst_gpu;
  std::optional<int> repeats;
};

/// message LaunchMeasurement.
struct LaunchMeasurement {
  std::optional<double> empty_kernel_launch_s;
  std::optional<double> back_to_back_kernel_s;
};

/// message CollectiveMeasurement.
struct CollectiveMeasurement {
  std::optional<std::string> op;
  std::optional<int> num_ranks;
  std::optional<double> size_bytes;
  std::optional<std::string> dtype;
  std::optional<double> time_us;
  std::optional<double> algbw_gb_per_s;
  std::optional<double> busbw_gb_per_s;
  std::optional<double> in_place_time_us;
  std::optional<int> repeats;
  std::optional<std::string> algorithm;
  std::optional<std::string> protocol;
};

/// message PowerSample.
struct PowerSample {
  std::optional<int> gpu;
  std::optional<double> t_s;
  std::optional<double> power_w;
  std::optional<double> temperature_c;
  std::optional<double> sm_clock_mhz;
  std::optional<uint64_t> throttle_reasons;
  std::optional<bool> loaded;
};

/// message Measurements.
struct Measurements {
  std::optional<MeasuredMachine> machine;
  std::vector<GemmMeasurement> gemm;
  std::vector<BandwidthMeasurement> bandwidth;
  std::optional<LaunchMeasurement> launch;
  std::vector<CollectiveMeasurement> collective;
  std::vector<PowerSample> power;
};

/// `value` in the shortest decimal form that parses back to the same double; "nan", "inf", "-inf".
inline std::string text_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "nan";  // cannot happen with 64 bytes; keeps the file parseable
  return std::string(buf, end);
}

/// Length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 when the bytes there are not
/// valid UTF-8 (overlong forms, surrogates and code points above U+10FFFF are invalid; RFC 3629).
inline size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t j) { return static_cast<unsigned char>(s[j]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t len = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t j = 1; j < len; ++j) {
    if ((b(i + j) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + j) & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return len;
}

/// `text` as a quoted text-format string literal: \" \\ \n \r \t escaped, other control bytes as
/// three-digit octal escapes, valid UTF-8 kept, each invalid byte replaced by U+FFFD.
inline std::string text_quote(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t len = utf8_sequence_length(text, i);
      if (len == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          const char octal[5] = {'\\', static_cast<char>('0' + (c >> 6)), static_cast<char>('0' + ((c >> 3) & 7)),
                                 static_cast<char>('0' + (c & 7)), '\0'};
          out += octal;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

namespace detail {

/// Appends `name: value` fields of one message on one line ("name { a: 1 b: 2 }").
class TextLine {
 public:
  explicit TextLine(std::string& out) : out_(out) {}
  void add(const char* name, const std::optional<std::string>& v) {
    if (v) put(name, text_quote(*v));
  }
  void add(const char* name, const std::optional<double>& v) {
    if (v) put(name, text_double(*v));
  }
  void add(const char* name, const std::optional<int>& v) {
    if (v) put(name, std::to_string(*v));
  }
  void add(const char* name, const std::optional<int64_t>& v) {
    if (v) put(name, std::to_string(*v));
  }
  void add(const char* name, const std::optional<uint64_t>& v) {
    if (v) put(name, std::to_string(*v));
  }
  void add(const char* name, const std::optional<bool>& v) {
    if (v) put(name, *v ? "true" : "false");
  }
  void add(const char* name, const std::optional<BandwidthKind>& v) {
    if (v) put(name, bandwidth_kind_name(*v));
  }

 private:
  void put(const char* name, const std::string& value) {
    out_ += ' ';
    out_ += name;
    out_ += ": ";
    out_ += value;
  }
  std::string& out_;
};

}  // namespace detail

/// The whole file: `comment` lines first (each prefixed "# "; line breaks inside a comment start a
/// new comment line), then machine, launch, and one line per repeated measurement.
inline std::string measurements_text(const Measurements& m, const std::vector<std::string>& comment = {}) {
  std::string out;
  for (const std::string& c : comment) {
    out += "# ";
    for (char ch : c) {
      if (ch == '\n' || ch == '\r') {
        out += "\n# ";
      } else {
        out += ch;
      }
    }
    out += '\n';
  }
  if (m.machine) {
    const MeasuredMachine& x = *m.machine;
    out += "machine {";
    detail::TextLine line(out);
    line.add("hostname", x.hostname);
    line.add("gpu_name", x.gpu_name);
    line.add("gpu_count", x.gpu_count);
    line.add("compute_capability", x.compute_capability);
    line.add("driver_version", x.driver_version);
    line.add("cuda_runtime_version", x.cuda_runtime_version);
    line.add("nccl_version", x.nccl_version);
    line.add("hbm_capacity_bytes", x.hbm_capacity_bytes);
    line.add("sm_clock_max_mhz", x.sm_clock_max_mhz);
    line.add("memory_clock_max_mhz", x.memory_clock_max_mhz);
    line.add("sm_count", x.sm_count);
    line.add("power_limit_w", x.power_limit_w);
    line.add("started_utc", x.started_utc);
    line.add("bench_version", x.bench_version);
    line.add("description", x.description);
    out += " }\n";
  }
  if (m.launch) {
    out += "launch {";
    detail::TextLine line(out);
    line.add("empty_kernel_launch_s", m.launch->empty_kernel_launch_s);
    line.add("back_to_back_kernel_s", m.launch->back_to_back_kernel_s);
    out += " }\n";
  }
  for (const GemmMeasurement& g : m.gemm) {
    out += "gemm {";
    detail::TextLine line(out);
    line.add("dtype", g.dtype);
    line.add("m", g.m);
    line.add("n", g.n);
    line.add("k", g.k);
    line.add("time_s", g.time_s);
    line.add("tflops", g.tflops);
    line.add("repeats", g.repeats);
    out += " }\n";
  }
  for (const BandwidthMeasurement& b : m.bandwidth) {
    out += "bandwidth {";
    detail::TextLine line(out);
    line.add("kind", b.kind);
    line.add("size_bytes", b.size_bytes);
    line.add("bytes", b.bytes);
    line.add("time_s", b.time_s);
    line.add("gb_per_s", b.gb_per_s);
    line.add("src_gpu", b.src_gpu);
    line.add("dst_gpu", b.dst_gpu);
    line.add("repeats", b.repeats);
    out += " }\n";
  }
  for (const CollectiveMeasurement& c : m.collective) {
    out += "collective {";
    detail::TextLine line(out);
    line.add("op", c.op);
    line.add("num_ranks", c.num_ranks);
    line.add("size_bytes", c.size_bytes);
    line.add("dtype", c.dtype);
    line.add("time_us", c.time_us);
    line.add("algbw_gb_per_s", c.algbw_gb_per_s);
    line.add("busbw_gb_per_s", c.busbw_gb_per_s);
    line.add("in_place_time_us", c.in_place_time_us);
    line.add("repeats", c.repeats);
    line.add("algorithm", c.algorithm);
    line.add("protocol", c.protocol);
    out += " }\n";
  }
  for (const PowerSample& p : m.power) {
    out += "power {";
    detail::TextLine line(out);
    line.add("gpu", p.gpu);
    line.add("t_s", p.t_s);
    line.add("power_w", p.power_w);
    line.add("temperature_c", p.temperature_c);
    line.add("sm_clock_mhz", p.sm_clock_mhz);
    line.add("throttle_reasons", p.throttle_reasons);
    line.add("loaded", p.loaded);
    out += " }\n";
  }
  return out;
}

}  // namespace traincast::bench
