#pragma once
// A node template: a server as data (GPUs, NICs, PCIe tree, CPU sockets, NVLink wiring), the one
// form the built-in catalog (models/hardware/node_templates.textproto) and a scenario's own
// node_template blocks share (docs/hardware.md "User-described nodes"); and the templates one
// scenario describes (DescribedNodeTemplates), which belong to that scenario alone.
// Lookup by name: models/hardware/catalog.h (find_node_template).

#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace traincast::models {

/// How the GPUs of a node reach each other besides PCIe.
enum class ScaleUp {
  none,      ///< PCIe only (GPU P2P through switches / root complex, or staged through host memory)
  nvswitch,  ///< every GPU's NVLinks go to NVSwitch chips: non-blocking all-to-all
  mesh,      ///< direct links between every GPU pair (AMD xGMI, HGX 4-GPU NVLink): links / peers each
  /// NVLink bridges join GPUs in groups of NodeTemplate::bridge_gpus (or ClusterSpec's
  /// nvlink_bridge_gpus): 2-way, GPUs 2k and 2k+1 (A30, A100/H100 PCIe); 4-way (H200 NVL), GPUs
  /// 4k..4k+3 all-to-all, each card's links split evenly over its 3 peers. Other pairs use PCIe.
  bridges,
  /// The NVLink links a node template lists one by one (NodeTemplate::nvlinks): GPUs joined by
  /// direct links in a pattern of their own, e.g. DGX-1's hybrid cube mesh. Other pairs use PCIe.
  graph,
};

/// `links` NVLink links between local GPUs gpu_a and gpu_b (ScaleUp::graph), each at the GPU's
/// per-link rate in each direction.
struct NvlinkEdge {
  int gpu_a = 0;
  int gpu_b = 0;
  int links = 1;
  bool operator==(const NvlinkEdge&) const = default;
};

/// One PCIe switch of a node's PCIe tree (NodeTemplate::pcie_tree; text form `pcie_switch`): its
/// uplink reaches the root complex of CPU socket `socket` or, cascaded, a downstream port of
/// switch `upstream_switch`; GPUs and NICs sit on its downstream ports.
struct PcieSwitch {
  int socket = -1;                ///< socket whose root complex the uplink reaches; -1 when cascaded
  int upstream_switch = -1;       ///< switch (index into pcie_tree) the uplink reaches; -1 = a socket
  int uplink_generation = 0;      ///< as written; 0 = the node's pcie_generation
  int uplink_lanes = 0;           ///< as written; 0 = the node's pcie_lanes
  double uplink_bytes_per_s = 0;  ///< per direction; complete_node_template fills 0 (pcie_tree.h)
  std::vector<int> gpus;          ///< local GPUs on its downstream ports
  std::vector<int> nics;          ///< compute NICs on its downstream ports
  bool operator==(const PcieSwitch&) const = default;
};

/// GPUs and NICs on CPU socket `socket`'s own root ports, no switch between (NodeTemplate::root_ports).
struct PcieRootPorts {
  int socket = 0;
  std::vector<int> gpus;
  std::vector<int> nics;
  bool operator==(const PcieRootPorts&) const = default;
};

/// The local GPUs compute NIC `nic` serves (NodeTemplate::nic_gpus): a GPU's traffic to other
/// nodes leaves through the first NIC that serves it (its rail), and a NIC is placed beside the
/// first GPU it serves (the GPU NCCL's PXN relays through).
struct NicGpus {
  int nic = 0;
  std::vector<int> gpus;
  bool operator==(const NicGpus&) const = default;
};

