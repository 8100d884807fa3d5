#pragma once
// The PCIe tree of a node template (catalog.h: NodeTemplate::pcie_tree, root_ports, nic_gpus):
// the regular layout of pcie_switches expanded into that written-out form, the checks a written
// tree goes through, and the per-device lookups the cluster routes by. One form for the built-in
// templates and a scenario's own: complete_node_template (node_template_text.h) calls
// check_pcie_tree, then complete_pcie_tree.

#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/node_template_text.h"

namespace traincast::models {

/// true when the template's PCIe tree is written out (pcie_tree or root_ports not empty).
bool has_written_pcie_tree(const NodeTemplate& t);

/// Appends the problems of the written tree and of nic_gpus to `out`, fields named as the text
/// form names them ("pcie_switch[1].upstream_switch", "root_ports[0].gpus", "nic_gpus[2].nic").
/// Refused: pcie_switches other than the pcie_switch entries' count; more switches than twice
/// the node's GPUs and NICs; a switch on both a socket and a switch or on neither; a socket or
/// switch index out of range; a switch its own upstream, or a cycle of upstream switches; an
/// uplink generation, lane count or rate out of range; a GPU or NIC index out of range, attached
/// twice, or not attached; nic_gpus on a node without NICs, a NIC out of range or listed twice,
/// an entry without GPUs, a GPU out of range, a NIC serving no GPU, a GPU served by no NIC.
/// Expects the counts (gpus_per_node, nics, sockets) already in range.
void check_pcie_tree(const NodeTemplate& t, std::vector<NodeTemplateProblem>& out);

/// Fills what the form derives, once check_pcie_tree found nothing and pcie_bytes_per_s and
/// pcie_uplink_bytes_per_s are completed: the regular layout into pcie_tree and root_ports when
/// neither is written; each switch's uplink rate when 0 (uplink_generation x uplink_lanes, each
/// defaulting to the node's, when either is written; else pcie_uplink_bytes_per_s); nic_gpus's
/// default when empty.
void complete_pcie_tree(NodeTemplate& t);

/// Replaces pcie_tree, root_ports and nic_gpus by the regular layout of the template's counts
/// (gpus_per_node, nics, sockets, pcie_switches), uplinks at pcie_uplink_bytes_per_s.
void set_regular_pcie_tree(NodeTemplate& t);

/// true when the tree is the regular layout of pcie_switches: the same attachments and uplink
/// rates (a template whose lists are empty is).
bool pcie_tree_is_regular(const NodeTemplate& t);
/// true when nic_gpus is empty or the default (the same GPUs for every NIC).
bool nic_gpus_are_regular(const NodeTemplate& t);

/// A PCIe switch's uplink per direction [bytes/s]: the switch's own rate when set, else
/// pcie_uplink_bytes_per_s, else pcie_bytes_per_s (a template not completed).
double switch_uplink_bytes_per_s(const NodeTemplate& t, int pcie_switch);

/// The tree as the cluster reads it: every switch's upstream switch and socket, every GPU's and
/// NIC's switch (-1: a root port) and socket, and which NIC serves which GPU.
struct PcieLayout {
  std::vector<int> switch_up;      ///< upstream switch, -1 when on a socket's root complex
  std::vector<int> switch_socket;  ///< the socket at the top of the switch's chain
  std::vector<int> gpu_switch, gpu_socket;
  std::vector<int> nic_switch, nic_socket;
  std::vector<int> gpu_nic;  ///< the first (lowest) NIC serving each GPU; 0 without NICs
  std::vector<int> nic_gpu;  ///< the first (lowest) GPU each NIC serves
  bool operator==(const PcieLayout&) const = default;
};

/// The layout of `t` with `nics` compute NICs (a cluster may set its own count,
/// ClusterSpec::nics_per_node): with the template's count, the NICs where the tree puts them and
/// the GPUs nic_gpus gives them; with another count, the default service and each NIC beside the
/// first GPU it serves. Throws std::invalid_argument "PCIe tree of 'NAME': FIELD: what" for a
/// written tree that check_pcie_tree refuses (a template changed after completion).
PcieLayout pcie_layout(const NodeTemplate& t, int nics);

/// How a node's compute NICs spread over the PCIe switches that hold its GPUs (GPUs on a socket's
/// root ports count as one group per socket). A GPU without a NIC in its group reaches one only
/// through another switch: over NVLink to the NIC's GPU (NCCL's PXN) or through the CPU, and
/// its point-to-point channels spread over every NIC it reaches at that one bandwidth, received
/// across the socket link where the NIC is on the other socket (docs/hardware.md, "All-to-all
/// with 3, 4 or 5 NICs").
struct NicSpread {
  int gpu_groups = 0;                 ///< PCIe switches (and sockets' root ports) holding GPUs
  std::vector<int> group_nics;        ///< NICs in each such group, in order of its lowest GPU
  std::vector<int> group_gpus;        ///< GPUs in each such group, same order
  std::vector<int> gpus_without_nic;  ///< GPUs whose group holds no NIC, ascending
  /// A group holding NICs whose GPUs cannot share them equally: neither count divides the other
  /// (3 NICs on a switch of 2 GPUs: one GPU gets 2, the other 1); -1 when none.
  int unshared_group = -1;
  /// true when every group holds the same number of NICs, or the groups holding NICs hold the
  /// same number each and their count divides gpu_groups (1 NIC on 2 switches, 2 or 4 on 8: the
  /// GPUs without a NIC of their own are an equal share of every NIC's), or the node has no NIC
  /// or no NIC in a GPU's group; and in each group holding NICs the NIC and GPU counts divide one
  /// another (unshared_group). false: 3, 5, 6 or 7 NICs on a dgx_h100's 8 switches, 3, 6 or 12 on
  /// a dgx_a100's 4 switches of 2 GPUs.
  bool even = true;
};
/// The spread of `layout` (pcie_layout's, or the cluster's after nic_placement).
NicSpread nic_spread(const PcieLayout& layout);

}  // namespace traincast::models
