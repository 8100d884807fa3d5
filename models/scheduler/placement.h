#pragma once
// Which free nodes a starting job gets (docs/cluster.md): packed, spread or topology-aware, over a
// cluster whose nodes hang off leaf switches of `nodes_per_leaf` nodes each (node i on leaf
// i / nodes_per_leaf). Jobs get whole nodes, so every job uses every rail of its nodes: a
// placement is always rail-aligned and topology-aware only has to minimise leaves.

#include <vector>

#include "models/spec/jobs_spec.h"

namespace traincast::models {

/// The nodes (ascending) for a job of `count` nodes among the free ones (`free[i]`: node i is
/// free). packed: the lowest-numbered free nodes. spread: round-robin over the leaves, one free
/// node of each leaf in turn (lowest-numbered first, leaves in order, leaves without a free node
/// skipped). topology_aware: the fewest leaves: the fullest-fitting single leaf (fewest free nodes
/// that still hold the job, lowest index on ties) when one holds it, else leaves by most free
/// nodes first (lowest index on ties), each filled from its lowest-numbered free node.
/// Requires count <= the free nodes and nodes_per_leaf >= 1.
std::vector<int> place_job(const std::vector<bool>& free, int nodes_per_leaf, int count, JobPlacement placement);

/// How many leaf switches `nodes` spans.
int leaves_spanned(const std::vector<int>& nodes, int nodes_per_leaf);

}  // namespace traincast::models
