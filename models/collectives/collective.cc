// Collectives as concurrent flows plus NCCL's latency model. See collective.h.
//
// Why concurrent flows per ring edge: NCCL pipelines a ring collective in chunks, so in steady
// state every edge of every channel's ring is busy at once and the collective takes
// (bytes each edge must carry) / (bandwidth that edge gets). A flow per (channel, edge) with the
// edge's total bytes reproduces exactly that, lets the FlowNetwork find the slowest link, and
// makes other traffic on the same links slow the collective down. NCCL's chunk-level latency is
// added after the flows drain, as NCCL's tuner adds it: time = latency + bytes / bandwidth.

#include "models/collectives/collective.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>

namespace traincast::models {
namespace {

constexpr int kLL = 0;
constexpr int kLL128 = 1;
constexpr int kSimple = 2;

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t plan_hash(CollectiveOp op, CollectiveAlgorithm algorithm, std::span<const int> ranks) {
  std::uint64_t h = mix64(static_cast<std::uint64_t>(op) * 16 + static_cast<std::uint64_t>(algorithm));
  for (int r : ranks) h = mix64(h ^ static_cast<std::uint32_t>(r));
  return h;
}

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

bool is_ring_op(CollectiveOp op) {
  return op == CollectiveOp::all_reduce || op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter ||
         op == CollectiveOp::broadcast || op == CollectiveOp::reduce;
}

// Bytes each ring edge carries, as a fraction of the nccl-tests size S, for n ranks.
double edge_fraction(CollectiveOp op, int n) {
  switch (op) {
    case CollectiveOp::all_reduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      return static_cast<double>(n - 1) / n;
    default:
      return 1.0;
  }
}

// Orders of the rings over GPUs `local` of one node: one ring in the given order, or on a
// full-mesh node one ring per stride s coprime with n (ring i -> i+s uses the direct links
// (i, i+s), so the rings use disjoint links).
void single_node_rings(const Cluster& cluster, std::span<const int> local, std::vector<std::vector<int>>& rings) {
  rings.clear();
  const int n = static_cast<int>(local.size());
  const bool mesh = cluster.has_scale_up() && !cluster.node_template().nvswitch;
  if (!mesh || n <= 2) {
    rings.emplace_back(local.begin(), local.end());
    return;
  }
  for (int s = 1; s < n; ++s) {
    if (std::gcd(s, n) != 1) continue;
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = local[(static_cast<long long>(i) * s) % n];
    rings.push_back(std::move(order));
  }
}

}  // namespace

CollectiveEngine::CollectiveEngine(sim::Simulator& sim, sim::FlowNetwork& net, const Cluster& cluster)
    : sim_(sim), net_(net), cluster_(cluster) {
  rank_stamp_.assign(static_cast<std::size_t>(cluster.num_gpus()), 0);
}

double CollectiveEngine::busbw_factor(CollectiveOp op, int n) {
  if (n < 1) throw std::invalid_argument("busbw_factor: n must be >= 1 (got " + std::to_string(n) + ")");
  switch (op) {
    case CollectiveOp::all_reduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_to_all:
      return static_cast<double>(n - 1) / n;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
    case CollectiveOp::send_recv:
      return 1.0;
  }
  return 1.0;
}

double CollectiveEngine::efficiency(sim::ResourceId r) const {
  switch (cluster_.link_kind(r)) {
    case LinkKind::nvlink: {
      const GpuSpec& g = cluster_.gpu_spec(0);
      if (g.nvlink_generation == 0) return LinkEfficiency::xgmi;
      if (g.nvlink_generation >= 5) return LinkEfficiency::nvlink_gen5;
      if (g.nvlink_generation == 4) return LinkEfficiency::nvlink_gen4;
      return LinkEfficiency::nvlink_gen2_3;
    }
    case LinkKind::pcie:
      return LinkEfficiency::pcie;
    case LinkKind::nic:
    case LinkKind::fabric:
      return LinkEfficiency::network;
    case LinkKind::other:
      return 1.0;
  }
  return 1.0;
}

void CollectiveEngine::validate(const CollectiveCall& call) const {
  if (call.ranks.empty()) throw std::invalid_argument("collective: empty group");
  if (!(call.bytes >= 0) || !std::isfinite(call.bytes)) {
    throw std::invalid_argument("collective: bytes must be finite and >= 0 (got " + fmt(call.bytes) + ")");
  }
  if (call.op == CollectiveOp::send_recv && call.ranks.size() != 2) {
    throw std::invalid_argument("collective: send_recv needs exactly 2 ranks (got " +
                                std::to_string(call.ranks.size()) + ")");
  }
  const int gpus = cluster_.num_gpus();
  if (++stamp_ == 0) {
    std::fill(rank_stamp_.begin(), rank_stamp_.end(), 0);
    stamp_ = 1;
  }
  for (int r : call.ranks) {
    if (r < 0 || r >= gpus) {
      throw std::invalid_argument("collective: rank " + std::to_string(r) + " outside [0, " + std::to_string(gpus) +
                                  ")");
    }
    if (rank_stamp_[r] == stamp_) throw std::invalid_argument("collective: duplicate rank " + std::to_string(r));
    rank_stamp_[r] = stamp_;
  }
}

std::array<double, 3> CollectiveEngine::ring_latency_s(CollectiveOp op, int n, int nodes) const {
  // NCCL src/graph/tuning.cc (ncclTopoTuneModel, Ring): latency = baseLat + (nsteps -
  // nInterSteps) * intraLat + nInterSteps * interLat, intraLat raised to the network post
  // overhead (x3 for Simple) when the ring spans nodes.
  int steps = 0, inter = 0;
  switch (op) {
    case CollectiveOp::all_reduce:
      steps = 2 * (n - 1);
      inter = nodes > 1 ? 2 * nodes : 0;
      break;
    case CollectiveOp::all_gather:
    case CollectiveOp::reduce_scatter:
      steps = n - 1;
      inter = nodes - 1;
      break;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
      // Pipelined chain of n-1 hops (NCCL charges per-step latency on rings that do not reuse
      // channels; we use the Ring hwLat per hop rather than NCCL's Tree/Simple chunk figure).
      steps = n - 1;
      inter = nodes - 1;
      break;
    case CollectiveOp::all_to_all:
    case CollectiveOp::send_recv:
      // One concurrent exchange step (grouped send/recv).
      steps = 1;
      inter = nodes > 1 ? 1 : 0;
      break;
  }
  inter = std::min(inter, steps);
  const auto& intra_table = cluster_.has_scale_up() ? NcclLatencyUs::nvlink_ring : NcclLatencyUs::pci_ring;
  std::array<double, 3> out{};
  for (int p = 0; p < 3; ++p) {
    double intra = intra_table[p];
    if (nodes > 1) intra = std::max(intra, NcclLatencyUs::net_overhead * (p == kSimple ? 3.0 : 1.0));
    const double us = NcclLatencyUs::base_ring[p] + (steps - inter) * intra + inter * NcclLatencyUs::net_ring[p];
    out[p] = us * 1e-6;
  }
  return out;
}

double CollectiveEngine::protocol_factor(CollectiveProtocol p, CollectiveOp op, int nodes) {
  // NCCL tuning.cc, Ring: LL busBw x 1/4 (multi-node, all-reduce, reduce) else x 1/3;
  // LL128 x 0.92 (120/128 bytes of each line carry data); Simple x 1.
  switch (p) {
    case CollectiveProtocol::ll:
      return (nodes > 1 || op == CollectiveOp::all_reduce || op == CollectiveOp::reduce) ? 0.25 : 1.0 / 3.0;
    case CollectiveProtocol::ll128:
      return 0.92;
    case CollectiveProtocol::simple:
      return 1.0;
  }
  return 1.0;
}

void CollectiveEngine::finish_phase(Plan& plan, Phase& phase, std::span<const std::pair<int, int>> edges,
                                    std::span<const double> fractions) const {
  phase.first_flow = static_cast<std::uint32_t>(plan.flows.size());
  phase.num_flows = static_cast<std::uint32_t>(edges.size());
  const std::size_t nres = net_.num_resources();
  if (load_scratch_.size() < nres) {
    load_scratch_.resize(nres, 0.0);
    count_scratch_.resize(nres, 0);
  }
  touched_scratch_.clear();
  for (std::size_t i = 0; i < edges.size(); ++i) {
    FlowTemplate f;
    f.path = cluster_.route(edges[i].first, edges[i].second);
    f.byte_fraction = fractions[i];
    for (auto r : f.path) {
      if (count_scratch_[r] == 0) touched_scratch_.push_back(r);
      ++count_scratch_[r];
      load_scratch_[r] += f.byte_fraction;
    }
    plan.flows.push_back(f);
  }
  // Per-flow cap: the flows of this phase together get at most efficiency x capacity on each
  // link; the bottleneck time per byte is the largest load / (efficiency x capacity).
  double spb = 0;
  for (auto r : touched_scratch_) {
    spb = std::max(spb, load_scratch_[r] / (efficiency(r) * net_.capacity(r)));
  }
  for (std::uint32_t i = phase.first_flow; i < plan.flows.size(); ++i) {
    FlowTemplate& f = plan.flows[i];
    double cap = std::numeric_limits<double>::infinity();
    for (auto r : f.path) cap = std::min(cap, efficiency(r) * net_.capacity(r) / count_scratch_[r]);
    f.cap_bytes_per_s = cap;
  }
  for (auto r : touched_scratch_) {
    load_scratch_[r] = 0;
    count_scratch_[r] = 0;
  }
  phase.seconds_per_byte = spb;
}

void CollectiveEngine::build_plan(Plan& plan) const {
  const std::vector<int>& ranks = plan.ranks;
  const int n = static_cast<int>(ranks.size());
  // Group GPUs by node, nodes in order of first appearance, GPUs in rank order.
  std::vector<int> node_ids;
  std::vector<std::vector<int>> per_node;
  for (int r : ranks) {
    const int node = cluster_.node_of(r);
    auto it = std::find(node_ids.begin(), node_ids.end(), node);
    if (it == node_ids.end()) {
      node_ids.push_back(node);
      per_node.emplace_back();
      it = node_ids.end() - 1;
    }
    per_node[it - node_ids.begin()].push_back(r);
  }
  const int nodes = static_cast<int>(node_ids.size());
  plan.num_nodes = nodes;
  plan.hierarchical_ok = plan.op == CollectiveOp::all_reduce && nodes > 1 && per_node[0].size() > 1 &&
                         std::all_of(per_node.begin(), per_node.end(),
                                     [&](const std::vector<int>& l) { return l.size() == per_node[0].size(); });
  const GpuSpec& gpu = cluster_.gpu_spec(0);
  plan.ll128_allowed = cluster_.has_scale_up() && gpu.nvlink_generation >= 2 && gpu.nvlink_generation <= 4;

  std::vector<std::pair<int, int>> edges;
  std::vector<double> fractions;
  auto add_phase = [&](const std::array<double, 3>& latency) {
    Phase ph;
    ph.latency_s = latency;
    finish_phase(plan, ph, edges, fractions);
    plan.phases.push_back(ph);
    edges.clear();
    fractions.clear();
  };

  if (n == 1) return;  // completes immediately

  if (plan.op == CollectiveOp::send_recv) {
    edges.emplace_back(ranks[0], ranks[1]);
    fractions.push_back(1.0);
    add_phase(ring_latency_s(plan.op, 2, nodes));
    return;
  }
  if (plan.op == CollectiveOp::all_to_all) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        edges.emplace_back(ranks[i], ranks[j]);
        fractions.push_back(1.0 / n);
      }
    }
    add_phase(ring_latency_s(plan.op, n, nodes));
    return;
  }

  std::vector<std::vector<int>> rings;
  auto add_ring_edges = [&](const std::vector<int>& order, CollectiveOp op, double fraction) {
    const int m = static_cast<int>(order.size());
    if (op == CollectiveOp::broadcast || op == CollectiveOp::reduce) {
      // Chain: broadcast flows from the root (ranks[0]) onwards, reduce flows towards it.
      const int root_pos = static_cast<int>(std::find(order.begin(), order.end(), ranks[0]) - order.begin());
      const int start = op == CollectiveOp::broadcast ? root_pos : (root_pos + 1) % m;
      for (int i = 0; i + 1 < m; ++i) {
        edges.emplace_back(order[(start + i) % m], order[(start + i + 1) % m]);
        fractions.push_back(fraction);
      }
      return;
    }
    for (int i = 0; i < m; ++i) {
      edges.emplace_back(order[i], order[(i + 1) % m]);
      fractions.push_back(fraction);
    }
  };

  if (plan.algorithm == CollectiveAlgorithm::hierarchical) {
    const int p = static_cast<int>(per_node[0].size());
    plan.channels = p;
    // Phase 1: reduce-scatter inside every node (all nodes concurrently).
    for (const auto& local : per_node) {
      single_node_rings(cluster_, local, rings);
      for (const auto& ring : rings) {
        add_ring_edges(ring, CollectiveOp::reduce_scatter,
                       edge_fraction(CollectiveOp::reduce_scatter, p) / rings.size());
      }
    }
    add_phase(ring_latency_s(CollectiveOp::reduce_scatter, p, 1));
    // Phase 2: p inter-node all-reduces of S/p, one per local position (its rail).
    for (int q = 0; q < p; ++q) {
      std::vector<int> order;
      for (const auto& local : per_node) order.push_back(local[q]);
      add_ring_edges(order, CollectiveOp::all_reduce, edge_fraction(CollectiveOp::all_reduce, nodes) / p);
    }
    add_phase(ring_latency_s(CollectiveOp::all_reduce, nodes, nodes));
    // Phase 3: all-gather inside every node.
    for (const auto& local : per_node) {
      single_node_rings(cluster_, local, rings);
      for (const auto& ring : rings) {
        add_ring_edges(ring, CollectiveOp::all_gather, edge_fraction(CollectiveOp::all_gather, p) / rings.size());
      }
    }
    add_phase(ring_latency_s(CollectiveOp::all_gather, p, 1));
    return;
  }

  // Flat ring(s).
  if (nodes == 1) {
    single_node_rings(cluster_, per_node[0], rings);
  } else {
    // Channels: each crosses every node boundary through a different NIC.
    int channels = n;
    for (const auto& local : per_node) {
      std::vector<int> nics;
      for (int g : local) nics.push_back(cluster_.nic_of_local(cluster_.local_rank(g)));
      std::sort(nics.begin(), nics.end());
      const int distinct = static_cast<int>(std::unique(nics.begin(), nics.end()) - nics.begin());
      channels = std::min({channels, static_cast<int>(local.size()), std::max(1, distinct)});
    }
    rings.clear();
    for (int c = 0; c < channels; ++c) {
      std::vector<int> order;
      order.reserve(n);
      for (const auto& local : per_node) {
        const int pk = static_cast<int>(local.size());
        const int start = c * pk / channels;
        for (int i = 0; i < pk; ++i) order.push_back(local[(start + i) % pk]);
      }
      rings.push_back(std::move(order));
    }
  }
  plan.channels = static_cast<int>(rings.size());
  const double fraction = edge_fraction(plan.op, n) / rings.size();
  for (const auto& ring : rings) add_ring_edges(ring, plan.op, fraction);
  add_phase(ring_latency_s(plan.op, n, nodes));
}

