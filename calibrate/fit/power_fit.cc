// Power vs load and thermal R and C from a burn. See power_fit.h.

#include "calibrate/fit/power_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

#include "calibrate/fit/robust.h"
#include "models/power/power_model.h"

namespace traincast::calibrate {
namespace {

using models::PowerThermalSample;

/// NVML averages board power over 1 s on H100/H200 (power_fit.h); samples this long after a
/// change of phase still mix the two phases and are left out of the power fit.
constexpr double kSettleS = 2.0;
/// NVML's power on Ampere (except GA100) and later is the mean over the last 1 s (NVML API
/// reference, nvmlDeviceGetPowerUsage): for power linear in time that is the power 0.5 s before
/// the sample, so the fit reads each reading as the power at t - 0.5 s. Without this shift a
/// noise-free simulated burn (tests/calibrate/power_fit_test.cc) fits R 1.9% low.
constexpr double kNvmlAverageS = 1.0;
constexpr int kMinSamples = 20;
constexpr double kMinBurnS = 10.0;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

/// "file" and "line" of a sample's where ("file:line").
std::string file_of(const std::string& where) {
  const auto c = where.rfind(':');
  return c == std::string::npos ? where : where.substr(0, c);
}
std::string line_of(const std::string& where) {
  const auto c = where.rfind(':');
  return c == std::string::npos ? "" : where.substr(c + 1);
}

/// One GPU's samples with its phases located.
struct GpuBurn {
  int gpu = 0;
  std::vector<const PowerThermalSample*> s;
  std::size_t first_loaded = 0, last_loaded = 0;  ///< the burn block [first, last]
  double start_s = 0, end_s = 0, split_s = 0;
};

/// Groups samples by GPU and checks each burn's shape. Throws std::invalid_argument.
std::vector<GpuBurn> burns_of(const std::vector<PowerThermalSample>& samples, bool holdout) {
  std::map<int, GpuBurn> by;
  for (const auto& s : samples) {
    GpuBurn& b = by[s.gpu];
    b.gpu = s.gpu;
    if (!b.s.empty() && !(s.t_s > b.s.back()->t_s)) {
      throw std::invalid_argument(s.where + ": burn sample of GPU " + std::to_string(s.gpu) + " at " +
                                  fmt("%g", s.t_s) + " s after one at " + fmt("%g", b.s.back()->t_s) + " s (" +
                                  b.s.back()->where +
                                  "): expected one burn per GPU with increasing times (one measurement file)");
    }
    b.s.push_back(&s);
  }
  std::vector<GpuBurn> out;
  for (auto& [gpu, b] : by) {
    const std::string span = b.s.front()->where + "-" + line_of(b.s.back()->where);
    const std::string who = span + ": burn of GPU " + std::to_string(gpu) + ": ";
    if (static_cast<int>(b.s.size()) < kMinSamples) {
      throw std::invalid_argument(who + std::to_string(b.s.size()) + " samples (expected at least " +
                                  std::to_string(kMinSamples) + ": an idle baseline, the burn and a cool-down)");
    }
    bool seen = false;
    for (std::size_t i = 0; i < b.s.size(); ++i) {
      if (!b.s[i]->loaded) continue;
      if (seen && i != b.last_loaded + 1) {
        throw std::invalid_argument(b.s[i]->where + ": burn of GPU " + std::to_string(gpu) +
                                    ": a second burn block starts here after idle samples (expected one block of "
                                    "loaded samples between the idle baseline and the cool-down)");
      }
      if (!seen) b.first_loaded = i;
      seen = true;
      b.last_loaded = i;
    }
    if (!seen) throw std::invalid_argument(who + "no sample has loaded: true (expected a burn block)");
    const std::size_t idle = b.s.size() - (b.last_loaded - b.first_loaded + 1);
    if (idle < 3) {
      throw std::invalid_argument(who + std::to_string(idle) +
                                  " idle samples (expected at least 3: an idle baseline before the burn or a "
                                  "cool-down after it)");
    }
    b.start_s = b.s[b.first_loaded]->t_s;
    b.end_s = b.s[b.last_loaded]->t_s;
    if (b.end_s - b.start_s < kMinBurnS) {
      throw std::invalid_argument(b.s[b.first_loaded]->where + ": burn of GPU " + std::to_string(gpu) + " lasts " +
                                  fmt("%.3g", b.end_s - b.start_s) + " s (expected at least " + fmt("%g", kMinBurnS) +
                                  " s)");
    }
    b.split_s = holdout ? 0.5 * (b.start_s + b.end_s) : b.s.back()->t_s;
    out.push_back(std::move(b));
  }
  return out;
}

/// Power with isolated outliers replaced: within each run of equal `loaded`, a sample more than
/// 3 robust sigmas (1.4826 x MAD) from the median of its 7-sample window takes that median.
std::vector<double> hampel_power(const GpuBurn& b) {
  const std::size_t n = b.s.size();
  std::vector<double> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = b.s[i]->power_w;
  std::vector<double> out = p;
  std::size_t run = 0;
  while (run < n) {
    std::size_t end = run;
    while (end < n && b.s[end]->loaded == b.s[run]->loaded) ++end;
    for (std::size_t i = run; i < end; ++i) {
      const std::size_t lo = i >= run + 3 ? i - 3 : run, hi = std::min(end, i + 4);
      if (hi - lo < 3) continue;
      std::vector<double> w(p.begin() + static_cast<std::ptrdiff_t>(lo), p.begin() + static_cast<std::ptrdiff_t>(hi));
      const double med = median(w);
      for (double& x : w) x = std::fabs(x - med);
      const double sigma = 1.4826 * median(w);
      if (std::fabs(p[i] - med) > 3 * std::max(sigma, 0.5)) out[i] = med;
    }
    run = end;
  }
  return out;
}

struct PowerLine {
  double idle_w = 0, full_w = 0, clock_fraction = 0;
};

/// Robust affine fit of power vs load on the steady samples at t <= split_s.
PowerLine fit_power_line(const GpuBurn& b, double sm_clock_max_mhz) {
  std::vector<double> y, x, clocks;
  int idle = 0, loaded = 0;
  for (const auto* s : b.s) {
    if (s->t_s > b.split_s) break;
    const bool steady =
        s->loaded ? s->t_s >= b.start_s + kSettleS : (s->t_s < b.start_s || s->t_s >= b.end_s + kSettleS);
    if (!steady) continue;
    y.push_back(s->power_w);
    x.push_back(s->loaded ? 1 : 0);
    (s->loaded ? loaded : idle)++;
    if (s->loaded && s->sm_clock_mhz > 0) clocks.push_back(s->sm_clock_mhz);
  }
  const std::string who =
      b.s.front()->where + "-" + line_of(b.s.back()->where) + ": burn of GPU " + std::to_string(b.gpu) + ": ";
  if (idle < 3 || loaded < 3) {
    throw std::invalid_argument(who + std::to_string(idle) + " steady idle and " + std::to_string(loaded) +
                                " steady burn samples in the fitted part (expected at least 3 of each, " +
                                fmt("%g", kSettleS) + " s away from a change of phase)");
  }
  Eigen::MatrixXd X(static_cast<Eigen::Index>(y.size()), 2);
  Eigen::VectorXd Y(static_cast<Eigen::Index>(y.size()));
  for (std::size_t i = 0; i < y.size(); ++i) {
    X(static_cast<Eigen::Index>(i), 0) = 1;
    X(static_cast<Eigen::Index>(i), 1) = x[i];
    Y[static_cast<Eigen::Index>(i)] = y[i];
  }
  RobustOptions o;
  o.min_sigma = 0.5;  // W: NVML reports milliwatts, boards fluctuate by watts
  const RobustResult r = huber_linear(X, Y, o);
  PowerLine line;
  line.idle_w = r.params[0];
  line.full_w = r.params[0] + r.params[1];
  if (!(line.full_w > line.idle_w + 1.0)) {
    throw std::invalid_argument(who + "burn power " + fmt("%.1f", line.full_w) + " W is not above idle " +
                                fmt("%.1f", line.idle_w) + " W (expected the burn GEMM to load the GPU)");
  }
  if (sm_clock_max_mhz > 0 && !clocks.empty()) line.clock_fraction = median(clocks) / sm_clock_max_mhz;
  return line;
}

/// One GPU's power vs load: the burn's span, the power line and u(compute_bound). Throws
/// std::invalid_argument for an idle power outside (0, TDP).
BurnGpuFit fit_power_vs_load(const GpuBurn& b, const models::GpuSpec& gpu, const models::GpuPowerCurve& curve,
                             double sm_clock_max_mhz) {
  BurnGpuFit f;
  f.gpu = b.gpu;
  f.where = b.s.front()->where + "-" + line_of(b.s.back()->where);
  f.burn_start_s = b.start_s;
  f.burn_end_s = b.end_s;
  f.split_s = b.split_s;
  f.samples = static_cast<int>(b.s.size());
  const std::string who = f.where + ": burn of GPU " + std::to_string(b.gpu) + ": ";
  // Power vs load.
  const PowerLine line = fit_power_line(b, sm_clock_max_mhz);
  f.idle_w = line.idle_w;
  f.full_load_w = line.full_w;
  f.load_clock_fraction = line.clock_fraction;
  if (!(f.idle_w > 0) || f.idle_w >= gpu.tdp_w) {
    throw std::invalid_argument(who + "idle power " + fmt("%.1f", f.idle_w) + " W (expected between 0 and the " +
                                gpu.name + "'s TDP, " + fmt("%g", gpu.tdp_w) + " W: is --base the GPU measured?)");
  }
  const double fc = line.clock_fraction > 0 ? std::clamp(line.clock_fraction, curve.clock_min_fraction, 1.0) : 1.0;
  f.compute_bound_fraction =
      std::min(3.0, (f.full_load_w - f.idle_w) / ((gpu.tdp_w - f.idle_w) * models::dynamic_power_scale(curve, fc)));
  return f;
}

/// The thermal fit's input: the samples at t <= split_s, with the power input at t_i the filtered
/// reading at t_i + lag, interpolated linearly (held at the last reading).
struct ThermalInput {
  std::vector<double> t, p, temp;
};

ThermalInput thermal_input(const GpuBurn& b, const models::GpuSpec& gpu) {
  ThermalInput in;
  const std::vector<double> p_filtered = hampel_power(b);
  const double lag = gpu.name.rfind("A100", 0) == 0 ? 0.0 : 0.5 * kNvmlAverageS;  // GA100: instantaneous
  std::size_t j = 0;
  for (std::size_t i = 0; i < b.s.size() && b.s[i]->t_s <= b.split_s; ++i) {
    in.t.push_back(b.s[i]->t_s);
    const double at = b.s[i]->t_s + lag;
    while (j + 1 < b.s.size() && b.s[j + 1]->t_s < at) ++j;
    double p = p_filtered[j];
    if (j + 1 < b.s.size() && b.s[j]->t_s < at) {
      const double w = (at - b.s[j]->t_s) / (b.s[j + 1]->t_s - b.s[j]->t_s);
      p = p_filtered[j] + std::min(1.0, w) * (p_filtered[j + 1] - p_filtered[j]);
    }
    in.p.push_back(p);
    in.temp.push_back(b.s[i]->temperature_c);
  }
  return in;
}

/// Temperatures of the RC model (R, tau = R C, inlet, T0) on in's times and power, as a vector.
Eigen::VectorXd simulate_thermal(const ThermalInput& in, double r, double tau, double inlet, double t0) {
  const auto n = static_cast<Eigen::Index>(in.t.size());
  const std::vector<double> v = simulate_rc(in.t, in.p, r, tau / r, inlet, t0);
  Eigen::VectorXd out_t = Eigen::Map<const Eigen::VectorXd>(v.data(), n);
  return out_t;
}

/// Start of the thermal fit (ln R, ln tau, T_in, T0): the best of a coarse grid in (R, tau);
/// for each, T_in and T0 enter linearly: robust linear fit of them.
Eigen::VectorXd thermal_start(const ThermalInput& in, const Eigen::VectorXd& T, const BurnGpuFit& f) {
  const auto n = static_cast<Eigen::Index>(in.t.size());
  const std::vector<double>& temp = in.temp;
  auto simulate = [&](double r, double tau, double inlet, double t0) {
    return simulate_thermal(in, r, tau, inlet, t0);
  };
  const double t_min = *std::min_element(temp.begin(), temp.end());
  const double t_max = *std::max_element(temp.begin(), temp.end());
  const double r_guess = std::clamp((t_max - t_min) / (f.full_load_w - f.idle_w), 1e-3, 5.0);
  double best_loss = std::numeric_limits<double>::infinity();
  Eigen::VectorXd start(4);
  for (double rs : {0.5, 1.0, 2.0, 4.0}) {
    for (double tau : {3.0, 10.0, 30.0, 100.0, 300.0, 1000.0}) {
      const double r = r_guess * rs;
      const Eigen::VectorXd base = simulate(r, tau, 0, 0);
      Eigen::MatrixXd X(n, 2);
      X.col(0) = simulate(r, tau, 1, 0) - base;
      X.col(1) = simulate(r, tau, 0, 1) - base;
      const RobustResult lin = huber_linear(X, T - base);
      const double loss = huber_loss(lin.residuals, 1.0);
      if (loss < best_loss) {
        best_loss = loss;
        start << std::log(r), std::log(tau), lin.params[0], lin.params[1];
      }
    }
  }
  return start;
}

/// Fits R, C, inlet and start temperature of f's GPU to its burn (Huber, Levenberg-Marquardt from
/// thermal_start), with the fit RMS, outliers and linearised relative standard errors.
void fit_thermal(const GpuBurn& b, const models::GpuSpec& gpu, BurnGpuFit& f) {
  const ThermalInput in = thermal_input(b, gpu);
  const auto n = static_cast<Eigen::Index>(in.t.size());
  Eigen::VectorXd T(n);
  for (Eigen::Index i = 0; i < n; ++i) T[i] = in.temp[static_cast<std::size_t>(i)];
  auto simulate = [&](double r, double tau, double inlet, double t0) {
    return simulate_thermal(in, r, tau, inlet, t0);
  };
  const Eigen::VectorXd start = thermal_start(in, T, f);
  auto residuals = [&](const Eigen::VectorXd& q) {
    return (simulate(std::exp(q[0]), std::exp(q[1]), q[2], q[3]) - T).eval();
  };
  RobustOptions o;
  o.min_sigma = 0.05;  // K: NVML reports whole degrees (quantisation sigma 0.29 K)
  o.max_iterations = 200;
  const RobustResult res = huber_nonlinear(residuals, start, start, o);
  const Eigen::VectorXd& q = res.params;
  f.r_k_per_w = std::exp(q[0]);
  f.c_j_per_k = std::exp(q[1]) / f.r_k_per_w;
  f.inlet_c = q[2];
  f.start_c = q[3];
  f.fit_samples = static_cast<int>(n);
  double ss = 0;
  int kept = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (std::fabs(res.residuals[i]) > 3.5 * res.sigma) {
      ++f.outliers;
    } else {
      ss += res.residuals[i] * res.residuals[i];
      ++kept;
    }
  }
  f.fit_rms_k = kept > 0 ? std::sqrt(ss / kept) : 0;
  // Linearised standard errors: cov = sigma^2 (J' W J)^-1 at the solution.
  Eigen::MatrixXd J(n, 4);
  for (int k = 0; k < 4; ++k) {
    const double h = 1e-5 * std::max(1.0, std::fabs(q[k]));
    Eigen::VectorXd a = q, c = q;
    a[k] += h;
    c[k] -= h;
    J.col(k) = (residuals(a) - residuals(c)) / (2 * h);
  }
  const Eigen::MatrixXd A = J.transpose() * res.weights.asDiagonal() * J;
  const Eigen::MatrixXd cov = res.sigma * res.sigma * A.completeOrthogonalDecomposition().pseudoInverse();
  f.r_rel_se = std::sqrt(std::max(0.0, cov(0, 0)));
  f.c_rel_se = std::sqrt(std::max(0.0, cov(0, 0) + cov(1, 1) - 2 * cov(0, 1)));
}

/// The notes of one GPU's burn fit: what was fitted, and a warning when the time constant is
/// over twice the fitted burn.
void add_burn_notes(const BurnGpuFit& f, bool holdout, std::vector<std::string>& notes) {
  notes.push_back(
      "burn GPU " + std::to_string(f.gpu) + " (" + f.where + "): idle " + fmt("%.1f", f.idle_w) + " W, burn " +
      fmt("%.1f", f.full_load_w) + " W" +
      (f.load_clock_fraction > 0 ? " at " + fmt("%.3f", f.load_clock_fraction) + " of the max SM clock"
                                 : std::string(" (SM clock not recorded: full clock assumed)")) +
      " -> u(compute_bound) " + fmt("%.3f", f.compute_bound_fraction) + "; R " + fmt("%.4g", f.r_k_per_w) + " K/W (+-" +
      fmt("%.1f", 100 * f.r_rel_se) + "%), C " + fmt("%.4g", f.c_j_per_k) + " J/K (+-" + fmt("%.1f", 100 * f.c_rel_se) +
      "%), tau " + fmt("%.3g", f.r_k_per_w * f.c_j_per_k) + " s, inlet " + fmt("%.1f", f.inlet_c) +
      " C (fitted: not measured); fit RMS " + fmt("%.2f", f.fit_rms_k) + " K over the " +
      std::to_string(f.fit_samples - f.outliers) + " of " + std::to_string(f.fit_samples) +
      " fit samples within 3.5 sigma" +
      (holdout ? " (samples up to t = " + fmt("%.1f", f.split_s) + " s; the rest held out)" : std::string()) + ", " +
      std::to_string(f.outliers) + " outliers left out of it (the table below counts them)");
  const double fitted_burn_s = std::min(f.split_s, f.burn_end_s) - f.burn_start_s;
  if (f.r_k_per_w * f.c_j_per_k > 2 * fitted_burn_s) {
    notes.push_back("burn GPU " + std::to_string(f.gpu) + ": the time constant (" +
                    fmt("%.3g", f.r_k_per_w * f.c_j_per_k) + " s) is over twice the fitted burn (" +
                    fmt("%.3g", fitted_burn_s) +
                    " s): the steady state is extrapolated, R and C are poorly determined; a longer burn "
                    "(traincast-bench --budget-s) fixes it");
  }
}

/// Medians over the GPUs of out.gpus as the profile's overlay, with what it was fitted from.
models::PowerThermalOverlay overlay_of(const BurnFit& out, const std::string& files, int fitted, int total,
                                       bool holdout) {
  models::PowerThermalOverlay ov;
  auto med = [&](double BurnGpuFit::*m) {
    std::vector<double> v;
    for (const auto& g : out.gpus) v.push_back(g.*m);
    return median(v);
  };
  ov.idle_w = med(&BurnGpuFit::idle_w);
  ov.compute_bound_fraction = med(&BurnGpuFit::compute_bound_fraction);
  ov.r_k_per_w = med(&BurnGpuFit::r_k_per_w);
  ov.c_j_per_k = med(&BurnGpuFit::c_j_per_k);
  ov.inlet_c = med(&BurnGpuFit::inlet_c);
  ov.full_load_w = med(&BurnGpuFit::full_load_w);
  ov.load_clock_fraction = med(&BurnGpuFit::load_clock_fraction);
  ov.gpus = static_cast<int>(out.gpus.size());
  ov.fitted_from = "burn of " + std::to_string(out.gpus.size()) + " GPU(s) in " + files + ": " +
                   std::to_string(fitted) + " of " + std::to_string(total) + " samples fitted" +
                   (holdout ? " (idle baseline and first half of each burn; the rest held out)" : "") +
                   "; medians over GPUs; inlet not measured (fitted as a constant)";
  return ov;
}

}  // namespace

