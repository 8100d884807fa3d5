// The warnings for cluster.overrides entries that name one element with the same field
// (scenario_checks.h, override_overlap_notes; models/hardware/override_overlaps.h).

#include <exception>
#include <string>
#include <vector>

#include "models/hardware/cluster.h"
#include "models/hardware/element_overrides.h"
#include "models/hardware/override_overlaps.h"
#include "models/io/scenario_checks.h"

namespace traincast::io::detail {
namespace {

/// "clock_factor 0.9 on \"node3/gpu5\"", "failed: true on \"node0/nic0\"".
std::string describe(const models::ElementOverride& o) {
  return models::override_setting(o) + " on \"" + o.select + "\"";
}

/// "node3/gpu5", or "node3/gpu0 and 7 more GPUs".
std::string elements(const models::OverrideOverlap& p, const models::ElementOverride& later) {
  if (p.count == 1) return p.first;
  const std::string kind = later.supply_c                                    ? " more node"
                           : (later.failed || later.bandwidth_factor != 0.0) ? " more link"
                                                                             : " more GPU";
  return p.first + " and " + std::to_string(p.count - 1) + kind + (p.count > 2 ? "s" : "");
}

std::string overlap_note(const models::OverrideOverlap& p, const std::vector<models::ElementOverride>& overrides) {
  using Outcome = models::OverrideOverlap::Outcome;
  const models::ElementOverride& a = overrides[static_cast<std::size_t>(p.earlier)];
  const models::ElementOverride& b = overrides[static_cast<std::size_t>(p.later)];
  const std::string earlier = "cluster.overrides[" + std::to_string(p.earlier) + "]";
  const std::string later = "cluster.overrides[" + std::to_string(p.later) + "]";
  const std::string names = elements(p, b);
  const std::string expected = " (expected each element named once per field)";
  switch (p.outcome) {
    case Outcome::same_value:
      if (p.repeated)
        return later + ": repeats " + earlier + " (" + describe(a) +
               "), so it changes nothing (expected each "
               "override once)";
      return later + ": " + describe(b) + " names " + names + ", which " + earlier + " (" + describe(a) +
             ") already gives the same value, so it changes nothing there" + expected;
    case Outcome::later_acts: {
      const std::string field = describe(b).substr(0, describe(b).find(" on \""));
      return later + ": " + describe(b) + " and " + earlier + " (" + describe(a) + ") both name " + names +
             ": the later one acts there, " + field + ", as overrides apply in order" +
             (p.earlier_acts_nowhere ? "; " + earlier + " has no effect left" : std::string()) + expected;
    }
    case Outcome::failed_earlier:
      return later + ": " + describe(b) + " names " + names + ", which " + earlier + " (" + describe(a) +
             ") fails: failed acts there, in either order, so this bandwidth_factor has no effect there (expected "
             "failed or a factor for an element, not both)";
    case Outcome::failed_later:
      return later + ": " + describe(b) + " fails " + names + ", which " + earlier + " (" + describe(a) +
             ") slows: failed acts there, in either order, so " + earlier + "'s bandwidth_factor has no effect " +
             (p.earlier_acts_nowhere ? std::string("at all") : std::string("there")) +
             " (expected failed or a factor for an element, not both)";
  }
  return {};
}

}  // namespace

std::vector<std::string> override_overlap_notes(const models::Scenario& s, const models::Cluster& cluster,
                                                const Checker& k) {
  std::vector<std::string> notes;
  std::vector<models::OverrideOverlap> overlaps;
  try {
    overlaps = models::override_overlaps(cluster, s.cluster.overrides);
  } catch (const std::exception&) {
    return notes;  // a selector the checks refused has its own error
  }
  for (const models::OverrideOverlap& p : overlaps)
    notes.push_back(k.where("cluster.overrides[" + std::to_string(p.later) + "]") + ": " +
                    overlap_note(p, s.cluster.overrides));
  return notes;
}

}  // namespace traincast::io::detail
