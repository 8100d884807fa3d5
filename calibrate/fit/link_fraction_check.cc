// Refusing collective logs from other hardware than the base. See link_fraction_check.h.

#include "calibrate/fit/link_fraction_check.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>

#include "calibrate/fit/fit_helpers.h"
#include "models/calibration/calibration_profile.h"

namespace traincast::calibrate {
namespace {

using models::kMaxLinkFraction;

std::string fmt_g3(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

}  // namespace

namespace {

/// The refusal of row j, whose fraction of the bottleneck's line rate (choice c) is `fraction`.
[[noreturn]] void refuse_row(const models::Cluster& cluster, const sim::FlowNetwork& net, const OpData& d,
                             const FitOptions& o, std::size_t j, const models::CollectiveCall& call,
                             const models::CollectiveChoice& c, double fraction) {
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
  char num[256];  // room for any busbw (a 20,132,659 GB/s row cut the ratio's exponent at 64)
  std::ostringstream s;
  // 3 significant digits, 4 where 3 would print the limit itself (r05b: 0.1998, not "0.2").
  const double shown = std::stod(fmt_g3(fraction));
  const int digits = shown == kMinLinkFraction || shown == kMaxLinkFraction ? 4 : 3;
  std::snprintf(num, sizeof num,
                "%.0f B on %zu GPUs measured busbw %.2f GB/s: the busiest of the base's %s links would carry its "
                "share of the %s traffic at %.*g",
                d.bytes[j], d.ranks.size(), busbw, link_name(c.bottleneck), models::choice_algorithm_name(c), digits,
                fraction);
  s << d.where[j] << ": " << d.name << " of " << num << " of its line rate";
  if (capacity > 0) {
    std::snprintf(num, sizeof num, "%.1f", capacity / 1e9);
    s << " (" << link << ": " << num << " GB/s per direction, datasheet)";
  }
  s << " (expected " << kMinLinkFraction << " to " << kMaxLinkFraction << "): the log "
    << (fraction < kMinLinkFraction ? "did not run over" : "ran faster than") << " the links of --base " << o.base
    << " (" << cluster.gpu_spec(0).name << ", node template " << cluster.spec().node_template
    << (o.gpus.empty() ? "" : ", --gpus " + gpu_list_text(o.gpus))
    << "); give a --base of the system the log ran on (a scenario in scenarios/nccl/, or a node template with "
       "its GPU) and --gpus naming the GPUs it used";
  throw std::invalid_argument(s.str());
}

}  // namespace

void check_link_fraction(const models::CollectiveEngine& e, const models::Cluster& cluster, const sim::FlowNetwork& net,
                         const OpData& d, const FitOptions& o) {
  models::CollectiveCall call;
  call.op = d.cop;
  call.ranks = call_ranks(d);
  // Time on the bottleneck link alone at NCCL's efficiency (no protocol factor, no tuning
  // correction such as NCCL's tree factors: they are not link limits), over the measured time.
  auto fraction_at = [&](std::size_t i, models::CollectiveChoice& c) {
    call.bytes = d.bytes[i];
    c = e.choose(call);
    return e.default_efficiency(c.bottleneck) * c.link_seconds_per_byte * d.bytes[i] / d.time_s[i];
  };
  models::CollectiveChoice c;
  // Upper limit on every row, whatever its size: the measured time includes latency, so the
  // fraction is a lower bound of the true one and above the limit is certain (a 1 MiB all_reduce
  // timed at 1 us on 8 H100s, 4x NVLink's rate, was fitted into a profile before this).
  for (std::size_t i = 0; i < d.bytes.size(); ++i) {
    if (!(d.time_s[i] > 0) || !(d.bytes[i] > 0)) continue;
    const double fraction = fraction_at(i, c);
    if (c.bottleneck != models::LinkKind::other && fraction > kMaxLinkFraction)
      refuse_row(cluster, net, d, o, i, call, c, fraction);
  }
  // Lower limit at the largest fit size, where the bandwidth term is at least 4x the latency term.
  std::size_t j = d.bytes.size();
  for (std::size_t i = 0; i < d.bytes.size(); ++i) {
    if (d.fit[i]) j = i;  // sorted by size: the last fit point is the largest
  }
  if (j == d.bytes.size() || !(d.time_s[j] > 0)) return;
  const double fraction = fraction_at(j, c);
  if (c.bottleneck == models::LinkKind::other || !(c.bandwidth_s >= 4 * c.latency_s)) return;
  if (fraction >= kMinLinkFraction && fraction <= kMaxLinkFraction) return;
  refuse_row(cluster, net, d, o, j, call, c, fraction);
}

}  // namespace traincast::calibrate
