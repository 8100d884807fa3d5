// The collectives part of a profile fit. See collective_fit.h.

#include "calibrate/fit/collective_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "calibrate/fit/collective_points.h"
#include "calibrate/fit/collective_scales.h"
#include "calibrate/fit/fit_helpers.h"
#include "calibrate/fit/link_fraction_check.h"
#include "models/collectives/collective_engine.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::calibrate {
namespace {

using models::CalibrationProfile;
using models::CollectiveFit;
using models::kMaxLinkFraction;

/// A simulator, flow network, cluster and collective engine on cs, for closed-form engine calls
/// (built in that order: each takes the ones before it).
struct EngineOn {
  explicit EngineOn(const models::ClusterSpec& cs) : net(sim), cluster(cs, net), e(sim, net, cluster) {}
  sim::Simulator sim;
  sim::FlowNetwork net;
  const models::Cluster cluster;
  models::CollectiveEngine e;
};

/// What the first pass fitted per op (index as ops): the bottleneck link kind at the largest fit
/// size, the latency (a) and bandwidth (b) scales on the datasheet defaults, and, for ops whose
/// PCIe deficit is attributed to the GPUs' both-direction budget, the budget each one implies
/// (0 = not such an op).
struct FirstPass {
  std::vector<models::LinkKind> kinds;
  std::vector<double> a, b;
  std::vector<double> duplex;
};

/// The ranks that stand for d in engine calls: d.ranks, or for sendrecv the pair of sendrecv_perf's
/// ring (rank k -> k + 1 mod n, all running at once; nccl-tests times the slowest) with the
/// largest bandwidth term at d's largest size. On several nodes that is a pair across the network,
/// not the first pair (NVLink): r03 (80 H100 ranks) runs 15.2 GB/s per node-crossing pair, which
/// fitted through the first pair read as an NVLink efficiency of 0.034.
std::vector<int> bounding_pair(const models::CollectiveEngine& e, const OpData& d) {
  if (d.cop != models::CollectiveOp::send_recv || d.ranks.size() < 2 || d.bytes.empty()) return d.ranks;
  models::CollectiveCall call;
  call.op = d.cop;
  call.bytes = d.bytes.back();
  std::vector<int> best{d.ranks[0], d.ranks[1]};
  double best_s = -1;
  for (std::size_t k = 0; k < d.ranks.size(); ++k) {
    call.ranks = {d.ranks[k], d.ranks[(k + 1) % d.ranks.size()]};
    if (call.ranks[0] == call.ranks[1]) continue;
    const double s = e.choose(call).bandwidth_s;
    if (s > best_s * (1 + 1e-12)) {  // the first of equals: deterministic
      best_s = s;
      best = call.ranks;
    }
  }
  return best;
}

bool has_fit_points(const OpData& d) {
  return std::any_of(d.fit.begin(), d.fit.end(), [](bool f) { return f; });
}

/// The profile with one CollectiveFit (unit scales) per op, keyed by its op and rank count.
std::shared_ptr<CalibrationProfile> profile_of_ops(const std::vector<OpData>& ops) {
  auto P = std::make_shared<CalibrationProfile>();
  for (const OpData& d : ops) {
    CollectiveFit f;
    f.op = d.cop;
    f.num_ranks = d.key_ranks;
    P->collectives.push_back(f);
  }
  return P;
}

/// First pass on the datasheet defaults: sets each op's call ranks (bounding_pair), refuses a log
/// from other hardware (check_link_fraction) and fits each op's common scales into P.
FirstPass fit_each_op(const EngineOn& s, std::vector<OpData>& ops, CalibrationProfile& P, const FitOptions& o) {
  const models::CollectiveEngine& e = s.e;
  FirstPass f;
  f.kinds.resize(ops.size());
  f.a.resize(ops.size());
  f.b.resize(ops.size());
  f.duplex.assign(ops.size(), 0.0);
  for (OpData& d : ops) d.call_ranks = bounding_pair(e, d);
  for (std::size_t i = 0; i < ops.size(); ++i) check_link_fraction(e, s.cluster, s.net, ops[i], o);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const models::CollectiveChoice c = fit_scales(e, P.collectives[i], ops[i]);
    f.kinds[i] = c.bottleneck;
    f.a[i] = P.collectives[i].latency_scale;
    f.b[i] = P.collectives[i].bandwidth_scale;
    // A PCIe-bound op slower than the model whose GPUs send and receive over their PCIe links
    // says nothing about one-way PCIe: its deficit is the both-direction budget D that makes
    // the GPU links bind at the fitted rate, (up + down) / (D x capacity) = link time / b.
    // (Measured, n11a-e: all_reduce reaches 4 GB/s each way, one-way broadcast 11.1 through the
    // same switch uplink that all_reduce loads with 8: the uplink is not what limits it.)
    if (c.bottleneck == models::LinkKind::pcie && c.duplex_load_seconds_per_byte > 0 && f.b[i] < 1 &&
        c.link_seconds_per_byte > 0)
      f.duplex[i] = c.duplex_load_seconds_per_byte * f.b[i] / c.link_seconds_per_byte;
  }
  return f;
}

