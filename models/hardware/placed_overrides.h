#pragma once
// The cluster's per-element overrides (`cluster.overrides`, element_overrides.h) as one job of a
// shared cluster sees them (`traincast cluster`, docs/cluster.md): a job is simulated on a
// sub-cluster of its own nodes, numbered 0..n-1, so an override of the cluster's node N applies
// to the job placed on N as an override of the job's node j (N = its j-th node, ascending).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/spec/cluster_spec.h"

namespace traincast::models {

/// Why no job's own simulation can hold an override selecting `select`, without field path;
/// nullopt for a GPU, node, NIC or node-internal link selector (selector_nodes with nothing after
/// the node but /gpu<K>, /nic<K> or a link name naming no other node). A link between switches or
/// between nodes ("leaf0->spine1", a pooled "leaf0->spines", a torus "node0.router->node1.router")
/// is a link the jobs share; any other text names nothing a job has. Either way the text gives
/// what was given and the selectors traincast cluster accepts, e.g. "\"leaf0->spine1\" is a link
/// between switches or nodes, which the jobs share; ... (expected, in traincast cluster, a selector
/// inside the nodes a job is placed on: node<N>/gpu<K>, ...)". Reads no cluster: the link need not
/// exist (adaptive routing pools leaf0's up-links as leaf0->spines; leaf0->spine1 is still named so).
std::optional<std::string> selector_not_per_job(const std::string& select);

/// The first of `spec.overrides` that no job's own simulation can hold, as (index, why): a
/// selector that names a link between switches or between nodes ("leaf0->spine1", a pooled
/// "leaf0->spines", a torus "node0.router->node1.router"), which jobs share and each job's
/// sub-cluster does not have. nullopt when every override is a GPU, node, NIC or node-internal
/// link selector (or `missing`). `why` names what it is and what is expected, without field path.
std::optional<std::pair<int, std::string>> override_not_per_job(const ClusterSpec& spec);

/// The overrides of `spec` that fall on a job placed on `nodes` (fabric places, ascending, each
/// < spec.num_nodes), in the job's numbering (nodes[j] is its node j), in `spec.overrides` order:
///   node<A>-<B>[/gpu<K>] -> node<j>[/gpu<K>] for each placed node in A..B (fields copied);
///   node<N>, node<N>/gpu<K>, node<N>/nic<K>, node<N>.<link> -> the same on node<j>.
/// `missing` overrides are left out (drained nodes run no job); so are a NIC's and its directions'
/// (node<N>/nic<K>, node<N>.nic<K>.tx/.rx) on a one-node job: its traffic never leaves the node,
/// whose one-node sub-cluster has no network. Requires override_not_per_job(spec) == nullopt
/// (throws std::invalid_argument otherwise, with its why).
std::vector<ElementOverride> placed_overrides(const ClusterSpec& spec, const std::vector<int>& nodes);

/// The indices of `spec.overrides` that placed_overrides leaves out of a one-node job placed on
/// node `node` (a fabric place): those of its NICs and their directions (node<N>/nic<K>,
/// node<N>.nic<K>.tx/.rx with N = node), ascending; `traincast cluster` warns of each.
std::vector<int> overrides_left_out_of_one_node_job(const ClusterSpec& spec, int node);

/// A text that is equal for two override lists exactly when the lists are (selectors and every
/// field, doubles bit for bit): a cache key. "" for an empty list.
std::string overrides_key(const std::vector<ElementOverride>& overrides);

}  // namespace traincast::models