const CollectiveEngine::Plan& CollectiveEngine::plan_for(CollectiveOp op, CollectiveAlgorithm algorithm,
                                                         std::span<const int> ranks) const {
  const std::uint64_t h = plan_hash(op, algorithm, ranks);
  auto& bucket = plan_index_[h];
  for (std::uint32_t idx : bucket) {
    const Plan& p = plans_[idx];
    if (p.op == op && p.algorithm == algorithm &&
        std::equal(p.ranks.begin(), p.ranks.end(), ranks.begin(), ranks.end())) {
      return p;
    }
  }
  Plan& plan = plans_.emplace_back();
  plan.op = op;
  plan.algorithm = algorithm;
  plan.ranks.assign(ranks.begin(), ranks.end());
  build_plan(plan);
  bucket.push_back(static_cast<std::uint32_t>(plans_.size() - 1));
  return plan;
}

CollectiveChoice CollectiveEngine::evaluate(const Plan& plan, double bytes) const {
  CollectiveChoice best;
  best.algorithm = plan.algorithm;
  best.channels = plan.channels;
  bool have = false;
  const int nodes = plan.num_nodes;
  const int ppn = static_cast<int>(plan.ranks.size()) / std::max(1, nodes);
  for (int p : {kSimple, kLL128, kLL}) {
    if (p == kLL128 && !plan.ll128_allowed) continue;
    double factor = protocol_factor(static_cast<CollectiveProtocol>(p), plan.op, nodes);
    if (p == kLL128 && nodes > 1 && ppn < 2) factor = 0.7;  // NCCL: ppn < 2 -> LL128 x 0.7
    double lat = 0, bw = 0;
    for (const Phase& ph : plan.phases) {
      lat += ph.latency_s[p];
      bw += bytes * ph.seconds_per_byte / factor;
    }
    if (!have || lat + bw < best.seconds()) {
      best.protocol = static_cast<CollectiveProtocol>(p);
      best.latency_s = lat;
      best.bandwidth_s = bw;
      have = true;
    }
  }
  return best;
}

