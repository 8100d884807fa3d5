#pragma once
// The cluster part of a scenario (`cluster { ... }`): node template, fabric, NCCL settings, NICs.
// Defaults are the documented defaults of the scenario schema (models/io/traincast.proto).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include "models/spec/enums.h"
#include "models/spec/node_template.h"

namespace traincast::models {

struct CalibrationProfile;  // models/calibration/calibration_profile.h

/// Collective settings of the communication library, as NCCL's environment sets them.
struct CollectiveSpec {
  /// NCCL_ALGO: forced algorithm for every collective that supports it (others fall back to
  /// their only algorithm); automatic = least predicted time.
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic;
  /// NCCL_PROTO: forced protocol; empty = least predicted time.
  std::optional<CollectiveProtocol> protocol;
  /// NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS: the least number of channels (CTAs) a collective runs
  /// on, 0 to 64 (MAXCHANNELS); 0 = NCCL's default. NCCL raises comm->nChannels to it by copying
  /// its channels (src/graph/connect.cc ncclTopoPostset); see models/collectives/nccl_tuning.h.
  int min_channels = 0;
  /// NCCL_MAX_NCHANNELS / NCCL_MAX_CTAS: the most channels, 0 to 64; 0 = NCCL's default. Applied
  /// before min_channels (NCCL keeps the first channels, then copies them up to the minimum).
  int max_channels = 0;
  /// NCCL release whose constants the collectives use (search speed arrays, tuner tables, which
  /// algorithms exist), "MAJOR.MINOR.PATCH" from 2.9.0 to 2.28.3; empty = the newest modelled
  /// (models/collectives/nccl_versions.h).
  std::string nccl_version;
  /// Where algorithm / protocol were written, "file:line:col" (or the override's origin, e.g.
  /// "--set" or a cases file's position), set by the scenario loader; empty when not written there
  /// (built in code, or left at the default). The refusal of a forced algorithm or protocol that
  /// cannot run (models/collectives/collective_engine.h) starts with it. Provenance for messages
  /// only: operator== ignores both.
  std::string algorithm_origin;
  std::string protocol_origin;
  bool operator==(const CollectiveSpec& o) const {
    return algorithm == o.algorithm && protocol == o.protocol && min_channels == o.min_channels &&
           max_channels == o.max_channels && nccl_version == o.nccl_version;
  }
};

/// Inter-node network. Bandwidths come from the node template's NICs.
struct FabricSpec {
  FabricKind kind = FabricKind::rail_optimized;
  /// Leaf down:up bandwidth ratio, >= 1 (1 = non-blocking). Uplinks are whole ports at the NIC
  /// line rate: ceil(down ports / ratio) of them, so the effective ratio is <= the one asked.
  double oversubscription = 1.0;
  /// Per switch hop [ns]. Default 130 ns is typical of an HDR/NDR IB switch port-to-port latency
  /// (NVIDIA QM8700/QM9700 datasheets: ~130 ns).
  std::int64_t switch_latency_ns = 130;
  /// Nodes under one leaf switch (per rail for rail-optimized); default 32 (a 64-port leaf with
  /// half its ports down, as in DGX SuperPOD scalable units of 32 nodes), or, where 32 nodes'
  /// ports do not fit in a leaf of leaf_ports (a fat_tree of 8-NIC nodes), the most that do: the
  /// scenario loader sets it (models/hardware/leaf_ports.h default_nodes_per_leaf).
  int nodes_per_leaf = 32;
  /// Switch tiers of a fat tree (fat_tree, rail_optimized): 2 (leaf-spine) or 3 (leaf, aggregation
  /// in pods, core). Default 2.
  int tiers = 2;
  /// Leaves per pod in a 3-tier tree (they share the pod's aggregation switches). Default 16.
  int leaves_per_pod = 16;
  /// Torus extent per dimension (torus only): 1 to 3 dimensions whose product is num_nodes;
  /// empty = a ring of num_nodes. Each node has one link per direction to each neighbour, at the
  /// line rate of one NIC times nics per node / its neighbour directions (2 per dimension, 1 per
  /// dimension of extent 2: Cluster::torus_directions), which must divide the NICs.
  std::vector<int> torus_dims;
  /// Cable length per network hop [m] (NIC-switch and switch-switch): adds 5 ns/m of propagation
  /// (signal speed ~2e8 m/s in fibre and twinax; IEEE 802.3 clause 1.4 nominal velocity of
  /// propagation). Default 0.
  double cable_length_m = 0.0;
  /// How switches choose among equal-cost up-links (FabricRouting); automatic follows the NICs.
  FabricRouting routing = FabricRouting::automatic;
  /// Seed of the ECMP hash (ecmp_hash routing), as a switch's hash seed: each seed is one draw of
  /// which flows share a spine link. A run averages seeds 0 .. kEcmpSeeds-1 where hashing can
  /// change the routes (models/executor/training_run.h); this field picks one draw. Default 0.
  std::uint64_t ecmp_seed = 0;
  /// In-network reduction over InfiniBand (NVIDIA SHARP in the fabric's switches, NCCL's CollNet
  /// through the SHARP plugin with NCCL_COLLNET_ENABLE=1): NCCL's tuner may then run an all_reduce
  /// across nodes as CollNet Direct or CollNet Chain (models/collectives/nccl_tuning.h). Needs
  /// InfiniBand NICs and a switched fabric (fat_tree or rail_optimized). Default false.
  bool sharp = false;
  /// Leaf up-link ports at the NIC line rate, in place of ceil(down ports / oversubscription)
  /// (0 = from oversubscription). traincast cluster simulates a job on a sub-cluster of its own
  /// nodes and sets this to the whole fabric's leaf ports (models/scheduler/cluster_run.h).
  int leaf_up_ports = 0;
  /// Ports of one leaf (and spine) switch at the NIC line rate, the switch's radix; 0 = the NIC's
  /// generation's switch (models/hardware/leaf_ports.h default_leaf_ports: 64 for a Quantum-2
  /// QM9700, 144 for XDR's Quantum-X800 Q3400). A leaf's down plus up ports must fit in it.
  int leaf_ports = 0;
  bool operator==(const FabricSpec&) const = default;
};

/// One per-element override (`cluster.overrides`, issue 18): what `select` names runs slower than
/// the catalog says. Selector grammar (models/hardware/element_overrides.h): "node17/gpu3" (one
/// GPU), "node17" (every GPU of a node), "node0-15" (every GPU of nodes 0 to 15),
/// "node0-15/gpu3" (GPU 3 of each), "node17/nic1" (both directions of a compute NIC), or a
/// directed resource by the name reports print ("node0.gpu3.nvl_up", "leaf0->spine1").
struct ElementOverride {
  std::string select;
  /// GPU selectors: SM clock as a fraction of the catalog's boost clock, 0 < f <= 1 (0 = unset);
  /// compute-bound kernel time scales by 1/f, memory-bound time not.
  double clock_factor = 0.0;
  /// Link and NIC selectors: capacity as a fraction of the built one, 0 < f <= 1 (0 = unset).
  double bandwidth_factor = 0.0;
  /// NIC selectors ("node3/nic1", or one direction of it) and leaf up-links ("leaf0->spine1", either
  /// direction of the cable): the element is down and routes avoid it (Cluster::serving_nic,
  /// Cluster::route). Exclusive with the factors.
  bool failed = false;
  /// GPU selectors: the GPU's power limit [W] as `nvidia-smi -pl` sets it, 0 < p <= TDP (0 = unset;
  /// the scenario check refuses p below the board's minimum, models/power min_power_limit_w). The
  /// lower of it and power.gpu_power_limit_w holds. Exclusive with the other fields.
  double power_cap_w = 0.0;
  /// Whole-node selectors ("node17", "node0-15"): the node's supply air (air cooling) or coolant
  /// (liquid) temperature [C] in place of thermal.supply_air_c / thermal.coolant_c; unset = those.
  /// Exclusive with the other fields.
  std::optional<double> supply_c = std::nullopt;
  /// One-GPU selectors ("node3/gpu5"): true = that GPU is missing (the node reports fewer GPUs
  /// than its template has), so the node is drained as Slurm drains a node whose gres/gpu count is
  /// below its configured one: no job gets it (Cluster::drained_nodes). Exclusive with the other
  /// fields; written false is refused (unset = present).
  std::optional<bool> missing = std::nullopt;
  bool operator==(const ElementOverride&) const = default;
};

/// One node group of a mixed cluster (`cluster.node_group`, issue 20): num_nodes nodes built from
/// node_template with its GPU (or `gpu`). Groups share one fabric, so every group's template must
/// have the same board shape (GPUs, NICs, sockets, each GPU's and NIC's socket, which GPUs each NIC
/// serves, scale-up kind) and the same NIC (the template's, or cluster.nic); their GPUs, NVLink,
/// PCIe switches and rates, and socket-link figures may differ.
struct NodeGroupSpec {
  std::string node_template;  ///< node template name, as ClusterSpec::node_template
  int num_nodes = 1;          ///< > 0
  std::string gpu;            ///< optional GPU override (catalog name), empty = template's
  bool operator==(const NodeGroupSpec&) const = default;
};

struct ClusterSpec {
  /// Node template name (the first group's with node groups): one of described_node_templates,
  /// a built-in, or a "base/N" partition of either (models/hardware/catalog.h find_node_template).
  std::string node_template = "dgx_h100";
  int num_nodes = 1;  ///< > 0 (the groups' sum with node groups)
  /// Node groups in node order (nodes 0.. of the first group, then the second's, ...); empty = one
  /// group of num_nodes x node_template. When set, node_template and num_nodes are the first
  /// group's template and the groups' sum (the scenario loader sets them), and gpu is empty.
  std::vector<NodeGroupSpec> node_groups;
  std::string gpu;  ///< optional GPU override (catalog name), empty = template's
  FabricSpec fabric;
  CollectiveSpec collectives;  ///< NCCL_ALGO / NCCL_PROTO
  /// GPUDirect RDMA between GPUs and NICs; false: NIC traffic is staged through host memory
  /// (crosses the PCIe root complex, and the socket link when the NIC is on the other socket).
  bool gpu_direct_rdma = true;
  NicPlacement nic_placement = NicPlacement::affine;
  /// Compute NIC override: catalog NIC name (e.g. "RoCE-400GbE"); empty = the template's.
  std::string nic;
  /// Compute NICs per node; empty = the template's. NIC i serves the GPUs given in
  /// models/hardware/catalog.h (NodeTemplate); 0 is allowed for a single node.
  std::optional<int> nics_per_node;
  /// GPU peer-to-peer over PCIe; empty = the template's. false: GPU-to-GPU traffic without NVLink
  /// is staged through host memory (NCCL's SHM transport), crossing the root complex.
  std::optional<bool> pcie_p2p;
  /// GPUs per NVLink bridge on a bridged template (2 or 4; models/hardware/catalog.h
  /// bridge_group_problem); empty = the template's (2).
  std::optional<int> nvlink_bridge_gpus;
  /// Calibration profile overlaying the catalog's defaults (models/calibration/calibration_profile.h), from
  /// the scenario's `profile` field or `--profile`; null = datasheet defaults. Shared, read-only.
  std::shared_ptr<const CalibrationProfile> profile;
  /// The node templates the scenario describes (its node_template blocks), shared and read-only;
  /// node_template and the groups' names are looked up here first, then among the built-ins.
  DescribedNodeTemplates described_node_templates;
  /// Per-element overrides in file order; a later one of the same element replaces an earlier one.
  std::vector<ElementOverride> overrides;
  bool operator==(const ClusterSpec&) const = default;
};

}  // namespace traincast::models
