// The bias view of `traincast validate`: split rule, signed errors, log2 trends and their table
// (validation_stats.h; docs/accuracy.md explains how to read it).
#include "tools/cli/validation_stats.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "tools/cli/summary.h"

namespace traincast::cli {

SplitHalf split_half(std::string_view data_row) {
  const std::size_t colon = data_row.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= data_row.size()) return SplitHalf::none;
  const std::string_view index = data_row.substr(colon + 1);
  if (!std::all_of(index.begin(), index.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return SplitHalf::none;
  // Parity of the index is the parity of its last digit.
  return ((index.back() - '0') % 2 == 0) ? SplitHalf::fit : SplitHalf::held;
}

std::string_view split_half_name(SplitHalf half) {
  switch (half) {
    case SplitHalf::fit:
      return "fit";
    case SplitHalf::held:
      return "held";
    case SplitHalf::none:
      break;
  }
  return "none";
}

double signed_mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double s = 0;
  for (double v : values) s += v;
  return s / static_cast<double>(values.size());
}

Log2Trend log2_trend(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("log2_trend: x and y differ in length");
  Log2Trend t;
  t.rows = static_cast<int>(x.size());
  if (x.empty()) return t;
  std::vector<double> lx;
  for (double v : x) {
    if (!(std::isfinite(v) && v > 0)) throw std::invalid_argument("log2_trend: every x must be finite and > 0");
    lx.push_back(std::log2(v));
  }
  const auto [lo, hi] = std::minmax_element(lx.begin(), lx.end());
  t.doublings = *hi - *lo;
  const double mx = signed_mean(lx), my = signed_mean(y);
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < lx.size(); ++i) {
    sxx += (lx[i] - mx) * (lx[i] - mx);
    sxy += (lx[i] - mx) * (y[i] - my);
  }
  if (sxx > 0) {
    t.computed = true;
    t.slope = sxy / sxx;
  }
  // Issue 17, acceptance "Trends": per source with >= 10 rows over >= 3 doublings (1e-9: log2 rounding).
  t.qualifies = t.computed && t.rows >= 10 && t.doublings >= 3.0 - 1e-9;
  return t;
}

bool is_run_metric(std::string_view metric) { return metric != "activation_memory_gib" && metric != "peak_memory_gib"; }

double signed_throughput_error(std::string_view metric, double measured, double predicted) {
  if (metric == "iteration_time_s" || metric == "time_to_train_s") return measured / predicted - 1.0;
  return predicted / measured - 1.0;
}

namespace {

/// One source group and kind ("run" or "memory") with its scored rows (indices into the cases).
struct Group {
  std::string name, kind;
  std::vector<std::size_t> rows;
};

/// "a/megatron_sc21_table1.cases.textproto" -> "megatron_sc21_table1".
std::string file_stem(const std::string& path) { return std::filesystem::path(path).stem().stem().string(); }

/// Groups in order of first appearance: each case in its file's group (or the file's stem), run
/// metrics apart from memory; then "group/file" for the files of each group pooling several.
std::vector<Group> make_groups(const std::vector<models::ValidationCase>& cases,
                               const std::vector<std::string>& case_file) {
  std::vector<Group> groups;
  auto add = [&](const std::string& name, const std::string& kind, std::size_t i) {
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.name == name && g.kind == kind; });
    if (it == groups.end()) {
      groups.push_back({name, kind, {}});
      it = std::prev(groups.end());
    }
    it->rows.push_back(i);
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string kind = is_run_metric(cases[i].metric) ? "run" : "memory";
    add(cases[i].group.empty() ? file_stem(case_file[i]) : cases[i].group, kind, i);
  }
  // A group pooling several files also shows each of them, as "group/file" after the groups.
  std::map<std::string, std::set<std::string>> files_of;
  for (std::size_t i = 0; i < cases.size(); ++i) files_of[cases[i].group].insert(case_file[i]);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].group.empty() || files_of[cases[i].group].size() < 2) continue;
    add(cases[i].group + "/" + file_stem(case_file[i]), is_run_metric(cases[i].metric) ? "run" : "memory", i);
  }
  return groups;
}

