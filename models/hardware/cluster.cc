// Cluster construction and routing. See cluster.h for the resource model.

#include "models/hardware/cluster.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "models/hardware/describe_text.h"
#include "models/hardware/leaf_ports.h"
#include "models/hardware/network_size.h"
#include "models/spec/run_control.h"
#include "sim/time.h"

namespace traincast::models {
using detail::count_of;
using detail::gbps;
namespace {

// Switches modelled per tier. A real spine layer has as many switches as a leaf has uplink
// ports; past 32 we merge them (capacity per resource grows accordingly) to keep the resource
// count small. ECMP spreads over whatever count results.
constexpr int kMaxSpines = 32;
// Signal propagation in fibre and twinax: ~2e8 m/s, i.e. 5 ns per metre.
constexpr double kNsPerMetre = 5.0;

std::uint64_t mix64(std::uint64_t x) {
  // splitmix64 finaliser (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
  // OOPSLA 2014): a fixed, platform-independent hash for ECMP.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The port of highest weight mix64(key ^ port salt) among `ports` (rendezvous hashing).
template <typename Up>
int rendezvous_pick(std::uint64_t key, int ports, const Up& up) {
  int best = -1;
  std::uint64_t best_weight = 0;
  for (int p = 0; p < ports; ++p) {
    if (!up(p)) continue;
    const std::uint64_t w = mix64(key ^ mix64(0x5eed0000ULL + static_cast<std::uint64_t>(p)));
    if (best < 0 || w > best_weight) {
      best = p;
      best_weight = w;
    }
  }
  return best;
}

/// A link's name, "from->to".
std::string link_name(const std::string& from, const std::string& to) {
  std::string name = from;
  name.append("->").append(to);
  return name;
}

const char* kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink:
      return "NVLink";
    case LinkKind::pcie:
      return "PCIe";
    case LinkKind::socket:
      return "socket link";
    case LinkKind::nic:
      return "NIC";
    case LinkKind::fabric:
      return "fabric";
    case LinkKind::other:
      return "other";
  }
  return "?";
}

/// explain's list of cluster.overrides, in order: each selector and its effect.
void describe_overrides(std::ostream& o, const std::vector<ElementOverride>& overrides) {
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    const ElementOverride& e = overrides[i];
    o << (i == 0 ? "Overrides (cluster.overrides, in order):\n" : "") << "  [" << i << "] " << e.select << ": ";
    if (e.clock_factor > 0) o << "SM clock x " << e.clock_factor;
    if (e.bandwidth_factor > 0) o << "bandwidth x " << e.bandwidth_factor;
    if (e.failed) o << "failed (routes avoid it)";
    if (e.power_cap_w > 0) o << "power limit " << e.power_cap_w << " W";
    if (e.supply_c) o << "supply " << *e.supply_c << " C";
    if (e.missing) o << "missing (the node is drained)";
    o << "\n";
  }
}

}  // namespace

Cluster::Cluster(const ClusterSpec& spec, sim::FlowNetwork& net) : Cluster(spec) { install(net); }

Cluster::Cluster(const ClusterSpec& spec) : Cluster(spec, SizesOnly{}) {
  const NetworkSize size = count_network();
  refuse_network_over_limit(spec_, size);  // before anything large is built
  // Exactly the resources built (network_size.h): the table is written once, never moved.
  edges_->reserve(static_cast<std::size_t>(size.resources()));
  kinds_.reserve(static_cast<std::size_t>(size.resources()));
  const std::size_t gpus = static_cast<std::size_t>(num_gpus());
  nvl_up_.reserve(gpus);
  nvl_down_.reserve(gpus);
  pcie_up_.reserve(gpus);
  pcie_down_.reserve(gpus);
  node_first_resource_.reserve(static_cast<std::size_t>(num_nodes_) + 1);
  for (int n = 0; n < num_nodes_; ++n) {
    if (n % 1024 == 0) throw_if_interrupted("cluster: building the network");
    node_first_resource_.push_back(static_cast<sim::ResourceId>(edges_->size()));
    build_node(n);
  }
  node_first_resource_.push_back(static_cast<sim::ResourceId>(edges_->size()));
  build_fabric();
  if (!spec_.overrides.empty()) apply_overrides();
}

