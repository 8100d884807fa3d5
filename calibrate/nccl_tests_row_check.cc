// Consistency checks of nccl-tests data rows. See nccl_tests_row_check.h.

#include "calibrate/nccl_tests_row_check.h"

#include "calibrate/nccl_tests_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace traincast::calibrate {
namespace {

/// nccl-tests prints algbw and busbw with "%6.2f" (src/common.cu, Reporter::result): each is
/// within half a unit of the last digit of the value it computed.
constexpr double kPrintRoundingGbps = 0.005;
/// Relative slack on top of the print rounding: the printed time is rounded too ("%7.2f" below
/// 100 us, "%7.1f" below 1e4 us, "%7.0f" above: src/common.cu, BenchTime), at most 0.5% at 1 us
/// (NCCL's fastest launch takes several us), 0.05% at 100 us and 0.005% at 1e4 us, and algbw is a
/// float. 1% is twice the worst of them; every shared log (../shared/data/nccl-tests) is within it.
constexpr double kRelativeSlack = 0.01;

/// busbw / algbw of an operation on n ranks as nccl-tests computes it (src/*.cu getBw; DESIGN
/// §4.3); 0 when op is not one of them or n is unknown.
double bus_factor(const std::string& op, int n) {
  if (n <= 0) return 0;
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall") return static_cast<double>(n - 1) / n;
  if (op == "broadcast" || op == "reduce" || op == "sendrecv") return 1;
  return 0;
}

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

/// How algbw and busbw follow from size and time: algbw = size x algbw_share / time, busbw =
/// algbw x bus_factor (bus_factor 0: not checked).
struct Convention {
  double algbw_share = 1;
  double bus_factor = 0;
};

bool near(double got, double want, double rounding) {
  return std::fabs(got - want) <= rounding + kRelativeSlack * want;
}

/// The factors `op` can have over every rank count n >= 2 (bus_factor), bounds included:
/// all_reduce 1 to 2, all_gather / reduce_scatter / alltoall 0.5 to 1 (1 also as nccl-tests of
/// 2019 printed all_gather and reduce_scatter, busbw = algbw; check_row_results), broadcast /
/// reduce / sendrecv 1; {0, 0} for another op.
std::pair<double, double> bus_factor_range(const std::string& op) {
  if (op == "all_reduce") return {1, 2};
  if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall") return {0.5, 1};
  if (op == "broadcast" || op == "reduce" || op == "sendrecv") return {1, 1};
  return {0, 0};
}

/// check_op_bus_factor for a log that gives no rank count (no "#  Rank" lines, e.g. a pasted
/// table): each row's busbw / algbw must be a factor `op` has on some rank count (an all_gather
/// table, 0.875, fitted as all_reduce, whose factor is at least 1, was taken with exit 0).
std::string check_op_bus_factor_range(const NcclTestsRun& run, const std::string& op, const std::string& at,
                                      const std::string& op_field) {
  const auto [lo, hi] = bus_factor_range(op);
  if (hi == 0) return "";
  for (const NcclTestsRow& row : run.rows) {
    const NcclTestsResultColumns& c = row.out_of_place;
    if (!(c.algbw_gbps > 0)) continue;
    const double slack = (kPrintRoundingGbps * (1 + hi)) / c.algbw_gbps + kRelativeSlack * hi;
    const double ratio = c.busbw_gbps / c.algbw_gbps;
    if (ratio >= lo - slack && ratio <= hi + slack) continue;
    std::string e = at;
    e.append(std::to_string(row.line)).append(": busbw / algbw is ").append(num(ratio));
    e.append(", a factor ").append(op_field).append(" ").append(op).append(" has on no rank count (expected ");
    e.append(lo == hi ? num(lo) : "from " + num(lo) + " to " + num(hi));
    e.append(" for ").append(op).append(": nccl-tests prints busbw = algbw x the operation's factor; the log ");
    e.append("names no ranks (no \"#  Rank\" lines), so a log of another operation?)");
    return e;
  }
  return "";
}

/// The redop column's word for `op`'s rows, as nccl-tests prints it: "none" where the operation
/// reduces nothing (all_gather, alltoall, broadcast), the reduction (sum, prod, max, min, avg)
/// where it does (all_reduce, reduce_scatter, reduce) and for sendrecv, which prints its run's
/// default `sum` (measured: logs r02 and r03 of ../shared/data/nccl-tests/raw, all five ops;
/// n11c broadcast, n11d reduce). Returns true when `op` prints "none".
bool op_prints_no_redop(const std::string& op) { return op == "all_gather" || op == "alltoall" || op == "broadcast"; }

/// "" when each row's redop fits `op` (op_prints_no_redop), or the log has no redop column; else
/// the first row that does not, "at<line>: redop is none, ...".
std::string check_op_redop(const NcclTestsRun& run, const std::string& op, const std::string& at,
                           const std::string& op_field) {
  static const std::set<std::string> kKnown = {"all_reduce", "all_gather", "reduce_scatter", "alltoall",
                                               "broadcast",  "reduce",     "sendrecv"};
  if (kKnown.count(op) == 0) return "";
  const bool want_none = op_prints_no_redop(op);
  for (const NcclTestsRow& row : run.rows) {
    if (row.redop.empty() || (row.redop == "none") == want_none) continue;
    std::string e = at;
    e.append(std::to_string(row.line)).append(": redop is ").append(row.redop);
    e.append(want_none ? ", a reduction, which " : ", which ").append(op_field).append(" ").append(op);
    e.append(" does not print (expected ").append(want_none ? "none" : "a reduction such as sum");
    e.append(" for ").append(op).append(": nccl-tests prints none for all_gather, alltoall and broadcast, and the ");
    e.append("reduction for all_reduce, reduce_scatter and reduce (sum for sendrecv); a log of ");
    e.append(want_none ? "all_reduce, reduce_scatter, reduce or sendrecv?)" : "all_gather, alltoall or broadcast?)");
    return e;
  }
  return "";
}

}  // namespace