std::vector<double> simulate_rc(const std::vector<double>& t, const std::vector<double>& p, double r, double c,
                                double inlet, double t0) {
  std::vector<double> out(t.size());
  if (t.empty()) return out;
  const double tau = r * c;
  double temp = t0;
  out[0] = temp;
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    const double dt = t[i + 1] - t[i];
    const double slope = (p[i + 1] - p[i]) / dt;
    // Particular solution for P linear in time: T_p(x) = T_in + R (P_i + s x) - R s tau.
    const double tp0 = inlet + r * p[i] - r * slope * tau;
    const double tp1 = inlet + r * p[i + 1] - r * slope * tau;
    temp = tp1 + (temp - tp0) * std::exp(-dt / tau);
    out[i + 1] = temp;
  }
  return out;
}

BurnFit fit_burn(const std::vector<PowerThermalSample>& samples, const models::GpuSpec& gpu, double sm_clock_max_mhz,
                 bool holdout, std::vector<std::string>* notes) {
  BurnFit out;
  const std::vector<GpuBurn> burns = burns_of(samples, holdout);
  const models::GpuPowerCurve curve = models::power_curve_of(gpu);
  std::string files;
  int total = 0, fitted = 0;
  for (const GpuBurn& b : burns) {
    // Power vs load, then thermal.
    BurnGpuFit f = fit_power_vs_load(b, gpu, curve, sm_clock_max_mhz);
    fit_thermal(b, gpu, f);
    if (notes) add_burn_notes(f, holdout, *notes);
    if (files.find(file_of(f.where)) == std::string::npos) files += (files.empty() ? "" : ", ") + file_of(f.where);
    total += f.samples;
    fitted += f.fit_samples;
    out.gpus.push_back(f);
  }
  out.overlay = overlay_of(out, files, fitted, total, holdout);
  return out;
}

