#pragma once
// Whether the DP replicas of a job may be folded (simulated once) by their place in the network.

#include <string>
#include <vector>

#include "models/executor/parallel_layout.h"
#include "models/hardware/cluster.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// The scenario-only part of the folding test (DESIGN §3): fold_symmetric, more data ranks than
/// one symmetry unit (ep x cp consecutive replicas), whole nodes' worth of GPUs per unit and
/// oversubscription <= 1. The op-count estimate (graph_size.h) counts replicas folded whenever
/// this holds, a lower bound of the executor's count. gpus_per_node > 0.
bool fold_candidate(const Scenario& sc, const ParallelLayout& L, int gpus_per_node);

/// Whether the job's symmetry units may be simulated one for all: fold_candidate, and their own
/// traffic (TP groups, PP sends, EP and CP pairs) shares no link that could bind between units:
///  - when every node holds one unit's GPUs, its traffic uses its own nodes' links and NICs;
///  - otherwise (tp below the GPUs per node interleaves replicas within every node) every route
///    a unit's traffic takes (Cluster::route of each TP pair, PP send and EP/CP pair) is checked
///    for a node link, NIC or fabric link another unit's traffic also takes: NVSwitch ports are
///    per GPU, while PCIe switch uplinks, socket links and a NIC serving two GPUs are shared;
///  - between nodes, a fat tree or rail-optimized tree without oversubscription counts as
///    sharing none (a torus routes through other nodes' links: shared). In one leaf group and
///    under adaptive routing (pooled up-links that carry every attached NIC at line rate,
///    models/hardware/cluster.h) that is exact. Between leaves under d_mod_k or ecmp_hash two
///    units' flows may hash onto one spine link, which a folded run does not see (it sees its own
///    unit's collisions): still folded, so that RoCE jobs of 16,384 GPUs stay fast (issue 18:
///    partial folding by network position).
/// The data-parallel collectives are simulated over every replica either way; where a DP ring
/// hop joins two replicas on one node, its flow shares the receiving GPU's NVLink port with that
/// replica's TP traffic, which a folded run simulates for one replica only (measured: 4.7 ppm on
/// TP 4 x PP 2 x DP 4 ZeRO-3 on DGX A100, the scatter/gather all-gathers; ZeroExecutor test). `L` from
/// parallel_layout_of(sc, cluster.num_gpus()). The clock-feedback placement test
/// (training_plan.cc) may still unfold.
bool fold_replicas_by_position(const Scenario& sc, const ParallelLayout& L, const Cluster& cluster);

/// Replicas that one simulated symmetry unit stands for (a class of partial folding).
struct ReplicaClass {
  std::vector<int> units;  ///< symmetry units (ep x cp consecutive data ranks each), ascending; units[0] simulated
  /// Why: "nominal" (no override reaches it), "clock_factor 0.9 on node17/gpu3", "its own traffic
  /// crosses node3.nic1.tx (bandwidth_factor 0.5)", or why nothing folds.
  std::string reason;
};

/// Which data ranks are simulated and whom each stands for (partial folding, issue 18).
struct FoldingPlan {
  bool folded = false;                ///< some simulated unit stands for others
  int unit = 1;                       ///< data ranks per symmetry unit: ep x cp
  std::vector<int> replica_ids;       ///< simulated data ranks, ascending (whole units)
  std::vector<int> sim_index;         ///< per data rank: index into replica_ids of the rank that stands for it
  std::vector<ReplicaClass> classes;  ///< in order of their first unit; every unit in exactly one
};

/// Partial folding (DESIGN §3, issue 18): the symmetry units fall into classes by hardware and
/// settings, one unit simulated per class, the data-parallel collectives over every replica.
/// Two units are one class when fold_replicas_by_position holds for the job (network position:
/// their own traffic cannot meet) and
///  - their GPUs, slot by slot (stage, data rank within the unit, TP rank), have the same
///    cluster.overrides clock_factor (Cluster::clock_factor), and
///  - neither unit's own traffic (each TP pair, PP send both ways, EP/CP pair, routed as
///    Cluster::route) crosses a resource an override scaled (such a unit is a class alone).
/// Without overrides this is today's folding: one class, unit 0 simulated (or, when the position
/// test fails or options.fold_symmetric is off, every unit alone, all simulated). Slot i of a
/// simulated unit stands for slot i of each unit of its class, so a representative's GPU always
/// has the clock of the GPUs it stands for. `L` from parallel_layout_of.
FoldingPlan plan_replica_folding(const Scenario& sc, const ParallelLayout& L, const Cluster& cluster);

/// "0-5, 7, 9-127": data ranks of `units` (each `unit` ranks), as ranges.
std::string rank_ranges(const std::vector<int>& units, int unit);

}  // namespace traincast::models
