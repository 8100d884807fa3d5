#include "models/compute/gemm_model.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace traincast::models {

double gemm_tile_math_seconds(const GemmTileModel& model, const GemmShape& shape, int sms, double peak_flops) {
  const double tiles = shape.b * std::ceil(shape.m / model.tile_m) * std::ceil(shape.n / model.tile_n);
  const double per_sm_flops_per_s = model.efficiency * peak_flops / sms;
  double best = 0;
  bool first = true;
  for (int s = 1; s <= std::max(1, model.max_split_k); s *= 2) {
    const double waves = std::ceil(tiles * s / sms);
    const double unit_flops = 2 * model.tile_m * model.tile_n * (std::ceil(shape.k / s) + model.k_overhead);
    const double t = waves * unit_flops / per_sm_flops_per_s;
    if (first || t < best) best = t, first = false;
  }
  return best;
}

double gemm_tile_seconds(const GemmTileModel& model, const GemmShape& shape, int sms, double peak_flops,
                         double hbm_bytes_per_s) {
  const double math_s = gemm_tile_math_seconds(model, shape, sms, peak_flops);
  return std::max(math_s, shape.bytes / hbm_bytes_per_s) + model.fixed_s;
}

namespace {

// The fit's parameters on comparable scales: η, k_overhead / 100, fixed_s in µs.
using Params = std::array<double, 3>;

GemmTileModel with(const GemmTileModel& base, const Params& p) {
  GemmTileModel m = base;
  m.efficiency = p[0], m.k_overhead = p[1] * 100, m.fixed_s = p[2] * 1e-6;
  return m;
}

double rms_log_error(const std::vector<GemmMeasurement>& points, const GemmTileModel& m, int sms, double peak,
                     double bw) {
  if (!(m.efficiency > 0.05 && m.efficiency <= 1.0 && m.k_overhead >= 0 && m.fixed_s >= 0)) return 1e9;
  double sum = 0;
  for (const GemmMeasurement& pt : points) {
    const double r = std::log(gemm_tile_seconds(m, pt.shape, sms, peak, bw) / pt.seconds);
    sum += r * r;
  }
  return std::sqrt(sum / static_cast<double>(points.size()));
}

// Plain Nelder-Mead (reflection 1, expansion 2, contraction 0.5, shrink 0.5) for 3 parameters.
Params nelder_mead(const std::vector<GemmMeasurement>& points, const GemmTileModel& base, Params x0, int sms,
                   double peak, double bw) {
  constexpr int kN = 3;
  std::array<Params, kN + 1> s{};
  std::array<double, kN + 1> f{};
  auto cost = [&](const Params& p) { return rms_log_error(points, with(base, p), sms, peak, bw); };
  for (int i = 0; i <= kN; ++i) {
    s[i] = x0;
    if (i > 0) s[i][i - 1] *= 1.1;
    f[i] = cost(s[i]);
  }
  for (int it = 0; it < 2000; ++it) {
    std::array<int, kN + 1> order{0, 1, 2, 3};
    std::sort(order.begin(), order.end(), [&](int a, int b) { return f[a] < f[b]; });
    const int lo = order[0], hi = order[kN], second = order[kN - 1];
    if (std::fabs(f[hi] - f[lo]) < 1e-10) break;
    Params c{};
    for (int i = 0; i <= kN; ++i)
      if (i != hi)
        for (int d = 0; d < kN; ++d) c[d] += s[i][d] / kN;
    auto along = [&](double t) {
      Params p{};
      for (int d = 0; d < kN; ++d) p[d] = c[d] + t * (s[hi][d] - c[d]);
      return p;
    };
    const Params r = along(-1.0);
    const double fr = cost(r);
    if (fr < f[lo]) {
      const Params e = along(-2.0);
      const double fe = cost(e);
      if (fe < fr)
        s[hi] = e, f[hi] = fe;
      else
        s[hi] = r, f[hi] = fr;
    } else if (fr < f[second]) {
      s[hi] = r, f[hi] = fr;
    } else {
      const Params k = along(0.5);
      const double fk = cost(k);
      if (fk < f[hi]) {
        s[hi] = k, f[hi] = fk;
      } else {
        for (int i = 0; i <= kN; ++i) {
          if (i == lo) continue;
          for (int d = 0; d < kN; ++d) s[i][d] = s[lo][d] + 0.5 * (s[i][d] - s[lo][d]);
          f[i] = cost(s[i]);
        }
      }
    }
  }
  int best = 0;
  for (int i = 1; i <= kN; ++i)
    if (f[i] < f[best]) best = i;
  return s[best];
}

}  // namespace

GemmTileModel fit_gemm_tile_model(const std::vector<GemmMeasurement>& points, const GemmTileModel& start, int sms,
                                  double peak_flops, double hbm_bytes_per_s) {
  const std::array<Params, 3> starts{Params{start.efficiency, start.k_overhead / 100, start.fixed_s * 1e6},
                                     Params{0.8, 0.5, 3.0}, Params{0.9, 3.0, 6.0}};
  GemmTileModel best = start;
  double best_cost = 1e300;
  for (const Params& x0 : starts) {
    const GemmTileModel m = with(start, nelder_mead(points, start, x0, sms, peak_flops, hbm_bytes_per_s));
    const double c = rms_log_error(points, m, sms, peak_flops, hbm_bytes_per_s);
    if (c < best_cost) best_cost = c, best = m;
  }
  return best;
}

double gemm_efficiency_from_measurement(const GemmTileModel& model, const GemmMeasurement& point, int sms,
                                        double peak_flops) {
  GemmTileModel unit = model;
  unit.efficiency = 1.0;
  // t_math scales as 1/η: η = t_math(η = 1) / (measured − fixed).
  return gemm_tile_math_seconds(unit, point.shape, sms, peak_flops) / (point.seconds - model.fixed_s);
}

}  // namespace traincast::models
