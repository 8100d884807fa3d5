// The layout of a training job on the cluster: rank-to-GPU mapping checks and the group table.
#include "models/executor/parallel_layout.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace traincast::models {

ParallelLayout parallel_layout_of(const Scenario& sc, int num_gpus) {
  ParallelLayout L;
  L.tp = sc.parallel.tp;
  L.pp = sc.parallel.pp;
  L.dp = sc.parallel.dp;
  L.cp = std::max(1, sc.parallel.cp);
  L.dp_cp = L.dp * L.cp;
  L.ep = std::max(1, sc.parallel.ep);
  if (L.cp > 1 && (L.ep > 1 || sc.model.num_experts > 0 || sc.model.family != ModelFamily::transformer ||
                   !sc.training.flash_attention || sc.model.seq_length % (2 * L.cp) != 0))
    throw std::invalid_argument("cp = " + std::to_string(L.cp) +
                                " needs a dense transformer with flash attention and seq_length divisible by 2 * cp");
  if (L.dp_cp % L.ep != 0 || (L.ep > 1 && sc.model.num_experts % L.ep != 0))
    throw std::invalid_argument("ep = " + std::to_string(L.ep) + " must divide dp and num_experts");
  if (L.tp * L.pp * L.dp_cp != num_gpus)
    throw std::invalid_argument("tp*cp*pp*dp = " + std::to_string(L.tp * L.pp * L.dp_cp) + " but the cluster has " +
                                std::to_string(num_gpus) + " GPUs");
  L.replicas = L.dp_cp;
  return L;
}

void ParallelLayout::build_groups(bool moe, bool tp_ring) {
  // Group table: TP groups, PP send pairs, DP groups.
  tp_group_base = 0;
  for (int r = 0; r < replicas; ++r)
    for (int s = 0; s < pp; ++s) {
      for (int k = 0; k < tp; ++k) groups.gpus.push_back(gpu(k, data_rank_of_replica(r), s));
      groups.close_group();
    }
  pp_group_base = groups.size();
  for (int r = 0; r < replicas; ++r)
    for (int s = 0; s < pp; ++s)
      for (int dir = 0; dir < 2; ++dir)
        for (int k = 0; k < tp; ++k) {
          const int dst = dir == 0 ? (s + 1) % pp : (s - 1 + pp) % pp;
          groups.add({gpu(k, data_rank_of_replica(r), s), gpu(k, data_rank_of_replica(r), dst)});
        }
  dp_group_base = groups.size();
  for (int s = 0; s < pp; ++s)
    for (int k = 0; k < tp; ++k) {
      for (int r = 0; r < dp_cp; ++r) groups.gpus.push_back(gpu(k, r, s));
      groups.close_group();
    }
  // Expert parallelism: EP groups (ep consecutive replicas) and expert-data-parallel groups
  // (the replicas holding the same experts), one per TP rank.
  ep_group_base = groups.size();
  if (ep > 1)
    for (int g = 0; g < dp_cp / ep; ++g)
      for (int s = 0; s < pp; ++s)
        for (int k = 0; k < tp; ++k) {
          for (int j = 0; j < ep; ++j) groups.gpus.push_back(gpu(k, g * ep + j, s));
          groups.close_group();
        }
  // Context-parallel ring pairs: per CP group, stage and TP rank, rank j sends to rank j + 1 mod cp.
  cp_group_base = groups.size();
  if (cp > 1)
    for (int g = 0; g < dp_cp / cp; ++g)
      for (int s = 0; s < pp; ++s)
        for (int k = 0; k < tp; ++k)
          for (int j = 0; j < cp; ++j) groups.add({gpu(k, g * cp + j, s), gpu(k, g * cp + (j + 1) % cp, s)});
  edp_group_base = groups.size();
  if (moe)
    for (int s = 0; s < pp; ++s)
      for (int j = 0; j < ep; ++j)
        for (int k = 0; k < tp; ++k) {
          for (int r = j; r < dp_cp; r += ep) groups.gpus.push_back(gpu(k, r, s));
          groups.close_group();
        }
  // TP ring pairs of the simulated replicas: TP rank k sends to TP rank k + 1 mod tp.
  tp_ring_group_base = groups.size();
  if (tp_ring && tp > 1)
    for (int r = 0; r < replicas; ++r)
      for (int s = 0; s < pp; ++s)
        for (int k = 0; k < tp; ++k)
          groups.add({gpu(k, data_rank_of_replica(r), s), gpu((k + 1) % tp, data_rank_of_replica(r), s)});
}

}  // namespace traincast::models
