// The GEMM part of a profile fit. See gemm_fit.h.

#include "calibrate/fit/gemm_fit.h"

#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "calibrate/fit/fit_helpers.h"
#include "calibrate/fit/robust.h"
#include "models/compute/compute_model.h"
#include "models/hardware/catalog.h"

namespace traincast::calibrate {
namespace {

using models::CalibrationProfile;

/// Measured fraction of the dense peak [FLOP/s] that g reaches: 2mnk / (time x peak).
double peak_fraction(const models::GemmSample* g, double peak) { return 2 * g->m * g->n * g->k / (g->time_s * peak); }

/// A GEMM cannot beat the GPU's dense peak by more than models::kMaxGemmPeakFraction (the
/// boost clock's headroom, calibration_profile.h). A point above it is an outlier, left out of
/// the fit (the profile reader refuses efficiencies above it) or, when most points are, a sign
/// the measurements are from another GPU than --base or mistimed: then the fit is refused.
/// Throws std::invalid_argument naming the fastest point when more than half of samples are.
void check_mostly_below_peak(const std::vector<const models::GemmSample*>& samples, models::Precision dtype,
                             double peak, const models::GpuSpec& gpu) {
  std::size_t above_peak = 0;
  const models::GemmSample* fastest = nullptr;
  double fastest_ratio = 0;
  for (const models::GemmSample* g : samples) {
    const double ratio = peak_fraction(g, peak);
    if (ratio > models::kMaxGemmPeakFraction) ++above_peak;
    if (ratio > fastest_ratio) fastest_ratio = ratio, fastest = g;
  }
  if (2 * above_peak > samples.size()) {
    std::ostringstream e;
    e << fastest->where << ": GEMM " << models::precision_name(dtype) << " " << fastest->m << "x" << fastest->n << "x"
      << fastest->k << " runs at " << fastest_ratio << "x the dense " << models::precision_name(dtype) << " peak of "
      << gpu.name << " (" << peak / 1e12 << " TFLOP/s), and " << above_peak << " of " << samples.size()
      << " points are above " << models::kMaxGemmPeakFraction
      << "x it: the measurements are from another GPU than --base, or their times "
         "are wrong";
    throw std::invalid_argument(e.str());
  }
}

/// GEMMs of at least this many FLOP (2 x 1024^3, a 1024-cube) fill the GPU: in
/// ../shared/data/gemm/xla_matmul_perf_table_measured.csv a bf16 1024-cube runs at 0.26 of the
/// dense peak on sm_90 (H100) and 0.13 on B200, 4096-cubes at 0.79 and 0.63; smaller ones
/// legitimately run far below the peak (256-cubes: 0.007, 0.003).
constexpr double kLargeGemmFlop = 2.0 * 1024 * 1024 * 1024;
/// The least efficiency the fit may conclude for GEMMs of kLargeGemmFlop or more: below it the
/// rates are in the wrong units (TFLOP/s given as FLOP/s, us as s), not slow. 0.05 is a factor
/// 2.5 below the slowest large shape of the shared tables (0.13, B200 1024-cube).
constexpr double kMinLargeGemmPeakFraction = 0.05;

/// The architecture a GEMM CSV's device_key names, as openxla's tables spell it: "sm_90",
/// "sm_100_B200" (CUDA compute capability x 10 after "sm_") into cc, "gfx950" (an AMD LLVM target)
/// into gfx; false for any other key.
bool device_arch(const std::string& key, int& cc, std::string& gfx) {
  cc = 0;
  gfx.clear();
  if (key.rfind("gfx", 0) == 0 && key.size() > 3) {
    gfx = key.substr(0, key.find('_'));
    return true;
  }
  if (key.rfind("sm_", 0) != 0) return false;
  std::size_t i = 3;
  while (i < key.size() && i < 6 && std::isdigit(static_cast<unsigned char>(key[i]))) cc = cc * 10 + (key[i++] - '0');
  return i > 3 && (i == key.size() || key[i] == '_');
}

/// Refuses (std::invalid_argument at the first such row) GEMM rows whose CSV device_key names
/// another architecture than gpu's; notes keys that name none traincast knows.
void check_device_keys(const std::vector<models::GemmSample>& gemm, const models::GpuSpec& gpu, const std::string& base,
                       std::vector<std::string>* notes) {
  std::set<std::string> unknown;
  const std::string arch = !gpu.gfx_arch.empty() ? gpu.gfx_arch : "sm_" + std::to_string(gpu.compute_capability);
  for (const models::GemmSample& g : gemm) {
    int cc = 0;
    std::string gfx;
    if (g.device.empty()) continue;
    if (!device_arch(g.device, cc, gfx)) {
      if (unknown.insert(g.device).second && notes)
        notes->push_back("GEMM rows of device_key " + g.device + " (first " + g.where +
                         "): names no architecture traincast knows (sm_NN..., gfxNNN), not checked against " +
                         gpu.name);
      continue;
    }
    if ((cc > 0 && cc == gpu.compute_capability) || (!gfx.empty() && gfx == gpu.gfx_arch)) continue;
    std::string what = g.where;
    what.append(": column 'device_key': got ").append(g.device).append(" (expected ").append(arch);
    what.append(", the architecture of ").append(gpu.name).append(" that --base ").append(base);
    what.append(
        " names: these GEMMs ran on another GPU, and their efficiencies would be taken against its peak; give a "
        "--base with the GPU that ran them, or --device with a key of ");
    what.append(gpu.name).append(")");
    throw std::invalid_argument(what);
  }
}

/// Refuses (std::invalid_argument) a fitted dtype whose efficiency at every measured shape of
/// kLargeGemmFlop or more is below kMinLargeGemmPeakFraction (no such shape: not checked).
void check_large_shape_efficiency(const std::vector<const models::GemmSample*>& fit, models::Precision dtype,
                                  double peak, const models::GpuSpec& gpu, const CalibrationProfile& out) {
  const models::GemmSample* best = nullptr;
  double best_eff = 0;
  int large = 0;
  for (const models::GemmSample* g : fit) {
    if (2 * g->m * g->n * g->k < kLargeGemmFlop) continue;
    ++large;
    const double eff = out.gemm.efficiency(dtype, g->m, g->n, g->k);
    if (best == nullptr || eff > best_eff) best = g, best_eff = eff;
  }
  if (best == nullptr || best_eff >= kMinLargeGemmPeakFraction) return;
  std::ostringstream e;
  e << best->where << ": GEMM " << models::precision_name(dtype) << " " << best->m << "x" << best->n << "x" << best->k
    << ": fitted efficiency got " << best_eff << " of the dense " << models::precision_name(dtype) << " peak of "
    << gpu.name << " (" << peak / 1e12 << " TFLOP/s), the best of " << large << " shape(s) of " << kLargeGemmFlop
    << " FLOP or more (expected at least " << kMinLargeGemmPeakFraction
    << ": GEMMs that large run at 0.13 to 0.8 of the peak; wrong units? tflops in TFLOP/s, flops_per_s in FLOP/s, "
       "time_s in seconds, time_us in microseconds)";
  throw std::invalid_argument(e.str());
}

/// samples' fit points under the holdout, without those above models::kMaxGemmPeakFraction x the
/// peak (counted in above_dropped).
std::vector<const models::GemmSample*> fit_points_below_peak(const std::vector<const models::GemmSample*>& samples,
                                                             Holdout holdout, double peak, int& above_dropped) {
  std::vector<const models::GemmSample*> fit;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!is_fit(holdout, i)) continue;
    const models::GemmSample* g = samples[i];
    if (peak_fraction(g, peak) > models::kMaxGemmPeakFraction) {
      ++above_dropped;
      continue;
    }
    fit.push_back(g);
  }
  return fit;
}

