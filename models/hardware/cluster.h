#pragma once
// The cluster as a graph of directed resources on a FlowNetwork: per-GPU NVLink/NVSwitch ports,
// PCIe to NICs, NIC uplinks, leaf and spine switch links. Routes are deterministic.

#include <span>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/scenario.h"
#include "sim/flow_network.h"

namespace traincast::models {

class Cluster {
 public:
  /// Builds every resource of the cluster on `net`. Throws std::invalid_argument for an unknown
  /// template/GPU or impossible sizes.
  Cluster(const ClusterSpec& spec, sim::FlowNetwork& net);

  int num_gpus() const;
  int num_nodes() const;
  int gpus_per_node() const;
  int node_of(int gpu) const { return gpu / gpus_per_node(); }
  int local_rank(int gpu) const { return gpu % gpus_per_node(); }
  const GpuSpec& gpu_spec(int gpu) const;
  const NodeTemplate& node_template() const;
  const NicSpec& nic() const;

  /// Directed resources a byte crosses from src to dst GPU (src != dst), in order.
  /// Deterministic: ECMP picks by a fixed hash of (src, dst). Throws std::out_of_range.
  std::span<const sim::ResourceId> route(int src_gpu, int dst_gpu) const;

  /// Human-readable list of devices and links with bandwidths.
  std::string describe() const;
};

}  // namespace traincast::models
