// Fitting and validating calibration profiles. See profile_fit.h.

#include "calibrate/fit/profile_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "calibrate/fit/power_fit.h"
#include "calibrate/fit/robust.h"
#include "models/collectives/collective_engine.h"
#include "models/collectives/nccl_tests.h"
#include "models/compute/compute_model.h"
#include "models/hardware/catalog.h"
#include "models/hardware/cluster.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::calibrate {
namespace {

using models::CalibrationProfile;
using models::CollectiveFit;

const char* bandwidth_name(models::BandwidthSampleKind k) {
  static const char* names[] = {"hbm_copy", "hbm_read", "hbm_write", "h2d", "d2h", "d2d_peer"};
  return names[static_cast<int>(k)];
}

const char* link_name(models::LinkKind k) {
  static const char* names[] = {"other", "NVLink", "PCIe", "socket", "NIC", "fabric"};
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

/// Whether index i (in a group's order) is a fit point under `h`.
bool is_fit(Holdout h, std::size_t i) {
  if (h == Holdout::none) return true;
  return (i % 2 == 0) == (h == Holdout::odd);
}

double median(std::vector<double> v) {
  if (v.empty()) return 1.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double geo_error(const std::vector<double>& ratios) { return models::geometric_mean_error(ratios); }

/// One operation's points.
struct OpData {
  models::NcclTestsOp op{};
  models::CollectiveOp cop{};
  std::string name;
  std::vector<int> ranks;
  /// The ranks of the engine call that stands for the op: every rank, or for sendrecv the one
  /// pair (rank k -> k + 1 mod n) of sendrecv_perf's ring whose links bound the run (set by
  /// fit_profile before anything is fitted; {ranks[0], ranks[1]} until then).
  std::vector<int> call_ranks;
  int key_ranks = 0;  // CollectiveFit::num_ranks (sendrecv: 2)
  int word_bytes = 4;
  std::vector<double> bytes, time_s;
  std::vector<std::string> where;
  std::vector<bool> fit;
};

std::vector<int> call_ranks(const OpData& d) {
  if (!d.call_ranks.empty()) return d.call_ranks;
  return d.cop == models::CollectiveOp::send_recv ? std::vector<int>{d.ranks[0], d.ranks[1]} : d.ranks;
}

std::vector<int> all_ranks(const models::ClusterSpec& cs) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const models::Cluster c(cs, net);
  std::vector<int> r(static_cast<std::size_t>(c.num_gpus()));
  for (int i = 0; i < c.num_gpus(); ++i) r[i] = i;
  return r;
}

/// Groups the collective samples per op, sorted by size, marked by the holdout.
std::vector<OpData> op_groups(const models::MeasurementSet& m, const FitOptions& o) {
  std::vector<OpData> out;
  if (m.collectives.empty()) return out;
  if (!o.cluster) {
    throw std::invalid_argument(
        "collective points need a system: --base must name a node template or a scenario file (got \"" + o.base +
        "\")");
  }
  const std::vector<int> ranks = o.gpus.empty() ? all_ranks(*o.cluster) : o.gpus;
  std::map<std::string, std::size_t> index;
  for (const models::CollectiveSample& s : m.collectives) {
    const models::NcclTestsOp op = models::parse_nccl_tests_op(s.op);
    const std::string name(models::nccl_tests_op_name(op));
    if (s.num_ranks > 0 && s.num_ranks != static_cast<int>(ranks.size())) {
      throw std::invalid_argument(s.where + ": measured on " + std::to_string(s.num_ranks) +
                                  " ranks, the base selects " + std::to_string(ranks.size()) +
                                  " GPUs (expected --gpus with " + std::to_string(s.num_ranks) +
                                  " ids, or a matching --base)");
    }
    auto it = index.find(name);
    if (it == index.end()) {
      OpData d;
      d.op = op;
      d.cop = models::collective_op_of(op);
      d.name = name;
      d.ranks = ranks;
      d.key_ranks = op == models::NcclTestsOp::sendrecv ? 2 : static_cast<int>(ranks.size());
      d.word_bytes = s.dtype.empty() ? 4 : models::nccl_tests_type_bytes(s.dtype);
      it = index.emplace(name, out.size()).first;
      out.push_back(std::move(d));
    }
    OpData& d = out[it->second];
    d.bytes.push_back(s.size_bytes);
    d.time_s.push_back(s.time_us * 1e-6);
    d.where.push_back(s.where);
  }
  for (OpData& d : out) {
    std::vector<std::size_t> order(d.bytes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return d.bytes[a] < d.bytes[b]; });
    OpData s = d;
    for (std::size_t i = 0; i < order.size(); ++i) {
      s.bytes[i] = d.bytes[order[i]];
      s.time_s[i] = d.time_s[order[i]];
      s.where[i] = d.where[order[i]];
    }
    // Distinct sizes are indexed for the holdout (repeated sizes share their size's index).
    s.fit.assign(s.bytes.size(), true);
    std::size_t k = 0;
    for (std::size_t i = 0; i < s.bytes.size(); ++i) {
      if (i > 0 && s.bytes[i] != s.bytes[i - 1]) ++k;
      s.fit[i] = is_fit(o.holdout, k);
    }
    d = std::move(s);
  }
  return out;
}

/// Closed-form model time of `d` at its sizes, with the engine's current profile.
std::vector<double> choose_times(const models::CollectiveEngine& e, const OpData& d) {
  std::vector<double> t(d.bytes.size());
  models::CollectiveCall call;
  call.op = d.cop;
  call.ranks = call_ranks(d);
  for (std::size_t i = 0; i < t.size(); ++i) {
    call.bytes = d.bytes[i];
    t[i] = e.choose(call).seconds();
  }
  return t;
}

/// Fits entry's (latency_scale, bandwidth_scale) to d's fit points through engine e (whose
/// profile holds `entry`). Returns what the engine runs at the largest fit size (its bottleneck
/// link and loads; LinkKind::other when there are no fit points).
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
  for (double la = -2.0; la <= 4.0 + 1e-9; la += 0.5) {
    for (double lb = -3.0; lb <= 1.5 + 1e-9; lb += 0.25) {
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

/// Per-protocol scales (fit_protocol_scales_raw) when they predict better than the common scales
/// alone in both halves of an inner two-fold hold-out of the fit points (inner_holdout_error):
/// six more parameters are kept only where the data show protocol regimes that the neighbours
/// predict. Needs at least 8 fit points.
void fit_protocol_scales(const models::CollectiveEngine& e, CollectiveFit& entry, const OpData& d) {
  if (std::count(d.fit.begin(), d.fit.end(), true) < 8) return;
  const std::array<double, 2> common = inner_holdout_error(e, entry, d, false);
  const std::array<double, 2> per_protocol = inner_holdout_error(e, entry, d, true);
  if (per_protocol[0] < common[0] && per_protocol[1] < common[1]) fit_protocol_scales_raw(e, entry, d);
}

/// Simulated times (the nccl-tests path, as validate uses) of d at its sizes on cs.
std::vector<double> simulated_times(const models::ClusterSpec& cs, const OpData& d) {
  models::NcclTestsOptions opt;
  opt.op = d.op;
  opt.gpus = d.ranks;
  opt.word_bytes = d.word_bytes;
  const std::vector<models::NcclTestsResult> r = models::simulate_nccl_tests(cs, opt, d.bytes);
  std::vector<double> t(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) t[i] = r[i].time_s;
  return t;
}

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

/// Physical range of the fraction of a link's datasheet line rate that a measured collective
/// reaches: below kMinLinkFraction or above models::kMaxLinkFraction (calibration_profile.h: a
/// link cannot carry more than its line rate) the log did not run over the base's links. Lower: measured on
/// the shared logs (../shared/data/nccl-tests), each on its own scenario, this fraction is 0.39
/// (n14, H100 PCIe pair over an NVLink bridge) to 0.91 (n18, Slingshot NICs), and 0.1998 for the
/// raw log r05b (2x8 H100 with NCCL_ALGO=Ring: the nodes of NVIDIA/nccl-tests#290, which ran at a
/// quarter of their links' rate: a degraded cluster, what an operator calibrates to find out);
/// NCCL's own figures are 0.76 (PCIe) to 0.96 (NIC) (LinkEfficiency); a log from other hardware
/// is far outside (the RTX 2080 Ti all_reduce of n11a, 4.00 GB/s over PCIe gen3, on an H100
/// base's NVLink: 0.0089). 0.1 leaves a factor 2 below the slowest real log.
constexpr double kMinLinkFraction = 0.1;
using models::kMaxLinkFraction;

std::string fmt_g3(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

/// Refuses (std::invalid_argument, naming the row) an op whose largest fit size, where the
/// model's bandwidth term is at least 4x its latency term (the size says something about the
/// links), reaches a fraction of the bottleneck link's datasheet rate outside [kMinLinkFraction,
/// kMaxLinkFraction]. The fraction is NCCL's default efficiency x the bottleneck link's time per
/// byte at that efficiency (the phase with the largest, without protocol factors) x bytes / the
/// measured time: the measured time includes latency and other phases, so the fraction is a
/// lower bound of the true one (above the upper limit is certain; below the lower one the
/// bandwidth term alone, at 4x the latency, cannot account for the gap). e's profile must hold
/// no fitted scales for d yet.
void check_link_fraction(const models::CollectiveEngine& e, const models::Cluster& cluster, const sim::FlowNetwork& net,
                         const OpData& d, const FitOptions& o) {
  std::size_t j = d.bytes.size();
  for (std::size_t i = 0; i < d.bytes.size(); ++i) {
    if (d.fit[i]) j = i;  // sorted by size: the last fit point is the largest
  }
  if (j == d.bytes.size() || !(d.time_s[j] > 0)) return;
  models::CollectiveCall call;
  call.op = d.cop;
  call.ranks = call_ranks(d);
  call.bytes = d.bytes[j];
  const models::CollectiveChoice c = e.choose(call);
  if (c.bottleneck == models::LinkKind::other || !(c.bandwidth_s >= 4 * c.latency_s)) return;
  // Time on the bottleneck link alone at NCCL's efficiency (no protocol factor, no tuning
  // correction such as NCCL's tree factors: they are not link limits).
  const double fraction = e.default_efficiency(c.bottleneck) * c.link_seconds_per_byte * d.bytes[j] / d.time_s[j];
  if (fraction >= kMinLinkFraction && fraction <= kMaxLinkFraction) return;
  // The slowest link of that kind on the ring of the op's GPUs: its datasheet rate and name.
  double capacity = 0;
  std::string link;
  for (std::size_t k = 0; k < call.ranks.size(); ++k) {
    const int src = call.ranks[k], dst = call.ranks[(k + 1) % call.ranks.size()];
    if (src == dst) continue;
    for (const sim::ResourceId r : cluster.route(src, dst)) {
      if (cluster.link_kind(r) != c.bottleneck) continue;
      if (capacity == 0 || net.capacity(r) < capacity) {
        capacity = net.capacity(r);
        link = net.resource_name(r);
      }
    }
  }
  const double busbw =
      d.bytes[j] / d.time_s[j] * models::CollectiveEngine::busbw_factor(d.cop, static_cast<int>(d.ranks.size())) / 1e9;
  char num[64];
  std::ostringstream s;
  // 3 significant digits, 4 where 3 would print the limit itself (r05b: 0.1998, not "0.2").
  const double shown = std::stod(fmt_g3(fraction));
  const int digits = shown == kMinLinkFraction || shown == kMaxLinkFraction ? 4 : 3;
  std::snprintf(num, sizeof num, "%.0f B on %zu GPUs measured busbw %.2f GB/s, %.*g", d.bytes[j], d.ranks.size(), busbw,
                digits, fraction);
  s << d.where[j] << ": " << d.name << " of " << num << " of the line rate of the base's " << link_name(c.bottleneck)
    << " links";
  if (capacity > 0) {
    std::snprintf(num, sizeof num, "%.1f", capacity / 1e9);
    s << " (" << link << ": " << num << " GB/s per direction, datasheet)";
  }
  s << " (expected " << kMinLinkFraction << " to " << kMaxLinkFraction << "): the log "
    << (fraction < kMinLinkFraction ? "did not run over" : "ran faster than") << " the links of --base " << o.base
    << " (" << cluster.gpu_spec(0).name << ", node template " << cluster.spec().node_template
    << (o.gpus.empty() ? ""
                       : ", --gpus " +
                             [&] {
                               std::string g;
                               for (int x : o.gpus) g += (g.empty() ? "" : ",") + std::to_string(x);
                               return g;
                             }())
    << "); give a --base of the system the log ran on (a scenario in scenarios/nccl/, or a node template with "
       "its GPU) and --gpus naming the GPUs it used";
  throw std::invalid_argument(s.str());
}

void fit_collectives(const models::MeasurementSet& m, const FitOptions& o, CalibrationProfile& out,
                     std::vector<std::string>* notes) {
  std::vector<OpData> ops = op_groups(m, o);
  if (ops.empty()) return;
  auto P = std::make_shared<CalibrationProfile>();
  for (const OpData& d : ops) {
    CollectiveFit f;
    f.op = d.cop;
    f.num_ranks = d.key_ranks;
    P->collectives.push_back(f);
  }
  models::ClusterSpec cs = *o.cluster;
  cs.profile = P;
  std::vector<models::LinkKind> kinds(ops.size());
  std::vector<double> a(ops.size()), b(ops.size());
  // Ops whose PCIe deficit is attributed to the GPUs' both-direction budget, with the budget
  // each one implies (0 = not such an op).
  std::vector<double> duplex(ops.size(), 0.0);
  {
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const models::Cluster cluster(cs, net);
    models::CollectiveEngine e(sim, net, cluster);
    for (OpData& d : ops) d.call_ranks = bounding_pair(e, d);
    for (std::size_t i = 0; i < ops.size(); ++i) check_link_fraction(e, cluster, net, ops[i], o);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const models::CollectiveChoice c = fit_scales(e, P->collectives[i], ops[i]);
      kinds[i] = c.bottleneck;
      a[i] = P->collectives[i].latency_scale;
      b[i] = P->collectives[i].bandwidth_scale;
      // A PCIe-bound op slower than the model whose GPUs send and receive over their PCIe links
      // says nothing about one-way PCIe: its deficit is the both-direction budget D that makes
      // the GPU links bind at the fitted rate, (up + down) / (D x capacity) = link time / b.
      // (Measured, n11a-e: all_reduce reaches 4 GB/s each way, one-way broadcast 11.1 through the
      // same switch uplink that all_reduce loads with 8: the uplink is not what limits it.)
      if (c.bottleneck == models::LinkKind::pcie && c.duplex_load_seconds_per_byte > 0 && b[i] < 1 &&
          c.link_seconds_per_byte > 0)
        duplex[i] = c.duplex_load_seconds_per_byte * b[i] / c.link_seconds_per_byte;
    }
    auto has_fit_points = [&](std::size_t i) {
      return std::any_of(ops[i].fit.begin(), ops[i].fit.end(), [](bool f) { return f; });
    };
    // Profile-wide: latency scale, the link efficiency of each bottleneck kind (one-way evidence
    // only for PCIe), and the PCIe both-direction budget.
    P->latency_scale = median(a);
    for (int k = 1; k < 6; ++k) {
      std::vector<double> bk;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (static_cast<int>(kinds[i]) == k && duplex[i] == 0 && has_fit_points(i)) bk.push_back(b[i]);
      }
      if (bk.empty()) continue;
      const double eff = e.default_efficiency(static_cast<models::LinkKind>(k)) * median(bk);
      // Above kMaxLinkFraction the fitted ops ran faster than the model's link, not faster than
      // the link (check_link_fraction refused those): the profile-wide efficiency, what other
      // collectives use, is clipped, and each op's bandwidth_scale (below) keeps its own rate.
      P->link_efficiency[k] = std::clamp(eff, 1e-3, kMaxLinkFraction);
      if (eff > kMaxLinkFraction && notes) {
        std::ostringstream s;
        s << link_name(static_cast<models::LinkKind>(k)) << " link efficiency " << eff << " clipped to "
          << kMaxLinkFraction << " (a link carries at most its line rate); the fitted ops' bandwidth_scale keeps "
          << "their measured rate";
        notes->push_back(s.str());
      }
    }
    std::vector<double> dk;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (duplex[i] > 0 && has_fit_points(i)) dk.push_back(duplex[i]);
    }
    if (!dk.empty()) {
      // Clipped as the link efficiencies above (each op's bandwidth_scale keeps its rate).
      const double d = median(dk);
      P->pcie_duplex_efficiency = std::clamp(d, 1e-3, models::kMaxDuplexFraction);
      if (d > models::kMaxDuplexFraction && notes) {
        std::ostringstream s;
        s << "PCIe duplex efficiency " << d << " clipped to " << models::kMaxDuplexFraction
          << " (a link carries at most its line rate each way); the fitted ops' bandwidth_scale keeps their "
             "measured rate";
        notes->push_back(s.str());
      }
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      CollectiveFit& f = P->collectives[i];
      f.latency_scale = a[i] / P->latency_scale;
      const int k = static_cast<int>(kinds[i]);
      if (duplex[i] > 0) {
        f.bandwidth_scale = duplex[i] / *P->pcie_duplex_efficiency;
      } else if (k > 0 && P->link_efficiency[k]) {
        f.bandwidth_scale = b[i] * e.default_efficiency(kinds[i]) / *P->link_efficiency[k];
      }
    }
  }
  // Refit each op on top of the profile-wide values (new plans: link efficiencies changed).
  {
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const models::Cluster cluster(cs, net);
    models::CollectiveEngine e(sim, net, cluster);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      fit_scales(e, P->collectives[i], ops[i]);
      fit_protocol_scales(e, P->collectives[i], ops[i]);
    }
  }
  // Size corrections: measured / simulated at the fit sizes, Hampel-filtered in ln.
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpData& d = ops[i];
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
    P->collectives[i].size_correction = std::move(corr);
  }
  // Derived alpha-beta view of each fit.
  {
    sim::Simulator sim;
    sim::FlowNetwork net(sim);
    const models::Cluster cluster(cs, net);
    models::CollectiveEngine e(sim, net, cluster);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const OpData& d = ops[i];
      models::CollectiveCall call;
      call.op = d.cop;
      call.ranks = call_ranks(d);
      call.bytes = 1;
      P->collectives[i].alpha_s = e.choose(call).seconds();
      call.bytes = d.bytes.back();
      const double t = e.choose(call).seconds();
      const double factor = models::CollectiveEngine::busbw_factor(d.cop, static_cast<int>(d.ranks.size()));
      P->collectives[i].busbw_gb_per_s = t > 0 ? call.bytes / t * factor / 1e9 : 0;
      if (notes) {
        std::ostringstream s;
        s << d.name << " on " << d.ranks.size() << " GPUs: latency x"
          << P->latency_scale * P->collectives[i].latency_scale << ", bandwidth x" << P->collectives[i].bandwidth_scale
          << " (bottleneck: ";
        if (duplex[i] > 0) {
          s << "GPU PCIe links both ways, budget " << *P->pcie_duplex_efficiency;
        } else {
          const int k = static_cast<int>(kinds[i]);
          s << link_name(kinds[i]) << " links, efficiency "
            << (k > 0 && P->link_efficiency[k] ? *P->link_efficiency[k] : e.default_efficiency(kinds[i]));
        }
        s << "), alpha " << P->collectives[i].alpha_s * 1e6 << " us, busbw at " << d.bytes.back() << " B "
          << P->collectives[i].busbw_gb_per_s << " GB/s";
        notes->push_back(s.str());
      }
    }
  }
  out.latency_scale = P->latency_scale;
  out.link_efficiency = P->link_efficiency;
  out.pcie_duplex_efficiency = P->pcie_duplex_efficiency;
  out.collectives = P->collectives;
}