CollectiveChoice CollectiveEngine::choose_plan(const CollectiveCall& call, const Plan** plan) const {
  validate(call);
  *plan = nullptr;
  if (call.ranks.size() == 1) return CollectiveChoice{};
  const Plan& ring = plan_for(call.op, CollectiveAlgorithm::ring, call.ranks);
  *plan = &ring;
  CollectiveChoice best = evaluate(ring, call.bytes);
  if (!is_ring_op(call.op) || call.algorithm == CollectiveAlgorithm::ring || !ring.hierarchical_ok) return best;
  const Plan& hier = plan_for(call.op, CollectiveAlgorithm::hierarchical, call.ranks);
  const CollectiveChoice h = evaluate(hier, call.bytes);
  if (call.algorithm == CollectiveAlgorithm::hierarchical || h.seconds() < best.seconds()) {
    *plan = &hier;
    return h;
  }
  return best;
}

CollectiveChoice CollectiveEngine::choose(const CollectiveCall& call) const {
  const Plan* plan = nullptr;
  return choose_plan(call, &plan);
}

void CollectiveEngine::start(const CollectiveCall& call, CollectiveListener* listener, std::uint64_t tag) {
  const Plan* plan = nullptr;
  const CollectiveChoice choice = choose_plan(call, &plan);  // validates
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(active_.size());
    active_.emplace_back();
  }
  Active& a = active_[slot];
  a = Active{};
  a.listener = listener;
  a.tag = tag;
  a.bytes = call.bytes;
  a.protocol = static_cast<std::uint8_t>(choice.protocol);
  ++in_flight_;
  if (call.ranks.size() == 1) {
    sim_.schedule_in(sim::Time::zero(), this, slot);
    return;
  }
  a.plan = plan;
  start_phase(slot);
}

