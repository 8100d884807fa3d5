// NCCL's latency model per algorithm (ring, tree, NVLS, NVLS tree, PAT, CollNet): NVIDIA/nccl
// src/graph/tuning.cc; constants in NcclLatencyUs. See nccl_tuning.h.

#include <algorithm>
#include <array>

#include "models/collectives/nccl_tuning.h"

namespace traincast::models {

std::array<double, 3> ring_latency_s(CollectiveOp op, int n, int nodes, bool nvlink, const NcclVersion& version) {
  // NCCL tuning.cc (Ring): latency = baseLat + (nsteps - nInterSteps) * intraLat +
  // nInterSteps * interLat, intraLat raised to the network post overhead (x3 for Simple) when
  // the ring spans nodes. As of the PAT releases (2.23+): nInterSteps = 2 (nNodes - 1) for
  // all_reduce (was 2 nNodes), and with one GPU per node ("latencies are fully exposed")
  // interLat is the NET Tree figure.
  int steps = 0, inter = 0;
  switch (op) {
    case CollectiveOp::all_reduce:
      steps = 2 * (n - 1);
      // Before the PAT releases: 2 nNodes inter-node steps (tuning.cc of 2.9-2.22).
      inter = nodes > 1 ? (nccl_pat_era_ring_latency(version) ? 2 * (nodes - 1) : 2 * nodes) : 0;
      break;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
      // broadcast and reduce: a pipelined chain of n-1 hops (we use the Ring hwLat per hop rather
      // than NCCL's Tree/Simple chunk figure).
      steps = n - 1;
      inter = nodes - 1;
      break;
    case CollectiveOp::all_to_all:
    case CollectiveOp::send_recv:
      // One concurrent exchange step (grouped send/recv).
      steps = 1;
      inter = nodes > 1 ? 1 : 0;
      break;
  }
  inter = std::min(inter, steps);
  const auto& intra_table = nvlink ? NcclLatencyUs::nvlink_ring : NcclLatencyUs::pci_ring;
  const bool exposed = nodes > 1 && n == nodes && nccl_pat_era_ring_latency(version);
  const auto& net_table = exposed ? NcclLatencyUs::net_tree : NcclLatencyUs::net_ring;
  std::array<double, 3> out{};
  for (int p = 0; p < 3; ++p) {
    double intra = intra_table[p];
    if (nodes > 1) intra = std::max(intra, NcclLatencyUs::net_overhead * (p == kNcclSimple ? 3.0 : 1.0));
    const double us = NcclLatencyUs::base_ring[p] + (steps - inter) * intra + inter * net_table[p];
    out[p] = us * 1e-6;
  }
  return out;
}

std::array<double, 3> tree_latency_s(int ppn, int nodes, bool nvlink) {
  // NCCL tuning.cc (Tree): baseLat + 2 * ((ppn - 1) * intraLat + log2(nodes) * interLat).
  const auto& intra = nvlink ? NcclLatencyUs::nvlink_tree : NcclLatencyUs::pci_tree;
  std::array<double, 3> out{};
  for (int p = 0; p < 3; ++p) {
    out[p] =
        (NcclLatencyUs::base_tree[p] + 2 * ((ppn - 1) * intra[p] + nccl_log2i(nodes) * NcclLatencyUs::net_tree[p])) *
        1e-6;
  }
  return out;
}

std::array<double, 3> nvls_latency_s() {
  const double us = NcclLatencyUs::nvlink_nvls;
  return {us * 1e-6, us * 1e-6, us * 1e-6};
}

std::array<double, 3> nvls_tree_latency_s(int nodes) {
  const double us = NcclLatencyUs::nvlink_nvls_tree + 2 * nccl_log2i(nodes) * NcclLatencyUs::net_nvls_tree;
  return {us * 1e-6, us * 1e-6, us * 1e-6};
}

std::array<double, 3> pat_latency_s(int nodes, int n) {
  // NCCL tuning.cc (2.23+): latency = baseLat PAT 8.0 + log2i(nNodes) x (interLat / 3.5) +
  // nRanks x 2.8 us ("still a linear part"), interLat = hwLat NET PAT Simple 14 us.
  const double us = NcclLatencyUs::base_pat +
                    nccl_log2i(nodes) * NcclLatencyUs::net_pat / NcclLatencyUs::pat_log_divisor +
                    n * NcclLatencyUs::pat_per_rank;
  return {us * 1e-6, us * 1e-6, us * 1e-6};
}

std::array<double, 3> collnet_direct_latency_s(int ppn) {
  // NCCL tuning.cc (2.20.3): latency = baseLat 0 + 2 (min(1, ppn - 1) x intraLat + (ppn - 1) x
  // 0.4) + interLat ("Add 0.4 us arity serialization latency").
  const int peers = std::max(0, ppn - 1);
  const double us =
      2 * (std::min(1, peers) * NcclLatencyUs::intra_collnet_direct + peers * NcclLatencyUs::collnet_direct_arity) +
      NcclLatencyUs::net_collnet_direct;
  return {us * 1e-6, us * 1e-6, us * 1e-6};
}

std::array<double, 3> collnet_chain_latency_s(int ppn) {
  // NCCL tuning.cc (2.20.3): latency = baseLat 0 + 2 (ppn - 1) x intraLat + interLat.
  const double us = 2 * std::max(0, ppn - 1) * NcclLatencyUs::intra_collnet_chain + NcclLatencyUs::net_collnet_chain;
  return {us * 1e-6, us * 1e-6, us * 1e-6};
}

}  // namespace traincast::models