/// A server as a graph: GPUs and NICs on PCIe switches (or CPU root ports), switches on CPU
/// sockets or on other switches, sockets joined by UPI/xGMI, NVLink per ScaleUp. The PCIe tree is
/// pcie_tree and root_ports, written out or, when neither is, the regular layout of pcie_switches
/// (complete_node_template expands it, models/hardware/pcie_tree.h): GPU g under PCIe switch
/// g / gpus_per_pcie_switch(); switch s on socket s * sockets / pcie_switches. Which GPUs a NIC
/// serves is nic_gpus, by default: with N NICs and G GPUs, NIC i serves GPUs [i*G/N, (i+1)*G/N)
/// when N <= G, GPU i*G/N otherwise (several NICs per GPU), and in the regular layout sits under
/// that GPU's switch (or root port).
struct NodeTemplate {
  std::string name;  ///< e.g. "dgx_a100", "dgx_h100"
  std::string gpu;   ///< GpuSpec name
  int gpus_per_node = 8;
  ScaleUp scale_up = ScaleUp::nvswitch;
  int bridge_gpus = 2;                 ///< ScaleUp::bridges: GPUs per NVLink bridge (2 or 4)
  int nvswitches = 0;                  ///< NVSwitch chips on the baseboard (0 = none)
  std::string nic;                     ///< NicSpec name of the compute NICs
  int nics = 8;                        ///< compute NICs (see above for which GPUs each serves)
  int sockets = 2;                     ///< CPU sockets (NUMA domains), >= 1
  int pcie_switches = 4;               ///< PCIe switches; 0 = GPUs and NICs on CPU root ports
  int pcie_generation = 0;             ///< of the GPU/NIC links
  int pcie_lanes = 16;                 ///< of each GPU/NIC link (the rate's default, node_template_text.h)
  double pcie_bytes_per_s = 0;         ///< each GPU's and NIC's PCIe link, per direction (x16)
  double pcie_uplink_bytes_per_s = 0;  ///< PCIe switch <-> root complex, per direction
  /// Each compute NIC's own PCIe link, per direction [bytes/s]; 0 = pcie_bytes_per_s. Set where the
  /// GPU's host link is not PCIe: on Grace superchips (GB200, GB300) the GPU reaches the host over
  /// NVLink-C2C (pcie_bytes_per_s 450e9) while a ConnectX-7/8 NIC sits on PCIe gen5/gen6 x16.
  double nic_pcie_bytes_per_s = 0;
  /// GPU traffic between two sockets, per direction [bytes/s]: what NCCL's topology model allows
  /// for GPU P2P over UPI/xGMI (NVIDIA/nccl src/graph/topo.h: SKL_QPI_BW 10, SRP_QPI_BW 22,
  /// ERP_QPI_BW 40, AMD_ZEN12_BW 16, AMD_ZEN34_BW 24, AMD_ZEN5_BW 32 GB/s), not the raw link rate.
  double socket_link_bytes_per_s = 0;
  std::string cpu;       ///< CPU family (names the socket-link figure)
  bool pcie_p2p = true;  ///< GPU P2P over PCIe allowed (false: staged through host memory)
  /// The product ships with cold plates only (GB200/GB300 NVL72): a scenario's thermal.cooling
  /// defaults to liquid on it and air is refused (models/io/scenario_convert.cc, scenario checks).
  bool liquid_cooled = false;
  /// GPUs in one rack when the product is a whole rack (GB200 NVL72: 72); thermal.nodes_per_rack
  /// then defaults to gpus_per_rack / gpus_per_node (1 for the rack, 2 for "gb200_nvl72/36") and
  /// other values are refused. 0 = servers racked as the scenario says (default 4 per rack).
  int gpus_per_rack = 0;
  /// GPUs of the physical product a node of this template is cut from: set on "base/N" partitions
  /// (models/hardware/nvlink_domains.h) to the base's GPUs (72 for "gb200_nvl72/36"), the unit a
  /// purchase price is for (cost.node_price_usd: a whole server or rack is bought, never a domain).
  /// 0 = the node is the whole product. physical_gpus() reads it.
  int partition_of_gpus = 0;
  /// ScaleUp::graph: the node's NVLink links, each GPU pair at most once.
  std::vector<NvlinkEdge> nvlinks;
  /// The PCIe switches, in switch order (pcie_switches of them once completed).
  std::vector<PcieSwitch> pcie_tree;
  /// GPUs and NICs on CPU root ports, by socket.
  std::vector<PcieRootPorts> root_ports;
  /// Which GPUs each NIC serves (empty before complete_node_template when not written).
  std::vector<NicGpus> nic_gpus;
  std::string source;
  /// GPUs under one PCIe switch (or root port when pcie_switches is 0).
  int gpus_per_pcie_switch() const {
    return pcie_switches > 0 ? (gpus_per_node + pcie_switches - 1) / pcie_switches : 1;
  }
  /// Each compute NIC's PCIe link per direction [bytes/s] (nic_pcie_bytes_per_s, else the GPUs').
  double nic_link_bytes_per_s() const { return nic_pcie_bytes_per_s > 0 ? nic_pcie_bytes_per_s : pcie_bytes_per_s; }
  /// GPUs of the physical server or rack one buys for nodes of this template (the priced unit).
  int physical_gpus() const { return partition_of_gpus > 0 ? partition_of_gpus : gpus_per_node; }
  /// Nodes of this template in one physical server or rack: 2 for "gb200_nvl72/36", 1 for
  /// "gb200_nvl72/64" (8 spare GPUs), 1 for a whole template.
  int nodes_per_physical() const { return std::max(1, physical_gpus() / std::max(1, gpus_per_node)); }
  bool operator==(const NodeTemplate&) const = default;
};

