#pragma once
// Per-element overrides (`cluster.overrides`, issue 18): the selector grammar and its resolution on
// a built cluster's GPUs and resource table.
//
// Grammar (one of, nothing else; no spaces):
//   node<N>/gpu<K>        GPU K of node N                       e.g. "node17/gpu3"
//   node<N>               every GPU of node N                   e.g. "node17"
//   node<A>-<B>           every GPU of nodes A..B (inclusive)   e.g. "node0-15"
//   node<A>-<B>/gpu<K>    GPU K of each of nodes A..B           e.g. "node0-15/gpu3"
//   node<N>/nic<K>        both directions (tx, rx) of compute NIC K of node N
//   <resource name>       one directed resource, as the busiest-links report and `traincast
//                         explain` print it: "node0.gpu3.nvl_up", "node2.nic0.tx", "leaf0->spine1"
// Numbers are decimal without sign or leading zeros. "node[0-15]" (Slurm's hostlist form) is
// refused with the form to write instead.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/spec/cluster_spec.h"
#include "sim/flow_network.h"

namespace traincast::models {

class Cluster;

/// What a selector names on a cluster: GPUs (GPU selectors) or directed resources (NIC and link
/// selectors), exactly one of the two non-empty.
struct ResolvedSelector {
  std::vector<int> gpus;                   ///< global GPU ids, ascending
  std::vector<sim::ResourceId> resources;  ///< resource ids, ascending
};

/// Resolves `select` (grammar above) on `cluster`. Throws std::invalid_argument with what is
/// wrong and what exists (no field path), e.g. "no node20 (the cluster has node0-15)",
/// "no gpu9 on node3 (it has gpu0-7)", "no resource named \"node0.gpu3.nvl\" (node0 has:
/// node0.gpu0.nvl_up, ...)", "write a node range as node0-15 (got \"node[0-15]\")", "a selector
/// has no spaces: \" node3/gpu1\" has a space at character 1 of 11 (...)".
ResolvedSelector resolve_selector(const Cluster& cluster, const std::string& select);

/// The node part of a node selector (grammar above): nodes first..last (first == last for
/// node<N>) and what follows them: "", "/gpu3", "/nic0", ".gpu3.nvl_up", or a torus link's
/// ".router->node1.router". nullopt when `select` does not start with node<N> (a switch link such
/// as "leaf0->spine1") or its number or range breaks the grammar. Reads no cluster.
struct SelectorNodes {
  int first = 0;
  int last = 0;
  std::string rest;
};
std::optional<SelectorNodes> selector_nodes(const std::string& select);

/// Whether resolve_selector(cluster, select) reads only the cluster's sizes and GPU places, never
/// its resource table: GPU selectors (node<N>, node<A>-<B>, with or without /gpu<K>) and the
/// malformed node forms refused before any resource is looked up. False for NIC and resource-name
/// selectors (and anything else): those need a built cluster (Cluster::sizes_only has no table).
bool selector_reads_no_resource(const std::string& select);

/// The nodes that overrides with `missing: true` drain (ElementOverride::missing), read from the
/// spec alone without building a cluster: (node, index of the first override naming it), ascending
/// by node. Overrides Cluster refuses (a selector that is not node<N>/gpu<K> with N < num_nodes,
/// another field set with it, any on a torus) are skipped: they drain nothing.
std::vector<std::pair<int, int>> drained_nodes_of(const ClusterSpec& spec);

/// The nodes a job can run on: num_nodes less drained_nodes_of(spec).
int nodes_in_service(const ClusterSpec& spec);

/// The entry's field and value as a scenario writes them: "clock_factor 0.9", "bandwidth_factor
/// 0.5", "power_cap_w 400", "supply_c 40", "failed: true", "missing: true" (values in the fewest
/// digits that read back as them); "" for an entry with no field.
std::string override_setting(const ElementOverride& o);

/// The name of global GPU `gpu` in selector form, "node<N>/gpu<K>" (N its fabric place).
std::string gpu_selector_name(const Cluster& cluster, int gpu);

}  // namespace traincast::models
