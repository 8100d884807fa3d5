#pragma once
// Per-element overrides (`cluster.overrides`, element_overrides.h) that name one element with the
// same field: a later one replaces an earlier one there (docs/scenarios.md, cluster), except that
// a failed link or NIC stays failed whatever factor another override gives it. Found so that the
// loader can warn about each pair (fresh user 41: two entries for one GPU were taken silently).

#include <string>
#include <vector>

#include "models/spec/cluster_spec.h"

namespace traincast::models {

class Cluster;

/// Two overrides, `earlier` < `later` (indices into the list), that name `count` elements in
/// common with the same field (bandwidth_factor and failed count as one: both act on a link or NIC).
struct OverrideOverlap {
  enum class Outcome {
    later_acts,      ///< both set the field to different values: the later one's acts there
    same_value,      ///< both set it to the same value (or both fail or drain it): the later changes nothing
    failed_earlier,  ///< the earlier fails the elements: the later one's bandwidth_factor has no effect there
    failed_later,    ///< the later fails the elements: the earlier one's bandwidth_factor has no effect there
  };
  int earlier = 0;
  int later = 0;
  Outcome outcome = Outcome::later_acts;
  int count = 0;      ///< elements both name (GPUs; nodes for supply_c; link and NIC directions)
  std::string first;  ///< the first of them in the later one's order: "node3/gpu5", "node2", "node0.nic0.tx"
  /// Same select text, field and value: the later entry repeats the earlier one.
  bool repeated = false;
  /// After every override, the earlier one acts on none of its elements.
  bool earlier_acts_nowhere = false;
};

/// The overlapping pairs of `overrides`, ordered by `later` then `earlier`. Every override must be
/// one the checks accept on `cluster` (built without the overrides: a sizes_only cluster suffices
/// when every selector names GPUs, selector_reads_no_resource): a selector naming something, one
/// field. Elements of a GPU field are GPUs (nodes for supply_c), of a link field the directed
/// resources by name (node<N>/nic<K>: its tx and rx; `failed` on one direction of a NIC or cable:
/// both, as it fails both). Throws std::invalid_argument from resolve_selector for a bad selector.
std::vector<OverrideOverlap> override_overlaps(const Cluster& cluster, const std::vector<ElementOverride>& overrides);

/// What each override acts on once every override is applied, by the rules above (a later one of
/// the same field replaces an earlier one; the same value leaves the earlier acting; a failed link
/// or NIC stays failed whatever factor names it): `ids`, GPU ids for clock_factor and
/// power_cap_w, node ids (Cluster::node_of) for supply_c; `links`, directed resource names for
/// link and NIC fields (a failed one: every direction it fails). Both empty for `missing: true`
/// and for an override that acts nowhere. Ascending. Same preconditions and errors as
/// override_overlaps.
struct ActingElements {
  std::vector<int> ids;
  std::vector<std::string> links;
};
std::vector<ActingElements> override_acting_elements(const Cluster& cluster,
                                                     const std::vector<ElementOverride>& overrides);

}  // namespace traincast::models