/// Profile-wide link efficiency of each bottleneck kind: NCCL's default x the median b of the
/// ops with fit points bounded by it (one-way evidence only for PCIe), clipped to
/// kMaxLinkFraction.
void set_link_efficiencies(const models::CollectiveEngine& e, const std::vector<OpData>& ops, const FirstPass& f,
                           CalibrationProfile& P, std::vector<std::string>* notes) {
  for (int k = 1; k < 6; ++k) {
    std::vector<double> bk;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (static_cast<int>(f.kinds[i]) == k && f.duplex[i] == 0 && has_fit_points(ops[i])) bk.push_back(f.b[i]);
    }
    if (bk.empty()) continue;
    const double eff = e.default_efficiency(static_cast<models::LinkKind>(k)) * median(bk);
    // Above kMaxLinkFraction the fitted ops ran faster than the model's link, not faster than
    // the link (check_link_fraction refused those): the profile-wide efficiency, what other
    // collectives use, is clipped, and each op's bandwidth_scale (below) keeps its own rate.
    P.link_efficiency[k] = std::clamp(eff, 1e-3, kMaxLinkFraction);
    if (eff > kMaxLinkFraction && notes) {
      std::ostringstream s;
      s << link_name(static_cast<models::LinkKind>(k)) << " link efficiency " << eff << " clipped to "
        << kMaxLinkFraction << " (a link carries at most its line rate); the fitted ops' bandwidth_scale keeps "
        << "their measured rate";
      notes->push_back(s.str());
    }
  }
}

/// The PCIe both-direction budget: the median of the budgets the duplex ops with fit points
/// imply, clipped to models::kMaxDuplexFraction.
void set_pcie_duplex_efficiency(const std::vector<OpData>& ops, const FirstPass& f, CalibrationProfile& P,
                                std::vector<std::string>* notes) {
  std::vector<double> dk;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (f.duplex[i] > 0 && has_fit_points(ops[i])) dk.push_back(f.duplex[i]);
  }
  if (!dk.empty()) {
    // Clipped as the link efficiencies above (each op's bandwidth_scale keeps its rate).
    const double d = median(dk);
    P.pcie_duplex_efficiency = std::clamp(d, 1e-3, models::kMaxDuplexFraction);
    if (d > models::kMaxDuplexFraction && notes) {
      std::ostringstream s;
      s << "PCIe duplex efficiency " << d << " clipped to " << models::kMaxDuplexFraction
        << " (a link carries at most its line rate each way); the fitted ops' bandwidth_scale keeps their "
           "measured rate";
      notes->push_back(s.str());
    }
  }
}

/// Each op's scales relative to the profile-wide values just set (the op's own rate kept).
void rescale_ops(const models::CollectiveEngine& e, const FirstPass& f, CalibrationProfile& P) {
  for (std::size_t i = 0; i < P.collectives.size(); ++i) {
    CollectiveFit& c = P.collectives[i];
    c.latency_scale = f.a[i] / P.latency_scale;
    const int k = static_cast<int>(f.kinds[i]);
    if (f.duplex[i] > 0) {
      c.bandwidth_scale = f.duplex[i] / *P.pcie_duplex_efficiency;
    } else if (k > 0 && P.link_efficiency[k]) {
      c.bandwidth_scale = f.b[i] * e.default_efficiency(f.kinds[i]) / *P.link_efficiency[k];
    }
  }
}