/// Fits the surface of one dtype to its fit points and appends it, and the points within 3.5
/// robust sigmas of it, to out.gemm; returns the note of the fit.
std::string fit_surface(const std::vector<const models::GemmSample*>& fit, models::Precision dtype, double peak,
                        int above_dropped, CalibrationProfile& out) {
  const int cols = fit.size() >= 20 ? 10 : fit.size() >= 4 ? 4 : 1;
  Eigen::MatrixXd X(static_cast<Eigen::Index>(fit.size()), cols);
  Eigen::VectorXd y(static_cast<Eigen::Index>(fit.size()));
  for (std::size_t i = 0; i < fit.size(); ++i) {
    const double x1 = std::log(fit[i]->m), x2 = std::log(fit[i]->n), x3 = std::log(fit[i]->k);
    const double f[10] = {1, x1, x2, x3, x1 * x1, x2 * x2, x3 * x3, x1 * x2, x1 * x3, x2 * x3};
    for (int c = 0; c < cols; ++c) X(static_cast<Eigen::Index>(i), c) = f[c];
    y[static_cast<Eigen::Index>(i)] = std::log(2 * fit[i]->m * fit[i]->n * fit[i]->k / (fit[i]->time_s * peak));
  }
  RobustOptions ro;
  ro.min_sigma = 0.005;
  ro.ridge = 1e-8;
  const RobustResult r = huber_linear(X, y, ro);
  models::GemmEfficiencySurface surf;
  surf.dtype = dtype;
  for (int c = 0; c < cols; ++c) surf.coefficients[c] = r.params[c];
  out.gemm.surfaces.push_back(surf);
  int dropped = 0;
  for (std::size_t i = 0; i < fit.size(); ++i) {
    if (std::fabs(r.residuals[static_cast<Eigen::Index>(i)]) > 3.5 * r.sigma) {
      ++dropped;
      continue;
    }
    out.gemm.points.push_back({dtype, fit[i]->m, fit[i]->n, fit[i]->k, std::exp(y[static_cast<Eigen::Index>(i)])});
  }
  std::ostringstream s;
  s << "GEMM " << models::precision_name(dtype) << ": " << fit.size() << " fit points, surface robust sigma "
    << r.sigma * 100 << "% (ln eta), " << dropped << " outliers dropped";
  if (above_dropped > 0)
    s << ", " << above_dropped << " point(s) above " << models::kMaxGemmPeakFraction << "x the dense peak left out";
  return s.str();
}

}  // namespace

