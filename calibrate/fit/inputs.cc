// nccl-tests logs and CSV to measured samples. See inputs.h.

#include "calibrate/fit/inputs.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "calibrate/nccl_tests_row_check.h"
#include "models/collectives/nccl_tests.h"

namespace traincast::calibrate {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "\n") + s;
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

/// The fields of one CSV line. RFC 4180 quoting: a field in double quotes ("m", "a,b") may hold
/// commas, and "" inside it is one quote; spaces around a field are dropped.
std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false, was_quoted = false;
  auto flush = [&] {
    out.push_back(was_quoted ? field : trim(field));
    field.clear();
    was_quoted = false;
  };
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"' && trim(field).empty()) {
      quoted = was_quoted = true;
      field.clear();
    } else if (c == ',') {
      flush();
    } else if (!(was_quoted && (c == ' ' || c == '\t' || c == '\r'))) {
      field += c;
    }
  }
  flush();
  return out;
}

std::string fmt(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

bool number(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno == 0 && std::isfinite(v);
}

bool gemm_dtype(const std::string& name, models::Precision& p, bool& skip) {
  skip = false;
  static const std::map<std::string, models::Precision> known = {
      {"fp32", models::Precision::fp32},         {"tf32", models::Precision::tf32},
      {"fp16", models::Precision::fp16},         {"bf16", models::Precision::bf16},
      {"fp8", models::Precision::fp8},           {"bf16xbf16->bf16", models::Precision::bf16},
      {"f16xf16->f16", models::Precision::fp16}, {"f8e4m3fnxf8e4m3fn->bf16", models::Precision::fp8},
      {"f32xf32->f32", models::Precision::tf32}};
  if (const auto it = known.find(name); it != known.end()) {
    p = it->second;
    return true;
  }
  if (name.find("->") != std::string::npos) {
    skip = true;  // an openxla dtype traincast has no precision for
    return true;
  }
  return false;
}

/// Largest relative disagreement between a GEMM row's time and its rate columns: both are
/// printed to 3 or more significant digits (xla's table: 13), so 1% is rounding x 20.
constexpr double kTimeAgreement = 0.01;

enum class CsvKind { none, collective, gemm, bandwidth };

/// What the header's columns make the rows (collective, GEMM or bandwidth). Throws InputError
/// "path:line: unknown CSV header ..." for any other set of columns.
CsvKind csv_kind(const std::map<std::string, int>& col, const std::string& line, const std::string& at) {
  auto has = [&](const char* c) { return col.count(c) > 0; };
  if (has("op") && has("size_bytes") && has("time_us")) return CsvKind::collective;
  if (has("m") && has("n") && has("k") && has("dtype") &&
      (has("time_s") || has("time_us") || has("tflops") || has("flops_per_s")))
    return CsvKind::gemm;
  if (has("kind") && has("bytes") && has("time_s")) return CsvKind::bandwidth;
  throw InputError({at + "unknown CSV header \"" + line.substr(0, 80) +
                    "\" (expected columns op,size_bytes,time_us[,num_ranks,dtype] for collectives; "
                    "m,n,k,dtype and time_s|time_us|tflops|flops_per_s[,b,device_key] for GEMMs; "
                    "kind,bytes,time_s[,size_bytes] for bandwidths)"});
}

/// One data row of a CSV: its fields by column name, and the errors of the whole file.
struct CsvRow {
  const std::vector<std::string>& f;
  const std::map<std::string, int>& col;
  std::vector<std::string>& errors;
  int line = 0;
  std::string at;     ///< "path:line: "
  std::string where;  ///< "path:line"

  bool has(const char* c) const { return col.count(c) > 0; }
  const std::string& get(const char* c) const { return f[col.at(c)]; }
  /// Whether column c holds a number > 0 (into v); records the error otherwise.
  bool positive(const char* c, double& v) const {
    if (number(get(c), v) && v > 0) return true;
    errors.push_back(at + "column '" + c + "': '" + get(c).substr(0, 40) + "' is not a number > 0");
    return false;
  }
  /// Whether column c holds a byte count (into v): whole, from 1 to 2^53, the largest a double
  /// counts exactly (nccl-tests' -b/-e limit, tools/cli/nccl_tests_command.cc); records the error
  /// otherwise. 1e23 or 0.5 was read as a size until session 36.
  bool bytes(const char* c, double& v) const {
    if (!positive(c, v)) return false;
    constexpr double kMaxBytes = 9007199254740992.0;  // 2^53
    if (v == std::floor(v) && v <= kMaxBytes) return true;
    errors.push_back(at + "column '" + c + "': got " + get(c).substr(0, 40) +
                     " (expected a whole number of bytes from 1 to 9007199254740992 = 2^53, the largest size the "
                     "model holds exactly)");
    return false;
  }
  /// Whether column c holds a GEMM side in (0, models::kMaxGemmDimension] (into v), as the
  /// profile reader accepts it; records the error otherwise.
  bool gemm_side(const char* c, double& v) const {
    if (!positive(c, v)) return false;
    if (v != std::floor(v)) {  // a side or batch counts elements or matrices
      errors.push_back(at + "column '" + c + "': got " + get(c).substr(0, 40) + " (expected a whole number from 1 to " +
                       fmt(models::kMaxGemmDimension) + ": a GEMM side counts elements, b counts matrices)");
      return false;
    }
    if (v <= models::kMaxGemmDimension) return true;
    errors.push_back(at + "column '" + c + "': got " + get(c).substr(0, 40) + " (expected a number in (0, " +
                     fmt(models::kMaxGemmDimension) + "]: a profile holds GEMM sides up to that)");
    return false;
  }
};

/// The first row of each measured point of a CSV, by what identifies it for the fit: a CSV row is
/// one measurement (the bench's are already the median of their repeats), and the format has no
/// rule for averaging rows, so the same point twice in one file is refused rather than weighted
/// twice. Collectives: (op, num_ranks, size_bytes), op as nccl-tests names it (0 ranks: not
/// given); GEMMs: (device, dtype, b, m, n, k), dtype as the fit's precision (bf16 and
/// bf16xbf16->bf16 are one).
struct SeenRows {
  std::map<std::tuple<std::string, int, double>, int> collective;
  std::map<std::tuple<std::string, int, double, double, double, double>, int> gemm;
};

/// "" when key is new (recorded with row's line); else row's error naming the earlier line.
template <class Key>
std::string repeated(std::map<Key, int>& seen, const Key& key, const CsvRow& row, const std::string& columns,
                     const std::string& what, const std::string& unit) {
  const auto [it, fresh] = seen.emplace(key, row.line);
  if (fresh) return "";
  return row.at + "columns " + columns + ": got " + what + " again after line " + std::to_string(it->second) +
         " (expected each " + unit +
         " once per file: a row is one measurement, not a sample to be averaged, and a repeat would weigh twice in "
         "the fit; keep one row, e.g. the median of the repeats)";
}

/// A collective row (op, size_bytes, time_us[, num_ranks, dtype]) into out.collectives.
void read_collective_row(const CsvRow& row, models::MeasurementSet& out, SeenRows& seen) {
  std::vector<std::string>& errors = row.errors;
  double size = 0, time = 0, ranks = 0;
  bool ok = row.bytes("size_bytes", size);
  // The documented default type is float (calibrate/fit/README.md), as below where the row is kept.
  const bool dtype_given = row.has("dtype") && !row.get("dtype").empty();
  const std::string dtype = dtype_given ? row.get("dtype") : "float";
  if (ok) {
    int word_bytes = 0;
    try {
      word_bytes = models::nccl_tests_type_bytes(dtype);
    } catch (const std::invalid_argument& e) {
      errors.push_back(row.at + "column 'dtype': " + e.what());
      ok = false;
    }
    // nccl-tests sizes are whole elements (count x word size, nccl_tests.h).
    if (word_bytes > 0 && std::fmod(size, word_bytes) != 0) {
      errors.push_back(row.at + "column 'size_bytes': got " + row.get("size_bytes").substr(0, 40) +
                       " (expected a multiple of " + std::to_string(word_bytes) + " B, the size of one " + dtype +
                       (dtype_given ? "" : " (no dtype column: the default)") +
                       ": nccl-tests sizes are whole elements)");
      ok = false;
    }
  }
  ok = row.positive("time_us", time) && ok;
  if (row.has("num_ranks") && !row.get("num_ranks").empty()) {
    // An int holds the count (as nccl-tests counts ranks): a larger one is no rank count.
    if (!number(row.get("num_ranks"), ranks) || ranks < 1 || ranks != std::floor(ranks) ||
        ranks > std::numeric_limits<int>::max()) {
      errors.push_back(row.at + "column 'num_ranks': '" + row.get("num_ranks").substr(0, 40) +
                       "' is not an integer from 1 to " + std::to_string(std::numeric_limits<int>::max()));
      ok = false;
    }
  }
  std::string op;
  if (row.get("op").empty()) {
    errors.push_back(row.at + "column 'op': empty (expected an nccl-tests operation name)");
    ok = false;
  } else {
    try {
      op = models::nccl_tests_op_name(models::parse_nccl_tests_op(row.get("op")));
    } catch (const std::invalid_argument& e) {
      errors.push_back(row.at + "column 'op': " + e.what());
      ok = false;
    }
  }
  if (!ok) return;
  const int n = static_cast<int>(ranks);
  std::string what = op + " of " + row.get("size_bytes").substr(0, 40) + " B";
  if (n > 0) what += " on " + std::to_string(n) + " ranks";
  const bool with_ranks = row.has("num_ranks");
  if (std::string e = repeated(seen.collective, std::tuple{op, n, size}, row,
                               with_ranks ? "'op', 'num_ranks', 'size_bytes'" : "'op', 'size_bytes'", what,
                               with_ranks ? "(op, num_ranks, size_bytes)" : "(op, size_bytes)");
      !e.empty()) {
    errors.push_back(std::move(e));
    return;
  }
  out.collectives.push_back({row.get("op"), n, size, time, dtype, row.where});
}

/// What GEMM rows leave out: the devices seen, rows of other devices and of skipped dtypes.
struct GemmRowCounts {
  std::set<std::string> devices;
  std::map<std::string, int> skipped_dtypes;
  int device_skipped = 0;
};

/// A GEMM row (m, n, k, dtype and a time or rate[, b, device_key]) into out.gemm, unless it is of
/// another device than `device` or of a dtype traincast has no precision for (counted).
void read_gemm_row(const CsvRow& row, const std::string& device, models::MeasurementSet& out, GemmRowCounts& counts,
                   SeenRows& seen) {
  std::vector<std::string>& errors = row.errors;
  std::string dev;
  for (const char* c : {"device_key", "device", "gpu"}) {
    if (row.has(c)) dev = row.get(c);
  }
  if (!dev.empty()) counts.devices.insert(dev);
  if (!device.empty() && dev != device) {
    ++counts.device_skipped;
    return;
  }
  models::GemmSample s;
  bool skip = false;
  if (!gemm_dtype(row.get("dtype"), s.dtype, skip)) {
    errors.push_back(row.at + "column 'dtype': unknown '" + row.get("dtype").substr(0, 40) +
                     "' (expected fp32, tf32, fp16, bf16, fp8 or an openxla dtype such as bf16xbf16->bf16)");
    return;
  }
  if (skip) {
    ++counts.skipped_dtypes[row.get("dtype")];
    return;
  }
  double b = 1;
  bool ok = row.gemm_side("m", s.m);
  ok = row.gemm_side("n", s.n) && ok;
  ok = row.gemm_side("k", s.k) && ok;
  if (row.has("b")) ok = row.gemm_side("b", b) && ok;
  if (ok && b * s.m > models::kMaxGemmDimension) {
    // The batch is folded into m (b x m), which the profile bounds as it bounds m.
    row.errors.push_back(row.at + "columns 'b' x 'm': got " + fmt(b) + " x " + fmt(s.m) + " = " + fmt(b * s.m) +
                         " (expected at most " + fmt(models::kMaxGemmDimension) +
                         ": the batch is folded into m, which a profile holds up to that)");
    ok = false;
  }
  // The time from each of time_s, time_us, tflops, flops_per_s the row has: the first is
  // required; the others, where not empty, must agree with it.
  const double flop = 2 * b * s.m * s.n * s.k;
  const char* first = nullptr;
  for (const char* c : {"time_s", "time_us", "tflops", "flops_per_s"}) {
    if (!row.has(c) || (first != nullptr && row.get(c).empty())) continue;
    double v = 0;
    if (!row.positive(c, v)) {
      ok = false;
      continue;
    }
    const std::string_view name = c;
    const double t = name == "time_s"    ? v
                     : name == "time_us" ? v * 1e-6
                     : name == "tflops"  ? flop / (v * 1e12)
                                         : flop / v;
    if (first == nullptr) {
      first = c;
      s.time_s = t;
    } else if (ok && std::fabs(t - s.time_s) > kTimeAgreement * s.time_s) {
      // Rounding in either column is far below 1%: a disagreement is two measurements or a unit slip.
      row.errors.push_back(row.at + "column '" + c + "': got " + row.get(c).substr(0, 40) + ", a time of " + fmt(t) +
                           " s (expected " + fmt(s.time_s) + " s within 1%, as column '" + first + "' " +
                           row.get(first).substr(0, 40) + " gives; wrong units? keep one of them)");
      ok = false;
    }
  }
  if (!ok) return;
  const bool batched = row.has("b");
  std::string what = row.get("dtype").substr(0, 40) + " " + fmt(s.m) + " x " + fmt(s.n) + " x " + fmt(s.k);
  if (batched) what += " b " + fmt(b);
  if (!dev.empty()) what += " on " + dev.substr(0, 40);
  if (std::string e = repeated(
          seen.gemm, std::tuple{dev, static_cast<int>(s.dtype), b, s.m, s.n, s.k}, row,
          batched ? "'dtype', 'm', 'n', 'k', 'b'" : "'dtype', 'm', 'n', 'k'", what,
          std::string(batched ? "(dtype, m, n, k, b)" : "(dtype, m, n, k)") + (dev.empty() ? "" : " per device"));
      !e.empty()) {
    errors.push_back(std::move(e));
    return;
  }
  s.m *= b;
  s.where = row.where;
  s.device = dev;
  out.gemm.push_back(s);
}

/// A bandwidth row (kind, bytes, time_s[, size_bytes]) into out.bandwidth.
void read_bandwidth_row(const CsvRow& row, models::MeasurementSet& out) {
  static const std::map<std::string, models::BandwidthSampleKind> kinds = {
      {"hbm_copy", models::BandwidthSampleKind::hbm_copy},
      {"hbm_read", models::BandwidthSampleKind::hbm_read},
      {"hbm_write", models::BandwidthSampleKind::hbm_write},
      {"h2d", models::BandwidthSampleKind::h2d},
      {"d2h", models::BandwidthSampleKind::d2h},
      {"d2d_peer", models::BandwidthSampleKind::d2d_peer}};
  const auto it = kinds.find(row.get("kind"));
  if (it == kinds.end()) {
    row.errors.push_back(row.at + "column 'kind': unknown '" + row.get("kind").substr(0, 40) +
                         "' (expected hbm_copy, hbm_read, hbm_write, h2d, d2h or d2d_peer)");
    return;
  }
  models::BandwidthSample s;
  s.kind = it->second;
  bool ok = row.bytes("bytes", s.bytes);
  ok = row.positive("time_s", s.time_s) && ok;
  if (row.has("size_bytes")) ok = row.bytes("size_bytes", s.size_bytes) && ok;
  s.where = row.where;
  if (ok) out.bandwidth.push_back(s);
}

/// After the rows: the several-devices error, then (when there is no error) the skipped rows'
/// notes and the no-usable-rows refusal. Throws InputError.
void finish_csv(const models::MeasurementSet& out, CsvKind kind, const GemmRowCounts& counts, const std::string& path,
                const std::string& device, std::vector<std::string>& errors, InputNotes& notes) {
  if (kind == CsvKind::gemm && device.empty() && counts.devices.size() > 1) {
    std::string list;
    for (const auto& d : counts.devices) list += (list.empty() ? "" : ", ") + d;
    errors.push_back(path + ": rows of " + std::to_string(counts.devices.size()) + " devices (" + list +
                     "); pick one with --device");
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  for (const auto& [d, count] : counts.skipped_dtypes) {
    std::string note = path;
    note.append(": ").append(std::to_string(count)).append(" rows of dtype ").append(d);
    note.append(" skipped (no traincast precision)");
    notes.notes.push_back(std::move(note));
    notes.skipped += count;
  }
  if (counts.device_skipped > 0) {
    notes.notes.push_back(path + ": " + std::to_string(counts.device_skipped) +
                          " rows of other devices skipped (--device " + device + ")");
    notes.skipped += counts.device_skipped;
  }
  if (out.gemm.empty() && out.collectives.empty() && out.bandwidth.empty()) {
    std::string what = path + ": no usable rows";
    if (!device.empty()) {
      what.append(" for --device ").append(device);
      std::string list;
      for (const auto& d : counts.devices) list.append(list.empty() ? "" : ", ").append(d);
      if (!list.empty()) what.append(" (expected one of the file's devices: ").append(list).append(")");
    }
    throw InputError({what});
  }
}

}  // namespace

InputError::InputError(std::vector<std::string> errors)
    : std::runtime_error(join(errors)), errors_(std::move(errors)) {}

models::MeasurementSet samples_from_nccl_log(const NcclTestsLog& log, const std::string& path, const std::string& op,
                                             InputNotes& notes, const std::string& op_field) {
  models::MeasurementSet out;
  std::vector<std::string> errors;
  for (const NcclTestsRun& run : log.runs) {
    if (std::string conflict = op_conflict(run, op, path, op_field); !conflict.empty()) {
      errors.push_back(std::move(conflict));
      continue;
    }
    const std::string name = !run.op.empty() ? run.op : op;
    if (name.empty()) {
      errors.push_back(path + ":" + std::to_string(run.header_line) +
                       ": the log names no operation for this table (expected an *_perf command line or "
                       "\"# Collective test starting\" before it, or --op)");
      continue;
    }
    if (std::string mismatch = check_op_bus_factor(run, name, path + ":", op_field); !mismatch.empty()) {
      errors.push_back(std::move(mismatch));
      continue;
    }
    if (!run.devices.empty() && out.gpu_name.empty()) out.gpu_name = run.devices.front();
    for (const NcclTestsRow& row : run.rows) {
      if (!(row.size_bytes > 0) || !(row.out_of_place.time_us > 0)) {
        ++notes.skipped;
        continue;
      }
      if (row_disturbed(row)) {
        char text[160];
        std::snprintf(text, sizeof text,
                      ": out-of-place %.4g us is %.3gx the in-place %.4g us: a disturbed row, the in-place time is "
                      "taken",
                      row.out_of_place.time_us, row.out_of_place.time_us / row.in_place.time_us, row.in_place.time_us);
        notes.notes.push_back(path + ":" + std::to_string(row.line) + text);
      }
      out.collectives.push_back(
          {name, run.num_ranks, row.size_bytes, row_time_us(row), row.type, path + ":" + std::to_string(row.line)});
    }
  }
  if (notes.skipped > 0)
    notes.notes.push_back(path + ": " + std::to_string(notes.skipped) + " rows of size 0 or time 0 skipped");
  for (const std::string& n : log.notes) notes.notes.push_back(n);
  if (!errors.empty()) throw InputError(std::move(errors));
  return out;
}

models::MeasurementSet read_measurement_csv(std::string_view text, const std::string& path, const std::string& device,
                                            InputNotes& notes) {
  models::MeasurementSet out;
  std::vector<std::string> errors;
  std::vector<std::string> header;
  std::map<std::string, int> col;
  CsvKind kind = CsvKind::none;
  GemmRowCounts counts;
  SeenRows seen;
  int line_no = 0;
  std::size_t pos = 0;
  auto at = [&](int l) { return path + ":" + std::to_string(l) + ": "; };
  while (pos <= text.size() && errors.size() < 50) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = split_csv(line);
    if (header.empty()) {
      header = f;
      for (std::size_t i = 0; i < f.size(); ++i) {
        // A column named twice would leave one of its values unread: which one is meant?
        if (const auto [it, fresh] = col.emplace(f[i], static_cast<int>(i)); !fresh) {
          throw InputError({at(line_no) + "header column '" + f[i].substr(0, 40) + "': got it twice (columns " +
                            std::to_string(it->second + 1) + " and " + std::to_string(i + 1) +
                            "; expected each column once)"});
        }
      }
      kind = csv_kind(col, line, at(line_no));
      continue;
    }
    if (f.size() != header.size()) {
      errors.push_back(at(line_no) + "row has " + std::to_string(f.size()) + " fields (expected " +
                       std::to_string(header.size()) + " as the header)");
      continue;
    }
    const CsvRow row{f, col, errors, line_no, at(line_no), path + ":" + std::to_string(line_no)};
    if (kind == CsvKind::collective) {
      read_collective_row(row, out, seen);
    } else if (kind == CsvKind::gemm) {
      read_gemm_row(row, device, out, counts, seen);
    } else {
      read_bandwidth_row(row, out);
    }
  }
  if (header.empty()) throw InputError({path + ": empty CSV (expected a header line and rows)"});
  finish_csv(out, kind, counts, path, device, errors, notes);
  return out;
}

}  // namespace traincast::calibrate