std::string check_row_results(const NcclTestsRow& row, const NcclTestsRun& run, const std::string& at) {
  const bool cputime = std::find(run.columns.begin(), run.columns.end(), "cputime") != run.columns.end();
  const bool old_error_column = std::find(run.columns.begin(), run.columns.end(), "error") != run.columns.end();
  const int n = run.num_ranks;
  std::vector<Convention> conventions = {{1, bus_factor(run.op, n)}};
  // nccl-tests of 2019 (the `error` column layout, raw log r11) counted all_gather and
  // reduce_scatter bytes as size x (n-1)/n in algbw and used busbw = algbw: both conventions are
  // accepted there.
  if (old_error_column && n > 1 && (run.op == "all_gather" || run.op == "reduce_scatter"))
    conventions.push_back({static_cast<double>(n - 1) / n, 1});
  for (int half = 0; half < 2; ++half) {
    const NcclTestsResultColumns& c = half == 0 ? row.out_of_place : row.in_place;
    if (!c.present) continue;
    const std::string name = half == 0 ? "out-of-place " : "in-place ";
    long long wrong = 0;
    const char* w = c.wrong.data();
    const auto [ptr, ec] = std::from_chars(w, w + c.wrong.size(), wrong);
    if (!old_error_column && ec == std::errc() && ptr == w + c.wrong.size() && wrong > 0) {
      return at + name + "#wrong: got " + c.wrong +
             " (expected 0 or N/A: nccl-tests' data check found that many wrong elements in the result, so the "
             "time is of a broken run; fix the system and rerun, or delete the row)";
    }
    if (!(c.time_us > 0)) {
      // A time printed as 0 (size 0 rows: nccl-tests prints algbw = 0 / time = 0.00) leaves
      // nothing to divide by: algbw and busbw must be 0 too. A rate beside it was not computed
      // from that time (skipped in a cputime table, whose algbw is of the GPU time).
      if (cputime || (c.algbw_gbps == 0 && c.busbw_gbps == 0)) continue;
      const bool alg = c.algbw_gbps != 0;
      return at + name + (alg ? "algbw" : "busbw") + ": got " + num(alg ? c.algbw_gbps : c.busbw_gbps) +
             " GB/s at time 0 (expected 0.00: nccl-tests prints algbw = size / time and busbw = algbw x factor, so "
             "a rate > 0 needs a measured time > 0; one of them was changed; fix or delete the row)";
    }
    bool algbw_ok = false, both_ok = false;
    for (const Convention& k : conventions) {
      const double algbw = row.size_bytes * k.algbw_share / c.time_us / 1e3;  // no overflow at 1e308 us
      const bool a = cputime || near(c.algbw_gbps, algbw, kPrintRoundingGbps);
      const bool b =
          k.bus_factor == 0 || near(c.busbw_gbps, c.algbw_gbps * k.bus_factor, kPrintRoundingGbps * (1 + k.bus_factor));
      algbw_ok = algbw_ok || a;
      both_ok = both_ok || (a && b);
    }
    if (both_ok) continue;
    if (!algbw_ok) {
      const double want = row.size_bytes / c.time_us / 1e3;
      return at + name + "algbw: got " + num(c.algbw_gbps) + " GB/s (expected " + num(want) + " = size " +
             std::to_string(static_cast<long long>(row.size_bytes)) + " B / time " + num(c.time_us) + " us, within " +
             num(kPrintRoundingGbps) +
             " GB/s + 1%: nccl-tests prints algbw = size / time, so one of the two was changed; fix or delete the "
             "row)";
    }
    const double f = conventions.front().bus_factor;
    return at + name + "busbw: got " + num(c.busbw_gbps) + " GB/s (expected " + num(c.algbw_gbps * f) + " = algbw " +
           num(c.algbw_gbps) + " x " + num(f) + ", the " + run.op + " factor for " + std::to_string(n) +
           " ranks, within " + num(kPrintRoundingGbps * (1 + f)) +
           " GB/s + 1%: nccl-tests prints busbw = algbw x factor; a row from another operation or rank count?)";
  }
  return "";
}

