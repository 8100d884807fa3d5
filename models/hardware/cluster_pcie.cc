// The cluster's PCIe routing along a node's PCIe tree (cluster.h; the tree: pcie_tree.h): which
// switch and socket each GPU and NIC hangs on, which NIC serves which GPU, the PCIe path between
// two devices of a node, and host-memory copies.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/hardware/cluster.h"

namespace traincast::models {

int Cluster::other_socket_place(int local) const {
  // nic_placement other_socket moves each NIC to the same place on the other socket (switch_of_nic:
  // the switch half the switch list away; without switches, the other socket's root ports): the
  // GPU at a GPU's place there is half the GPU list away, when it sits on the other socket.
  if (spec_.nic_placement != NicPlacement::other_socket || template_->sockets < 2 || gpus_per_node_ < 2) return local;
  const int there = (local + gpus_per_node_ / 2) % gpus_per_node_;
  return socket_of_gpu(there) != socket_of_gpu(local) ? there : local;
}

int Cluster::nic_of_local(int local) const {
  // The first NIC serving the GPU (NodeTemplate::nic_gpus; by default NIC i serves GPUs
  // [i*G/N, (i+1)*G/N) when N <= G, and GPU g's first NIC is ceil(g N / G) when N > G). With
  // nic_placement other_socket, the NIC cabled for the GPU at this GPU's place on the other socket:
  // the one that now sits beside this GPU. NCCL gives a GPU its closest NICs whatever they were
  // cabled for (ncclTopoGetLocalNet, src/graph/topo.cc), for rings and trees and for p2p (its
  // receiver's own NIC: src/transport/net.cc recvSetup, "Use myInfo->rank for peerRank as
  // receiver uses its own netdev"), so p2p's route() takes it too.
  if (nics_per_node_ <= 0 || local < 0 || local >= gpus_per_node_) return 0;
  const int at = other_socket_place(local);
  const int nic = pcie_.gpu_nic[static_cast<std::size_t>(at)];
  return at == local || socket_of_nic(nic) == socket_of_gpu(local) ? nic
                                                                   : pcie_.gpu_nic[static_cast<std::size_t>(local)];
}

int Cluster::gpu_of_nic(int nic) const {
  // The first GPU the NIC serves (5 NICs on 8 GPUs: NIC 2 serves GPUs 4 and 5, so it sits beside
  // GPU 4, not GPU 3 on the other switch; N > G: GPU floor(i G / N)). With nic_placement
  // other_socket, the GPU at that GPU's place on the other socket, beside which the NIC now sits
  // (NCCL's ncclTopoGetLocalGpu: the NIC's closest GPU, the PXN relay).
  if (nic < 0 || nic >= nics_per_node_) return 0;
  const int home = pcie_.nic_gpu[static_cast<std::size_t>(nic)];
  const int at = other_socket_place(home);
  return socket_of_nic(nic) == socket_of_gpu(at) ? at : home;
}

int Cluster::cabled_gpu_of_nic(int nic) const {
  if (nic < 0 || nic >= nics_per_node_) return 0;
  return pcie_.nic_gpu[static_cast<std::size_t>(nic)];
}

bool Cluster::pxn_relay(int node, int gpu, int nic) const {
  // NCCL's PXN rule (NVIDIA/nccl src/graph/paths.cc, ncclTopoComputePaths, "Update paths for
  // NICs", read in the 2.2x and 2.28 sources): GPU g reaches NIC n through the NIC's local GPU p
  // only when (1) p's path to n is PCIe through switches alone (type <= PXB), (2) NVLink joins
  // p and g, (3) both sit in one node, and (4) p's path to n is faster than g's own
  // (paths[NET][n].bw, the narrowest link) or g's own path goes through the host (type > PXN:
  // PHB or SYS). So a GPU beside the NIC under the same switch (DGX A100: two GPUs and two NICs
  // per switch) uses its own PCIe path, while one whose path crosses the root complex or the
  // sockets relays. Not modelled: NCCL's p is the communicator's GPU that takes n first
  // (ncclTopoGetLocalGpu), here the template's GPU of the NIC (gpu_of_nic) whether or not it is in
  // the communicator; RCCL's copy of the rule also asks p's GPUDirect RDMA mode (ncclTopoCheckGdr),
  // which the 2.28 source does not.
  const int relay = gpu_of_nic(nic);
  if (relay == gpu || !nvlink_between(gpu, relay)) return false;
  const PcieLayout& tree = pcie_of(node);
  // true when the switch chains above s1 and s2 meet (the path turns in a switch, not the host).
  const auto meet_in_switch = [&tree](int s1, int s2) {
    for (int a = s1; a >= 0; a = tree.switch_up[static_cast<std::size_t>(a)])
      for (int b = s2; b >= 0; b = tree.switch_up[static_cast<std::size_t>(b)])
        if (a == b) return true;
    return false;
  };
  const int nic_switch = switch_of_nic(node, nic);
  if (!meet_in_switch(switch_of_gpu(node, relay), nic_switch)) return false;  // (1)
  if (!meet_in_switch(switch_of_gpu(node, gpu), nic_switch)) return true;     // (4), through the host
  const auto narrowest_bytes_per_s = [this, node, nic](int from) {
    std::vector<sim::ResourceId> path;
    append_pcie(node, false, from, true, nic, false, path);
    double bw = std::numeric_limits<double>::infinity();
    for (sim::ResourceId r : path) bw = std::min(bw, resource(r).capacity_bytes_per_s);
    return bw;
  };
  return narrowest_bytes_per_s(relay) > narrowest_bytes_per_s(gpu);  // (4), a faster path
}

const PcieLayout& Cluster::pcie_of(int node) const {
  return group_pcie_.size() <= 1 ? pcie_ : group_pcie_[static_cast<std::size_t>(group_of_node(node))];
}

int Cluster::switch_of_gpu(int node, int local) const {
  return pcie_of(node).gpu_switch[static_cast<std::size_t>(local)];
}

int Cluster::socket_of_gpu(int local) const { return pcie_.gpu_socket[static_cast<std::size_t>(local)]; }

int Cluster::switch_of_nic(int node, int nic) const {
  const PcieLayout& tree = pcie_of(node);
  const int s = tree.nic_switch[static_cast<std::size_t>(nic)];
  if (s < 0) return -1;
  // nic_placement other_socket: the switch half the switch list away (in the regular layout the
  // same place on the other socket).
  const int switches = static_cast<int>(tree.switch_up.size());
  if (spec_.nic_placement == NicPlacement::other_socket && template_->sockets > 1 && switches > 1) {
    return (s + switches / 2) % switches;
  }
  return s;
}

int Cluster::socket_of_nic(int nic) const {
  const int sockets = std::max(1, template_->sockets);
  const int s = switch_of_nic(0, nic);  // every group puts the NIC on this socket (node_groups.cc)
  if (s >= 0) return pcie_.switch_socket[static_cast<std::size_t>(s)];
  const int home = pcie_.nic_socket[static_cast<std::size_t>(nic)];
  return spec_.nic_placement == NicPlacement::other_socket ? (home + 1) % sockets : home;
}

void Cluster::append_pcie(int node, bool src_is_nic, int src, bool dst_is_nic, int dst, bool staged,
                          std::vector<sim::ResourceId>& out) const {
  const int sockets = std::max(1, template_->sockets);
  const PcieLayout& tree = pcie_of(node);
  const std::size_t gbase = static_cast<std::size_t>(node) * gpus_per_node_;
  const std::size_t nbase = static_cast<std::size_t>(node) * nics_per_node_;
  const std::size_t sbase = switch_base_[static_cast<std::size_t>(node)];
  out.push_back(src_is_nic ? nic_pcie_up_[nbase + src] : pcie_up_[gbase + src]);
  const int s1 = src_is_nic ? switch_of_nic(node, src) : switch_of_gpu(node, src);
  const int s2 = dst_is_nic ? switch_of_nic(node, dst) : switch_of_gpu(node, dst);
  const int k1 = src_is_nic ? socket_of_nic(src) : socket_of_gpu(src);
  const int k2 = dst_is_nic ? socket_of_nic(dst) : socket_of_gpu(dst);
  // The lowest switch above both (P2P turns there); -1: through the root complex.
  int common = -1;
  if (!staged && s1 >= 0 && s2 >= 0) {
    for (int a = s1; a >= 0 && common < 0; a = tree.switch_up[static_cast<std::size_t>(a)]) {
      for (int b = s2; b >= 0; b = tree.switch_up[static_cast<std::size_t>(b)]) {
        if (a == b) {
          common = a;
          break;
        }
      }
    }
  }
  for (int a = s1; a >= 0 && a != common; a = tree.switch_up[static_cast<std::size_t>(a)])
    out.push_back(uplink_up_[sbase + static_cast<std::size_t>(a)]);
  if (common < 0 && k1 != k2) {
    out.push_back(
        socket_link_[static_cast<std::size_t>(node) * sockets * sockets + static_cast<std::size_t>(k1) * sockets + k2]);
  }
  const std::size_t down_from = out.size();
  for (int b = s2; b >= 0 && b != common; b = tree.switch_up[static_cast<std::size_t>(b)])
    out.push_back(uplink_down_[sbase + static_cast<std::size_t>(b)]);
  std::reverse(out.begin() + static_cast<std::ptrdiff_t>(down_from), out.end());  // from the top down
  out.push_back(dst_is_nic ? nic_pcie_down_[nbase + dst] : pcie_down_[gbase + dst]);
}

std::vector<sim::ResourceId> Cluster::host_route(int gpu, bool to_host, int socket) const {
  const int sockets = std::max(1, template_->sockets);
  if (gpu < 0 || gpu >= num_gpus())
    throw std::out_of_range("host_route: GPU " + std::to_string(gpu) + " outside [0, " + std::to_string(num_gpus()) +
                            ")");
  if (socket < 0 || socket >= sockets)
    throw std::out_of_range("host_route: socket " + std::to_string(socket) + " outside [0, " + std::to_string(sockets) +
                            ")");
  const int node = node_of(gpu), local = local_rank(gpu);
  const int home = socket_of_gpu(local);
  const auto n = static_cast<std::size_t>(node);
  const auto g = static_cast<std::size_t>(gpu);
  const std::size_t sbase = switch_base_[n];
  const PcieLayout& tree = pcie_of(node);
  std::vector<sim::ResourceId> out;
  if (to_host) {
    out.push_back(pcie_up_[g]);
    for (int sw = switch_of_gpu(node, local); sw >= 0; sw = tree.switch_up[static_cast<std::size_t>(sw)])
      out.push_back(uplink_up_[sbase + static_cast<std::size_t>(sw)]);
    if (socket != home) out.push_back(socket_link_[(n * sockets + home) * sockets + socket]);
  } else {
    if (socket != home) out.push_back(socket_link_[(n * sockets + socket) * sockets + home]);
    const std::size_t down_from = out.size();
    for (int sw = switch_of_gpu(node, local); sw >= 0; sw = tree.switch_up[static_cast<std::size_t>(sw)])
      out.push_back(uplink_down_[sbase + static_cast<std::size_t>(sw)]);
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(down_from), out.end());  // from the root complex down
    out.push_back(pcie_down_[g]);
  }
  return out;
}

std::vector<sim::ResourceId> Cluster::pcie_route_to_nic(int gpu, int nic) const {
  if (gpu < 0 || gpu >= num_gpus())
    throw std::out_of_range("pcie_route_to_nic: GPU " + std::to_string(gpu) + " outside [0, " +
                            std::to_string(num_gpus()) + ")");
  if (nic < 0 || nic >= nics_per_node_)
    throw std::out_of_range("pcie_route_to_nic: NIC " + std::to_string(nic) + " outside [0, " +
                            std::to_string(nics_per_node_) + ")");
  std::vector<sim::ResourceId> out;
  append_pcie(node_of(gpu), false, local_rank(gpu), true, nic, !spec_.gpu_direct_rdma, out);
  return out;
}

std::vector<sim::ResourceId> Cluster::host_route(int gpu, bool to_host) const {
  if (gpu < 0 || gpu >= num_gpus())
    throw std::out_of_range("host_route: GPU " + std::to_string(gpu) + " outside [0, " + std::to_string(num_gpus()) +
                            ")");
  return host_route(gpu, to_host, socket_of_gpu(local_rank(gpu)));
}

}  // namespace traincast::models
