// The collectives runner: validates calls, caches plans, picks the algorithm of least predicted
// time, runs each phase's flows on the FlowNetwork and its latency as an event. See
// collective_engine.h.

#include "models/collectives/collective_engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "models/collectives/nccl_chunking.h"

namespace traincast::models {
namespace {

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

const char* collective_op_name(CollectiveOp op) {
  static constexpr std::array<const char*, 7> kNames{"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                                     "reduce",     "all_to_all", "send_recv"};
  return kNames[static_cast<std::size_t>(op)];
}

// "origin: " when the scenario loader recorded where a forced field was written (CollectiveSpec
// algorithm_origin / protocol_origin), else "".
std::string origin_prefix(const std::string& origin) { return origin.empty() ? std::string() : origin + ": "; }

// A forced protocol the plan does not allow (NCCL: "no algorithm/protocol available ...
// NCCL_PROTO was set to ..."): LL128 runs only over NVLink 2-4, and NVLink 5 from NCCL 2.25
// (tuning.cc enables it per architecture), NVLS, NVLS tree and PAT only Simple.
std::string protocol_refusal(const Cluster& cluster, const CollectiveCall& call, const CollectivePlan& p) {
  const auto& forced = cluster.spec().collectives.protocol;
  const char* proto = forced.has_value() ? protocol_name(*forced) : "?";
  return origin_prefix(cluster.spec().collectives.protocol_origin) + "cluster.collectives.protocol: " + proto +
         " cannot run " + collective_op_name(call.op) + " with algorithm " + algorithm_name(p.algorithm) + " over " +
         std::to_string(call.ranks.size()) + " GPUs on " + std::to_string(p.num_nodes) + " node(s) (" +
         (p.algorithm == CollectiveAlgorithm::ring
              ? "LL128 needs NVLink 2 to 4 (NVLink 5 from NCCL 2.25) between every ring neighbour"
              : "this algorithm runs only Simple") +
         "; NCCL: no algorithm/protocol available with NCCL_PROTO=" + proto + ")";
}

// The factor on a plan's flow caps for protocol p at `bytes`: the protocol's bandwidth factor,
// the share of the comm's channels and threads NCCL keeps at this size (nccl_channel_share) and,
// with a calibration fit, its bandwidth scales over its size correction.
double flow_factor(const Cluster& cluster, const CollectivePlan& plan, int p, double bytes) {
  const double share = nccl_channel_share(plan, p, bytes);
  double factor = protocol_factor(cluster, plan, p, bytes, share) * share;
  if (plan.fit != nullptr) {
    factor *= plan.fit->bandwidth_scale * plan.fit->protocol_bandwidth_scale[static_cast<std::size_t>(p)] /
              plan.fit->correction(bytes);
  }
  return factor;
}

// What follows a phase's flows [s]: NCCL's latency (calibrated) and, for NVLS and (when
// NcclChunking::in_time) for trees across nodes, the chunk pipeline's fill at the phase's
// idle-network bandwidth (nvls_pipeline_fill_s, tree_pipeline_fill_s), as choose_protocol counts
// them.
/// factor: flow_factor(cluster, plan, p, bytes) (read only when bytes > 0 and the phase has flows).
double phase_tail_s(const Cluster& cluster, const CollectivePlan& plan, const CollectivePhase& ph, int p, double bytes,
                    double factor) {
  const double lat = calibrated_latency_s(cluster, plan, ph, p, bytes);
  if (!(bytes > 0) || ph.num_flows == 0) return lat;
  // At the lanes' own stages, without switch-to-switch links (choose_protocol's fill).
  const double tree_fill = NcclChunking::in_time ? tree_pipeline_fill_s(plan, ph, p, bytes) : 0.0;
  return lat + nvls_pipeline_fill_s(plan, ph, bytes, factor) + tree_fill;
}

}  // namespace

CollectiveEngine::CollectiveEngine(sim::Simulator& sim, sim::FlowNetwork& net, const Cluster& cluster)
    : sim_(sim), net_(net), cluster_(cluster) {
  rank_stamp_.assign(static_cast<std::size_t>(cluster.num_gpus()), 0);
}

double CollectiveEngine::busbw_factor(CollectiveOp op, int n) { return models::busbw_factor(op, n); }

double CollectiveEngine::efficiency(sim::ResourceId r) const { return link_efficiency(cluster_, r); }

double CollectiveEngine::duplex_efficiency(sim::ResourceId r) const { return pcie_duplex_efficiency(cluster_, r); }

double CollectiveEngine::default_efficiency(LinkKind kind) const { return default_link_efficiency(cluster_, kind); }

void CollectiveEngine::validate(const CollectiveCall& call) const {
  if (call.ranks.empty()) throw std::invalid_argument("collective: empty group");
  if (!(call.bytes >= 0) || !std::isfinite(call.bytes)) {
    throw std::invalid_argument("collective: bytes must be finite and >= 0 (got " + fmt(call.bytes) + ")");
  }
  if (call.op == CollectiveOp::send_recv && call.ranks.size() != 2) {
    throw std::invalid_argument("collective: send_recv needs exactly 2 ranks (got " +
                                std::to_string(call.ranks.size()) + ")");
  }
  if (call.moe.kind != EpAllToAll::flat && call.op != CollectiveOp::all_to_all)
    throw std::invalid_argument(std::string("collective: a deepep dispatch runs only all_to_all (got ") +
                                collective_op_name(call.op) + ")");
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

const CollectivePlan& CollectiveEngine::plan_for(CollectiveOp op, CollectiveAlgorithm algorithm,
                                                 std::span<const int> ranks, const MoeDispatch& moe) const {
  return *cached_plan(op, algorithm, ranks, moe, /*find_only=*/false);
}

const CollectivePlan* CollectiveEngine::find_plan(CollectiveOp op, CollectiveAlgorithm algorithm,
                                                  std::span<const int> ranks) const {
  return cached_plan(op, algorithm, ranks, {}, /*find_only=*/true);
}

const CollectivePlan* CollectiveEngine::cached_plan(CollectiveOp op, CollectiveAlgorithm algorithm,
                                                    std::span<const int> ranks, const MoeDispatch& moe,
                                                    bool find_only) const {
  std::uint64_t h = plan_hash(op, algorithm, ranks);
  if (moe.kind != EpAllToAll::flat)
    h = mix64(h ^ (static_cast<std::uint64_t>(moe.experts) << 24) ^ (static_cast<std::uint64_t>(moe.top_k) << 12) ^
              static_cast<std::uint64_t>(moe.max_nodes_per_token));
  if (find_only && !plan_index_.contains(h)) return nullptr;
  auto& bucket = plan_index_[h];
  for (std::uint32_t idx : bucket) {
    const CollectivePlan& p = plans_[idx];
    if (p.op == op && p.algorithm == algorithm && p.moe == moe &&
        std::equal(p.ranks.begin(), p.ranks.end(), ranks.begin(), ranks.end())) {
      return &p;
    }
  }
  if (find_only) return nullptr;
  CollectivePlan& plan = plans_.emplace_back();
  const auto index = static_cast<std::uint32_t>(plans_.size() - 1);
  build_and_finish(plan, op, algorithm, ranks, moe, /*pat_floor_only=*/false);
  bucket.push_back(index);
  return &plan;
}

void CollectiveEngine::build_and_finish(CollectivePlan& plan, CollectiveOp op, CollectiveAlgorithm algorithm,
                                        std::span<const int> ranks, const MoeDispatch& moe, bool pat_floor_only) const {
  plan.op = op;
  plan.algorithm = algorithm == CollectiveAlgorithm::automatic ? CollectiveAlgorithm::ring : algorithm;
  plan.ranks.assign(ranks.begin(), ranks.end());
  plan.moe = moe;
  build_plan(plan, PlanInputs{cluster_, net_, plan_scratch_, pat_floor_only});
  plan.algorithm = algorithm == CollectiveAlgorithm::automatic ? CollectiveAlgorithm::ring : plan.algorithm;
  // A profile's all_to_all fit is NCCL's flat all-to-all: not DeepEP's kernels.
  if (const CalibrationProfile* p = cluster_.spec().profile.get(); p != nullptr && moe.kind == EpAllToAll::flat) {
    plan.fit = p->collective(op, static_cast<int>(ranks.size()));
  }
  if (plan.algorithm != CollectiveAlgorithm::ring && plan.applicable && plan.num_nodes > 1 && plan.rails > 0) {
    // NCCL's tree graph has the ring's channels (nccl_graph_channels). choose_plan builds the
    // ring plan first, so this finds it; the deque keeps `plan` in place if it did not.
    plan.ring_graph_channels = plan_for(op, CollectiveAlgorithm::ring, ranks).graph_channels;
  }
  if (plan.applicable && ranks.size() > 1 &&
      (plan.algorithm == CollectiveAlgorithm::ring || plan.algorithm == CollectiveAlgorithm::tree ||
       plan.algorithm == CollectiveAlgorithm::pat)) {
    set_nccl_channels(plan);
  }
}

bool CollectiveEngine::pat_cannot_win(const CollectiveCall& call, const CollectiveChoice& best) const {
  if (!pat_price_floor_ || find_plan(call.op, CollectiveAlgorithm::pat, call.ranks) != nullptr) return false;
  // The PAT plan as plan_for would build it but for its flows, its tuner time per byte a lower bound
  // (PlanInputs::pat_floor_only): every term of tuner_seconds() is the real plan's but that one, and
  // choose_protocol's tuner time is non-decreasing in it (bytes x spb / factor / scale x correction,
  // then + latency: IEEE operations on non-negative operands are monotone), so the real plan's time
  // is at least this one's. The tuner takes PAT only when strictly faster than the best so far.
  CollectivePlan floor;
  build_and_finish(floor, call.op, CollectiveAlgorithm::pat, call.ranks, {}, /*pat_floor_only=*/true);
  if (!floor.applicable || !floor.automatic_candidate) return true;  // plan_for's plan would be skipped too
  return !(choose_protocol(cluster_, floor, call.bytes).choice_seconds() < best.choice_seconds());
}

CollectiveChoice CollectiveEngine::choose_plan(const CollectiveCall& call, const CollectivePlan** plan) const {
  validate(call);
  *plan = nullptr;
  if (call.ranks.size() == 1) return CollectiveChoice{};
  const CollectivePlan& ring = plan_for(call.op, CollectiveAlgorithm::ring, call.ranks, call.moe);
  *plan = &ring;
  if (!is_ring_op(call.op)) {
    // all_to_all / send_recv are NCCL's grouped send/recv: NCCL_ALGO and NCCL_PROTO do not apply
    // to them (a forced algorithm or protocol is not refused, and not run).
    CollectiveChoice best = choose_protocol(cluster_, ring, call.bytes, /*honour_forced_protocol=*/false);
    best.point_to_point = true;
    return best;
  }
  const CollectiveAlgorithm forced =
      call.algorithm != CollectiveAlgorithm::automatic ? call.algorithm : cluster_.spec().collectives.algorithm;
  if (forced != CollectiveAlgorithm::automatic) {
    // NCCL refuses a forced algorithm that cannot run the call ("no algorithm/protocol available
    // for function ... NCCL_ALGO was set to ...", src/enqueue.cc topoGetAlgoInfo), as does this.
    const CollectivePlan& p = plan_for(call.op, forced, call.ranks);
    if (!p.applicable) {
      // The position of the field when the scenario forced it (a call's own algorithm has none).
      const std::string where = call.algorithm == CollectiveAlgorithm::automatic
                                    ? origin_prefix(cluster_.spec().collectives.algorithm_origin)
                                    : std::string();
      throw std::invalid_argument(where + "cluster.collectives.algorithm: " + algorithm_name(forced) + " cannot run " +
                                  collective_op_name(call.op) + " over " + std::to_string(call.ranks.size()) +
                                  " GPUs on " + std::to_string(p.num_nodes) + " node(s): " + p.why_not +
                                  " (NCCL: no algorithm available with NCCL_ALGO=" + algorithm_name(forced) + ")");
    }
    const CollectiveChoice c = choose_protocol(cluster_, p, call.bytes);
    if (!std::isfinite(c.seconds())) throw std::invalid_argument(protocol_refusal(cluster_, call, p));
    *plan = &p;
    return c;
  }
  // Candidates besides ring, as NCCL's tuner (tuner_candidates).
  CollectiveChoice best = choose_protocol(cluster_, ring, call.bytes);
  for (CollectiveAlgorithm a : tuner_candidates(call.op)) {
    if (a == CollectiveAlgorithm::pat && pat_cannot_win(call, best)) continue;  // its plan is not built
    const CollectivePlan& p = plan_for(call.op, a, call.ranks);
    if (!p.applicable || !p.automatic_candidate) continue;
    const CollectiveChoice c = choose_protocol(cluster_, p, call.bytes);
    if (c.choice_seconds() < best.choice_seconds()) {  // at the cut's channels, no spine (choice_seconds)
      best = c;
      *plan = &p;
    }
  }
  if (!std::isfinite(best.seconds())) throw std::invalid_argument(protocol_refusal(cluster_, call, ring));
  return best;
}

CollectiveChoice CollectiveEngine::choose(const CollectiveCall& call) const {
  const CollectivePlan* plan = nullptr;
  return choose_plan(call, &plan);
}

int CollectiveEngine::kernel_ctas(const CollectiveCall& call) const {
  const CollectivePlan* plan = nullptr;
  const CollectiveChoice choice = choose_plan(call, &plan);  // validates
  if (call.ranks.size() < 2 || plan == nullptr) return 0;
  // DeepEP's normal kernels: a grid of Buffer.num_sms blocks, one per SM, inside a node and across
  // nodes alike (deepseek-ai/DeepEP deep_ep/buffer.py: `num_sms: int = 20`, the default Megatron-Core
  // keeps, moe_deepep_num_sms = 20). Not a scenario field: what fewer SMs cost DeepEP's bandwidth is
  // not modelled, so a smaller count would only look cheaper.
  constexpr int kDeepEpNumSms = 20;
  if (call.moe.kind == EpAllToAll::deepep)
    return std::min(kDeepEpNumSms, std::max(1, cluster_.gpu_spec(call.ranks.front()).sm_count));
  // p2p inside one node: the channels NCCL's planner puts work on (the kernel's channel mask).
  if (plan->p2p_channels.channels > 0) return std::max(1, p2p_plan_at(*plan, call.bytes).busy_channels);
  // Across nodes: NCCL_NCHANNELS_PER_NET_PEER's default (2.12-2.19; src/graph/paths.cc).
  constexpr int kP2pChannelsPerPeer = 2;
  if (call.op == CollectiveOp::send_recv) return kP2pChannelsPerPeer;
  if (choice.algorithm == CollectiveAlgorithm::nvls || choice.algorithm == CollectiveAlgorithm::nvls_tree)
    return NcclNvlsChunking::nvls_channels;
  // Ring, tree, PAT: the channels NCCL keeps at this size (nccl_channel_cut); the rest (all-to-all
  // across nodes, the model's hierarchical plan): the comm's channels, the ring's.
  const NcclChannelCut cut = nccl_channel_cut(*plan, static_cast<int>(choice.protocol), call.bytes);
  if (cut.channels > 0) return cut.channels;
  return plan_for(call.op, CollectiveAlgorithm::ring, call.ranks).nccl_channels;
}

void CollectiveEngine::set_nccl_channels(CollectivePlan& plan) const {
  if (plan.algorithm != CollectiveAlgorithm::ring) {
    // Tree and PAT run on the comm's channels, the ring's (NCCL's comm->nChannels).
    const CollectivePlan& ring = plan_for(plan.op, CollectiveAlgorithm::ring, plan.ranks);
    plan.nccl_channels = ring.nccl_channels;
    plan.ring_simple_threads = ring.ring_simple_threads;
    return;
  }
  if (plan.comm_channels > 0) {
    plan.nccl_channels = plan.comm_channels;
    return;
  }
  if (plan.num_nodes > 1) {  // across nodes without NICs: its rings
    plan.nccl_channels = std::max(1, plan.channels);
    return;
  }
  // One node: NCCL's ring graph on the node's GPUs, doubled (ncclTopoPostset step 1;
  // its Hopper doubling is for nNodes > 1 only), then NCCL_MAX/MIN_NCHANNELS.
  const NcclTopoGraph& graph = plan_scratch_.topo.ring_graph(cluster_, net_, plan.ranks, -1);
  constexpr int kNcclMaxChannels = 64;  // MAXCHANNELS (src/include/device.h, 2.2x)
  int c = std::min(kNcclMaxChannels, 2 * static_cast<int>(graph.channels.size()));
  const CollectiveSpec& spec = cluster_.spec().collectives;
  if (spec.max_channels > 0) c = std::min(c, spec.max_channels);
  plan.nccl_channels = std::max({1, c, spec.min_channels});
  // NCCL tuning.cc ncclTopoTuneModel (2.2x): "simpleDefaultThreads =
  // (graphs[NCCL_ALGO_RING]->bwIntra*graphs[NCCL_ALGO_RING]->nChannels <= PCI_BW) ? 256 :
  // NCCL_SIMPLE_MAX_NTHREADS", PCI_BW 12.0 GB/s (src/graph/topo.h).
  constexpr double kPciBwGbPerS = 12.0;
  if (graph.bw_gb_per_s * static_cast<double>(graph.channels.size()) <= kPciBwGbPerS) plan.ring_simple_threads = 256;
}

std::uint32_t CollectiveEngine::acquire_slot() {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(active_.size());
    active_.emplace_back();
  }
  active_[slot] = Active{};
  return slot;
}

CollectiveEngine::Prepared CollectiveEngine::prepare(const CollectiveCall& call) const {
  Prepared p;
  p.choice = choose_plan(call, &p.plan);  // validates
  if (call.ranks.size() == 1) p.plan = nullptr;
  p.bytes = call.bytes;
  // What start_phase and phase_tail_s would compute at every phase (same arguments: the same bits).
  if (p.plan != nullptr && p.bytes != 0 &&
      std::any_of(p.plan->phases.begin(), p.plan->phases.end(),
                  [](const CollectivePhase& ph) { return ph.num_flows > 0; })) {
    p.flow_factor = flow_factor(cluster_, *p.plan, static_cast<std::uint8_t>(p.choice.protocol), p.bytes);
    p.channel_share = nccl_channel_share(*p.plan, static_cast<std::uint8_t>(p.choice.protocol), p.bytes);
  }
  return p;
}

void CollectiveEngine::start(const CollectiveCall& call, CollectiveListener* listener, std::uint64_t tag) {
  start(prepare(call), listener, tag);
}

void CollectiveEngine::start(const Prepared& prepared, CollectiveListener* listener, std::uint64_t tag) {
  const std::uint32_t slot = acquire_slot();
  Active& a = active_[slot];
  a.listener = listener;
  a.tag = tag;
  a.bytes = prepared.bytes;
  a.protocol = static_cast<std::uint8_t>(prepared.choice.protocol);
  a.flow_factor = prepared.flow_factor;
  a.channel_share = prepared.channel_share;
  ++in_flight_;
  if (prepared.plan == nullptr) {  // one rank
    sim_.schedule_in(sim::Time::zero(), this, slot);
    return;
  }
  a.plan = prepared.plan;
  start_phase(slot);
}

void CollectiveEngine::start_phase(std::uint32_t slot) {
  Active& a = active_[slot];
  const CollectivePlan& plan = *a.plan;
  const CollectivePhase& ph = plan.phases[a.phase];
  if (a.bytes == 0 || ph.num_flows == 0) {
    sim_.schedule_in(sim::Time::from_seconds(calibrated_latency_s(cluster_, plan, ph, a.protocol, a.bytes)), this,
                     slot);
    return;
  }
  const double factor = a.flow_factor;
  a.pending = ph.num_flows;
  const double bytes = a.bytes;
  // NCCL's channel cut scales the node's links' rate, not a spine's (choose_protocol).
  const double share = a.channel_share;
  for (std::uint32_t i = 0; i < ph.num_flows; ++i) {
    const CollectiveFlowTemplate& f = plan.flows[ph.first_flow + i];
    const double cap = share < 1.0 && f.fabric_cap_bytes_per_s < f.node_cap_bytes_per_s / share
                           ? std::min(f.node_cap_bytes_per_s * factor, f.fabric_cap_bytes_per_s * factor / share)
                           : f.cap_bytes_per_s * factor;
    if (f.multipath < 0) {
      net_.start_flow(f.path, f.byte_fraction * bytes, this, slot, cap);
    } else {
      net_.start_multipath_flow(multipath_route(plan, static_cast<std::size_t>(f.multipath), net_),
                                f.byte_fraction * bytes, this, slot, cap);
    }
  }
}

namespace {
void check_host_copy(std::span<const int> gpus, double bytes) {
  if (gpus.empty()) throw std::invalid_argument("host copy: empty GPU list");
  if (!std::isfinite(bytes) || bytes < 0)
    throw std::invalid_argument("host copy: bytes must be finite and >= 0 (got " + std::to_string(bytes) + ")");
}

void check_peer_copy_bytes(double bytes) {
  if (!std::isfinite(bytes) || bytes < 0)
    throw std::invalid_argument("peer copy: bytes must be finite and >= 0 (got " + std::to_string(bytes) + ")");
}

/// The socket of GPU `gpu`'s host buffer in `buffers` (its own socket when `buffers` is empty), -1
/// when it makes no such copy. `gpu` must be inside the cluster.
int buffer_socket(const Cluster& cluster, const HostBuffers& buffers, int gpu) {
  if (buffers.socket_of_gpu.empty()) return cluster.socket_of_gpu(cluster.local_rank(gpu));
  if (buffers.socket_of_gpu.size() != static_cast<std::size_t>(cluster.num_gpus()))
    throw std::invalid_argument("host copy: " + std::to_string(buffers.socket_of_gpu.size()) +
                                " buffer sockets for a cluster of " + std::to_string(cluster.num_gpus()) + " GPUs");
  return buffers.socket_of_gpu[static_cast<std::size_t>(gpu)];
}

/// The route of GPU `gpu`'s copy with `buffers`; throws for a GPU outside the cluster or without a buffer.
std::vector<sim::ResourceId> buffer_route(const Cluster& cluster, const HostBuffers& buffers, int gpu, bool to_host) {
  if (gpu < 0 || gpu >= cluster.num_gpus())
    throw std::out_of_range("host copy: GPU " + std::to_string(gpu) + " outside [0, " +
                            std::to_string(cluster.num_gpus()) + ")");
  const int socket = buffer_socket(cluster, buffers, gpu);
  if (socket < 0) throw std::invalid_argument("host copy: GPU " + std::to_string(gpu) + " has no host buffer");
  return cluster.host_route(gpu, to_host, socket);
}
}  // namespace

double CollectiveEngine::host_copy_rate_cap(int gpu, bool to_host, const HostBuffers& buffers) const {
  // The GPUs of the node whose host copies cross each resource of this GPU's route (a PCIe switch
  // uplink serves every GPU under the switch, a socket link every GPU reading the other socket's
  // memory): each gets an equal share of its achievable rate.
  const auto route = buffer_route(cluster_, buffers, gpu, to_host);
  const int first = cluster_.node_of(gpu) * cluster_.gpus_per_node();
  std::vector<std::vector<sim::ResourceId>> others;
  for (int g = first; g < first + cluster_.gpus_per_node(); ++g)
    if (const int socket = buffer_socket(cluster_, buffers, g); socket >= 0)
      others.push_back(cluster_.host_route(g, to_host, socket));
  double cap = std::numeric_limits<double>::infinity();
  for (sim::ResourceId r : route) {
    int users = 0;
    for (const auto& path : others) users += std::find(path.begin(), path.end(), r) != path.end() ? 1 : 0;
    cap = std::min(cap, efficiency(r) * net_.capacity(r) / std::max(1, users));
  }
  return cap;
}

double CollectiveEngine::host_copy_seconds(std::span<const int> gpus, double bytes_per_gpu, bool to_host,
                                           const HostBuffers& buffers) const {
  check_host_copy(gpus, bytes_per_gpu);
  double seconds = 0;
  for (int g : gpus) seconds = std::max(seconds, bytes_per_gpu / host_copy_rate_cap(g, to_host, buffers));
  return seconds;
}

void CollectiveEngine::start_host_copy(std::span<const int> gpus, double bytes_per_gpu, bool to_host,
                                       CollectiveListener* listener, std::uint64_t tag, const HostBuffers& buffers) {
  check_host_copy(gpus, bytes_per_gpu);
  std::vector<std::vector<sim::ResourceId>> paths;
  std::vector<double> caps;
  for (int g : gpus) {  // validates every GPU before any flow starts
    paths.push_back(buffer_route(cluster_, buffers, g, to_host));
    caps.push_back(host_copy_rate_cap(g, to_host, buffers));
  }
  const std::uint32_t slot = acquire_slot();
  Active& a = active_[slot];
  a.listener = listener;
  a.tag = tag;
  a.bytes = bytes_per_gpu;
  a.pending = static_cast<std::uint32_t>(gpus.size());
  ++in_flight_;
  for (std::size_t i = 0; i < paths.size(); ++i) net_.start_flow(paths[i], bytes_per_gpu, this, slot, caps[i]);
}

CollectiveEngine::PeerCopy CollectiveEngine::prepare_peer_copy(std::span<const std::pair<int, int>> pairs) const {
  if (pairs.empty()) throw std::invalid_argument("peer copy: no GPU pairs");
  PeerCopy copy;
  for (const auto& [src, dst] : pairs) {  // route() throws for a GPU out of range or src == dst
    if (src == dst) throw std::invalid_argument("peer copy: GPU " + std::to_string(src) + " copies to itself");
    copy.paths.push_back(cluster_.route(src, dst));
  }
  // Each link's copy-engine rate, shared by the pairs whose route crosses it (a pair crossing a
  // link twice counts once per crossing, as its bytes do).
  const auto rate = [&](sim::ResourceId r) {
    const double eff = cluster_.link_kind(r) == LinkKind::nvlink ? kCopyEngineNvlinkEfficiency : efficiency(r);
    return eff * net_.capacity(r);
  };
  for (const auto& path : copy.paths) {
    double cap = std::numeric_limits<double>::infinity();
    for (sim::ResourceId r : path) {
      int users = 0;
      for (const auto& other : copy.paths) users += static_cast<int>(std::count(other.begin(), other.end(), r));
      cap = std::min(cap, rate(r) / std::max(1, users));
    }
    copy.caps_bytes_per_s.push_back(cap);
  }
  return copy;
}

double CollectiveEngine::peer_copy_seconds(std::span<const std::pair<int, int>> pairs, double bytes_per_pair) const {
  check_peer_copy_bytes(bytes_per_pair);
  const PeerCopy copy = prepare_peer_copy(pairs);
  double seconds = 0;
  for (double cap : copy.caps_bytes_per_s) seconds = std::max(seconds, bytes_per_pair / cap);
  return seconds;
}

void CollectiveEngine::start_peer_copy(const PeerCopy& copy, double bytes_per_pair, CollectiveListener* listener,
                                       std::uint64_t tag) {
  if (copy.paths.empty()) throw std::invalid_argument("peer copy: no GPU pairs");
  check_peer_copy_bytes(bytes_per_pair);
  const std::uint32_t slot = acquire_slot();
  Active& a = active_[slot];  // plan null: done when every flow is, as a host copy
  a.listener = listener;
  a.tag = tag;
  a.bytes = bytes_per_pair;
  a.pending = static_cast<std::uint32_t>(copy.paths.size());
  ++in_flight_;
  for (std::size_t i = 0; i < copy.paths.size(); ++i)
    net_.start_flow(copy.paths[i], bytes_per_pair, this, slot, copy.caps_bytes_per_s[i]);
}

void CollectiveEngine::on_flow_complete(sim::FlowId /*flow*/, std::uint64_t tag) {
  const auto slot = static_cast<std::uint32_t>(tag);
  Active& a = active_[slot];
  if (a.plan == nullptr) {  // host copy: done when every GPU's flow is
    if (--a.pending == 0) sim_.schedule_in(sim::Time::zero(), this, slot);
    return;
  }
  if (--a.pending == 0) {
    sim_.schedule_in(sim::Time::from_seconds(
                         phase_tail_s(cluster_, *a.plan, a.plan->phases[a.phase], a.protocol, a.bytes, a.flow_factor)),
                     this, slot);
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