BurnValidation validate_burn(const models::CalibrationProfile& profile, const models::GpuSpec& gpu,
                             const std::vector<PowerThermalSample>& samples, double power_limit_w, bool holdout) {
  BurnValidation v;
  const models::PowerThermalOverlay& ov = profile.power_thermal;
  models::GpuPowerCurve curve = models::power_curve_of(gpu);
  if (ov.idle_w) curve.idle_w = *ov.idle_w;
  const auto cb = static_cast<int>(models::Activity::compute_bound);
  if (ov.compute_bound_fraction) curve.activity_fraction[cb] = *ov.compute_bound_fraction;
  const double cap = power_limit_w > 0 && power_limit_w < curve.tdp_w ? power_limit_w : curve.tdp_w;
  const double f = models::clock_for_power_limit(curve, models::Activity::compute_bound, cap);
  const double p_load = models::gpu_power_w(curve, models::Activity::compute_bound, f);
  const double p_idle = curve.idle_w;
  models::ThermalRc rc = models::default_thermal_rc(gpu, false, 1);
  if (ov.r_k_per_w) rc.r_k_per_w = *ov.r_k_per_w;
  if (ov.c_j_per_k) rc.c_j_per_k = *ov.c_j_per_k;
  v.inlet_c = ov.r_k_per_w ? ov.inlet_c : 25.0;
  v.note = std::string("predicted: power ") + (ov.idle_w ? "of the profile" : "of the catalog") + " (idle " +
           fmt("%.1f", p_idle) + " W, burn " + fmt("%.1f", p_load) + " W at clock " + fmt("%.3f", f) + "), R " +
           fmt("%.4g", rc.r_k_per_w) + " K/W, C " + fmt("%.4g", rc.c_j_per_k) + " J/K " +
           (ov.r_k_per_w ? "of the profile" : "(catalog default, one airflow row)") + ", inlet " +
           fmt("%.1f", v.inlet_c) + " C " + (ov.r_k_per_w ? "(fitted)" : "(assumed)") +
           ", from each GPU's first measured temperature";
  for (const GpuBurn& b : burns_of(samples, holdout)) {
    std::vector<double> t, p;
    for (const auto* s : b.s) {
      t.push_back(s->t_s);
      p.push_back(s->loaded ? p_load : p_idle);
    }
    const std::vector<double> temp =
        simulate_rc(t, p, rc.r_k_per_w, rc.c_j_per_k, v.inlet_c, b.s.front()->temperature_c);
    BurnValidationGroup gt, gp;
    gt.gpu = gp.gpu = b.gpu;
    gt.quantity = "temperature";
    gp.quantity = "power";
    double sft = 0, sht = 0, sfp = 0, shp = 0;
    for (std::size_t i = 0; i < b.s.size(); ++i) {
      const auto& s = *b.s[i];
      const bool fit = s.t_s <= b.split_s;
      for (int k = 0; k < 2; ++k) {
        BurnValidationPoint q;
        q.gpu = b.gpu;
        q.quantity = k == 0 ? "temperature" : "power";
        q.t_s = s.t_s;
        q.measured = k == 0 ? s.temperature_c : s.power_w;
        q.predicted = k == 0 ? temp[i] : p[i];
        q.loaded = s.loaded;
        q.fit_point = fit;
        q.where = s.where;
        const double e = q.predicted - q.measured;
        BurnValidationGroup& g = k == 0 ? gt : gp;
        double& sum = k == 0 ? (fit ? sft : sht) : (fit ? sfp : shp);
        sum += e * e;
        (fit ? g.fit_n : g.held_n)++;
        double& mx = fit ? g.fit_max : g.held_max;
        mx = std::max(mx, std::fabs(e));
        v.points.push_back(q);
      }
    }
    gt.fit_rms = gt.fit_n ? std::sqrt(sft / gt.fit_n) : 0;
    gt.held_rms = gt.held_n ? std::sqrt(sht / gt.held_n) : 0;
    gp.fit_rms = gp.fit_n ? std::sqrt(sfp / gp.fit_n) : 0;
    gp.held_rms = gp.held_n ? std::sqrt(shp / gp.held_n) : 0;
    v.groups.push_back(gt);
    v.groups.push_back(gp);
  }
  return v;
}

}  // namespace traincast::calibrate