/// The node templates one scenario describes (its node_template blocks, completed and checked by
/// the scenario loader, models/io/node_template_io.h), in block order. They belong to the scenario:
/// two scenarios of one process may describe different nodes under one name, and neither sees the
/// other's. Shared and read-only: copies of a scenario (sweep points, planner candidates, a
/// Cluster's spec) share one set, and threads may look up in it at once. The set also keeps the
/// "base/N" partitions of its templates (models/hardware/nvlink_domains.h) that lookups build, so
/// a reference find_node_template returns stays valid while a copy of the set lives. Two sets are
/// equal when their described templates are (the kept partitions follow from them).
class DescribedNodeTemplates {
 public:
  DescribedNodeTemplates() = default;
  explicit DescribedNodeTemplates(std::vector<NodeTemplate> templates)
      : shared_(templates.empty() ? nullptr : std::make_shared<Shared>(std::move(templates))) {}

  /// The described templates in block order (empty when the scenario describes none).
  const std::vector<NodeTemplate>& all() const { return shared_ ? shared_->described : none(); }
  /// The described template named `name` (a plain name, no '/'); null when none is.
  const NodeTemplate* find(std::string_view name) const {
    for (const NodeTemplate& t : all()) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  /// The partition named `name` ("base/N" of a described base) kept before, else `build()`'s,
  /// kept from now on. `build` may throw (a size the base cannot be cut into): nothing is kept.
  /// Call only on a set that is not empty.
  template <typename Build>
  const NodeTemplate& partition(std::string_view name, Build build) const {
    const std::lock_guard<std::mutex> lock(shared_->mutex);
    for (const NodeTemplate& t : shared_->partitions) {
      if (t.name == name) return t;
    }
    shared_->partitions.push_back(build());
    return shared_->partitions.back();
  }

  bool operator==(const DescribedNodeTemplates& o) const { return all() == o.all(); }

 private:
  struct Shared {
    explicit Shared(std::vector<NodeTemplate> t) : described(std::move(t)) {}
    const std::vector<NodeTemplate> described;
    std::mutex mutex;                     ///< guards partitions
    std::deque<NodeTemplate> partitions;  ///< a deque: references to kept ones stay valid
  };
  static const std::vector<NodeTemplate>& none() {
    static const std::vector<NodeTemplate> empty;
    return empty;
  }
  std::shared_ptr<Shared> shared_;
};

}  // namespace traincast::models