void CollectiveEngine::start_phase(std::uint32_t slot) {
  Active& a = active_[slot];
  const Plan& plan = *a.plan;
  const Phase& ph = plan.phases[a.phase];
  if (a.bytes == 0 || ph.num_flows == 0) {
    sim_.schedule_in(sim::Time::from_seconds(ph.latency_s[a.protocol]), this, slot);
    return;
  }
  double factor = protocol_factor(static_cast<CollectiveProtocol>(a.protocol), plan.op, plan.num_nodes);
  const int ppn = static_cast<int>(plan.ranks.size()) / std::max(1, plan.num_nodes);
  if (a.protocol == kLL128 && plan.num_nodes > 1 && ppn < 2) factor = 0.7;
  a.pending = ph.num_flows;
  const double bytes = a.bytes;
  for (std::uint32_t i = 0; i < ph.num_flows; ++i) {
    const FlowTemplate& f = plan.flows[ph.first_flow + i];
    net_.start_flow(f.path, f.byte_fraction * bytes, this, slot, f.cap_bytes_per_s * factor);
  }
}

void CollectiveEngine::on_flow_complete(sim::FlowId /*flow*/, std::uint64_t tag) {
  const auto slot = static_cast<std::uint32_t>(tag);
  Active& a = active_[slot];
  if (--a.pending == 0) {
    sim_.schedule_in(sim::Time::from_seconds(a.plan->phases[a.phase].latency_s[a.protocol]), this, slot);
  }
}

void CollectiveEngine::on_event(std::uint64_t tag) {
  const auto slot = static_cast<std::uint32_t>(tag);
  Active& a = active_[slot];
  if (a.plan != nullptr && a.phase + 1u < a.plan->phases.size()) {
    ++a.phase;
    start_phase(slot);
    return;
  }
  CollectiveListener* listener = a.listener;
  const std::uint64_t user_tag = a.tag;
  release(slot);
  if (listener != nullptr) listener->on_collective_done(user_tag);
}

void CollectiveEngine::release(std::uint32_t slot) {
  active_[slot] = Active{};
  free_slots_.push_back(slot);
  --in_flight_;
}

}  // namespace traincast::models