std::string pct(double fraction) { return signed_fixed(100.0 * fraction, 1) + "%"; }

/// The per-group table: n, MAPE, signed mean, over-predicted share, largest error and its case,
/// OOM flags, failures and rows with assumptions.
std::string group_table(const std::vector<Group>& groups, const std::vector<models::ValidationCase>& cases,
                        const std::vector<CaseOutcome>& outcome) {
  std::size_t wname = 6;
  for (const Group& g : groups) wname = std::max(wname, g.name.size());
  std::ostringstream o;
  o << pad("source", wname) << "  " << pad("kind", 7) << lpad("n", 4) << lpad("MAPE", 8) << lpad("signed", 9)
    << lpad("over", 6) << lpad("largest", 9) << lpad("OOM", 5) << lpad("failed", 7) << lpad("assumed", 8)
    << "  largest error's case\n";
  for (const Group& g : groups) {
    std::vector<double> err;
    double worst = 0;
    std::string worst_case = "-";
    int oom = 0, failed = 0, assumed = 0, over = 0;
    for (std::size_t i : g.rows) {
      if (!cases[i].assumptions.empty()) ++assumed;
      if (!outcome[i].failure.empty()) {
        ++failed;
        continue;
      }
      if (outcome[i].oom) ++oom;
      const double e = signed_throughput_error(cases[i].metric, cases[i].measured, outcome[i].predicted);
      err.push_back(e);
      if (e > 0) ++over;
      if (std::fabs(e) >= std::fabs(worst)) {
        worst = e;
        worst_case = cases[i].name;
      }
    }
    double mape = 0;
    for (double e : err) mape += std::fabs(e);
    if (!err.empty()) mape /= static_cast<double>(err.size());
    const std::string over_share =
        err.empty() ? "-" : format_fixed(100.0 * over / static_cast<double>(err.size()), 0) + "%";
    o << pad(g.name, wname) << "  " << pad(g.kind, 7) << lpad(std::to_string(err.size()), 4)
      << lpad(err.empty() ? "-" : format_fixed(100.0 * mape, 1) + "%", 8)
      << lpad(err.empty() ? "-" : pct(signed_mean(err)), 9) << lpad(over_share, 6)
      << lpad(err.empty() ? "-" : pct(worst), 9) << lpad(std::to_string(oom), 5) << lpad(std::to_string(failed), 7)
      << lpad(std::to_string(assumed), 8) << "  " << worst_case << "\n";
  }
  return o.str();
}

/// One trend cell: slope per doubling with its rows and doublings, or why none is given.
std::string trend_cell(const std::vector<double>& x, const std::vector<double>& y) {
  const Log2Trend t = log2_trend(x, y);
  if (!t.computed) return "- (one value)";
  std::string s = pct(t.slope) + "/dbl (n " + std::to_string(t.rows) + ", " + format_fixed(t.doublings, 1) + " dbl)";
  if (!t.qualifies) s += " [<10 rows or <3 dbl]";
  return s;
}

