// Cluster construction and routing. See cluster.h for the resource model.

#include "models/hardware/cluster.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "sim/time.h"

namespace traincast::models {
namespace {

// Spines modelled per fabric. A real spine layer has as many switches as a leaf has uplink
// ports; past 32 we merge them (capacity per (leaf, spine) resource grows accordingly) to keep
// the resource count small. ECMP spreads over whatever count results.
constexpr int kMaxSpines = 32;

std::uint64_t mix64(std::uint64_t x) {
  // splitmix64 finaliser (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
  // OOPSLA 2014): a fixed, platform-independent hash for ECMP.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string gbps(double bytes_per_s) {
  std::ostringstream s;
  s.precision(4);
  s << bytes_per_s / 1e9 << " GB/s";
  return s.str();
}

const char* fabric_name(FabricKind k) {
  switch (k) {
    case FabricKind::none:
      return "none";
    case FabricKind::rail_optimized:
      return "rail_optimized";
    case FabricKind::fat_tree:
      return "fat_tree";
    case FabricKind::torus:
      return "torus";
  }
  return "?";
}

}  // namespace

Cluster::Cluster(const ClusterSpec& spec, sim::FlowNetwork& net) : spec_(spec), net_(net) {
  if (spec.num_nodes <= 0) {
    throw std::invalid_argument("cluster.num_nodes: must be > 0 (got " + std::to_string(spec.num_nodes) + ")");
  }
  template_ = &find_node_template(spec.node_template);
  gpu_ = &find_gpu(spec.gpu.empty() ? template_->gpu : spec.gpu);
  nic_ = &find_nic(template_->nic);
  num_nodes_ = spec.num_nodes;
  gpus_per_node_ = template_->gpus_per_node;
  nics_per_node_ = template_->nics;
  if (gpus_per_node_ <= 0) throw std::invalid_argument("cluster.node_template: no GPUs per node");

  const FabricSpec& f = spec.fabric;
  if (f.kind == FabricKind::none && num_nodes_ > 1) {
    throw std::invalid_argument(
        "cluster.fabric.kind: none allows a single node (got num_nodes = " + std::to_string(num_nodes_) + ")");
  }
  if (num_nodes_ > 1 && nics_per_node_ <= 0) {
    throw std::invalid_argument("cluster.node_template: '" + template_->name +
                                "' has no NICs for a multi-node cluster");
  }
  if (!(f.oversubscription >= 1.0) || !std::isfinite(f.oversubscription)) {
    throw std::invalid_argument("cluster.fabric.oversubscription: must be >= 1 (got " +
                                std::to_string(f.oversubscription) + ")");
  }
  if (f.switch_latency_ns < 0) {
    throw std::invalid_argument("cluster.fabric.switch_latency_ns: must be >= 0 (got " +
                                std::to_string(f.switch_latency_ns) + ")");
  }
  if (f.nodes_per_leaf <= 0) {
    throw std::invalid_argument("cluster.fabric.nodes_per_leaf: must be > 0 (got " + std::to_string(f.nodes_per_leaf) +
                                ")");
  }

  if (gpu_->nvlink_links > 0 && gpu_->nvlink_bytes_per_s_per_link > 0) {
    if (gpu_->scale_up_mesh && template_->nvswitch) {
      throw std::invalid_argument("cluster.gpu: '" + gpu_->name + "' links form a mesh, but node template '" +
                                  template_->name + "' expects NVSwitch");
    }
    if (template_->nvswitch) {
      scale_up_bytes_per_s_ = gpu_->nvlink_links * gpu_->nvlink_bytes_per_s_per_link;
    } else if (gpu_->scale_up_mesh) {
      const int peers = gpus_per_node_ - 1;
      const int links_per_peer = peers > 0 ? gpu_->nvlink_links / peers : 0;
      if (peers > 0 && links_per_peer == 0) {
        throw std::invalid_argument("cluster.node_template: '" + template_->name + "' has more GPUs than '" +
                                    gpu_->name + "' has mesh links");
      }
      mesh_link_bytes_per_s_ = links_per_peer * gpu_->nvlink_bytes_per_s_per_link;
      scale_up_bytes_per_s_ = mesh_link_bytes_per_s_ * peers;
    }
    // NVLink GPUs in a template without NVSwitch and without a mesh (bridge pairs) are not
    // modelled: they fall back to PCIe below.
  }

  // Fabric sizes.
  if (num_nodes_ > 1) {
    num_groups_ = (num_nodes_ + f.nodes_per_leaf - 1) / f.nodes_per_leaf;
    const bool rail = f.kind == FabricKind::rail_optimized;
    num_leaves_ = rail ? num_groups_ * nics_per_node_ : num_groups_;
    leaf_down_ports_ = rail ? f.nodes_per_leaf : f.nodes_per_leaf * nics_per_node_;
    if (num_groups_ > 1) {
      const double up_total = leaf_down_ports_ * nic_->bytes_per_s / f.oversubscription;
      const int ports_up = std::max(1, static_cast<int>(std::ceil(leaf_down_ports_ / f.oversubscription - 1e-9)));
      num_spines_ = std::min(ports_up, kMaxSpines);
      leaf_uplink_bytes_per_s_ = up_total / num_spines_;
    }
  }

  const std::size_t gpus = static_cast<std::size_t>(num_gpus());
  const std::size_t nics = static_cast<std::size_t>(num_nodes_) * nics_per_node_;
  nvl_up_.reserve(gpus);
  nvl_down_.reserve(gpus);
  pcie_up_.reserve(gpus);
  pcie_down_.reserve(gpus);
  nic_pcie_up_.reserve(nics);
  nic_pcie_down_.reserve(nics);
  nic_tx_.reserve(nics);
  nic_rx_.reserve(nics);
  for (int n = 0; n < num_nodes_; ++n) build_node(n);
  build_fabric();
}

sim::ResourceId Cluster::add(double capacity_bytes_per_s, std::int64_t latency_ns, std::string name, LinkKind kind) {
  const sim::ResourceId id = net_.add_resource(capacity_bytes_per_s, sim::Time::from_ns(latency_ns), std::move(name));
  if (kinds_.size() <= id) kinds_.resize(id + 1, LinkKind::other);
  kinds_[id] = kind;
  ++resources_built_;
  return id;
}

void Cluster::build_node(int node) {
  const std::string prefix = "node" + std::to_string(node) + ".";
  const std::int64_t nic_half_ns = nic_->latency_ns / 2;
  const std::int64_t switch_ns = spec_.fabric.switch_latency_ns;
  for (int g = 0; g < gpus_per_node_; ++g) {
    const std::string gpu = prefix + "gpu" + std::to_string(g);
    if (has_scale_up() && template_->nvswitch) {
      nvl_up_.push_back(add(scale_up_bytes_per_s_, 0, gpu + ".nvl_up", LinkKind::nvlink));
      nvl_down_.push_back(add(scale_up_bytes_per_s_, 0, gpu + ".nvl_down", LinkKind::nvlink));
    }
    pcie_up_.push_back(add(template_->pcie_bytes_per_s, 0, gpu + ".pcie_up", LinkKind::pcie));
    pcie_down_.push_back(add(template_->pcie_bytes_per_s, 0, gpu + ".pcie_down", LinkKind::pcie));
  }
  if (has_scale_up() && !template_->nvswitch) {
    for (int a = 0; a < gpus_per_node_; ++a) {
      for (int b = 0; b < gpus_per_node_; ++b) {
        const std::string name = prefix + "xgmi" + std::to_string(a) + "->" + std::to_string(b);
        mesh_.push_back(a == b ? sim::ResourceId{0} : add(mesh_link_bytes_per_s_, 0, name, LinkKind::nvlink));
      }
    }
  }
  for (int i = 0; i < nics_per_node_; ++i) {
    const std::string nic = prefix + "nic" + std::to_string(i);
    nic_pcie_up_.push_back(add(template_->pcie_bytes_per_s, 0, nic + ".pcie_up", LinkKind::pcie));
    nic_pcie_down_.push_back(add(template_->pcie_bytes_per_s, 0, nic + ".pcie_down", LinkKind::pcie));
    if (num_nodes_ > 1) {
      nic_tx_.push_back(add(nic_->bytes_per_s, nic_half_ns, nic + ".tx", LinkKind::nic));
      nic_rx_.push_back(add(nic_->bytes_per_s, nic_->latency_ns - nic_half_ns + switch_ns, nic + ".rx", LinkKind::nic));
    }
  }
}

void Cluster::build_fabric() {
  if (num_spines_ == 0) return;
  const std::int64_t switch_ns = spec_.fabric.switch_latency_ns;
  leaf_up_.reserve(static_cast<std::size_t>(num_leaves_) * num_spines_);
  spine_down_.reserve(static_cast<std::size_t>(num_leaves_) * num_spines_);
  for (int l = 0; l < num_leaves_; ++l) {
    for (int s = 0; s < num_spines_; ++s) {
      const std::string name = "leaf" + std::to_string(l) + (std::string(".spine") + std::to_string(s));
      leaf_up_.push_back(add(leaf_uplink_bytes_per_s_, switch_ns, name + ".up", LinkKind::fabric));
      spine_down_.push_back(add(leaf_uplink_bytes_per_s_, switch_ns, name + ".down", LinkKind::fabric));
    }
  }
}

const GpuSpec& Cluster::gpu_spec(int /*gpu*/) const { return *gpu_; }

int Cluster::leaf_of(int node, int rail) const {
  const int group = node / spec_.fabric.nodes_per_leaf;
  return spec_.fabric.kind == FabricKind::rail_optimized ? group * nics_per_node_ + rail : group;
}

void Cluster::append_intra(int node, int a, int b, CachedRoute& out) const {
  const int base = node * gpus_per_node_;
  if (has_scale_up() && template_->nvswitch) {
    out.hops[out.size++] = nvl_up_[base + a];
    out.hops[out.size++] = nvl_down_[base + b];
  } else if (has_scale_up()) {
    out.hops[out.size++] = mesh_[static_cast<std::size_t>(node) * gpus_per_node_ * gpus_per_node_ +
                                 static_cast<std::size_t>(a) * gpus_per_node_ + b];
  } else {
    out.hops[out.size++] = pcie_up_[base + a];
    out.hops[out.size++] = pcie_down_[base + b];
  }
}

void Cluster::compute_route(int src, int dst, CachedRoute& out) const {
  out.size = 0;
  const int sn = node_of(src), dn = node_of(dst);
  const int si = local_rank(src), di = local_rank(dst);
  if (sn == dn) {
    append_intra(sn, si, di, out);
    return;
  }
  const int rail = nic_of_local(di);
  // PXN: the proxy is the local GPU with the destination's local index (its NIC is on `rail`).
  int proxy = si;
  if (nic_of_local(si) != rail) {
    proxy = di;
    append_intra(sn, si, proxy, out);
  }
  const int snic = sn * nics_per_node_ + rail;
  const int dnic = dn * nics_per_node_ + rail;
  out.hops[out.size++] = pcie_up_[sn * gpus_per_node_ + proxy];
  out.hops[out.size++] = nic_pcie_down_[snic];
  out.hops[out.size++] = nic_tx_[snic];
  const int sl = leaf_of(sn, rail), dl = leaf_of(dn, rail);
  if (sl != dl) {
    const int spine = static_cast<int>(
        mix64((static_cast<std::uint64_t>(src) << 32) | static_cast<std::uint32_t>(dst)) % num_spines_);
    out.hops[out.size++] = leaf_up_[static_cast<std::size_t>(sl) * num_spines_ + spine];
    out.hops[out.size++] = spine_down_[static_cast<std::size_t>(dl) * num_spines_ + spine];
  }
  out.hops[out.size++] = nic_rx_[dnic];
  out.hops[out.size++] = nic_pcie_up_[dnic];
  out.hops[out.size++] = pcie_down_[dn * gpus_per_node_ + di];
}

std::span<const sim::ResourceId> Cluster::route(int src_gpu, int dst_gpu) const {
  if (src_gpu < 0 || src_gpu >= num_gpus() || dst_gpu < 0 || dst_gpu >= num_gpus()) {
    throw std::out_of_range("Cluster::route: GPU " +
                            std::to_string(src_gpu < 0 || src_gpu >= num_gpus() ? src_gpu : dst_gpu) + " outside [0, " +
                            std::to_string(num_gpus()) + ")");
  }
  if (src_gpu == dst_gpu) {
    throw std::out_of_range("Cluster::route: src == dst (" + std::to_string(src_gpu) + ")");
  }
  const std::uint64_t key = (static_cast<std::uint64_t>(src_gpu) << 32) | static_cast<std::uint32_t>(dst_gpu);
  auto [it, inserted] = route_index_.try_emplace(key, static_cast<std::uint32_t>(routes_.size()));
  if (inserted) {
    routes_.emplace_back();
    compute_route(src_gpu, dst_gpu, routes_.back());
  }
  const CachedRoute& r = routes_[it->second];
  return {r.hops.data(), r.size};
}

std::string Cluster::describe() const {
  std::ostringstream o;
  o << num_nodes_ << " x " << template_->name << " (" << template_->source << ")\n";
  o << "  per node: " << gpus_per_node_ << " x " << gpu_->name << " (" << gpu_->source << ")\n";
  if (has_scale_up() && template_->nvswitch) {
    o << "  scale-up: " << template_->nvswitches << " NVSwitch chips (non-blocking); per GPU NVLink"
      << gpu_->nvlink_generation << " " << gpu_->nvlink_links << " links x " << gbps(gpu_->nvlink_bytes_per_s_per_link)
      << " = " << gbps(scale_up_bytes_per_s_) << " per direction\n";
  } else if (has_scale_up()) {
    o << "  scale-up: full mesh, one " << gbps(mesh_link_bytes_per_s_) << " per-direction link per GPU pair ("
      << gbps(scale_up_bytes_per_s_) << " per GPU per direction)\n";
  } else {
    o << "  scale-up: none, GPU-to-GPU over PCIe\n";
  }
  o << "  PCIe gen" << template_->pcie_generation << ": " << gbps(template_->pcie_bytes_per_s)
    << " per direction per GPU and per NIC; " << template_->gpus_per_pcie_switch
    << " GPUs and their NICs per PCIe switch\n";
  o << "  NICs: " << nics_per_node_ << " x " << nic_->name << " at " << gbps(nic_->bytes_per_s) << " per direction, "
    << nic_->latency_ns << " ns adapter latency; GPU i uses NIC (rail) i*" << nics_per_node_ << "/" << gpus_per_node_
    << "\n";
  if (num_nodes_ > 1) {
    const FabricSpec& f = spec_.fabric;
    o << "  fabric: " << fabric_name(f.kind) << ", " << num_leaves_ << " leaf switches (" << leaf_down_ports_
      << " down ports each, " << f.nodes_per_leaf << " nodes per leaf group), " << num_spines_ << " spines";
    if (num_spines_ > 0) {
      o << ", leaf uplinks " << num_spines_ << " x " << gbps(leaf_uplink_bytes_per_s_) << " (oversubscription "
        << f.oversubscription << ":1)";
    }
    o << ", " << f.switch_latency_ns << " ns per switch hop; ECMP by hash(src, dst)\n";
  }
  o << "  resources: " << resources_built_ << " directed links\n";
  return o.str();
}

}  // namespace traincast::models