Cluster::Cluster(const ClusterSpec& spec, SizesOnly) : spec_(spec) {
  if (spec.num_nodes <= 0) {
    throw std::invalid_argument("cluster.num_nodes: must be > 0 (got " + std::to_string(spec.num_nodes) + ")");
  }
  resolve_groups(spec);  // template_, gpu_, bridge_gpus_, scale-up (node_groups.cc)
  nic_ = &find_nic(spec.nic.empty() ? template_->nic : spec.nic);
  num_nodes_ = spec.num_nodes;
  gpus_per_node_ = template_->gpus_per_node;
  drain_missing_gpus(spec);  // num_nodes_ without the drained nodes (element_overrides.cc)
  nics_per_node_ = spec.nics_per_node.value_or(template_->nics);
  if (gpus_per_node_ <= 0) throw std::invalid_argument("cluster.node_template: no GPUs per node");
  if (nics_per_node_ < 0) {
    throw std::invalid_argument("cluster.nics_per_node: must be >= 0 (got " + std::to_string(nics_per_node_) + ")");
  }
  try {
    pcie_ = pcie_layout(*template_, nics_per_node_);
    if (groups_.size() > 1) {
      for (const NodeGroup& g : groups_) group_pcie_.push_back(pcie_layout(*g.node_template, nics_per_node_));
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("cluster.node_template: ") + e.what());
  }
  switch_base_.assign(static_cast<std::size_t>(num_nodes_) + 1, 0);
  for (int n = 0; n < num_nodes_; ++n) {
    switch_base_[static_cast<std::size_t>(n) + 1] =
        switch_base_[static_cast<std::size_t>(n)] + pcie_of(n).switch_up.size();
  }
  if (spec.nvlink_bridge_gpus || template_->scale_up == ScaleUp::bridges) {
    const std::string why = bridge_group_problem(*template_, *gpu_, bridge_gpus_);
    if (!why.empty()) throw std::invalid_argument("cluster.nvlink_bridge_gpus: " + why);
  }

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
  if (f.tiers != 2 && f.tiers != 3) {
    throw std::invalid_argument("cluster.fabric.tiers: must be 2 or 3 (got " + std::to_string(f.tiers) + ")");
  }
  if (f.leaves_per_pod <= 0) {
    throw std::invalid_argument("cluster.fabric.leaves_per_pod: must be > 0 (got " + std::to_string(f.leaves_per_pod) +
                                ")");
  }
  if (!(f.cable_length_m >= 0) || !std::isfinite(f.cable_length_m)) {
    throw std::invalid_argument("cluster.fabric.cable_length_m: must be >= 0 (got " + std::to_string(f.cable_length_m) +
                                ")");
  }
  cable_ns_ = static_cast<std::int64_t>(std::llround(f.cable_length_m * kNsPerMetre));

  pcie_p2p_ = spec.pcie_p2p.value_or(template_->pcie_p2p);
  routing_ = f.routing == FabricRouting::automatic ? routing_for_nic(*nic_) : f.routing;

  // Fabric sizes.
  if (num_nodes_ > 1 && f.kind == FabricKind::torus) {
    torus_dims_ = f.torus_dims.empty() ? std::vector<int>{num_nodes_} : f.torus_dims;
    if (torus_dims_.size() > 3)
      throw std::invalid_argument("cluster.fabric.torus_dims: at most 3 dimensions (got " +
                                  std::to_string(torus_dims_.size()) + ")");
    long long product = 1;
    for (int d : torus_dims_) {
      if (d < 1) throw std::invalid_argument("cluster.fabric.torus_dims: every extent must be >= 1");
      product *= d;
    }
    if (product != num_nodes_)
      throw std::invalid_argument("cluster.fabric.torus_dims: product " + std::to_string(product) + " != num_nodes " +
                                  std::to_string(num_nodes_));
    const std::string ports = torus_ports_problem(torus_dims_, nics_per_node_);
    if (!ports.empty()) throw std::invalid_argument("cluster.nics_per_node: " + ports);
    torus_link_bytes_per_s_ = nics_per_node_ * nic_->bytes_per_s / torus_directions(torus_dims_);
  } else if (num_nodes_ > 1) {
    num_groups_ = (fabric_slots() + f.nodes_per_leaf - 1) / f.nodes_per_leaf;  // drained nodes keep their ports
    const bool rail = f.kind == FabricKind::rail_optimized;
    num_leaves_ = rail ? num_groups_ * nics_per_node_ : num_groups_;
    leaf_down_ports_ = rail ? f.nodes_per_leaf : f.nodes_per_leaf * nics_per_node_;
    if (num_groups_ > 1) {
      // Uplinks are whole switch ports at the NIC line rate, as on a real leaf: the fewest ports
      // that give at least down/oversubscription of bandwidth, so the effective ratio is
      // down_ports / up_ports <= the requested one (16 down at 1.5:1 -> 11 up, 1.45:1). Beyond
      // kMaxSpines ports, uplinks to one spine are bundled.
      // leaf_up_ports, when set, gives the count directly (a job's sub-cluster in traincast cluster).
      // One rule with the loader's radix check and the cost's spine count (leaf_ports.h).
      const int ports_up = leaf_ports_used(f, fabric_slots(), nics_per_node_, f.nodes_per_leaf).up;
      leaf_up_ports_ = ports_up;
      const double up_total = ports_up * nic_->bytes_per_s;
      const int uplinks = std::min(ports_up, kMaxSpines);
      leaf_uplink_bytes_per_s_ = up_total / uplinks;
      if (f.tiers == 2) {
        num_spines_ = uplinks;
      } else {
        num_aggs_ = uplinks;
        num_pods_ = (num_groups_ + f.leaves_per_pod - 1) / f.leaves_per_pod;
        if (num_pods_ > 1) {
          // Above the leaves the tree is non-blocking: a pod's core uplinks carry what its leaves send up.
          const int leaves_in_pod = (rail ? nics_per_node_ : 1) * std::min(f.leaves_per_pod, num_groups_);
          num_spines_ = uplinks;
          pod_uplink_bytes_per_s_ = leaves_in_pod * up_total / num_spines_;
        }
      }
    }
  }
}

sim::ResourceId Cluster::add(double capacity_bytes_per_s, std::int64_t latency_ns, std::string name, LinkKind kind,
                             std::string from, std::string to) {
  const sim::Time latency = sim::Time::from_ns(latency_ns);
  sim::FlowNetwork::check_resource(capacity_bytes_per_s, latency, name);  // as install() will add it
  const auto id = static_cast<sim::ResourceId>(edges_->size());
  kinds_.push_back(kind);
  edges_->push_back({std::move(from), std::move(to), id, kind, capacity_bytes_per_s, latency, std::move(name)});
  return id;
}

int Cluster::node_of_resource(sim::ResourceId r) const {
  // build_node adds each node's resources in one run, node by node, before the fabric's.
  if (node_first_resource_.empty() || r >= node_first_resource_.back()) return -1;
  const auto it = std::upper_bound(node_first_resource_.begin(), node_first_resource_.end(), r);
  return static_cast<int>(it - node_first_resource_.begin()) - 1;
}

std::pair<std::vector<sim::ResourceId>, std::vector<sim::ResourceId>> Cluster::group_up_links(int group) const {
  std::pair<std::vector<sim::ResourceId>, std::vector<sim::ResourceId>> out;
  if (leaf_up_.empty() || group < 0 || group >= num_groups_) return out;
  const std::size_t per_leaf = leaf_up_.size() / static_cast<std::size_t>(num_leaves_);
  const int rails = spec_.fabric.kind == FabricKind::rail_optimized ? nics_per_node_ : 1;
  for (int l = group * rails; l < (group + 1) * rails; ++l) {
    for (std::size_t k = 0; k < per_leaf; ++k) {
      out.first.push_back(leaf_up_[static_cast<std::size_t>(l) * per_leaf + k]);
      out.second.push_back(spine_down_[static_cast<std::size_t>(l) * per_leaf + k]);
    }
  }
  return out;
}

