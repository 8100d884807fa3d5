// The validation and burn tables of `traincast calibrate`. See calibrate_tables.h.

#include "tools/cli/calibrate_tables.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace traincast::cli {
namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

std::string percent(double f) { return fmt("%.1f%%", 100 * f); }

std::string format_burn_validation(const calibrate::BurnValidation& v, bool holdout) {
  std::ostringstream o;
  char line[512];
  o << "\nburn (power vs load, thermal RC): " << v.note << "\n";
  std::snprintf(line, sizeof line, "%-4s %9s %-5s %10s %10s %8s  %9s %9s %8s  %-4s %s\n", "gpu", "t_s", "phase",
                "temp_C", "pred_C", "err_K", "power_W", "pred_W", "err_W", "fit", "where");
  o << line;
  std::map<int, std::size_t> count;
  for (std::size_t i = 0; i + 1 < v.points.size(); i += 2) ++count[v.points[i].gpu];
  std::map<int, std::size_t> seen;
  for (std::size_t i = 0; i + 1 < v.points.size(); i += 2) {
    const auto& t = v.points[i];
    const auto& p = v.points[i + 1];
    const std::size_t n = count[t.gpu], k = seen[t.gpu]++;
    const std::size_t stride = std::max<std::size_t>(1, n / 24);
    if (k % stride != 0 && k + 1 != n) continue;
    std::snprintf(line, sizeof line, "%-4d %9.2f %-5s %10.2f %10.2f %8.2f  %9.1f %9.1f %8.1f  %-4s %s\n", t.gpu, t.t_s,
                  t.loaded ? "burn" : "idle", t.measured, t.predicted, t.predicted - t.measured, p.measured,
                  p.predicted, p.predicted - p.measured, t.fit_point ? "fit" : "-", t.where.c_str());
    o << line;
  }
  o << (holdout ? "fit = samples up to the middle of the burn (the fit used them); the rest are held out\n"
                : "every sample was a fit sample (no --holdout)\n");
  std::snprintf(line, sizeof line, "%-4s %-12s %22s %12s %22s %12s\n", "gpu", "quantity", "fit RMS (samples)",
                "fit max", "held-out RMS (samples)", "held-out max");
  o << line;
  for (const auto& g : v.groups) {
    const char* unit = g.quantity == "temperature" ? "K" : "W";
    auto cell = [&](int n, double e) {
      return n == 0 ? std::string("-") : fmt("%.2f ", e) + unit + " (" + std::to_string(n) + ")";
    };
    std::snprintf(line, sizeof line, "%-4d %-12s %22s %12s %22s %12s\n", g.gpu, g.quantity.c_str(),
                  cell(g.fit_n, g.fit_rms).c_str(), g.fit_n ? (fmt("%.2f ", g.fit_max) + unit).c_str() : "-",
                  cell(g.held_n, g.held_rms).c_str(), g.held_n ? (fmt("%.2f ", g.held_max) + unit).c_str() : "-");
    o << line;
  }
  o << "(RMS over every sample, outliers included; the burn line gives the fit's own RMS without them)\n";
  return o.str();
}

std::string format_validation(const calibrate::Validation& v, bool holdout) {
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%-10s %-14s %-22s %12s %12s %8s  %-4s %s\n", "kind", "group", "point", "measured",
                "predicted", "error", "fit", "where");
  o << line;
  for (const auto& p : v.points) {
    std::snprintf(line, sizeof line, "%-10s %-14s %-22s %12.4g %12.4g %7.1f%%  %-4s %s\n", p.kind.c_str(),
                  p.group.c_str(), p.label.c_str(), p.measured, p.predicted, 100 * p.error, p.fit_point ? "fit" : "-",
                  p.where.c_str());
    o << line;
  }
  o << "\nunits: collective busbw GB/s (size in bytes), gemm TFLOP/s (m x n x k), bandwidth GB/s\n";
  o << "geometric-mean |error| = exp(mean |ln(predicted/measured)|) - 1"
    << (holdout ? "; held out = points not used by the fit" : "; every point was a fit point") << "\n";
  // One line of the per-group tables: kind, group, held out large and small, fit large and small.
  auto row = [&](const std::string& kind, const std::string& group, const std::string& held_large,
                 const std::string& held_small, const std::string& fit_large, const std::string& fit_small) {
    std::snprintf(line, sizeof line, "%-10s %-14s %22s %22s %22s %22s\n", kind.c_str(), group.c_str(),
                  held_large.c_str(), held_small.c_str(), fit_large.c_str(), fit_small.c_str());
    o << line;
  };
  auto cell = [](int n, double e) { return n == 0 ? std::string("-") : percent(e) + " (" + std::to_string(n) + ")"; };
  row("kind", "group", "held out >= 1 MiB", "held out < 1 MiB", "fit >= 1 MiB", "fit < 1 MiB");
  for (const auto& g : v.groups) {
    if (g.kind == "bandwidth") continue;  // its own table below (other size classes)
    const bool by_size = g.kind == "collective";
    row(g.kind, g.group, cell(g.held_large, g.held_large_error),
        by_size ? cell(g.held_small, g.held_small_error) : "(all sizes)", cell(g.fit_large, g.fit_large_error),
        by_size ? cell(g.fit_small, g.fit_small_error) : "(all sizes)");
  }
  // Bandwidth kinds: the efficiency is fitted on, and describes, streaming copies (>= 64 MiB or
  // >= 1/4 of the kind's largest size: calibrate::streaming_size); smaller ones are launch- and
  // L2-bound and are shown apart so that they do not read as the efficiency's error.
  bool bandwidth_header = false;
  for (const auto& g : v.groups) {
    if (g.kind != "bandwidth") continue;
    if (!bandwidth_header) {
      o << "bandwidth: streaming = >= 64 MiB or >= 1/4 of the kind's largest size (what the efficiency is fitted on "
           "and the simulator's memory-bound kernels use); smaller copies are launch- and L2-bound, which it does "
           "not model\n";
      row("kind", "group", "held out streaming", "held out smaller", "fit streaming", "fit smaller");
      bandwidth_header = true;
    }
    row(g.kind, g.group, cell(g.held_large, g.held_large_error), cell(g.held_small, g.held_small_error),
        cell(g.fit_large, g.fit_large_error), cell(g.fit_small, g.fit_small_error));
  }
  if (holdout) {
    for (const auto& g : v.groups) {
      if (g.kind != "collective" || g.neighbour_large + g.neighbour_small == 0) continue;
      o << g.group
        << " held out, no model (from the two measured fit neighbours, linear in ln size, ln time): >= 1 MiB "
        << cell(g.neighbour_large, g.neighbour_large_error) << ", < 1 MiB "
        << cell(g.neighbour_small, g.neighbour_small_error) << "\n";
    }
  }
  return o.str();
}

}  // namespace traincast::cli