std::string check_op_bus_factor(const NcclTestsRun& run, const std::string& op, const std::string& at,
                                const std::string& op_field) {
  const int n = run.num_ranks;
  if (!run.op.empty()) return "";
  // all_gather and reduce_scatter share a bus factor; the redop column tells them apart.
  if (std::string e = check_op_redop(run, op, at, op_field); !e.empty()) return e;
  // The root and size columns as nccl-tests prints them for `op` (nccl_tests_table.h): root 0 is a
  // broadcast or reduce log, size = count x type size x ranks an all_gather, reduce_scatter or
  // alltoall log.
  const bool root_column = std::find(run.columns.begin(), run.columns.end(), "root") != run.columns.end();
  for (const NcclTestsRow& row : run.rows) {
    const std::string at_line = at + std::to_string(row.line) + ": ";
    if (std::string e = root_column ? check_row_root(row, op, n, at_line, op_field) : ""; !e.empty()) return e;
    const int word_bytes = nccl_tests_type_bytes(row.type);  // 0: a row built without its type, not checked
    if (std::string e = word_bytes > 0 ? check_row_size(row, op, n, word_bytes, at_line) : ""; !e.empty()) return e;
  }
  if (n <= 0) return check_op_bus_factor_range(run, op, at, op_field);
  const double f = bus_factor(op, n);
  if (f == 0) return "";
  for (const NcclTestsRow& row : run.rows) {
    const NcclTestsResultColumns& c = row.out_of_place;
    if (!(c.algbw_gbps > 0)) continue;
    const auto fits = [&](double factor) {
      return near(c.busbw_gbps, c.algbw_gbps * factor, kPrintRoundingGbps * (1 + factor));
    };
    if (fits(f)) continue;
    std::string ops;
    for (const char* other : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce"}) {
      if (!fits(bus_factor(other, n))) continue;
      if (!ops.empty()) ops += ", ";
      ops += other;
    }
    std::string e = at;
    e.append(std::to_string(row.line)).append(": busbw / algbw is ").append(num(c.busbw_gbps / c.algbw_gbps));
    e.append(ops.empty() ? ", the factor of no operation" : ", the factor of ").append(ops);
    e.append(" for ").append(std::to_string(n)).append(" ranks, not ").append(op_field).append(" ").append(op);
    e.append("'s ").append(num(f)).append(" (expected a log of ").append(op);
    e.append(": nccl-tests prints busbw = algbw x the operation's factor");
    if (ops.empty()) {
      e.append("; a log of another rank count?)");
    } else {
      e.append("; give ").append(op_field).append(" ").append(ops.substr(0, ops.find(','))).append(")");
    }
    return e;
  }
  return "";
}

}  // namespace traincast::calibrate