void Cluster::install(sim::FlowNetwork& net) const {
  if (net.num_resources() != 0) {
    throw std::invalid_argument("Cluster::install: the network already has " + std::to_string(net.num_resources()) +
                                " resources (a cluster is installed on an empty network, so that its resource ids "
                                "are the network's)");
  }
  const std::vector<ClusterEdge>& edges = *edges_;
  net.reserve_resources(edges.size());
  net.keep_alive(edges_);  // the network refers to the names in the table
  for (std::size_t r = 0; r < edges.size(); ++r) {
    if (r % 65536 == 0) throw_if_interrupted("cluster: installing the network");
    const ClusterEdge& e = edges[r];
    net.add_resource_shared_name(e.capacity_bytes_per_s, e.latency, e.name);
  }
}

const ClusterEdge& Cluster::resource(sim::ResourceId r) const {
  if (r >= edges_->size()) {
    throw std::out_of_range("Cluster::resource: unknown resource id " + std::to_string(r) + " (cluster has " +
                            std::to_string(edges_->size()) + ")");
  }
  return (*edges_)[r];
}

bool Cluster::nvlink_between(int a, int b) const {
  switch (scale_up_) {
    case ScaleUp::nvswitch:
    case ScaleUp::mesh:
      return a != b;
    case ScaleUp::bridges:
      return a != b && same_bridge(a, b) && b < gpus_per_node_;
    case ScaleUp::graph:
      return a != b && graph_links(a, b) > 0;
    case ScaleUp::none:
      return false;
  }
  return false;
}

void Cluster::build_node(int node) {
  const std::string prefix = "node" + std::to_string(fabric_slot(node)) + ".";
  const NodeGroup& group = groups_[static_cast<std::size_t>(group_of_node(node))];
  const NodeTemplate& t = *group.node_template;  // the same shape as template_, its own link rates
  const double scale_up_bytes_per_s = group.scale_up_bytes_per_s;
  const double mesh_link_bytes_per_s = group.mesh_link_bytes_per_s;
  const int gpn = gpus_per_node_;
  const int sockets = std::max(1, t.sockets);
  auto socket_name = [&](int k) { return prefix + "cpu" + std::to_string(k); };
  auto switch_name = [&](int s) { return prefix + "pcie_sw" + std::to_string(s); };
  auto gpu_name = [&](int g) { return prefix + "gpu" + std::to_string(g); };
  const std::string nvswitch = prefix + "nvswitch";

  for (int g = 0; g < gpn; ++g) {
    const std::string gn = gpu_name(g);
    if (scale_up_ == ScaleUp::nvswitch) {
      nvl_up_.push_back(add(scale_up_bytes_per_s, 0, gn + ".nvl_up", LinkKind::nvlink, gn, nvswitch));
      nvl_down_.push_back(add(scale_up_bytes_per_s, 0, gn + ".nvl_down", LinkKind::nvlink, nvswitch, gn));
    }
    const int s = switch_of_gpu(node, g);
    const std::string parent = s >= 0 ? switch_name(s) : socket_name(socket_of_gpu(g));
    pcie_up_.push_back(add(t.pcie_bytes_per_s, 0, gn + ".pcie_up", LinkKind::pcie, gn, parent));
    pcie_down_.push_back(add(t.pcie_bytes_per_s, 0, gn + ".pcie_down", LinkKind::pcie, parent, gn));
    if (gpu_pcie_reverse_.size() <= pcie_down_.back()) gpu_pcie_reverse_.resize(pcie_down_.back() + 1, kNoResource);
    gpu_pcie_reverse_[pcie_up_.back()] = pcie_down_.back();
    gpu_pcie_reverse_[pcie_down_.back()] = pcie_up_.back();
  }
  if (scale_up_ == ScaleUp::mesh || scale_up_ == ScaleUp::bridges || scale_up_ == ScaleUp::graph) {
    const char* what = scale_up_ == ScaleUp::bridges                                     ? ".bridge->"
                       : scale_up_ == ScaleUp::mesh && group.gpu->nvlink_generation == 0 ? ".xgmi->"
                                                                                         : ".nvlink->";
    for (int a = 0; a < gpn; ++a) {
      for (int b = 0; b < gpn; ++b) {
        const bool linked = nvlink_between(a, b);
        // A graph's pair carries its own link count; a mesh's or bridge's pairs are alike.
        const double bw =
            scale_up_ == ScaleUp::graph && linked ? graph_links(a, b) * mesh_link_bytes_per_s : mesh_link_bytes_per_s;
        mesh_.push_back(linked ? add(bw, 0, gpu_name(a) + what + "gpu" + std::to_string(b), LinkKind::nvlink,
                                     gpu_name(a), gpu_name(b))
                               : sim::ResourceId{0});
      }
    }
  }
  const PcieLayout& tree = pcie_of(node);
  for (int s = 0; s < t.pcie_switches; ++s) {
    const std::string sw = switch_name(s);
    const int up = tree.switch_up[static_cast<std::size_t>(s)];
    const std::string parent = up >= 0 ? switch_name(up) : socket_name(tree.switch_socket[static_cast<std::size_t>(s)]);
    const double uplink = switch_uplink_bytes_per_s(t, s);  // this group's rate
    uplink_up_.push_back(add(uplink, 0, sw + ".uplink_up", LinkKind::pcie, sw, parent));
    uplink_down_.push_back(add(uplink, 0, sw + ".uplink_down", LinkKind::pcie, parent, sw));
  }
  for (int a = 0; a < sockets; ++a) {
    for (int b = 0; b < sockets; ++b) {
      socket_link_.push_back(a == b ? sim::ResourceId{0}
                                    : add(t.socket_link_bytes_per_s > 0 ? t.socket_link_bytes_per_s : 10e9, 0,
                                          prefix + "cpu" + std::to_string(a) + "->cpu" + std::to_string(b),
                                          LinkKind::socket, socket_name(a), socket_name(b)));
    }
  }
  const std::int64_t nic_half_ns = nic_->latency_ns / 2;
  const std::int64_t switch_ns = spec_.fabric.switch_latency_ns;
  const bool torus = !torus_dims_.empty();
  for (int i = 0; i < nics_per_node_; ++i) {
    const std::string nn = prefix + "nic" + std::to_string(i);
    const int s = switch_of_nic(node, i);
    const std::string parent = s >= 0 ? switch_name(s) : socket_name(socket_of_nic(i));
    nic_pcie_up_.push_back(add(t.nic_link_bytes_per_s(), 0, nn + ".pcie_up", LinkKind::pcie, nn, parent));
    nic_pcie_down_.push_back(add(t.nic_link_bytes_per_s(), 0, nn + ".pcie_down", LinkKind::pcie, parent, nn));
    if (num_nodes_ > 1) {
      const std::string peer = torus ? prefix + "router" : "leaf" + std::to_string(leaf_of(node, i));
      nic_tx_.push_back(add(nic_->bytes_per_s, nic_half_ns + cable_ns_, nn + ".tx", LinkKind::nic, nn, peer));
      nic_rx_.push_back(add(nic_->bytes_per_s, nic_->latency_ns - nic_half_ns + switch_ns + cable_ns_, nn + ".rx",
                            LinkKind::nic, peer, nn));
    }
  }
}