void fit_gemm(const models::MeasurementSet& m, const FitOptions& o, CalibrationProfile& out,
              std::vector<std::string>* notes) {
  if (m.gemm.empty()) return;
  if (o.gpu.empty())
    throw std::invalid_argument("GEMM points need a GPU: --base must name a catalog GPU, node template or scenario");
  const models::GpuSpec& gpu = models::find_gpu(o.gpu);
  std::map<int, std::vector<const models::GemmSample*>> by;
  for (const auto& s : m.gemm) by[static_cast<int>(s.dtype)].push_back(&s);
  for (const auto& [dt, samples] : by) {
    const auto dtype = static_cast<models::Precision>(dt);
    const double peak = models::peak_flops(gpu, dtype);  // throws for a dtype the GPU lacks
    // A GEMM cannot beat the GPU's dense peak by more than models::kMaxGemmPeakFraction (the
    // boost clock's headroom, calibration_profile.h). A point above it is an outlier, left out of
    // the fit (the profile reader refuses efficiencies above it) or, when most points are, a sign
    // the measurements are from another GPU than --base or mistimed: then the fit is refused.
    std::size_t above_peak = 0;
    const models::GemmSample* fastest = nullptr;
    double fastest_ratio = 0;
    for (const models::GemmSample* g : samples) {
      const double ratio = 2 * g->m * g->n * g->k / (g->time_s * peak);
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
    std::vector<const models::GemmSample*> fit;
    int above_dropped = 0;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (!is_fit(o.holdout, i)) continue;
      const models::GemmSample* g = samples[i];
      if (2 * g->m * g->n * g->k / (g->time_s * peak) > models::kMaxGemmPeakFraction) {
        ++above_dropped;
        continue;
      }
      fit.push_back(g);
    }
    if (fit.empty()) continue;
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
    if (notes) {
      std::ostringstream s;
      s << "GEMM " << models::precision_name(dtype) << ": " << fit.size() << " fit points, surface robust sigma "
        << r.sigma * 100 << "% (ln eta), " << dropped << " outliers dropped";
      if (above_dropped > 0)
        s << ", " << above_dropped << " point(s) above " << models::kMaxGemmPeakFraction << "x the dense peak left out";
      notes->push_back(s.str());
    }
  }
}