void fit_gemm(const models::MeasurementSet& m, const FitOptions& o, CalibrationProfile& out,
              std::vector<std::string>* notes) {
  if (m.gemm.empty()) return;
  if (o.gpu.empty())
    throw std::invalid_argument("GEMM points need a GPU: --base must name a catalog GPU, node template or scenario");
  const models::GpuSpec& gpu = models::find_gpu(o.gpu);
  check_device_keys(m.gemm, gpu, o.base, notes);
  std::map<int, std::vector<const models::GemmSample*>> by;
  for (const auto& s : m.gemm) by[static_cast<int>(s.dtype)].push_back(&s);
  for (const auto& [dt, samples] : by) {
    const auto dtype = static_cast<models::Precision>(dt);
    const double peak = models::peak_flops(gpu, dtype);  // throws for a dtype the GPU lacks
    check_mostly_below_peak(samples, dtype, peak, gpu);
    int above_dropped = 0;
    const std::vector<const models::GemmSample*> fit = fit_points_below_peak(samples, o.holdout, peak, above_dropped);
    if (fit.empty()) continue;
    const std::string note = fit_surface(fit, dtype, peak, above_dropped, out);
    check_large_shape_efficiency(fit, dtype, peak, gpu, out);
    if (notes) notes->push_back(note);
  }
}

}  // namespace traincast::calibrate