/// Trends of signed throughput error per run group: vs seq length, GPUs, model size, and
/// mean(fp8) - mean(bf16).
std::string trend_table(const std::vector<Group>& groups, const std::vector<models::ValidationCase>& cases,
                        const std::vector<CaseOutcome>& outcome) {
  std::ostringstream o;
  for (const Group& g : groups) {
    if (g.kind != "run" || g.name.find('/') != std::string::npos) continue;
    std::vector<double> seq, gpus, params, err;
    std::map<std::string, std::vector<double>> by_precision;
    for (std::size_t i : g.rows) {
      const CaseOutcome& c = outcome[i];
      if (!c.failure.empty() || !(c.seq_length > 0 && c.gpus > 0 && c.parameters > 0)) continue;
      const double e = signed_throughput_error(cases[i].metric, cases[i].measured, c.predicted);
      seq.push_back(c.seq_length);
      gpus.push_back(c.gpus);
      params.push_back(c.parameters);
      err.push_back(e);
      by_precision[c.precision].push_back(e);
    }
    if (err.empty()) continue;
    o << "  " << g.name << ":\n";
    o << "    seq length  " << trend_cell(seq, err) << "\n";
    o << "    GPUs        " << trend_cell(gpus, err) << "\n";
    o << "    model size  " << trend_cell(params, err) << "\n";
    o << "    precision   ";
    if (by_precision.count("fp8") && by_precision.count("bf16")) {
      o << "fp8 - bf16 "
        << signed_fixed(100.0 * (signed_mean(by_precision["fp8"]) - signed_mean(by_precision["bf16"])), 1)
        << " points (n " << by_precision["fp8"].size() << " fp8, " << by_precision["bf16"].size() << " bf16)\n";
    } else {
      std::string list;
      for (const auto& [p, v] : by_precision) list += (list.empty() ? "" : ", ") + p + " " + std::to_string(v.size());
      o << "- (not both fp8 and bf16: " << list << ")\n";
    }
  }
  return o.str();
}

}  // namespace

std::string format_bias_report(const std::vector<models::ValidationCase>& cases,
                               const std::vector<std::string>& case_file, const std::vector<CaseOutcome>& outcome,
                               std::string_view half, int& oom_failures) {
  std::ostringstream o;
  const std::vector<Group> groups = make_groups(cases, case_file);
  o << "\nBias per source (half: " << half << "; signed error of throughput, + = predicted faster than measured;\n"
    << "time metrics as measured/predicted - 1, others predicted/measured - 1; docs/accuracy.md):\n";
  o << group_table(groups, cases, outcome);
  o << "\nTrend of signed error per doubling (OLS on log2 x; issue 17 scores >= 10 rows over >= 3 doublings):\n";
  o << trend_table(groups, cases, outcome);
  bool any = false;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].assumptions.empty()) continue;
    if (!any) o << "\nAssumed where the source does not state the configuration:\n";
    any = true;
    o << "  " << cases[i].name << ": " << cases[i].assumptions << "\n";
  }
  oom_failures = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!outcome[i].failure.empty() || !outcome[i].oom) continue;
    if (is_run_metric(cases[i].metric) && !cases[i].oom_known_gap.empty()) {
      o << "KNOWN GAP: " << cases[i].name << " ran (" << cases[i].metric << " measured) but is predicted OOM: peak "
        << format_fixed(outcome[i].peak_gib, 1) << " GiB > " << format_fixed(outcome[i].capacity_gib, 1) << " GiB; "
        << cases[i].oom_known_gap << "\n";
    } else if (is_run_metric(cases[i].metric)) {
      ++oom_failures;
      o << "FAIL: " << cases[i].name << " ran (" << cases[i].metric << " measured) but is predicted OOM: peak "
        << format_fixed(outcome[i].peak_gib, 1) << " GiB > " << format_fixed(outcome[i].capacity_gib, 1) << " GiB\n";
    } else {
      o << "note: " << cases[i].name << " (memory, not a run) is predicted OOM: peak "
        << format_fixed(outcome[i].peak_gib, 1) << " GiB > " << format_fixed(outcome[i].capacity_gib, 1) << " GiB\n";
    }
  }
  return o.str();
}

