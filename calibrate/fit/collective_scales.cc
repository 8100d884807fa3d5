// One collective operation's common and per-protocol scales. See collective_scales.h.

#include "calibrate/fit/collective_scales.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "calibrate/fit/robust.h"

namespace traincast::calibrate {
namespace {

using models::CollectiveFit;

/// The protocol (index LL, LL128, Simple) the model runs at each of d's sizes on e.
std::vector<int> chosen_protocols(const models::CollectiveEngine& e, const OpData& d) {
  std::vector<int> out(d.bytes.size());
  models::CollectiveCall call;
  call.op = d.cop;
  call.ranks = call_ranks(d);
  for (std::size_t i = 0; i < out.size(); ++i) {
    call.bytes = d.bytes[i];
    out[i] = static_cast<int>(e.choose(call).protocol);
  }
  return out;
}

/// Latency scale that takes a protocol out of the envelope (the profile's upper bound).
constexpr double kProtocolOutLatencyScale = 1000.0;

/// Per-protocol latency and bandwidth scales of `entry` (on top of its common scales) fitted on
/// d's fit points: NCCL's tuner has one (latency, bandwidth) per algorithm and protocol and runs
/// the cheapest, so a measured curve is the lower envelope of up to three alpha-beta lines, with a
/// kink where the protocol changes; one common (a, b) cannot follow it. Six parameters (ln of
/// each scale), a coarse grid over the latency scales for a start (the envelope is not convex),
/// Levenberg-Marquardt with Huber weights and a ridge to 1 (a protocol no fit point runs keeps
/// its common scale). A protocol the fit makes cheapest at exactly one fit point is taken out
/// (latency x kProtocolOutLatencyScale) and the rest refitted: one point fixes neither the
/// latency nor the bandwidth of its alpha-beta line, so such a segment only bends the envelope
/// through that point (n01 odd: an LL128 segment through 32 MiB alone, between LL <= 8 MiB and
/// Simple >= 64 MiB, put 16 MiB held out at +24%). Kept only when it lowers the Huber loss.
/// Needs at least 4 fit points.
void fit_protocol_scales_raw(const models::CollectiveEngine& e, CollectiveFit& entry, const OpData& d) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < d.bytes.size(); ++i) {
    if (d.fit[i]) idx.push_back(i);
  }
  if (idx.size() < 4) return;
  const auto l0 = entry.protocol_latency_scale, b0 = entry.protocol_bandwidth_scale;
  std::array<bool, 3> out{false, false, false};
  auto residuals = [&](const Eigen::VectorXd& p) {
    for (std::size_t k = 0; k < 3; ++k) {
      entry.protocol_latency_scale[k] =
          out[k] ? kProtocolOutLatencyScale : l0[k] * std::exp(p[static_cast<Eigen::Index>(k)]);
      entry.protocol_bandwidth_scale[k] = b0[k] * std::exp(p[static_cast<Eigen::Index>(k + 3)]);
    }
    const std::vector<double> t = choose_times(e, d);
    Eigen::VectorXd r(static_cast<Eigen::Index>(idx.size()));
    for (std::size_t j = 0; j < idx.size(); ++j)
      r[static_cast<Eigen::Index>(j)] = std::log(t[idx[j]] / d.time_s[idx[j]]);
    return r;
  };
  auto loss = [&](const Eigen::VectorXd& r) {
    const double sigma = std::max(robust_sigma(r, 0.01), 0.01);
    return huber_loss(r, sigma) * sigma;
  };
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(6);
  const double base_loss = loss(residuals(zero));
  // Grid start over the three latency scales, then Levenberg-Marquardt.
  auto fit_envelope = [&]() {
    Eigen::VectorXd best = zero;
    double best_loss = loss(residuals(zero));
    const double grid[] = {-1.5, 0.0, 1.5, 3.0};
    for (double x0 : grid) {
      for (double x1 : grid) {
        for (double x2 : grid) {
          Eigen::VectorXd q = zero;
          q << x0, x1, x2, 0, 0, 0;
          const double v = loss(residuals(q));
          if (v < best_loss - 1e-12) {
            best_loss = v;
            best = q;
          }
        }
      }
    }
    RobustOptions ro;
    ro.min_sigma = 0.01;
    ro.ridge = 1e-3;
    const RobustResult res = huber_nonlinear(residuals, best, zero, ro);
    return Eigen::VectorXd(res.params.cwiseMax(-6.9).cwiseMin(4.6));
  };
  Eigen::VectorXd p = fit_envelope();
  for (int round = 0; round < 3; ++round) {
    residuals(p);
    const std::vector<int> chosen = chosen_protocols(e, d);
    std::array<int, 3> count{0, 0, 0};
    for (std::size_t i : idx) ++count[static_cast<std::size_t>(chosen[i])];
    bool changed = false;
    for (std::size_t k = 0; k < 3; ++k) {
      if (count[k] == 1 && !out[k]) out[k] = changed = true;
    }
    if (!changed) break;
    p = fit_envelope();
  }
  if (loss(residuals(p)) < base_loss) {
    for (std::size_t k = 0; k < 3; ++k) {
      entry.protocol_latency_scale[k] = std::clamp(entry.protocol_latency_scale[k], 1e-3, kProtocolOutLatencyScale);
      entry.protocol_bandwidth_scale[k] = std::clamp(entry.protocol_bandwidth_scale[k], 1e-3, 100.0);
    }
  } else {
    entry.protocol_latency_scale = l0;
    entry.protocol_bandwidth_scale = b0;
  }
}

