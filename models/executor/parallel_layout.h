#pragma once
// The layout of a training job on the cluster: which GPU runs each (TP rank, data rank, stage),
// and the collective groups (TP, PP pairs, DP, EP, expert-DP, CP ring pairs) those ranks form.

#include <cstdint>
#include <vector>

#include "models/executor/op_graph.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// Ranks and groups of one training job. GPU g = tp_rank + tp * (data_rank + dp_cp * stage).
/// A data rank (replica) r = dp_rank * cp + cp_rank: the cp ranks of a CP group run the same
/// program on their share of the sequence (replicas that exchange K/V), and gradients are reduced
/// over all dp_cp data ranks (Megatron's dp-cp group).
struct ParallelLayout {
  int tp = 1, pp = 1;
  int dp = 1;        ///< data-parallel size of the scenario (workload.parallel.dp)
  int cp = 1;        ///< context parallel size
  int dp_cp = 1;     ///< data ranks: dp x cp
  int ep = 1;        ///< expert parallel size (divides dp_cp)
  int replicas = 1;  ///< simulated data ranks (ep x cp when folded, else dp_cp); set before build_groups
  /// Data rank of each simulated replica (size replicas, ascending; partial folding, folding.h);
  /// empty = replica i is data rank i. Set before build_groups.
  std::vector<int> replica_ids;
  GroupTable groups;  ///< GPU lists of every collective group (filled by build_groups)
  std::uint32_t tp_group_base = 0, pp_group_base = 0, dp_group_base = 0;
  std::uint32_t ep_group_base = 0, edp_group_base = 0, cp_group_base = 0;
  std::uint32_t tp_ring_group_base = 0;

  /// Global GPU id of TP rank `tp_rank` of data rank `data_rank` at pipeline stage `stage`.
  int gpu(int tp_rank, int data_rank, int stage) const { return tp_rank + tp * (data_rank + dp_cp * stage); }
  /// Data rank of simulated replica `replica` (replica_ids).
  int data_rank_of_replica(int replica) const {
    return replica_ids.empty() ? replica : replica_ids[static_cast<std::size_t>(replica)];
  }
  int tp_rank_of(int gpu) const { return gpu % tp; }              ///< inverse of gpu()
  int data_rank_of(int gpu) const { return (gpu / tp) % dp_cp; }  ///< inverse of gpu()
  int stage_of(int gpu) const { return gpu / (tp * dp_cp); }      ///< inverse of gpu()

  std::uint32_t tp_group(int replica, int stage) const {
    return tp_group_base + static_cast<std::uint32_t>(replica * pp + stage);
  }
  /// First of tp send pairs (one per TP rank) from (replica, stage) in direction dir (0 fwd, 1 bwd).
  std::uint32_t pp_group(int replica, int stage, int dir) const {
    return pp_group_base + static_cast<std::uint32_t>(((replica * pp + stage) * 2 + dir) * tp);
  }
  /// First of tp DP groups (one per TP rank) of `stage`, over all dp_cp data ranks.
  std::uint32_t dp_group(int stage) const { return dp_group_base + static_cast<std::uint32_t>(stage * tp); }
  /// First of tp EP groups (one per TP rank) of the EP group holding simulated `replica` at `stage`.
  std::uint32_t ep_group(int replica, int stage) const {
    return ep_group_base + static_cast<std::uint32_t>(((data_rank_of_replica(replica) / ep) * pp + stage) * tp);
  }
  /// First of tp x cp ring pairs ({cp rank j, cp rank j+1 mod cp} for each TP rank k, at
  /// index k * cp + j) of the CP group holding simulated `replica` at `stage`.
  std::uint32_t cp_group(int replica, int stage) const {
    return cp_group_base + static_cast<std::uint32_t>(((data_rank_of_replica(replica) / cp) * pp + stage) * tp * cp);
  }
  /// First of tp ring pairs ({TP rank k, TP rank k+1 mod tp} at index k) of (replica, stage): one
  /// step of a chunked TP overlap, every rank moving one chunk to a peer at once (tp_ring true).
  std::uint32_t tp_ring_group(int replica, int stage) const {
    return tp_ring_group_base + static_cast<std::uint32_t>((replica * pp + stage) * tp);
  }
  /// First of tp expert-data-parallel groups (one per TP rank): the dp_cp / ep GPUs of `stage` whose
  /// replicas hold the same experts (replica % ep == ep_rank).
  std::uint32_t edp_group(int stage, int ep_rank) const {
    return edp_group_base + static_cast<std::uint32_t>((stage * ep + ep_rank) * tp);
  }

  /// Fills `groups` and the group bases: TP groups and PP send pairs of the simulated replicas,
  /// DP groups, EP groups (ep > 1), CP ring pairs (cp > 1), with `moe` expert-DP groups and, with
  /// `tp_ring` (chunked TP overlap) and tp > 1, the TP ring pairs.
  void build_groups(bool moe, bool tp_ring = false);
};

/// The layout of `sc`'s parallelism on a cluster of `num_gpus` GPUs (replicas = dp_cp, no groups yet).
/// Throws std::invalid_argument when cp > 1 is asked of a model it does not apply to (MoE, not a
/// transformer, no flash attention, seq_length not divisible by 2 * cp), when ep does not divide
/// dp x cp and num_experts, or when tp * cp * pp * dp != num_gpus.
ParallelLayout parallel_layout_of(const Scenario& sc, int num_gpus);

}  // namespace traincast::models
