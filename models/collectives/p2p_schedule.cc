// NCCL's p2p schedule of a one-node all_to_all / send_recv plan (nccl_p2p.h): the
// communicator's p2p channels, the Simple chunk and one channel's rate. Declared in
// collective_plans.h.

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "models/collectives/collective_plans.h"
#include "models/collectives/nccl_p2p.h"
#include "models/collectives/nccl_topo_search.h"
#include "sim/flow_network.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

/// NVLink links between local GPUs a and b as NCCL's topology counts them (the links NVML
/// reports, each at NCCL's per-link figure; the narrowest hop of the path): the catalog's, not
/// the built capacity, so a slowed link (cluster.overrides bandwidth_factor) is slower, not fewer.
int template_nvlinks(const Cluster& cluster, const GpuSpec& gpu, int a, int b) {
  switch (cluster.scale_up()) {
    case ScaleUp::nvswitch:
      return gpu.nvlink_links;  // GPU -> NVSwitch -> GPU: every link of the port
    case ScaleUp::mesh:
      return gpu.nvlink_links / std::max(1, cluster.gpus_per_node() - 1);
    case ScaleUp::bridges:
      return gpu.nvlink_links / std::max(1, cluster.bridge_gpus() - 1);
    case ScaleUp::graph: {
      int links = 0;
      for (const NvlinkEdge& e : cluster.node_template().nvlinks)
        if ((e.gpu_a == a && e.gpu_b == b) || (e.gpu_a == b && e.gpu_b == a)) links += e.links;
      return links;
    }
    case ScaleUp::none:
      break;
  }
  return 0;
}

/// NCCL's ring graph of local GPUs `local` (GPU ids of one node of `cluster`) as NCCL's topology
/// sees that node: its NVLink links at NCCL's per-link figures, without the cluster's slowed
/// links (cluster.overrides) or a calibration profile's link rates, which NCCL's search does not
/// know; so a slower link never changes the channels NCCL plans its p2p on. Searched on a
/// one-node cluster of the node's template, once per (node, group shape) per process.
struct NominalGraph {
  int channels = 0;        ///< after ncclTopoDupChannels
  double bw_gb_per_s = 0;  ///< per channel after the dup
};
NominalGraph nominal_ring_graph(const Cluster& cluster, const std::vector<int>& local) {
  ClusterSpec spec = cluster.spec();
  if (!spec.node_groups.empty()) {
    const NodeGroupSpec& group =
        spec.node_groups[static_cast<std::size_t>(cluster.group_of_node(cluster.node_of(local[0])))];
    spec.node_template = group.node_template;
    spec.gpu = group.gpu;
    spec.node_groups.clear();
  }
  spec.num_nodes = 1;
  spec.overrides.clear();
  spec.profile = nullptr;
  spec.fabric = FabricSpec{};
  spec.fabric.kind = FabricKind::none;
  std::vector<int> ranks;
  std::string key = spec.node_template;
  for (const std::string& part :
       {spec.gpu, spec.collectives.nccl_version, std::to_string(spec.nvlink_bridge_gpus.value_or(0)),
        std::to_string(static_cast<int>(spec.pcie_p2p.value_or(true)))}) {
    key.push_back('|');
    key.append(part);
  }
  for (int g : local) {
    ranks.push_back(cluster.local_rank(g));
    key.push_back(',');
    key.append(std::to_string(ranks.back()));
  }
  static std::mutex mutex;
  static std::map<std::string, NominalGraph> memo;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const Cluster node(spec, net);
  NcclTopoCache cache;
  const NcclTopoGraph& graph = cache.ring_graph(node, net, ranks, -1);
  const NominalGraph out{static_cast<int>(graph.channels.size()), graph.bw_gb_per_s};
  memo.emplace(key, out);
  return out;
}

}  // namespace

/// NCCL's p2p schedule of a group inside one node (nccl_p2p.h): the communicator's p2p channels
/// (ncclTopoComputeP2pChannels over comm->nChannels and every pair's ncclTopoGetNchannels), the
/// Simple chunk (src/init.cc: NCCL_P2P_NVL_CHUNKSIZE, every pair talking over NVLink) and one
/// channel's rate, half the ring graph's per-channel bandwidth. Groups with a pair off NVLink keep
/// no schedule.
void set_p2p_schedule(CollectivePlan& plan, const RankGroups& g, const PlanInputs& in) {
  const Cluster& cluster = in.cluster;
  const std::vector<int>& local = g.per_node[0];
  const NominalGraph graph = nominal_ring_graph(cluster, local);
  if (graph.channels == 0 || !(graph.bw_gb_per_s > 0)) return;
  // comm->nChannels on one node: ncclTopoPostset runs every graph channel twice ("nChannels =
  // comm->nChannels = std::min(MAXCHANNELS,nChannels*2)", src/graph/connect.cc), then
  // NCCL_MAX_NCHANNELS keeps the first ones and NCCL_MIN_NCHANNELS copies them up.
  const CollectiveSpec& spec = cluster.spec().collectives;
  int comm = std::min(kNcclMaxP2pChannels, 2 * graph.channels);
  if (spec.max_channels > 0) comm = std::min(comm, spec.max_channels);
  comm = std::max(comm, spec.min_channels);
  // ncclTopoGetNchannels per pair: NVLink (direct or through the NVSwitch): 2 x the links of the
  // path's narrowest hop (path bw / per-link bw); any other path: 2.
  const GpuSpec& gpu = cluster.gpu_spec(local[0]);
  int fewest = std::numeric_limits<int>::max();
  bool all_nvlink = true;
  for (int a : local) {
    for (int b : local) {
      if (a == b) continue;
      const int links = cluster.nvlink_between(cluster.local_rank(a), cluster.local_rank(b))
                            ? template_nvlinks(cluster, gpu, cluster.local_rank(a), cluster.local_rank(b))
                            : 0;
      all_nvlink = all_nvlink && links > 0;
      fewest = std::min(fewest, nccl_p2p_peer_channels(links));
    }
  }
  // Only over NVLink, where one channel's rate is seen in measurements (docs/hardware.md: ~20
  // GB/s on GB200's all-to-all rows and in r02's H100 sendrecv steps), not over PCIe, where NCCL
  // runs 2 channels per peer and the model keeps one transfer at the link's rate.
  if (!all_nvlink) return;
  plan.p2p_channels = nccl_p2p_channels(comm, fewest);
  plan.p2p_rounds.clear();
  if (plan.op == CollectiveOp::send_recv) {
    plan.p2p_rounds.push_back(1);
  } else {
    for (int r = 0; r < static_cast<int>(plan.ranks.size()); ++r) plan.p2p_rounds.push_back(r);
  }
  plan.p2p_chunk_bytes = kNcclP2pNvlChunkBytes;
  // One channel's rate: ncclTopoPostset runs each graph channel on two comm channels, so the
  // graph's bwIntra per channel (what NCCL's tuner counts per graph channel) is shared by two
  // thread blocks; NCCL_MIN/MAX_NCHANNELS change how many run, not what one moves.
  plan.p2p_channel_bytes_per_s = graph.bw_gb_per_s / 2 * 1e9;
}

}  // namespace traincast::models