ValidationTable make_validation_table(const std::vector<models::ValidationCase>& cases,
                                      const std::vector<std::string>& case_file, const std::vector<double>& predicted,
                                      const std::vector<std::string>& failure) {
  ValidationTable t;
  std::ostringstream o, csv;
  csv << "file,case,metric,measured,predicted,error_pct,source\n";
  std::size_t wname = 4;
  for (const auto& c : cases) wname = std::max(wname, c.name.size());
  // Number columns 12 wide, wider where a figure needs it (tokens/s of large runs), so that
  // neighbouring figures never run together.
  std::size_t wmeasured = 12;
  std::size_t wpredicted = 12;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    wmeasured = std::max(wmeasured, format_fixed(cases[i].measured, 3).size() + 1);
    if (failure[i].empty()) wpredicted = std::max(wpredicted, format_fixed(predicted[i], 3).size() + 1);
  }
  o << pad("case", wname) << "  " << pad("metric", 24) << lpad("measured", wmeasured) << lpad("predicted", wpredicted)
    << lpad("error", 9) << "\n";
  double sum = 0;
  int n = 0;
  std::string last_file;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    if (case_file[i] != last_file) {
      o << "# " << case_file[i] << "\n";
      last_file = case_file[i];
    }
    auto quote = [](const std::string& s) {
      std::string q = "\"";
      for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      return q + "\"";
    };
    if (!failure[i].empty()) {
      o << pad(c.name, wname) << "  " << pad(c.metric, 24) << lpad(format_fixed(c.measured, 3), wmeasured)
        << "   FAILED: " << failure[i] << "\n";
      csv << quote(case_file[i]) << "," << quote(c.name) << "," << c.metric << "," << c.measured << ",,,"
          << quote(c.source) << "\n";
      ++t.failed_cases;
      continue;
    }
    const double err = 100.0 * (predicted[i] - c.measured) / c.measured;
    sum += std::fabs(err);
    ++n;
    t.max_abs_error_pct = std::max(t.max_abs_error_pct, std::fabs(err));
    o << pad(c.name, wname) << "  " << pad(c.metric, 24) << lpad(format_fixed(c.measured, 3), wmeasured)
      << lpad(format_fixed(predicted[i], 3), wpredicted) << lpad(signed_fixed(err, 1) + "%", 9) << "\n";
    csv << quote(case_file[i]) << "," << quote(c.name) << "," << c.metric << "," << format_fixed(c.measured, 6) << ","
        << format_fixed(predicted[i], 6) << "," << format_fixed(err, 3) << "," << quote(c.source) << "\n";
  }
  t.mape_pct = n > 0 ? sum / n : 0.0;
  o << "\n";
  // Per metric: MAPE over that metric's cases (timings and memory are judged apart).
  std::vector<std::string> metrics;
  for (const auto& c : cases)
    if (std::find(metrics.begin(), metrics.end(), c.metric) == metrics.end()) metrics.push_back(c.metric);
  for (const std::string& metric : metrics) {
    double s = 0, worst = 0;
    int k = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (cases[i].metric != metric || !failure[i].empty()) continue;
      const double e = std::fabs(100.0 * (predicted[i] - cases[i].measured) / cases[i].measured);
      s += e;
      worst = std::max(worst, e);
      ++k;
    }
    if (k == 0) continue;
    t.worst_metric_mape_pct = std::max(t.worst_metric_mape_pct, s / k);
    o << pad(metric, 24) << lpad(std::to_string(k), 4) << " cases: MAPE " << lpad(format_fixed(s / k, 1), 5)
      << "%, largest |error| " << format_fixed(worst, 1) << "%\n";
  }
  o << pad("all", 24) << lpad(std::to_string(n), 4) << " cases: MAPE " << lpad(format_fixed(t.mape_pct, 1), 5)
    << "%, largest |error| " << format_fixed(t.max_abs_error_pct, 1) << "%";
  if (t.failed_cases > 0) o << ", " << t.failed_cases << " FAILED to simulate";
  o << "\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!failure[i].empty() || cases[i].tolerance <= 0) continue;
    const double e = std::fabs(predicted[i] - cases[i].measured) / cases[i].measured;
    if (e > cases[i].tolerance) {
      ++t.out_of_tolerance;
      o << "FAIL: " << cases[i].name << " is off by " << format_fixed(100 * e, 1) << "%, beyond its tolerance of "
        << format_fixed(100 * cases[i].tolerance, 1) << "%\n";
    }
  }
  t.text = o.str();
  t.csv = csv.str();
  return t;
}

}  // namespace traincast::cli