void Cluster::build_fabric() {
  const std::int64_t hop_ns = spec_.fabric.switch_latency_ns + cable_ns_;
  if (!torus_dims_.empty()) {
    const int dims = static_cast<int>(torus_dims_.size());
    torus_.reserve(static_cast<std::size_t>(num_nodes_) * 2 * dims);
    for (int n = 0; n < num_nodes_; ++n) {
      int rest = n;
      std::vector<int> c(dims);
      for (int d = 0; d < dims; ++d) {
        c[d] = rest % torus_dims_[d];
        rest /= torus_dims_[d];
      }
      for (int d = 0; d < dims; ++d) {
        for (int dir : {+1, -1}) {
          if (dir < 0 && torus_dims_[d] == 2) {  // one neighbour, one link each way (torus_directions)
            torus_.push_back(torus_.back());
            continue;
          }
          std::vector<int> nc = c;
          nc[d] = (c[d] + dir + torus_dims_[d]) % torus_dims_[d];
          int neighbour = 0;
          for (int k = dims - 1; k >= 0; --k) neighbour = neighbour * torus_dims_[k] + nc[k];
          const std::string from = "node" + std::to_string(n) + ".router";
          const std::string to = "node" + std::to_string(neighbour) + ".router";
          torus_.push_back(add(torus_link_bytes_per_s_, hop_ns, from + ".d" + std::to_string(d) + (dir > 0 ? "+" : "-"),
                               LinkKind::fabric, from, to));
        }
      }
    }
    return;
  }
  const int ups = spec_.fabric.tiers == 3 ? num_aggs_ : num_spines_;
  if (ups == 0) return;
  leaf_up_.reserve(static_cast<std::size_t>(num_leaves_) * ups);
  spine_down_.reserve(static_cast<std::size_t>(num_leaves_) * ups);
  const bool rail = spec_.fabric.kind == FabricKind::rail_optimized;
  const bool pooled = routing_ == FabricRouting::adaptive;
  for (int l = 0; l < num_leaves_; ++l) {
    const std::string leaf = "leaf" + std::to_string(l);
    const int group = rail ? l / nics_per_node_ : l;
    if (pooled) {
      // Adaptive routing: every flow is split evenly over the ups up-links, so each carries 1/ups
      // of the leaf's traffic: one resource of ups x the link's capacity loads as they do.
      const std::string up = spec_.fabric.tiers == 3
                                 ? "pod" + std::to_string(group / spec_.fabric.leaves_per_pod) + ".aggs"
                                 : std::string("spines");
      leaf_up_.push_back(add(ups * leaf_uplink_bytes_per_s_, hop_ns, link_name(leaf, up), LinkKind::fabric, leaf, up));
      spine_down_.push_back(
          add(ups * leaf_uplink_bytes_per_s_, hop_ns, link_name(up, leaf), LinkKind::fabric, up, leaf));
      continue;
    }
    for (int k = 0; k < ups; ++k) {
      const std::string up = spec_.fabric.tiers == 3 ? "pod" + std::to_string(group / spec_.fabric.leaves_per_pod) +
                                                           ".agg" + std::to_string(k)
                                                     : "spine" + std::to_string(k);
      leaf_up_.push_back(add(leaf_uplink_bytes_per_s_, hop_ns, link_name(leaf, up), LinkKind::fabric, leaf, up));
      spine_down_.push_back(add(leaf_uplink_bytes_per_s_, hop_ns, link_name(up, leaf), LinkKind::fabric, up, leaf));
    }
  }
  if (spec_.fabric.tiers == 3 && num_pods_ > 1) {
    for (int p = 0; p < num_pods_; ++p) {
      if (pooled) {
        const std::string aggs = "pod" + std::to_string(p) + ".aggs";
        const double pool = num_spines_ * pod_uplink_bytes_per_s_;
        pod_up_.push_back(add(pool, hop_ns, link_name(aggs, "cores"), LinkKind::fabric, aggs, "cores"));
        core_down_.push_back(add(pool, hop_ns, link_name("cores", aggs), LinkKind::fabric, "cores", aggs));
        continue;
      }
      for (int c = 0; c < num_spines_; ++c) {
        const std::string agg = "pod" + std::to_string(p) + ".agg" + std::to_string(c % num_aggs_);
        const std::string core = "core" + std::to_string(c);
        pod_up_.push_back(add(pod_uplink_bytes_per_s_, hop_ns, link_name(agg, core), LinkKind::fabric, agg, core));
        core_down_.push_back(add(pod_uplink_bytes_per_s_, hop_ns, link_name(core, agg), LinkKind::fabric, core, agg));
      }
    }
  }
}

int Cluster::leaf_of(int node, int rail) const {
  const int group = fabric_slot(node) / spec_.fabric.nodes_per_leaf;
  return spec_.fabric.kind == FabricKind::rail_optimized ? group * nics_per_node_ + rail : group;
}