/// Size correction of d: measured / simulated time at the fit sizes on cs (repeated sizes: mean
/// in ln), Hampel-filtered in ln.
std::vector<models::CollectiveSizePoint> size_correction(const models::ClusterSpec& cs, const OpData& d) {
  const std::vector<double> t = simulated_times(cs, d);
  std::vector<double> bytes, ln_ratio;
  for (std::size_t j = 0; j < d.bytes.size(); ++j) {
    if (!d.fit[j] || !(t[j] > 0)) continue;
    const double r = std::log(d.time_s[j] / t[j]);
    if (!bytes.empty() && d.bytes[j] == bytes.back()) {
      ln_ratio.back() = 0.5 * (ln_ratio.back() + r);  // repeated size: mean
      continue;
    }
    bytes.push_back(d.bytes[j]);
    ln_ratio.push_back(r);
  }
  // Hampel identifier (window of 2 neighbours each side): a point further than 3 robust sigmas
  // (1.4826 x MAD of the window, at least 2% in ln) from its window's median is an outlier and
  // takes the median's value; the others are kept exactly.
  std::vector<models::CollectiveSizePoint> corr;
  for (std::size_t j = 0; j < bytes.size(); ++j) {
    double v = ln_ratio[j];
    const std::size_t half = std::min({std::size_t{2}, j, bytes.size() - 1 - j});
    const std::size_t lo = j - half, hi = j + half;
    if (half >= 1) {
      std::vector<double> w(ln_ratio.begin() + static_cast<std::ptrdiff_t>(lo),
                            ln_ratio.begin() + static_cast<std::ptrdiff_t>(hi) + 1);
      const double med = median(w);
      for (double& x : w) x = std::fabs(x - med);
      const double sigma = std::max(1.4826 * median(w), 0.02);
      if (std::fabs(v - med) > 3 * sigma) v = med;
    }
    corr.push_back({bytes[j], std::clamp(std::exp(v), 1e-2, 100.0)});
  }
  return corr;
}

/// "all_reduce on 8 GPUs: latency x.., bandwidth x.. (bottleneck: ...), alpha .. us, busbw at .."
std::string fit_note(const models::CollectiveEngine& e, const OpData& d, const CalibrationProfile& P, std::size_t i,
                     const FirstPass& f) {
  std::ostringstream s;
  s << d.name << " on " << d.ranks.size() << " GPUs: latency x" << P.latency_scale * P.collectives[i].latency_scale
    << ", bandwidth x" << P.collectives[i].bandwidth_scale << " (bottleneck: ";
  if (f.duplex[i] > 0) {
    s << "GPU PCIe links both ways, budget " << *P.pcie_duplex_efficiency;
  } else {
    const int k = static_cast<int>(f.kinds[i]);
    s << link_name(f.kinds[i]) << " links, efficiency "
      << (k > 0 && P.link_efficiency[k] ? *P.link_efficiency[k] : e.default_efficiency(f.kinds[i]));
  }
  s << "), alpha " << P.collectives[i].alpha_s * 1e6 << " us, busbw at " << d.bytes.back() << " B "
    << P.collectives[i].busbw_gb_per_s << " GB/s";
  return s.str();
}

/// Below this share of the smallest fit size's measured time, the model's default latency is not
/// seen by the fit: a latency scale fitted there is set by the curvature of large sizes' times, not
/// by their latency (n09, 128 MiB to 1 GiB: x30 at 0.6%). 5%: the held-out error the shared logs
/// reach at >= 1 MiB (docs/calibration.md: within 5% for 14 of their 19 logs), so a latency below
/// it is within the fit's own error.
constexpr double kLatencySeenShare = 0.05;

