// Calibration profile lookups. See calibration_profile.h.

#include "models/calibration/calibration_profile.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace traincast::models {
namespace {

/// Neighbours used by the residual interpolation.
constexpr std::size_t kNeighbours = 8;

double surface_ln(const GemmEfficiencySurface& s, double x, double y, double z) {
  const std::array<double, 10> f = {1, x, y, z, x * x, y * y, z * z, x * y, x * z, y * z};
  double v = 0;
  for (std::size_t i = 0; i < f.size(); ++i) v += s.coefficients[i] * f[i];
  return v;
}

}  // namespace

bool GemmEfficiencyTable::has(Precision dtype) const {
  return std::any_of(surfaces.begin(), surfaces.end(), [&](const auto& s) { return s.dtype == dtype; });
}

double GemmEfficiencyTable::efficiency(Precision dtype, double m, double n, double k) const {
  const GemmEfficiencySurface* surface = nullptr;
  for (const auto& s : surfaces) {
    if (s.dtype == dtype) surface = &s;
  }
  if (surface == nullptr) throw std::invalid_argument("GEMM efficiency table: no entry for this dtype");
  if (!(m > 0 && n > 0 && k > 0)) throw std::invalid_argument("GEMM efficiency table: m, n, k must be > 0");
  const double q[3] = {std::log(m), std::log(n), std::log(k)};
  // Measured box of this dtype: the surface is evaluated inside it only.
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  struct Near {
    double d2;
    double residual;
  };
  std::vector<Near> near;
  for (const GemmEfficiencyPoint& p : points) {
    if (p.dtype != dtype) continue;
    const double x[3] = {std::log(p.m), std::log(p.n), std::log(p.k)};
    double d2 = 0;
    for (int i = 0; i < 3; ++i) {
      lo[i] = std::min(lo[i], x[i]);
      hi[i] = std::max(hi[i], x[i]);
      d2 += (x[i] - q[i]) * (x[i] - q[i]);
    }
    near.push_back({d2, std::log(p.efficiency) - surface_ln(*surface, x[0], x[1], x[2])});
  }
  double c[3] = {q[0], q[1], q[2]};
  if (!near.empty()) {
    for (int i = 0; i < 3; ++i) c[i] = std::clamp(q[i], lo[i], hi[i]);
  }
  double ln_eta = surface_ln(*surface, c[0], c[1], c[2]);
  if (!near.empty()) {
    const std::size_t count = std::min(kNeighbours, near.size());
    std::partial_sort(
        near.begin(), near.begin() + static_cast<std::ptrdiff_t>(count), near.end(),
        [](const Near& a, const Near& b) { return a.d2 < b.d2 || (a.d2 == b.d2 && a.residual < b.residual); });
    if (near[0].d2 < 1e-18) {
      ln_eta += near[0].residual;
    } else {
      double wsum = 0, rsum = 0;
      for (std::size_t i = 0; i < count; ++i) {
        const double w = 1.0 / near[i].d2;
        wsum += w;
        rsum += w * near[i].residual;
      }
      ln_eta += rsum / wsum;
    }
  }
  // The surface is a smooth fit: between and beyond its points (a quadratic in log space) it can
  // overshoot what any GEMM reaches (a real H100 fit's surface alone reaches 1.38 within its
  // points' box); the measured points themselves are at most kMaxGemmPeakFraction.
  return std::min(std::exp(ln_eta), kMaxGemmPeakFraction);
}

double CollectiveFit::correction(double bytes) const {
  if (size_correction.empty() || !(bytes > 0))
    return size_correction.empty() ? 1.0 : size_correction.front().time_ratio;
  if (bytes <= size_correction.front().bytes) return size_correction.front().time_ratio;
  if (bytes >= size_correction.back().bytes) return size_correction.back().time_ratio;
  const auto it = std::upper_bound(size_correction.begin(), size_correction.end(), bytes,
                                   [](double b, const CollectiveSizePoint& p) { return b < p.bytes; });
  const CollectiveSizePoint& hi = *it;
  const CollectiveSizePoint& lo = *(it - 1);
  const double t = (std::log(bytes) - std::log(lo.bytes)) / (std::log(hi.bytes) - std::log(lo.bytes));
  return std::exp((1 - t) * std::log(lo.time_ratio) + t * std::log(hi.time_ratio));
}

const CollectiveFit* CalibrationProfile::collective(CollectiveOp op, int num_ranks) const {
  for (const CollectiveFit& f : collectives) {
    if (f.op == op && f.num_ranks == num_ranks) return &f;
  }
  return nullptr;
}

}  // namespace traincast::models