void fit_bandwidth_and_launch(const models::MeasurementSet& m, const FitOptions& o, CalibrationProfile& out,
                              std::vector<std::string>* notes) {
  if (m.launch_back_to_back_s > 0) out.kernel_fixed_s = m.launch_back_to_back_s;
  if (m.bandwidth.empty()) return;
  if (o.gpu.empty())
    throw std::invalid_argument(
        "bandwidth points need a GPU: --base must name a catalog GPU, node template or scenario");
  const models::GpuSpec& gpu = models::find_gpu(o.gpu);
  // group: 0 hbm, 1 pcie, 2 nvlink
  std::map<int, std::vector<const models::BandwidthSample*>> by;
  for (const auto& s : m.bandwidth) {
    const int g = s.kind == models::BandwidthSampleKind::d2d_peer                                              ? 2
                  : (s.kind == models::BandwidthSampleKind::h2d || s.kind == models::BandwidthSampleKind::d2h) ? 1
                                                                                                               : 0;
    by[g].push_back(&s);
  }
  for (auto& [g, v] : by) {
    std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->size_bytes < b->size_bytes; });
    double capacity = 0;
    if (g == 0) capacity = gpu.hbm_bandwidth_bytes_per_s;
    if (g == 1) capacity = models::pcie_bytes_per_s(gpu.pcie_generation, gpu.pcie_lanes);
    if (g == 2) capacity = gpu.nvlink_links * gpu.nvlink_bytes_per_s_per_link;
    if (!(capacity > 0)) continue;
    std::vector<double> large, all;
    const double max_size = v.back()->size_bytes;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!is_fit(o.holdout, i)) continue;
      const double eff = v[i]->bytes / v[i]->time_s / capacity;
      all.push_back(eff);
      if (v[i]->size_bytes >= 64.0 * 1024 * 1024 || v[i]->size_bytes >= 0.25 * max_size) large.push_back(eff);
    }
    if (large.empty()) continue;
    // A median above the datasheet rate (kMaxLinkFraction, calibration_profile.h) is not noise:
    // the points are from another GPU than --base, or their byte counts are wrong (a copy counted
    // once where it reads and writes). Refused, as GEMMs above their peak are, rather than
    // written as an efficiency the profile reader refuses.
    if (median(large) > models::kMaxLinkFraction) {
      const char* what = g == 0 ? "HBM" : g == 1 ? "PCIe" : "NVLink peer";
      std::ostringstream e;
      e << v.back()->where << ": " << what << " bandwidth measured at " << median(large) << "x the datasheet's "
        << capacity / 1e9 << " GB/s of " << gpu.name << " (median of " << large.size()
        << " large points; expected at most " << models::kMaxLinkFraction
        << "x: no link carries more than its line rate): the measurements are from another GPU than --base, or "
           "their byte counts are wrong";
      throw std::invalid_argument(e.str());
    }
    const double eff = std::max(median(large), 1e-3);
    if (g == 0) out.memory_efficiency = eff;
    if (g == 1 && !out.link_efficiency[static_cast<int>(models::LinkKind::pcie)])
      out.link_efficiency[static_cast<int>(models::LinkKind::pcie)] = eff;
    if (g == 2 && !out.link_efficiency[static_cast<int>(models::LinkKind::nvlink)])
      out.link_efficiency[static_cast<int>(models::LinkKind::nvlink)] = eff;
    if (notes) {
      notes->push_back(std::string(g == 0   ? "HBM"
                                   : g == 1 ? "PCIe"
                                            : "NVLink peer") +
                       ": efficiency " + std::to_string(eff) + " of " + std::to_string(capacity / 1e9) +
                       " GB/s (median of " + std::to_string(large.size()) + " large fit points)");
    }
  }
}

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

}  // namespace

