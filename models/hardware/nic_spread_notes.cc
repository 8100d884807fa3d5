// Cluster::nic_spread_notes: a node whose compute NICs spread unevenly over its PCIe switches
// (pcie_tree.h nic_spread), so that the commands say why point-to-point traffic can take longer
// with more NICs (docs/hardware.md, "All-to-all with 3, 4 or 5 NICs") instead of leaving the
// user to find it in the figures.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "models/hardware/cluster.h"
#include "models/hardware/pcie_tree.h"

namespace traincast::models {
namespace {

/// "a", "a and b", "a, b and c" (`last` for "and"); past `most` items, the first `most` and
/// "N more".
std::string listing(const std::vector<std::string>& items, std::size_t most = 8, const char* last = " and ") {
  std::string out;
  const std::size_t shown = items.size() > most ? most : items.size();
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) out += i + 1 == items.size() ? last : ", ";
    out += items[i];
  }
  if (shown < items.size()) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

/// Whether `nics` NICs spread evenly over `t` (the regular placement of that count), and whether
/// every GPU then has a NIC on its switch.
struct Candidate {
  bool even = false;
  bool every_gpu = false;
};
Candidate candidate(const NodeTemplate& t, int nics) {
  const NicSpread s = nic_spread(pcie_layout(t, nics));
  return {s.even, s.even && s.gpus_without_nic.empty()};
}

}  // namespace