void Cluster::append_intra(int node, int a, int b, std::vector<sim::ResourceId>& out) const {
  const std::size_t base = static_cast<std::size_t>(node) * gpus_per_node_;
  if (scale_up_ == ScaleUp::nvswitch) {
    out.push_back(nvl_up_[base + a]);
    out.push_back(nvl_down_[base + b]);
  } else if (nvlink_between(a, b)) {
    out.push_back(mesh_[base * gpus_per_node_ + static_cast<std::size_t>(a) * gpus_per_node_ + b]);
  } else {
    append_pcie(node, false, a, false, b, !pcie_p2p_, out);
  }
}

void Cluster::append_fabric(int sn, int dn, int src_nic, int dst_nic, std::uint64_t flow_hash,
                            std::vector<sim::ResourceId>& out) const {
  if (!torus_dims_.empty()) {
    const int dims = static_cast<int>(torus_dims_.size());
    int cur = sn;
    int a = sn, b = dn;
    std::vector<int> cs(dims), cd(dims);
    for (int d = 0; d < dims; ++d) {
      cs[d] = a % torus_dims_[d];
      a /= torus_dims_[d];
      cd[d] = b % torus_dims_[d];
      b /= torus_dims_[d];
    }
    // Dimension-order routing, the shorter way round (ties: +).
    int stride = 1;
    for (int d = 0; d < dims; ++d) {
      const int size = torus_dims_[d];
      const int fwd = (cd[d] - cs[d] + size) % size;
      const int dir = fwd <= size - fwd ? +1 : -1;
      const int steps = dir > 0 ? fwd : size - fwd;
      int c = cs[d];
      for (int k = 0; k < steps; ++k) {
        out.push_back(
            torus_[static_cast<std::size_t>(cur) * 2 * dims + 2 * static_cast<std::size_t>(d) + (dir > 0 ? 0 : 1)]);
        const int nc = (c + dir + size) % size;
        cur += (nc - c) * stride;
        c = nc;
      }
      stride *= size;
    }
    return;
  }
  const int sl = leaf_of(sn, src_nic), dl = leaf_of(dn, dst_nic);
  if (sl == dl) return;
  const bool rail_opt = spec_.fabric.kind == FabricKind::rail_optimized;
  const int sp = (rail_opt ? sl / nics_per_node_ : sl) / spec_.fabric.leaves_per_pod;
  const int dp = (rail_opt ? dl / nics_per_node_ : dl) / spec_.fabric.leaves_per_pod;
  const bool via_core = spec_.fabric.tiers == 3 && num_pods_ > 1 && sp != dp;
  if (routing_ == FabricRouting::adaptive) {
    out.push_back(leaf_up_[static_cast<std::size_t>(sl)]);
    if (via_core) {
      out.push_back(pod_up_[static_cast<std::size_t>(sp)]);
      out.push_back(core_down_[static_cast<std::size_t>(dp)]);
    }
    out.push_back(spine_down_[static_cast<std::size_t>(dl)]);
    return;
  }
  const std::size_t ups = spec_.fabric.tiers == 3 ? num_aggs_ : num_spines_;
  const auto [k, plane] = pick_up_links(sl, sp, dl, dn, dst_nic, flow_hash);
  out.push_back(leaf_up_[static_cast<std::size_t>(sl) * ups + k]);
  if (via_core) {
    // Core c is wired to aggregation switch c % aggs of every pod (one plane per aggregation index).
    const int core = std::min(k + num_aggs_ * plane, num_spines_ - 1);
    out.push_back(pod_up_[static_cast<std::size_t>(sp) * num_spines_ + core]);
    out.push_back(core_down_[static_cast<std::size_t>(dp) * num_spines_ + core]);
  }
  out.push_back(spine_down_[static_cast<std::size_t>(dl) * ups + k]);
}

std::pair<int, int> Cluster::pick_up_links(int sl, int sp, int dl, int dn, int rail, std::uint64_t flow_hash) const {
  const int ups = spec_.fabric.tiers == 3 ? num_aggs_ : num_spines_;
  const int per_plane = num_aggs_ > 0 ? std::max(1, num_spines_ / num_aggs_) : 1;
  // A failed cable at either leaf: the pick among the up-links up at both (settle_failures
  // checks one exists), by rendezvous hashing, so flows on healthy up-links keep theirs.
  auto up = [&](int k) {
    return up_link_failed_.empty() || (up_link_failed_[static_cast<std::size_t>(sl) * ups + k] == 0 &&
                                       up_link_failed_[static_cast<std::size_t>(dl) * ups + k] == 0);
  };
  if (routing_ == FabricRouting::d_mod_k) {
    // D-mod-k (Zahavi 2010, eq. 1): at tier l the up-port is floor(D / (w_1 ... w_{l-1})) mod w_l,
    // w_l the up-ports per switch of tier l. Past kMaxSpines a resource bundles ports p, p + ups, ...
    // A destination whose port is down moves to one of the others (as OpenSM recomputes its
    // tables around a failed link); the others keep theirs.
    const std::uint64_t d = destination_index(dn, rail);
    const auto ports = static_cast<std::uint64_t>(std::max(leaf_up_ports_, ups));
    int k = static_cast<int>((d % ports) % static_cast<std::uint64_t>(ups));
    const int plane = static_cast<int>((d / ports) % static_cast<std::uint64_t>(per_plane));
    if (!up(k)) k = rendezvous_pick(mix64(d), ups, up);
    return {k, plane};
  }
  // ECMP: each switch hashes the flow's 5-tuple with its own seed (switches are seeded per device
  // so that tiers do not pick correlated ports: "hash polarization") and picks one of its
  // equal-cost ports, each equally likely. The pick is resilient (rendezvous) hashing, the port
  // of highest hash(flow, port) (Thaler & Ravishankar, "Using name-based mappings to increase hit
  // rates", IEEE/ACM ToN 1998; switches' "resilient ECMP"): with one port fewer only the flows of
  // the removed port move, so a fabric with fewer up-links sees, seed by seed, the same
  // collisions plus those of the moved flows, never fewer.
  const std::uint64_t seed = spec_.fabric.ecmp_seed;
  const std::uint64_t at_leaf = mix64(flow_hash ^ mix64((seed << 20) ^ static_cast<std::uint64_t>(sl)));
  const std::uint64_t at_agg = mix64(flow_hash ^ mix64((seed << 20) ^ (static_cast<std::uint64_t>(sp) + (1ULL << 19))));
  return {rendezvous_pick(at_leaf, ups, up), rendezvous_pick(at_agg, per_plane, [](int) { return true; })};
}

