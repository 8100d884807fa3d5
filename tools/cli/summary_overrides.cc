// The summary's "Overrides" section: what each cluster.overrides entry did (summary.h).

#include <sstream>
#include <string>

#include "tools/cli/summary.h"

namespace traincast::cli {
namespace {

std::string percent(double fraction) { return format_fixed(100.0 * fraction, 1) + " %"; }

/// "carried 0.00 GB per iteration (0.0 % busy); node0/nic0 carried 302.40 GB".
std::string traffic_text(const models::OverrideEffectReport& e) {
  if (e.bytes_per_iteration <= 0) {
    if (!e.peer.empty() && e.peer_bytes_per_iteration <= 0)
      return "carried nothing, nor did " + e.peer +
             ", the busiest of the same element on the other simulated nodes: the collectives avoid it there too";
    std::string s = "carried nothing (the routes avoid it)";
    if (!e.peer.empty())
      s += "; " + e.peer + " carried " + format_fixed(e.peer_bytes_per_iteration / 1e9, 2) + " GB per iteration";
    return s;
  }
  std::string s = "carried " + format_fixed(e.bytes_per_iteration / 1e9, 2) + " GB per iteration (" +
                  percent(e.utilization) + " busy at most)";
  if (!e.peer.empty()) s += "; " + e.peer + " carried " + format_fixed(e.peer_bytes_per_iteration / 1e9, 2) + " GB";
  return s;
}

}  // namespace

std::string override_effect_text(const models::OverridesReport& ov, const models::OverrideEffectReport& e) {
  if (e.setting == "missing: true") return "its node is drained";
  if (!e.acts)
    return "no effect left: on every element it names a later entry of the same field, or a failed one, acts "
           "instead";
  if (e.setting.rfind("supply_c", 0) == 0) {
    if (e.folded)
      return "no effect: it equals the cooling's own inlet, so its GPUs run as the nominal ones (folded with them)";
    if (e.hottest_gpu_c <= 0) return "no GPU of it simulated";
    std::string s = "hottest GPU " + format_fixed(e.hottest_gpu_c, 1) + " C on average";
    s += e.throttled_time_fraction > 0 ? ", throttled up to " + percent(e.throttled_time_fraction) + " of the iteration"
                                       : ", no throttling";
    return s;
  }
  if (e.setting.rfind("clock_factor", 0) == 0 || e.setting.rfind("power_cap_w", 0) == 0) {
    if (e.folded) return "no effect: its GPUs run as the nominal ones (folded with them)";
    if (e.sm_clock_mhz <= 0) return "no clock reported (the power model did not run)";
    std::string s = "SM clock " + with_thousands(e.sm_clock_mhz) + " of " + with_thousands(e.boost_clock_mhz) +
                    " MHz while computing";
    // Only where it sets its TP group's pace: not on a TP-1 job, a group slowed alike, or a GPU
    // that a slower one of its group holds back (fresh user, session 42).
    if (e.peers_waiting > 0)
      s += " (its TP group computes at its pace: " + std::to_string(e.peers_waiting) +
           (e.peers_waiting == 1 ? " other GPU waits" : " other GPUs wait") + " for it up to " +
           format_duration(e.peers_wait_s) + " per iteration)";
    if (e.straggler) s += "; the straggler";
    return s;
  }
  std::string s = traffic_text(e);
  if (e.folded) s += " (its replica is folded: the collectives over every replica counted, not its own traffic)";
  if (e.failed_instead_known && ov.cost_known) {
    s += "; failed instead, the overrides would cost " + std::string(e.failed_instead_cost_s >= 0 ? "+" : "") +
         format_duration(e.failed_instead_cost_s);
    if (e.failed_instead_cost_s < ov.cost_s)
      s += ", less: static routing keeps flows on the slow cable, so taking it down is cheaper";
  }
  return s;
}

std::string format_overrides(const models::Report& r, const std::string& of) {
  const models::OverridesReport& ov = r.overrides;
  if (ov.entries.empty()) return "";
  std::ostringstream o;
  o << "\nOverrides " << (of.empty() ? "" : "of " + of + " ") << "(cluster.overrides)";
  if (ov.cost_known)
    o << ": " << (ov.cost_s >= 0 ? "+" : "") << format_duration(ov.cost_s) << " per iteration ("
      << signed_fixed(100.0 * ov.cost_fraction, 1) << " %) against the same job without them";
  o << "\n";
  constexpr std::size_t kShown = 8;
  for (std::size_t i = 0; i < ov.entries.size() && i < kShown; ++i) {
    const models::OverrideEffectReport& e = ov.entries[i];
    o << "  [" << e.index << "] " << e.select << " " << e.setting << ": " << override_effect_text(ov, e) << "\n";
  }
  if (ov.entries.size() > kShown) o << "  " << ov.entries.size() - kShown << " more in --json\n";
  return o.str();
}

}  // namespace traincast::cli
