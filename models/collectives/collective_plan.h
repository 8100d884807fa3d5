#pragma once
// A collective's plan: per phase, the flows it starts (paths, bytes, rate caps) and NCCL's latency
// terms; built once per (op, algorithm, ranks) by collective_plans.h and run by CollectiveEngine.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "models/calibration/calibration_profile.h"
#include "models/collectives/nccl_p2p.h"
#include "models/hardware/cluster.h"
#include "models/spec/collective_op.h"
#include "sim/flow_network.h"

namespace traincast::models {

/// One flow of a phase: it carries byte_fraction x the call's bytes along `path` (resources owned
/// by the Cluster's routing tables, which outlive the plan), or, when multipath >= 0, over the
/// plan's multi-path flow `multipath` (its bytes split over several paths in fixed proportions:
/// PAT; CollectivePlan::multipath_paths).
struct CollectiveFlowTemplate {
  std::span<const sim::ResourceId> path;
  double byte_fraction = 0;    ///< flow bytes = byte_fraction × call.bytes
  double cap_bytes_per_s = 0;  ///< rate cap before the protocol factor [bytes/s] (of the sum over its paths)
  /// The same cap over the fabric's switch-to-switch links alone (infinite when it crosses none):
  /// a spine carries the call's bytes whatever the channels NCCL keeps, so NCCL's channel cut
  /// (nccl_channel_share) does not scale it [bytes/s].
  double fabric_cap_bytes_per_s = 0;
  /// The same cap over every other link (GPU links, PCIe, NICs) [bytes/s].
  double node_cap_bytes_per_s = 0;
  std::int32_t multipath = -1;  ///< multi-path flow index (CollectivePlan::multipath_first), or -1: one path
};

/// One phase of a plan: flows that run concurrently, then NCCL's latency; the next phase starts
/// when the latency has passed.
struct CollectivePhase {
  std::uint32_t first_flow = 0;  ///< index of the phase's first flow in CollectivePlan::flows
  std::uint32_t num_flows = 0;
  std::array<double, 3> latency_s{};  ///< per protocol (before size-dependent adjustments) [s]
  double seconds_per_byte = 0;        ///< bottleneck time per byte of call.bytes at protocol factor 1 [s/byte]
  /// The same over every link but the fabric's switch-to-switch links [s/byte]: what NCCL's tuner
  /// sees (its bandwidths come from the node's graph and NICs, never from the spine), so the
  /// algorithm and protocol chosen do not depend on oversubscription or routing.
  double tuner_seconds_per_byte = 0;
  /// tuner_seconds_per_byte split by stage (its max is tuner_seconds_per_byte): over the GPUs'
  /// NVLink ports, and over the other links (PCIe, NICs and their cables; a GPU PCIe link's
  /// both-way budget included). NVLS tree's pipeline fill takes each stage at a lane's own rate
  /// (nvls_lane_seconds_per_byte, nccl_tuning.h).
  double nvlink_tuner_seconds_per_byte = 0;
  double other_tuner_seconds_per_byte = 0;
  /// seconds_per_byte over the fabric's switch-to-switch links alone (0: none crossed) [s/byte].
  double fabric_seconds_per_byte = 0;
  double nvlink_scale = 1.0;                ///< extra efficiency on NVLink resources (NVLS)
  bool ring_plateau = false;                ///< NCCL: ring Simple all_reduce across nodes, latency x 1.4
  LinkKind bottleneck = LinkKind::other;    ///< kind of the link with the largest time per byte
  bool bottleneck_duplex = false;           ///< that bound is a GPU PCIe link's both-way budget
  double duplex_load_seconds_per_byte = 0;  ///< max (up + down) / capacity over both-way GPU PCIe links [s/byte]
};

/// How one algorithm runs one (op, ranks): its phases, their flows, and what NCCL's tuner reads
/// (protocols, channels, the calibration fit).
struct CollectivePlan {
  CollectiveOp op{};
  CollectiveAlgorithm algorithm{};
  std::vector<int> ranks;  ///< GPU ids in rank order
  /// all_to_all: flat, or DeepEP's per-node deduplicated dispatch (moe_dispatch.h); part of the
  /// plan's key.
  MoeDispatch moe{};
  int channels = 1;  ///< parallel rings/trees (1 for all_to_all/send_recv)
  int num_nodes = 1;
  std::vector<CollectivePhase> phases;
  std::vector<CollectiveFlowTemplate> flows;
  /// Multi-path flow k (CollectiveFlowTemplate::multipath) carries multipath_fractions[i] of the
  /// call's bytes on multipath_paths[i] for i in [multipath_first[k], multipath_first[k + 1]).
  std::vector<std::span<const sim::ResourceId>> multipath_paths;
  std::vector<double> multipath_fractions;
  std::vector<std::uint32_t> multipath_first;  ///< per multi-path flow, and one past the last
  /// The multi-path flows' merged routes, built on a phase's first start (multipath_route in
  /// collective_plans.h): the tuner prices a plan without them, so plans that never run (PAT
  /// in a ring run) merge nothing. Mutable: a cache of the plan's own data.
  mutable std::vector<sim::FlowNetwork::MultiPathRoute> routes;
  std::array<bool, 3> protocol_allowed{true, true, true};  ///< index: LL, LL128, Simple
  bool applicable = true;           ///< false: the algorithm cannot run this call (plan is empty)
  const char* why_not = "";         ///< !applicable: why, e.g. "tree runs only all_reduce" (static text)
  bool automatic_candidate = true;  ///< false: runs only when forced (tree on one node)
  int rails = 0;                    ///< > 1 node: NCCL's ring graph channels before the dup (0: no NICs)
  int graph_channels = 0;           ///< ring across nodes: NCCL's ring graph channels (after dup); else 0
  /// Not a ring, > 1 node: graph_channels of the ring plan of the same (op, ranks), which NCCL's
  /// tree graph shares (set by CollectiveEngine when it caches the plan); else 0.
  int ring_graph_channels = 0;
  int comm_channels = 0;  ///< ring across nodes: NCCL's comm->nChannels; else 0
  /// Ring, tree and PAT: NCCL's comm->nChannels for the group (comm_channels across nodes; one
  /// node: the ring graph's channels doubled, then NCCL_MAX/MIN_NCHANNELS), the channels a call
  /// spreads over before enqueue.cc cuts them for small sizes (nccl_channel_share); 0: not set.
  int nccl_channels = 0;
  /// NCCL's maxThreads[RING][SIMPLE] (tuning.cc): 256 when the one-node ring graph moves at most
  /// PCI_BW = 12 GB/s in all (bwIntra x nChannels), else NCCL_SIMPLE_MAX_NTHREADS = 512.
  int ring_simple_threads = 512;
  bool single_gpu_node = false;        ///< > 1 node and some node holds one GPU of the group
  const CollectiveFit* fit = nullptr;  ///< the profile's fit for (op, group size), or null
  /// all_to_all / send_recv inside one node: NCCL's p2p schedule (nccl_p2p.h). p2p_channels.channels
  /// 0: none (across nodes the model keeps one concurrent exchange and the tuner's protocol).
  NcclP2pChannels p2p_channels{0, 0};
  std::vector<int> p2p_rounds;         ///< p2p schedule rounds each rank sends in (0 = itself)
  double p2p_chunk_bytes = 0;          ///< Simple's step (comm->p2pChunkSize) [bytes]
  double p2p_channel_bytes_per_s = 0;  ///< one channel's rate: the ring graph's bwIntra [bytes/s]
  /// all_to_all / send_recv across nodes (NCCL's flat grouped send/recv): a peer's bytes up to which
  /// NCCL's planner takes LL, Simple above, never LL128 (nccl_p2p_net_ll_bytes) [bytes]; 0 elsewhere.
  double p2p_net_ll_bytes = 0;
};

}  // namespace traincast::models