/// Inner two-fold hold-out over d's fit points (alternate fit points train, the others test,
/// then the reverse): the common scales, and with per_protocol also the per-protocol scales,
/// are refitted on the training half, the size correction is interpolated from it (ln ratio
/// linear in ln size, held at the ends, as CollectiveFit::correction), and the summed
/// |ln(predicted / measured)| over the test halves is returned. `entry` is restored.
std::array<double, 2> inner_holdout_error(const models::CollectiveEngine& e, CollectiveFit& entry, const OpData& d,
                                          bool per_protocol) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < d.bytes.size(); ++i) {
    if (d.fit[i]) idx.push_back(i);
  }
  const CollectiveFit saved = entry;
  std::array<double, 2> total{0.0, 0.0};
  for (std::size_t fold = 0; fold < 2; ++fold) {
    OpData train = d;
    for (std::size_t j = 0; j < idx.size(); ++j) train.fit[idx[j]] = j % 2 == fold;
    fit_scales(e, entry, train);
    if (per_protocol) fit_protocol_scales_raw(e, entry, train);
    const std::vector<double> t = choose_times(e, d);
    std::vector<double> xs, ys;
    for (std::size_t j = fold; j < idx.size(); j += 2) {
      xs.push_back(std::log(d.bytes[idx[j]]));
      ys.push_back(std::log(d.time_s[idx[j]] / t[idx[j]]));
    }
    for (std::size_t j = 1 - fold; j < idx.size(); j += 2) {
      const double x = std::log(d.bytes[idx[j]]);
      double c = x <= xs.front() ? ys.front() : ys.back();
      for (std::size_t k = 0; k + 1 < xs.size(); ++k) {
        if (x >= xs[k] && x <= xs[k + 1] && xs[k + 1] > xs[k]) {
          c = ys[k] + (ys[k + 1] - ys[k]) * (x - xs[k]) / (xs[k + 1] - xs[k]);
          break;
        }
      }
      total[fold] += std::fabs(std::log(t[idx[j]] / d.time_s[idx[j]]) + c);
    }
    entry = saved;
  }
  return total;
}

}  // namespace

models::CollectiveChoice fit_scales(const models::CollectiveEngine& e, CollectiveFit& entry, const OpData& d) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < d.bytes.size(); ++i) {
    if (d.fit[i]) idx.push_back(i);
  }
  if (idx.empty()) return {};
  const double a0 = entry.latency_scale, b0 = entry.bandwidth_scale;
  auto residuals = [&](const Eigen::VectorXd& p) {
    entry.latency_scale = a0 * std::exp(p[0]);
    entry.bandwidth_scale = b0 * std::exp(p[1]);
    const std::vector<double> t = choose_times(e, d);
    Eigen::VectorXd r(static_cast<Eigen::Index>(idx.size()));
    for (std::size_t j = 0; j < idx.size(); ++j)
      r[static_cast<Eigen::Index>(j)] = std::log(t[idx[j]] / d.time_s[idx[j]]);
    return r;
  };
  RobustOptions ro;
  ro.min_sigma = 0.01;
  ro.ridge = 1e-4;
  // Coarse grid for a start (the model is a minimum over protocols and algorithms: not convex).
  Eigen::VectorXd best(2);
  best << 0, 0;
  double best_loss = 1e300;
  // la = -2 .. 4 in steps of 0.5, lb = -3 .. 1.5 in steps of 0.25 (every value exact in binary).
  for (int ia = 0; ia <= 12; ++ia) {
    const double la = -2.0 + 0.5 * ia;
    for (int ib = 0; ib <= 18; ++ib) {
      const double lb = -3.0 + 0.25 * ib;
      Eigen::VectorXd p(2);
      p << la, lb;
      const Eigen::VectorXd r = residuals(p);
      const double loss = huber_loss(r, std::max(robust_sigma(r, 0.01), 0.01)) / std::max(robust_sigma(r, 0.01), 0.01);
      const double total = loss + 1e-6 * p.squaredNorm();
      if (total < best_loss) {
        best_loss = total;
        best = p;
      }
    }
  }
  const Eigen::VectorXd prior = Eigen::VectorXd::Zero(2);
  const RobustResult res = huber_nonlinear(residuals, best, prior, ro);
  const Eigen::VectorXd p = res.params.cwiseMax(-6.9).cwiseMin(4.6);  // scales within [1e-3, 100]
  entry.latency_scale = std::clamp(a0 * std::exp(p[0]), 1e-3, 1000.0);
  entry.bandwidth_scale = std::clamp(b0 * std::exp(p[1]), 1e-3, 100.0);
  models::CollectiveCall call;
  call.op = d.cop;
  call.ranks = call_ranks(d);
  call.bytes = d.bytes[idx.back()];
  return e.choose(call);
}

void fit_protocol_scales(const models::CollectiveEngine& e, CollectiveFit& entry, const OpData& d) {
  if (std::count(d.fit.begin(), d.fit.end(), true) < 8) return;
  const std::array<double, 2> common = inner_holdout_error(e, entry, d, false);
  const std::array<double, 2> per_protocol = inner_holdout_error(e, entry, d, true);
  if (per_protocol[0] < common[0] && per_protocol[1] < common[1]) fit_protocol_scales_raw(e, entry, d);
}

}  // namespace traincast::calibrate
