#pragma once
// Whether the DP replicas of a job may be folded (simulated once) by their place in the network.

#include "models/executor/parallel_layout.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// Whether the job's symmetry units (ep x cp consecutive DP replicas, parallel_layout.h) sit in
/// the network so that their own traffic (TP, PP, EP, CP) shares no link that could bind, the
/// condition for simulating one unit for all (DESIGN §3), from the scenario alone:
///  - every node holds GPUs of one unit only (a count that fills whole nodes is not enough: with
///    tp < GPUs per node the layout interleaves replicas within every node, and their pipeline
///    sends share its PCIe switches, sockets and NICs);
///  - a unit's traffic stays inside its nodes, or crosses a fat tree or rail-optimized tree
///    without oversubscription (a torus routes it through other nodes' links). In one leaf group
///    and under adaptive routing (pooled up-links that carry every attached NIC at line rate,
///    models/hardware/cluster.h) no shared link can bind, so folding is exact there. Between
///    leaves under d_mod_k or ecmp_hash two units' flows may hash onto one spine link, which the
///    folded run does not see (it sees its own unit's collisions only): still folded, so that
///    RoCE jobs of 16,384 GPUs stay fast (issue 18: partial folding by network position).
/// The data-parallel collectives themselves are simulated over every replica either way.
/// `L` from parallel_layout_of(sc, ...); gpus_per_node > 0. Also requires fold_symmetric, more
/// replicas than one unit and oversubscription <= 1. The clock-feedback placement test
/// (training_plan.cc) may still unfold.
bool fold_replicas_by_position(const Scenario& sc, const ParallelLayout& L, int gpus_per_node);

}  // namespace traincast::models