std::uint64_t Cluster::destination_index(int node, int nic) const {
  const int npl = spec_.fabric.nodes_per_leaf;
  const int slot = fabric_slot(node);
  const int port = spec_.fabric.kind == FabricKind::rail_optimized ? slot % npl : (slot % npl) * nics_per_node_ + nic;
  return static_cast<std::uint64_t>(leaf_of(node, nic)) * static_cast<std::uint64_t>(leaf_down_ports_) +
         static_cast<std::uint64_t>(port);
}

FabricRouting Cluster::routing_for_nic(const NicSpec& nic) {
  // InfiniBand: NVIDIA's OpenSM enables adaptive routing by default (opensm.conf routing_engine
  // ar_updn; NVIDIA "InfiniBand Cluster Bring-up Procedure" v1.0, Adaptive Routing) and NCCL sends
  // AR-capable transfers on IB (NCCL_IB_ADAPTIVE_ROUTING, default 1 on IB). Slingshot routes
  // adaptively by default (HPE Slingshot documentation). Ethernet (RoCE, TCPXO): ECMP hashing.
  if (nic.name.rfind("IB-", 0) == 0 || nic.name.rfind("Slingshot", 0) == 0) return FabricRouting::adaptive;
  return FabricRouting::ecmp_hash;
}

bool Cluster::hashing_matters() const {
  if (routing_ != FabricRouting::ecmp_hash || !torus_dims_.empty() || num_groups_ <= 1) return false;
  const int ups = spec_.fabric.tiers == 3 ? num_aggs_ : num_spines_;
  const int per_plane = num_aggs_ > 0 ? std::max(1, num_spines_ / num_aggs_) : 1;
  return ups > 1 || (spec_.fabric.tiers == 3 && num_pods_ > 1 && per_plane > 1);
}

void Cluster::compute_route(int src, int dst, int rail, std::vector<sim::ResourceId>& out) const {
  out.clear();
  const int sn = node_of(src), dn = node_of(dst);
  const int si = local_rank(src), di = local_rank(dst);
  if (sn == dn) {
    append_intra(sn, si, di, out);
    return;
  }
  // PXN: cross NVLink to the NIC's own GPU first where NCCL does (pxn_relay).
  // A failed NIC: each side uses the NIC serving that rail on its node (serving_nic).
  int src_nic = serving_nic(sn, rail), dst_nic = serving_nic(dn, rail);
  if (src_nic != dst_nic && spec_.fabric.kind == FabricKind::rail_optimized && leaf_up_.empty()) {
    // No spine joins the rails: both ends on one rail up at both nodes (settle_failures checks).
    if (nic_up(dn, src_nic)) {
      dst_nic = src_nic;
    } else if (nic_up(sn, dst_nic)) {
      src_nic = dst_nic;
    } else {
      for (int k = 0; k < nics_per_node_; ++k)
        if (nic_up(sn, k) && nic_up(dn, k)) {
          src_nic = dst_nic = k;
          break;
        }
    }
  }
  int proxy = si;
  if (pxn_relay(sn, si, src_nic)) {
    const int nic_gpu = gpu_of_nic(src_nic);
    append_intra(sn, si, nic_gpu, out);
    proxy = nic_gpu;
  }
  const bool staged = !spec_.gpu_direct_rdma;
  append_pcie(sn, false, proxy, true, src_nic, staged, out);
  out.push_back(nic_tx_[static_cast<std::size_t>(sn) * nics_per_node_ + src_nic]);
  // The flow's 5-tuple: source and destination NIC addresses, UDP source port (RoCEv2 derives it
  // from the queue pair, and NCCL opens one per GPU pair and channel) and the fixed destination
  // port 4791: (src GPU, dst GPU, NIC) identify it.
  const std::uint64_t flow = (static_cast<std::uint64_t>(src) << 36) | (static_cast<std::uint64_t>(dst) << 8) |
                             static_cast<std::uint64_t>(rail);
  append_fabric(sn, dn, src_nic, dst_nic, mix64(flow), out);
  out.push_back(nic_rx_[static_cast<std::size_t>(dn) * nics_per_node_ + dst_nic]);
  append_pcie(dn, true, dst_nic, false, di, staged, out);
}

std::span<const sim::ResourceId> Cluster::route(int src_gpu, int dst_gpu) const {
  if (dst_gpu < 0 || dst_gpu >= num_gpus()) return route(src_gpu, dst_gpu, 0);  // throws
  return route(src_gpu, dst_gpu, nic_of_local(local_rank(dst_gpu)));
}

std::span<const sim::ResourceId> Cluster::route(int src_gpu, int dst_gpu, int rail) const {
  if (src_gpu < 0 || src_gpu >= num_gpus() || dst_gpu < 0 || dst_gpu >= num_gpus()) {
    throw std::out_of_range("Cluster::route: GPU " +
                            std::to_string(src_gpu < 0 || src_gpu >= num_gpus() ? src_gpu : dst_gpu) + " outside [0, " +
                            std::to_string(num_gpus()) + ")");
  }
  if (src_gpu == dst_gpu) {
    throw std::out_of_range("Cluster::route: src == dst (" + std::to_string(src_gpu) + ")");
  }
  const bool inter = node_of(src_gpu) != node_of(dst_gpu);
  if (inter && (rail < 0 || rail >= nics_per_node_)) {
    throw std::out_of_range("Cluster::route: NIC " + std::to_string(rail) + " outside [0, " +
                            std::to_string(nics_per_node_) + ")");
  }
  const std::uint64_t key = (static_cast<std::uint64_t>(src_gpu) << 36) | (static_cast<std::uint64_t>(dst_gpu) << 8) |
                            static_cast<std::uint64_t>(inter ? rail : 0);
  auto it = routes_.index.find(key);
  if (it == routes_.index.end()) {
    compute_route(src_gpu, dst_gpu, inter ? rail : 0, routes_.scratch);
    if (routes_.block_used + routes_.scratch.size() > routes_.block_size) {
      routes_.block_size = std::max<std::size_t>(65536, routes_.scratch.size());
      routes_.blocks.push_back(std::make_unique<sim::ResourceId[]>(routes_.block_size));
      routes_.block_used = 0;
    }
    sim::ResourceId* dst = routes_.blocks.back().get() + routes_.block_used;
    std::copy(routes_.scratch.begin(), routes_.scratch.end(), dst);
    routes_.block_used += routes_.scratch.size();
    it = routes_.index.emplace(key, CachedRoute{dst, static_cast<std::uint32_t>(routes_.scratch.size())}).first;
  }
  return {it->second.hops, it->second.size};
}