models::CalibrationProfile fit_profile(const models::MeasurementSet& m, const FitOptions& o,
                                       std::vector<std::string>* notes) {
  CalibrationProfile out;
  out.base = o.base;
  out.fit_options = fit_options_text(o);
  fit_collectives(m, o, out, notes);
  fit_gemm(m, o, out, notes);
  fit_bandwidth_and_launch(m, o, out, notes);
  const bool compute = !m.gemm.empty() || !m.bandwidth.empty() || m.launch_back_to_back_s > 0;
  if (compute) out.gpu = o.gpu;
  if (!m.power.empty()) {
    if (o.gpu.empty()) throw std::invalid_argument("burn samples need a GPU: --base must name a catalog GPU");
    const BurnFit burn =
        fit_burn(m.power, models::find_gpu(o.gpu), m.sm_clock_max_mhz, o.holdout != Holdout::none, notes);
    out.power_thermal = burn.overlay;
    out.gpu = o.gpu;
  }
  // What it was fitted on: the base's GPU, node template, nodes, NIC and the GPUs used.
  out.fitted_on.gpu = o.gpu;
  if (o.gpu.empty() && o.cluster)
    out.fitted_on.gpu =
        o.cluster->gpu.empty() ? models::find_node_template(o.cluster->node_template).gpu : o.cluster->gpu;
  if (o.cluster) {
    out.fitted_on.node_template = o.cluster->node_template;
    out.fitted_on.num_nodes = o.cluster->num_nodes;
    out.fitted_on.nic = o.cluster->nic;
  }
  for (std::size_t i = 0; i < o.gpus.size(); ++i) out.fitted_on.gpus += (i ? "," : "") + std::to_string(o.gpus[i]);
  return out;
}