/// "<op> on N GPUs: latency xS is not constrained: ..." when no fit size of d is small enough for
/// its default latency (alpha0_s, the unscaled model's time of 1 byte) to be kLatencySeenShare of
/// its measured time; "" otherwise. Names the smallest size and the size below which one would.
std::string latency_unconstrained_note(const OpData& d, double alpha0_s, double latency_scale) {
  std::size_t smallest = d.bytes.size();
  for (std::size_t j = 0; j < d.bytes.size(); ++j)
    if (d.fit[j] && d.time_s[j] > 0 && (smallest == d.bytes.size() || d.bytes[j] < d.bytes[smallest])) smallest = j;
  if (smallest == d.bytes.size() || !(alpha0_s > 0)) return "";
  const double share = alpha0_s / d.time_s[smallest];
  if (share >= kLatencySeenShare) return "";
  // Where the default latency is kLatencySeenShare of the time, at the log's largest rate.
  const double rate = d.bytes.back() / d.time_s.back();
  const double seen_bytes = alpha0_s * rate * (1 / kLatencySeenShare - 1);
  const auto g = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return std::string(text);
  };
  const auto g4 = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", v);
    return std::string(text);
  };
  std::ostringstream s;
  s << d.name << " on " << d.ranks.size() << " GPUs: latency x" << g(latency_scale)
    << " is not constrained: the smallest fit size, " << static_cast<long long>(d.bytes[smallest]) << " B, takes "
    << g4(d.time_s[smallest] * 1e6) << " us, of which the model's default latency (" << g(alpha0_s * 1e6) << " us) is "
    << g(share * 100) << "%; no size below about " << static_cast<long long>(seen_bytes)
    << " B, where it is 5% or more, is in the fit (expected a log down to small sizes, e.g. nccl-tests -b 8, for "
       "the latency to be measured; here it only shapes the large sizes' times)";
  return s.str();
}

/// Derived alpha-beta view of each fit: alpha_s (the time of 1 byte) and the busbw at the
/// largest size, with one note per op.
void set_alpha_beta(const models::ClusterSpec& cs, const std::vector<OpData>& ops, const FirstPass& f,
                    CalibrationProfile& P, std::vector<std::string>* notes) {
  const EngineOn s(cs);
  const models::CollectiveEngine& e = s.e;
  models::ClusterSpec plain = cs;
  plain.profile = nullptr;
  const EngineOn s0(plain);  // the datasheet defaults: the latency before any scale
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpData& d = ops[i];
    models::CollectiveCall call;
    call.op = d.cop;
    call.ranks = call_ranks(d);
    call.bytes = 1;
    P.collectives[i].alpha_s = e.choose(call).seconds();
    call.bytes = d.bytes.back();
    const double t = e.choose(call).seconds();
    const double factor = models::CollectiveEngine::busbw_factor(d.cop, static_cast<int>(d.ranks.size()));
    P.collectives[i].busbw_gb_per_s = t > 0 ? call.bytes / t * factor / 1e9 : 0;
    if (notes) notes->push_back(fit_note(e, d, P, i, f));
    call.bytes = 1;
    const std::string loose =
        latency_unconstrained_note(d, s0.e.choose(call).seconds(), P.latency_scale * P.collectives[i].latency_scale);
    if (notes && !loose.empty()) notes->push_back(loose);
  }
}

}  // namespace

void fit_collectives(const models::MeasurementSet& m, const FitOptions& o, CalibrationProfile& out,
                     std::vector<std::string>* notes) {
  std::vector<OpData> ops = op_groups(m, o);
  if (ops.empty()) return;
  const std::shared_ptr<CalibrationProfile> P = profile_of_ops(ops);
  models::ClusterSpec cs = *o.cluster;
  cs.profile = P;
  FirstPass f;
  {
    const EngineOn s(cs);
    f = fit_each_op(s, ops, *P, o);
    // Profile-wide: latency scale, the link efficiency of each bottleneck kind (one-way evidence
    // only for PCIe), and the PCIe both-direction budget.
    P->latency_scale = median(f.a);
    set_link_efficiencies(s.e, ops, f, *P, notes);
    set_pcie_duplex_efficiency(ops, f, *P, notes);
    rescale_ops(s.e, f, *P);
  }
  // Refit each op on top of the profile-wide values (new plans: link efficiencies changed).
  {
    const EngineOn s(cs);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      fit_scales(s.e, P->collectives[i], ops[i]);
      fit_protocol_scales(s.e, P->collectives[i], ops[i]);
    }
  }
  // Size corrections: measured / simulated at the fit sizes, Hampel-filtered in ln.
  for (std::size_t i = 0; i < ops.size(); ++i) P->collectives[i].size_correction = size_correction(cs, ops[i]);
  set_alpha_beta(cs, ops, f, *P, notes);
  out.latency_scale = P->latency_scale;
  out.link_efficiency = P->link_efficiency;
  out.pcie_duplex_efficiency = P->pcie_duplex_efficiency;
  out.collectives = P->collectives;
}

}  // namespace traincast::calibrate