std::string Cluster::describe() const {
  std::ostringstream o;
  if (mixed()) {
    o << num_nodes_ << " nodes in " << groups_.size() << " node groups on one fabric"
      << (drained_.empty() ? "" : " (in service, of the scenario's " + std::to_string(fabric_slots()) + ")") << ":\n";
    for (std::size_t i = 0; i < groups_.size(); ++i) {
      const NodeGroup& g = groups_[i];
      // Numbered as the scenario numbers nodes (fabric slots: a drained node keeps its number).
      const int first = fabric_slot(g.first_node), last = fabric_slot(g.first_node + g.num_nodes - 1);
      o << "  node_group[" << i << "]: "
        << (first == last ? "node " + std::to_string(first)
                          : "nodes " + std::to_string(first) + "-" + std::to_string(last))
        << ", " << g.num_nodes << " x " << g.node_template->name << " with " << g.gpu->name << ", scale-up "
        << gbps(g.scale_up_bytes_per_s) << " per GPU per direction, PCIe " << gbps(g.node_template->pcie_bytes_per_s)
        << "\n";
    }
  } else {
    o << num_nodes_ << " x " << template_->name << " (" << template_->source << ")"
      << (drained_.empty() ? "" : " in service, of the scenario's " + std::to_string(fabric_slots())) << "\n";
  }
  for (const DrainedNode& d : drained_)
    o << "  node" << d.slot << " drained: " << d.reason() << "; no job runs on it, its switch ports stay\n";
  // One node of group `g` (its template, GPU and PCIe tree; sockets, NIC placement and scale-up
  // kind are the same in every group).
  auto describe_node = [&](const NodeGroup& g) {
    const NodeTemplate& t = *g.node_template;
    const GpuSpec& gpu = *g.gpu;
    const int node = g.first_node;
    const PcieLayout& pcie = pcie_of(node);
    o << "  GPUs: " << gpus_per_node_ << " x " << gpu.name << " (" << gpu.source << ")\n";
    switch (scale_up_) {
      case ScaleUp::nvswitch:
        o << "  NVLink: " << t.nvswitches << " NVSwitch chips (non-blocking); per GPU NVLink" << gpu.nvlink_generation
          << " " << gpu.nvlink_links << " links x " << gbps(gpu.nvlink_bytes_per_s_per_link) << " = "
          << gbps(g.scale_up_bytes_per_s) << " per direction\n";
        break;
      case ScaleUp::mesh:
        o << "  " << (gpu.nvlink_generation == 0 ? "xGMI" : "NVLink") << ": full mesh, "
          << gbps(g.mesh_link_bytes_per_s) << " per direction per GPU pair (" << gbps(g.scale_up_bytes_per_s)
          << " per GPU)\n";
        break;
      case ScaleUp::bridges:
        if (bridge_gpus_ == 2) {
          o << "  NVLink bridges: GPUs 2k and 2k+1 paired, " << gbps(g.mesh_link_bytes_per_s)
            << " per direction per pair; other pairs over PCIe\n";
        } else {
          o << "  NVLink bridges: " << bridge_gpus_ << "-way, GPUs " << bridge_gpus_ << "k to " << bridge_gpus_ << "k+"
            << bridge_gpus_ - 1 << " all to all, " << gbps(g.mesh_link_bytes_per_s)
            << " per direction per GPU pair; other pairs over PCIe\n";
        }
        break;
      case ScaleUp::graph:
        o << "  NVLink: " << t.nvlinks.size() << " GPU pairs joined by direct links (the template's nvlink list), "
          << gbps(gpu.nvlink_bytes_per_s_per_link) << " per link per direction; other pairs over PCIe\n";
        break;
      case ScaleUp::none:
        o << "  NVLink: none; GPU to GPU over PCIe"
          << (pcie_p2p_ ? " (peer-to-peer)" : " staged through host memory (no P2P)") << "\n";
        break;
    }
    const int sockets = std::max(1, t.sockets);
    o << "  CPU: " << sockets << " socket" << (sockets > 1 ? "s" : "");
    if (!t.cpu.empty()) o << " (" << t.cpu << ")";
    if (sockets > 1) o << ", GPU traffic between sockets " << gbps(t.socket_link_bytes_per_s) << " per direction";
    o << "\n";
    if (t.nic_link_bytes_per_s() == t.pcie_bytes_per_s) {
      o << "  PCIe gen" << t.pcie_generation << ": " << gbps(t.pcie_bytes_per_s)
        << " per direction per GPU and per NIC; ";
    } else {
      // Grace superchips: the GPU's host link is NVLink-C2C, the NIC's is PCIe (nic_pcie_bytes_per_s).
      o << "  GPU host link " << gbps(t.pcie_bytes_per_s) << " per direction per GPU; NICs on PCIe gen"
        << t.pcie_generation << ": " << gbps(t.nic_link_bytes_per_s()) << " per direction per NIC; ";
    }
    const bool regular = pcie_tree_is_regular(t);
    if (t.pcie_switches > 0 && regular) {
      // GPU g sits under switch g / per_switch (NodeTemplate), so the last switch may hold fewer.
      const int per_switch = t.gpus_per_pcie_switch();
      const int last = t.gpus_per_node - (t.pcie_switches - 1) * per_switch;
      o << t.pcie_switches << (t.pcie_switches == 1 ? " PCIe switch (" : " PCIe switches (") << per_switch
        << (per_switch == 1 ? " GPU" : " GPUs") << (t.pcie_switches == 1 ? "" : " each");
      if (last != per_switch && t.pcie_switches > 1) o << ", the last " << last;
      o << "), uplink " << gbps(t.pcie_uplink_bytes_per_s > 0 ? t.pcie_uplink_bytes_per_s : t.pcie_bytes_per_s)
        << " to the CPU\n";
    } else if (t.pcie_switches > 0) {
      o << t.pcie_switches << " PCIe switches (the template's own tree):\n";
      for (int s = 0; s < t.pcie_switches; ++s) {
        const int up = pcie.switch_up[static_cast<std::size_t>(s)];
        o << "    pcie_sw" << s << ": uplink " << gbps(switch_uplink_bytes_per_s(t, s)) << " to "
          << (up >= 0 ? "pcie_sw" + std::to_string(up)
                      : "cpu" + std::to_string(pcie.switch_socket[static_cast<std::size_t>(s)]))
          << "\n";
      }
    } else {
      o << "GPUs and NICs on CPU root ports\n";
    }
    for (int k = 0; k < gpus_per_node_; ++k) {
      o << "    gpu" << k << ": "
        << (switch_of_gpu(node, k) >= 0 ? "pcie_sw" + std::to_string(switch_of_gpu(node, k)) : "root port")
        << ", socket " << socket_of_gpu(k);
      if (nics_per_node_ > 0) o << ", NIC nic" << nic_of_local(k);
      o << "\n";
    }
    o << "  NICs: " << nics_per_node_ << " x " << nic_->name << " at " << gbps(nic_->bytes_per_s) << " per direction, "
      << nic_->latency_ns << " ns adapter latency (" << nic_->source << ")\n";
    for (int i = 0; i < nics_per_node_; ++i) {
      o << "    nic" << i << ": "
        << (switch_of_nic(node, i) >= 0 ? "pcie_sw" + std::to_string(switch_of_nic(node, i)) : std::string("root port"))
        << ", socket " << socket_of_nic(i) << ", next to gpu" << gpu_of_nic(i)
        << (socket_of_nic(i) != socket_of_gpu(cabled_gpu_of_nic(i))
                ? " (other socket! cabled for gpu" + std::to_string(cabled_gpu_of_nic(i)) + ")"
                : "")
        << "\n";
    }
  };
  if (!mixed()) {
    o << (spec_.overrides.empty() ? "Each node (node0 shown; every node is the same):\n"
                                  : "Each node (node0 shown; every node is built the same, then cluster.overrides "
                                    "below change the elements they select):\n");
    describe_node(groups_.front());
  }
  for (std::size_t i = 0; mixed() && i < groups_.size(); ++i) {
    o << "Node " << fabric_slot(groups_[i].first_node) << " (node_group[" << i << "]'s; every node of the group is "
      << (spec_.overrides.empty() ? "the same" : "built the same, then cluster.overrides below change what they select")
      << "):\n";
    describe_node(groups_[i]);
  }
  o << (mixed() ? "GPUDirect RDMA on every node: " : "  GPUDirect RDMA: ")
    << (spec_.gpu_direct_rdma ? "on" : "off (NIC traffic staged through host memory)") << "\n";
  describe_overrides(o, spec_.overrides);
  if (num_nodes_ > 1) describe_fabric(o);
  o << "Resources: " << edges_->size() << " directed links\n";
  return o.str();
}

