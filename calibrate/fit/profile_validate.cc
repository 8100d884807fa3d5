// Measured vs re-simulated per point, and the error per group. See profile_validate.h.

#include "calibrate/fit/profile_validate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include "calibrate/fit/bandwidth_fit.h"
#include "calibrate/fit/collective_points.h"
#include "calibrate/fit/fit_helpers.h"
#include "models/collectives/collective_engine.h"
#include "models/compute/compute_model.h"
#include "models/hardware/catalog.h"

namespace traincast::calibrate {
namespace {

using models::CalibrationProfile;

const char* bandwidth_name(models::BandwidthSampleKind k) {
  static const char* names[] = {"hbm_copy", "hbm_read", "hbm_write", "h2d", "d2h", "d2d_peer"};
  return names[static_cast<int>(k)];
}

double element_bytes(models::Precision p) {
  switch (p) {
    case models::Precision::fp32:
    case models::Precision::tf32:
      return 4;
    case models::Precision::fp8:
      return 1;
    default:
      return 2;
  }
}

double geo_error(const std::vector<double>& ratios) { return models::geometric_mean_error(ratios); }

double predicted_bandwidth(const CalibrationProfile& p, const models::GpuSpec& gpu, models::BandwidthSampleKind k) {
  switch (k) {
    case models::BandwidthSampleKind::h2d:
    case models::BandwidthSampleKind::d2h:
      return p.link_efficiency[static_cast<int>(models::LinkKind::pcie)].value_or(models::LinkEfficiency::pcie) *
             models::pcie_bytes_per_s(gpu.pcie_generation, gpu.pcie_lanes);
    case models::BandwidthSampleKind::d2d_peer:
      return p.link_efficiency[static_cast<int>(models::LinkKind::nvlink)].value_or(
                 models::LinkEfficiency::nvlink_gen2_3) *
             gpu.nvlink_links * gpu.nvlink_bytes_per_s_per_link;
    default:
      return p.memory_efficiency.value_or(models::default_compute_params(gpu).memory_efficiency) *
             gpu.hbm_bandwidth_bytes_per_s;
  }
}

std::string fmt_size(double b) {
  std::ostringstream s;
  s.precision(0);
  s << std::fixed << b;
  return s.str();
}

/// Whether `where` ("path:line") is a point of one of o.unfitted_files.
bool in_unfitted_file(const FitOptions& o, const std::string& where) {
  for (const std::string& f : o.unfitted_files) {
    if (where.size() > f.size() && where.compare(0, f.size(), f) == 0 && where[f.size()] == ':') return true;
  }
  return false;
}

/// Model-free reference of g: held-out sizes from their fit neighbours (d is sorted by size).
void set_neighbour_reference(const OpData& d, ValidationGroup& g) {
  std::vector<double> nl, ns;
  for (std::size_t i = 0; i < d.bytes.size(); ++i) {
    if (d.fit[i] || !(d.time_s[i] > 0)) continue;
    std::size_t lo = i, hi = i;
    while (lo > 0 && !(d.fit[lo - 1] && d.bytes[lo - 1] < d.bytes[i])) --lo;
    while (hi + 1 < d.bytes.size() && !(d.fit[hi + 1] && d.bytes[hi + 1] > d.bytes[i])) ++hi;
    if (lo == 0 || hi + 1 == d.bytes.size()) continue;
    --lo, ++hi;
    const double w = std::log(d.bytes[i] / d.bytes[lo]) / std::log(d.bytes[hi] / d.bytes[lo]);
    const double t_interp = std::exp(std::log(d.time_s[lo]) + w * std::log(d.time_s[hi] / d.time_s[lo]));
    (d.bytes[i] >= kSplitBytes ? nl : ns).push_back(d.time_s[i] / t_interp);  // predicted / measured busbw
  }
  g.neighbour_large = static_cast<int>(nl.size()), g.neighbour_small = static_cast<int>(ns.size());
  g.neighbour_large_error = geo_error(nl), g.neighbour_small_error = geo_error(ns);
}

/// One group and its points per op, re-simulated on o.cluster with the profile.
void validate_collectives(const std::shared_ptr<const CalibrationProfile>& profile, const models::MeasurementSet& m,
                          const FitOptions& o, Validation& v) {
  const std::vector<OpData> ops = op_groups(m, o);
  for (const OpData& d : ops) {
    models::ClusterSpec cs = *o.cluster;
    cs.profile = profile;
    const std::vector<double> t = simulated_times(cs, d);
    const double factor = models::CollectiveEngine::busbw_factor(d.cop, static_cast<int>(d.ranks.size()));
    ValidationGroup g;
    g.kind = "collective";
    g.group = d.name;
    std::vector<double> hl, hs, fl, fs;
    for (std::size_t i = 0; i < d.bytes.size(); ++i) {
      ValidationPoint p;
      p.kind = "collective";
      p.group = d.name;
      p.label = fmt_size(d.bytes[i]);
      p.where = d.where[i];
      p.bytes = d.bytes[i];
      p.unit = "busbw GB/s";
      p.measured = d.bytes[i] / d.time_s[i] * factor / 1e9;
      p.predicted = t[i] > 0 ? d.bytes[i] / t[i] * factor / 1e9 : 0;
      p.error = p.predicted / p.measured - 1;
      p.fit_point = d.fit[i] && !in_unfitted_file(o, p.where);
      if (p.predicted > 0) {
        const double ratio = p.predicted / p.measured;
        (p.fit_point ? (p.bytes >= kSplitBytes ? fl : fs) : (p.bytes >= kSplitBytes ? hl : hs)).push_back(ratio);
      }
      v.points.push_back(p);
    }
    g.held_large = static_cast<int>(hl.size()), g.held_small = static_cast<int>(hs.size());
    g.fit_large = static_cast<int>(fl.size()), g.fit_small = static_cast<int>(fs.size());
    g.held_large_error = geo_error(hl), g.held_small_error = geo_error(hs);
    g.fit_large_error = geo_error(fl), g.fit_small_error = geo_error(fs);
    set_neighbour_reference(d, g);
    v.groups.push_back(g);
  }
}

/// One group and its points per dtype, predicted by the compute model with the profile.
void validate_gemm(const std::shared_ptr<const CalibrationProfile>& profile, const models::MeasurementSet& m,
                   const FitOptions& o, Validation& v) {
  if (m.gemm.empty()) return;
  if (o.gpu.empty()) throw std::invalid_argument("GEMM points need a GPU: --base must name a catalog GPU");
  const models::GpuSpec& gpu = models::find_gpu(o.gpu);
  const models::ComputeParams params = models::compute_params(gpu, profile);
  std::map<int, std::vector<const models::GemmSample*>> by;
  for (const auto& s : m.gemm) by[static_cast<int>(s.dtype)].push_back(&s);
  for (const auto& [dt, samples] : by) {
    const auto dtype = static_cast<models::Precision>(dt);
    ValidationGroup g;
    g.kind = "gemm";
    g.group = models::precision_name(dtype);
    std::vector<double> held, fitted;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const models::GemmSample& s = *samples[i];
      models::Kernel k;
      k.kind = models::KernelKind::gemm;
      k.flops = 2 * s.m * s.n * s.k;
      k.bytes = element_bytes(dtype) * (s.m * s.k + s.k * s.n + s.m * s.n);
      k.m = s.m, k.n = s.n, k.k = s.k;
      const double t = models::kernel_seconds(k, gpu, params, dtype);
      ValidationPoint p;
      p.kind = "gemm";
      p.group = g.group;
      p.label = fmt_size(s.m) + "x" + fmt_size(s.n) + "x" + fmt_size(s.k);
      p.where = s.where;
      p.unit = "TFLOP/s";
      p.measured = k.flops / s.time_s / 1e12;
      p.predicted = k.flops / t / 1e12;
      p.error = p.predicted / p.measured - 1;
      p.fit_point = is_fit(o.holdout, i) && !in_unfitted_file(o, p.where);
      (p.fit_point ? fitted : held).push_back(p.predicted / p.measured);
      v.points.push_back(p);
    }
    g.held_large = static_cast<int>(held.size()), g.fit_large = static_cast<int>(fitted.size());
    g.held_large_error = geo_error(held), g.fit_large_error = geo_error(fitted);
    v.groups.push_back(g);
  }
}

/// One group and its points per bandwidth kind, predicted as efficiency x datasheet rate; the
/// "large" counts and errors are the streaming sizes (streaming_size), the "small" ones the rest.
void validate_bandwidth(const std::shared_ptr<const CalibrationProfile>& profile, const models::MeasurementSet& m,
                        const FitOptions& o, Validation& v) {
  if (m.bandwidth.empty()) return;
  if (o.gpu.empty()) throw std::invalid_argument("bandwidth points need a GPU: --base must name a catalog GPU");
  const models::GpuSpec& gpu = models::find_gpu(o.gpu);
  const CalibrationProfile empty;
  const CalibrationProfile& p0 = profile ? *profile : empty;
  std::map<int, std::vector<const models::BandwidthSample*>> by;
  for (const auto& s : m.bandwidth) by[static_cast<int>(s.kind)].push_back(&s);
  for (auto& [kind, samples] : by) {
    std::stable_sort(samples.begin(), samples.end(), [](auto* a, auto* b) { return a->size_bytes < b->size_bytes; });
    ValidationGroup g;
    g.kind = "bandwidth";
    g.group = bandwidth_name(static_cast<models::BandwidthSampleKind>(kind));
    std::vector<double> held, fitted, held_small, fitted_small;
    const double max_size = samples.back()->size_bytes;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      ValidationPoint p;
      p.kind = "bandwidth";
      p.group = g.group;
      p.label = fmt_size(samples[i]->size_bytes);
      p.where = samples[i]->where;
      p.bytes = samples[i]->size_bytes;
      p.unit = "GB/s";
      p.measured = samples[i]->bytes / samples[i]->time_s / 1e9;
      p.predicted = predicted_bandwidth(p0, gpu, samples[i]->kind) / 1e9;
      p.error = p.predicted / p.measured - 1;
      p.fit_point = is_fit(o.holdout, i) && !in_unfitted_file(o, p.where);
      const bool streaming = streaming_size(samples[i]->size_bytes, max_size);
      (p.fit_point ? (streaming ? fitted : fitted_small) : (streaming ? held : held_small))
          .push_back(p.predicted / p.measured);
      v.points.push_back(p);
    }
    g.held_large = static_cast<int>(held.size()), g.fit_large = static_cast<int>(fitted.size());
    g.held_large_error = geo_error(held), g.fit_large_error = geo_error(fitted);
    g.held_small = static_cast<int>(held_small.size()), g.fit_small = static_cast<int>(fitted_small.size());
    g.held_small_error = geo_error(held_small), g.fit_small_error = geo_error(fitted_small);
    v.groups.push_back(g);
  }
}

}  // namespace

Validation validate_profile(const std::shared_ptr<const models::CalibrationProfile>& profile,
                            const models::MeasurementSet& m, const FitOptions& o) {
  Validation v;
  validate_collectives(profile, m, o, v);
  validate_gemm(profile, m, o, v);
  validate_bandwidth(profile, m, o, v);
  return v;
}

}  // namespace traincast::calibrate