std::vector<std::string> Cluster::nic_spread_notes(const ClusterSpec& spec) {
  const Cluster c(spec, SizesOnly{});
  const int nics = c.nics_per_node_;
  // One node: its NICs carry nothing (settings_without_effect says so for a nics_per_node set).
  if (c.fabric_slots() <= 1 || nics <= 0) return {};
  // The tree as routed: each NIC where nic_placement puts it (every group alike, node_groups.cc).
  PcieLayout routed = c.pcie_;
  for (int i = 0; i < nics; ++i) {
    routed.nic_switch[static_cast<std::size_t>(i)] = c.switch_of_nic(0, i);
    routed.nic_socket[static_cast<std::size_t>(i)] = c.socket_of_nic(i);
  }
  const NicSpread spread = nic_spread(routed);
  if (spread.even) return {};
  const NodeTemplate& t = *c.template_;
  const auto gpu = [](int g) { return "gpu" + std::to_string(g); };
  const auto nic = [](int i) { return "nic" + std::to_string(i); };

  std::string o = spec.nics_per_node.has_value()
                      ? "cluster.nics_per_node " + std::to_string(nics) + " on " + t.name
                      : "node template " + t.name + " with " + std::to_string(nics) + " NICs";
  std::vector<std::string> lacking;
  for (const int g : spread.gpus_without_nic) lacking.push_back(gpu(g));
  if (lacking.empty() && spread.unshared_group >= 0 &&
      std::all_of(spread.group_nics.begin(), spread.group_nics.end(),
                  [&](int n) { return n == spread.group_nics.front(); })) {
    const std::size_t k = static_cast<std::size_t>(spread.unshared_group);
    o += " puts " + std::to_string(spread.group_nics[k]) + " NICs on each PCIe switch of " +
         std::to_string(spread.group_gpus[k]) +
         " GPUs: the switch's GPUs cannot share them equally (NCCL gives each GPU NICs of its own), so their "
         "point-to-point traffic (all_to_all, send/recv: expert parallelism across nodes) can take longer than "
         "with a count they share equally (docs/hardware.md, \"All-to-all with 3, 4 or 5 NICs\")";
  } else if (lacking.empty()) {
    std::vector<std::string> counts;
    for (const int n : spread.group_nics) counts.push_back(std::to_string(n));
    o += " puts its NICs unevenly on the " + std::to_string(spread.gpu_groups) + " PCIe switches holding its GPUs (" +
         listing(counts, 16) + " NICs): the GPUs of a switch with fewer share less NIC bandwidth";
  } else {
    std::vector<std::string> beside;
    for (int i = 0; i < nics; ++i)
      if (std::find(beside.begin(), beside.end(), gpu(c.gpu_of_nic(i))) == beside.end())
        beside.push_back(gpu(c.gpu_of_nic(i)));
    o += " leaves " + listing(lacking) + (lacking.size() == 1 ? " without a NIC on its" : " without a NIC on their") +
         " PCIe switch (the NICs sit beside " + listing(beside) + ", on " + std::to_string(spread.gpu_groups) +
         " switches holding GPUs): they reach one only through another switch";
    // Each GPU's NIC (the one NCCL gives it for rings and trees) and how it gets there, GPUs of
    // one NIC and path together: "gpu1 and gpu2 -> nic0 via gpu0 over NVLink (PXN)".
    std::vector<std::string> routes;
    for (std::size_t k = 0; k < spread.gpus_without_nic.size();) {
      const int g = spread.gpus_without_nic[k];
      const int n = c.nic_of_local(g), relay = c.gpu_of_nic(n);
      const bool nvlink = c.nvlink_between(g, relay), other_socket = c.socket_of_nic(n) != c.socket_of_gpu(g);
      std::vector<std::string> same{gpu(g)};
      for (++k; k < spread.gpus_without_nic.size(); ++k) {
        const int h = spread.gpus_without_nic[k];
        if (c.nic_of_local(h) != n || c.nvlink_between(h, relay) != nvlink ||
            (c.socket_of_nic(n) != c.socket_of_gpu(h)) != other_socket)
          break;
        same.push_back(gpu(h));
      }
      routes.push_back(listing(same) + " -> " + nic(n) + (other_socket ? " on the other socket" : "") +
                       (nvlink ? " via " + gpu(relay) + " over NVLink (PXN)" : std::string(" through the CPU")));
    }
    o += " (";
    for (std::size_t k = 0; k < routes.size(); ++k) o += (k > 0 ? "; " : "") + routes[k];
    o += "), and their point-to-point traffic (all_to_all, send/recv: expert parallelism across nodes) "
         "spreads over every NIC they reach and is received across the CPU socket link where that NIC is on "
         "the other socket, so it can take longer than with fewer NICs spread evenly (docs/hardware.md, "
         "\"All-to-all with 3, 4 or 5 NICs\"); collectives too: NCCL's ring and tree search lays its channels "
         "over these NICs (one or two per NIC) and can give fewer, slower channels than an even count does "
         "(docs/properties.md, \"4 → 6 NICs on a DGX node\": 2 x DGX H100, all_reduce 16 MiB 176 us at 4 "
         "NICs, 247 us at 5)";
  }

  // The nearest counts either side that spread evenly, and the first that gives every GPU a NIC;
  // none above one NIC per GPU (fresh user 39: 9 on dgx_h100 offered 16, which runs as 8): NCCL's
  // rings and trees give each GPU its own first NIC (ncclTopoSelectNets, nccl_topo_search.cc), so
  // a second NIC per GPU changed no time (dgx_h100 all_reduce, all_gather and alltoall 1 GiB on 2
  // nodes; DGX A100 all_to_all 64 MiB 1,421 us at 8 and 16; docs/hardware.md).
  const int limit = std::min(nics + 2 * (spread.gpu_groups + t.gpus_per_node), t.gpus_per_node);
  int lower = 0, upper = 0, every = 0;
  for (int k = std::min(nics - 1, t.gpus_per_node); k >= 1 && lower == 0; --k)
    if (candidate(t, k).even) lower = k;
  for (int k = nics + 1; k <= limit && upper == 0; ++k)
    if (candidate(t, k).even) upper = k;
  for (int k = 1; k <= limit && every == 0; ++k)
    if (candidate(t, k).every_gpu) every = k;
  std::vector<std::string> shared, own;
  for (const int k : {lower, upper, every}) {
    if (k <= 0) continue;
    std::vector<std::string>& list = candidate(t, k).every_gpu ? own : shared;
    if (std::find(list.begin(), list.end(), std::to_string(k)) == list.end()) list.push_back(std::to_string(k));
  }
  if (!shared.empty() || !own.empty()) {
    o += " (expected cluster.nics_per_node ";
    if (!shared.empty())
      o += listing(shared, 8, " or ") + ", as many NICs on each of an equal share of the " +
           std::to_string(spread.gpu_groups) + " switches";
    if (!shared.empty() && !own.empty()) o += ", or ";
    if (!own.empty()) o += listing(own, 8, " or ") + ", a NIC on every GPU's switch";
    o += ")";
  }
  return {o};
}

}  // namespace traincast::models