std::string Cluster::to_dot(int max_nodes) const {
  std::ostringstream o;
  o << "digraph cluster {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n  edge [fontsize=8, dir=both];\n";
  auto node_of_device = [](const std::string& d) -> int {
    if (d.rfind("node", 0) != 0) return -1;
    return std::atoi(d.c_str() + 4);
  };
  // One edge per device pair (both directions); label: capacity per direction, or "failed"
  // (dashed, red) when an override took either direction down.
  const std::set<sim::ResourceId> failed(failed_resources_.begin(), failed_resources_.end());
  struct Pair {
    double capacity_bytes_per_s = 0;
    LinkKind kind = LinkKind::other;
    bool failed = false;
  };
  std::map<std::pair<std::string, std::string>, Pair> pairs;
  std::set<std::string> devices;
  int skipped = 0;
  for (const ClusterEdge& e : *edges_) {
    const int na = node_of_device(e.from), nb = node_of_device(e.to);
    if (na >= max_nodes || nb >= max_nodes) {
      ++skipped;
      continue;
    }
    const auto key = e.from < e.to ? std::make_pair(e.from, e.to) : std::make_pair(e.to, e.from);
    Pair& pair = pairs.try_emplace(key, Pair{e.capacity_bytes_per_s, e.kind, false}).first->second;
    pair.failed = pair.failed || failed.contains(e.resource);
    devices.insert(e.from);
    devices.insert(e.to);
  }
  for (const std::string& d : devices) {
    const char* shape = d.find("gpu") != std::string::npos    ? "box3d"
                        : d.find("nic") != std::string::npos  ? "cds"
                        : d.find("cpu") != std::string::npos  ? "component"
                        : d.find("leaf") != std::string::npos ? "hexagon"
                                                              : "ellipse";
    o << "  \"" << d << "\" [shape=" << shape << "];\n";
  }
  for (const auto& [key, value] : pairs) {
    o << "  \"" << key.first << "\" -> \"" << key.second << "\" [label=\"";
    if (value.failed)
      o << "failed " << kind_name(value.kind) << "\", style=dashed, color=red];\n";
    else
      o << gbps(value.capacity_bytes_per_s) << " " << kind_name(value.kind) << "\"];\n";
  }
  if (skipped > 0) o << "  // " << skipped << " links of nodes >= " << max_nodes << " not drawn\n";
  o << "}\n";
  return o.str();
}

}  // namespace traincast::models