Validation validate_profile(const std::shared_ptr<const models::CalibrationProfile>& profile,
                            const models::MeasurementSet& m, const FitOptions& o) {
  Validation v;
  auto unfitted = [&](const std::string& where) {
    for (const std::string& f : o.unfitted_files) {
      if (where.size() > f.size() && where.compare(0, f.size(), f) == 0 && where[f.size()] == ':') return true;
    }
    return false;
  };
  // Collectives.
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
      p.fit_point = d.fit[i] && !unfitted(p.where);
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
    // Model-free reference: held-out sizes from their fit neighbours (d is sorted by size).
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
    v.groups.push_back(g);
  }
  // GEMM.
  if (!m.gemm.empty()) {
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
        p.fit_point = is_fit(o.holdout, i) && !unfitted(p.where);
        (p.fit_point ? fitted : held).push_back(p.predicted / p.measured);
        v.points.push_back(p);
      }
      g.held_large = static_cast<int>(held.size()), g.fit_large = static_cast<int>(fitted.size());
      g.held_large_error = geo_error(held), g.fit_large_error = geo_error(fitted);
      v.groups.push_back(g);
    }
  }
  // Bandwidth.
  if (!m.bandwidth.empty()) {
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
      std::vector<double> held, fitted;
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
        p.fit_point = is_fit(o.holdout, i) && !unfitted(p.where);
        (p.fit_point ? fitted : held).push_back(p.predicted / p.measured);
        v.points.push_back(p);
      }
      g.held_large = static_cast<int>(held.size()), g.fit_large = static_cast<int>(fitted.size());
      g.held_large_error = geo_error(held), g.fit_large_error = geo_error(fitted);
      v.groups.push_back(g);
    }
  }
  return v;
}

std::string fit_options_text(const FitOptions& o) {
  std::string s = std::string("holdout=") + (o.holdout == Holdout::odd    ? "odd"
                                             : o.holdout == Holdout::even ? "even"
                                                                          : "none");
  if (!o.gpus.empty()) {
    s += "; gpus=";
    for (std::size_t i = 0; i < o.gpus.size(); ++i) s += (i ? "," : "") + std::to_string(o.gpus[i]);
  }
  return s;
}

void apply_fit_options_text(const std::string& text, FitOptions& o) {
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ';');) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    if (item == "holdout=odd") o.holdout = Holdout::odd;
    if (item == "holdout=even") o.holdout = Holdout::even;
    if (item == "holdout=none") o.holdout = Holdout::none;
    if (item.rfind("gpus=", 0) == 0) {
      try {
        o.gpus = models::parse_gpu_list(item.substr(5));
      } catch (const std::invalid_argument&) {
      }
    }
  }
}

}  // namespace traincast::calibrate
