#pragma once
// Fluid flow model: directed resources (links) with capacity and latency, flows with paths,
// rates by max-min fairness (progressive filling), recomputed only on the component of
// resources and flows that an arrival or departure touches. The rates come from
// sim/max_min_solver.h; this file keeps time: progress, drain dates, completion events.
// Source: Bertsekas & Gallager, Data Networks (1992), §6.5.2 progressive filling;
// SimGrid's LMM "selective update" (Velho et al., TOMACS 2013) for the incremental scheme.

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/max_min_solver.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace traincast::sim {

/// Told when a flow has delivered its last byte (drain time + path latency).
class FlowListener {
 public:
  virtual ~FlowListener() = default;
  virtual void on_flow_complete(FlowId flow, std::uint64_t tag) = 0;
};

/// Per-resource counters accumulated over the run.
struct ResourceStats {
  double bytes_carried = 0.0;  ///< total bytes that crossed the resource
  double busy_ns = 0.0;        ///< time with at least one active flow [ns]
  std::uint64_t flows = 0;     ///< flows that crossed it
  /// Integral of the number of flows on it over time [flow x ns]: flow_ns / busy_ns is the mean
  /// number of flows it carried while busy.
  double flow_ns = 0.0;
};

/// Max-min fair fluid network: resources are constraints, flows are variables.
///
/// Rates (computed by MaxMinSolver): progressive filling (Bertsekas & Gallager §6.5.2): all unfixed flows of a
/// component rise together; when a resource runs out of capacity (or a flow reaches its rate cap) its flows are fixed
/// at that level. Every flow ends with a saturated bottleneck on which its rate is the largest, or at its cap. On every
/// resource the sum of rates is <= capacity (1e-9 relative).
///
/// Incremental ("selective update", SimGrid LMM): an arrival or a departure marks the resources
/// it crosses dirty (a departure from a route where no resource was a bottleneck marks nothing:
/// no other rate changes, MaxMinSolver::remove_flow); before time moves on, only the connected components (flows <->
/// shared resources) that touch a dirty resource are re-solved. Changes made at the same instant are solved together
/// (one solve per instant, not one per flow) by a zero-delay event scheduled on the first change. The result is bitwise
/// the same as re-solving everything (set_full_recompute(true)): the solver's arithmetic does not depend on visiting
/// order.
///
/// Queries (rate(), load(), stats(), remaining_bytes(), active_flows()) answer "as of now",
/// as if the pending solve had already run, but never change the network's state: observing a
/// run (e.g. sampling link load for a trace) cannot change its results.
///
/// Progress is kept per flow as (anchor time, remaining bytes at the anchor, rate); a flow is
/// advanced to now (remaining -= rate * dt, and its bytes are charged to its resources) only
/// when its rate changes, so untouched flows cost nothing and the drain date of a flow does
/// not depend on how often its neighbours were re-solved.
///
/// Completions: the network keeps its own indexed heap of drain dates, keyed by (date, start
/// order), and only the earliest is scheduled on the Simulator (one "wake" event carrying a
/// generation number; a wake whose generation is not the latest is stale and ignored). The
/// drain date is the first nanosecond at which remaining <= epsilon (epsilon = max(1e-3 bytes,
/// 1e-9 * size)), rounded up and at least 1 ns after the last rate change, so no positive
/// transfer takes zero time and no zero-time event loop can occur. At its drain date a flow
/// leaves the network (its resources are re-solved) and its listener is told, by an event,
/// after the sum of its path latencies. A zero-byte flow never takes bandwidth: its listener
/// is told after the latencies.
///
/// Single-threaded, owned by one Simulator. The network must outlive the events it scheduled.
/// Flow ids are dense and reused after completion (after the listener has been told).
class FlowNetwork : public EventHandler {
 public:
  /// An empty network whose completions are scheduled on `sim` (which must outlive it).
  explicit FlowNetwork(Simulator& sim);
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  /// capacity_bytes_per_s > 0 and finite; latency >= 0 is charged once per flow crossing it.
  /// Throws std::invalid_argument otherwise. Returns dense ids 0, 1, 2, ...
  ResourceId add_resource(double capacity_bytes_per_s, Time latency, std::string name);
  /// add_resource without copying the name: the network refers to `name`, which must outlive it
  /// (hold its owner with keep_alive). For a resource table shared by many networks (the ECMP
  /// draws of one job install the same cluster table each).
  ResourceId add_resource_shared_name(double capacity_bytes_per_s, Time latency, const std::string& name);
  /// Keeps `owner` alive as long as the network (the owner of names given to add_resource_shared_name).
  void keep_alive(std::shared_ptr<const void> owner) { owners_.push_back(std::move(owner)); }
  /// Reserves room for `count` resources in all (saves the copies of growing; results unchanged).
  void reserve_resources(std::size_t count);
  /// The checks add_resource makes, without a network: throws the same std::invalid_argument
  /// (naming `name`) for a capacity that is not finite and > 0 or a negative latency.
  static void check_resource(double capacity_bytes_per_s, Time latency, const std::string& name);

  /// Starts a flow now. path: resource ids (may be empty: then only rate_cap bounds it; may
  /// repeat an id, which then carries the flow twice); bytes >= 0 and finite;
  /// rate_cap_bytes_per_s > 0 (infinity = uncapped; an empty path needs a finite cap
  /// or completes after latency only when bytes == 0). The listener (may be null: nobody is
  /// told) is told at now + drain time + sum of path latencies. A zero-byte flow completes
  /// after the latencies. Throws std::invalid_argument for an unknown resource id or bad numbers.
  FlowId start_flow(std::span<const ResourceId> path, double bytes, FlowListener* listener, std::uint64_t tag,
                    double rate_cap_bytes_per_s = std::numeric_limits<double>::infinity());

  /// A multi-path route: one flow whose bytes split over several paths in fixed proportions
  /// (NCCL's PAT sends to all its peers throughout a call). At rate r, resource resources[i]
  /// carries weights[i] / MaxMinSolver::kUnitWeight x r: the fraction of the flow's bytes whose
  /// paths cross it. Built once (multipath_route) and started any number of times.
  struct MultiPathRoute {
    std::vector<ResourceId> resources;   ///< each resource some path crosses, once, in first-crossing order
    std::vector<std::uint64_t> weights;  ///< per resource [MaxMinSolver weight units]
    std::int64_t latency_ns = 0;         ///< the largest of the paths' latencies (sum over each path)
  };
  /// paths[i] carries fractions[i] / sum(fractions) of the flow's bytes; a resource's weight is
  /// the sum of the shares of the paths that cross it (rounded to MaxMinSolver units, 2^-32).
  /// Throws std::invalid_argument for no paths, a size mismatch, an unknown resource id, a
  /// fraction that is not finite and > 0, a path that crosses a resource twice, or a share below
  /// MaxMinSolver::weight_units' 2^-33.
  MultiPathRoute multipath_route(std::span<const std::span<const ResourceId>> paths,
                                 std::span<const double> fractions) const;
  /// Starts a multi-path flow now: as start_flow with a path, but resource i carries
  /// route.weights[i] of its rate (and of its bytes), and the listener is told at now + drain
  /// time + route.latency_ns. rate_cap_bytes_per_s caps the flow's rate r (the sum over its
  /// paths). With one path of fraction 1 and no repeated resource it is start_flow(path, ...),
  /// bit for bit. Throws std::invalid_argument as start_flow does and for a route whose sizes
  /// differ or whose ids are unknown.
  FlowId start_multipath_flow(const MultiPathRoute& route, double bytes, FlowListener* listener, std::uint64_t tag,
                              double rate_cap_bytes_per_s = std::numeric_limits<double>::infinity());

  /// Current rate of an active flow [bytes/s]; 0 once drained (or for a zero-byte flow).
  /// Throws std::invalid_argument for an id never returned by start_flow.
  double rate(FlowId flow) const;
  /// Bytes an active flow still has to send at now() [bytes]; 0 once drained.
  /// Throws std::invalid_argument for an id never returned by start_flow.
  double remaining_bytes(FlowId flow) const;
  /// Flows that still hold bandwidth (started with bytes > 0 and not drained).
  std::size_t active_flows() const;
  /// Resources added so far (ids are 0 .. num_resources() - 1).
  std::size_t num_resources() const;
  /// Throws std::invalid_argument for an unknown resource id (as do capacity, latency, load, stats).
  const std::string& resource_name(ResourceId r) const;
  /// Capacity [bytes/s] as given to add_resource.
  double capacity(ResourceId r) const;
  /// Latency charged once per flow crossing r.
  Time latency(ResourceId r) const;
  /// Sum of current rates on r [bytes/s]; <= capacity(r) (invariant).
  double load(ResourceId r) const;
  /// Stats up to now() (busy time of active resources included up to now()).
  ResourceStats stats(ResourceId r) const;

  /// Brings the network up to now(): drains flows due now, re-solves dirty components and
  /// schedules the next completion. The network's own events call it; callers never need it
  /// (benchmarks use it to time a solve). Calling it between changes made at the same instant
  /// splits that instant's solve in two, which may move drain dates by 1 ns (rounding).
  void update();

  /// Debug / differential testing: when on, every change re-solves every component (and
  /// results must be identical to the incremental mode). Default off.
  void set_full_recompute(bool on) { full_recompute_ = on; }
  bool full_recompute() const { return full_recompute_; }

  /// Work counters of the solver, for benchmarks and profiling.
  struct SolverCounters {
    std::uint64_t solves = 0;        ///< component solves (one per update with dirty resources)
    std::uint64_t flows_solved = 0;  ///< sum over solves of the flows re-solved
    std::uint64_t rounds = 0;        ///< progressive-filling rounds (levels), queries' solves included
    std::uint64_t rate_changes = 0;  ///< flows whose rate changed (advanced and rescheduled)
  };
  const SolverCounters& counters() const { return counters_; }

  /// The network's own events (wake, flush, notify); not for callers.
  void on_event(std::uint64_t tag) override;
  /// The Simulator's hint that on_event(tag) comes next: a wake loads the earliest flow's
  /// records, a notify its flow's record. Changes nothing.
  void prefetch(std::uint64_t tag) const override;

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  enum class FlowState : std::uint8_t { kFree, kActive, kNotifying };

  /// One cache line each (56 bytes would straddle two for 3 resources in 4): a flow's start
  /// and completion touch every resource of its path.
  struct alignas(64) Resource {
    std::int64_t latency_ns = 0;
    // statistics
    double bytes_carried = 0.0;
    std::uint64_t flows = 0;
    std::int64_t busy_total_ns = 0;
    std::int64_t busy_since_ns = 0;   ///< valid while the resource carries a flow
    double flow_ns = 0.0;             ///< flows x ns up to flows_since_ns
    std::int64_t flows_since_ns = 0;  ///< last change of its flow count
  };
  /// Adds the flows on r since its last change to its flow_ns (before the count changes).
  void charge_flow_time(ResourceId r, std::int64_t now_ns);

  struct Flow {
    double remaining_bytes = 0.0;   ///< at anchor_ns
    double rate_bytes_per_s = 0.0;  ///< committed rate (the solver's rate() may be a preview)
    double epsilon_bytes = 0.0;     ///< drained when remaining <= epsilon
    std::int64_t anchor_ns = 0;
    std::int64_t finish_ns = kNever;  ///< drain date; kNever while unsolved
    std::int64_t latency_ns = 0;      ///< sum over the path
    std::uint64_t seq = 0;            ///< start order: tie-break of equal drain dates
    FlowListener* listener = nullptr;
    std::uint64_t tag = 0;
    FlowState state = FlowState::kFree;
  };

  const Resource& resource_checked(ResourceId r, const char* what) const;
  void check_start(std::span<const ResourceId> path, double bytes, double rate_cap_bytes_per_s) const;
  /// start_flow after the checks: weights empty = all kUnitWeight.
  FlowId start_checked(std::span<const ResourceId> path, std::span<const std::uint64_t> weights,
                       std::int64_t latency_ns, double bytes, FlowListener* listener, std::uint64_t tag,
                       double rate_cap_bytes_per_s);
  const Flow& flow_checked(FlowId f, const char* what) const;
  void request_flush();
  void complete_due_flows(std::int64_t now_ns);
  void complete_flow(FlowId id, std::int64_t now_ns);
  /// Cache hints (no effect on results): a flow's records; the network's and the solver's lines
  /// of the resources on its route (reads its route, which prefetch_route fetched).
  void prefetch_flow(FlowId id) const;
  void prefetch_route_resources(FlowId id) const;
  /// complete_due_flows' distance, in flows, from the flow it completes to the one whose records
  /// it starts loading (its route at half of it, the route's resources at a quarter).
  static constexpr std::size_t kPrefetchAhead = 8;
  void solve_dirty(std::int64_t now_ns);
  void build_view();
  double view_rate(FlowId id, std::int64_t now_ns) const;
  template <typename Fn>
  void for_each_due(std::int64_t now_ns, Fn&& fn) const;
  void advance(FlowId id, std::int64_t now_ns);
  std::int64_t drain_date(const Flow& f, std::int64_t now_ns) const;
  void schedule_wake();
  // Indexed 4-ary min-heap (sim/dary_heap.h) of active flows by (finish_ns, seq). Each entry carries its key, so a
  // compare reads the heap array only (not two Flow records elsewhere in memory).
  struct HeapEntry {
    std::int64_t finish_ns;  ///< copy of flows_[flow].finish_ns
    std::uint64_t seq;       ///< copy of flows_[flow].seq (unique: the order is total)
    FlowId flow;
  };
  void heap_place(std::uint32_t pos, const HeapEntry& e);
  /// heap_place as the callback of sim/dary_heap.h's sifts.
  auto place_fn() {
    return [this](std::size_t pos, const HeapEntry& e) { heap_place(static_cast<std::uint32_t>(pos), e); };
  }
  void heap_sift_up(std::uint32_t pos);
  void heap_sift_down(std::uint32_t pos);
  void heap_insert_or_update(FlowId f);
  /// Sets the keys of `changed` (flows whose finish_ns changed; inserted when not in the heap)
  /// and restores the heap: one sift each, or one O(n) rebuild when that is cheaper.
  void heap_update_batch(std::span<const FlowId> changed);
  FlowId heap_pop();

  Simulator& sim_;
  MaxMinSolver solver_;  ///< capacities, routes, caps -> rates; owns the paths and dirty marks
  std::vector<Resource> resources_;
  std::vector<const std::string*> names_;            ///< per resource: in own_names_ or an owner's
  std::deque<std::string> own_names_;                ///< names given to add_resource (stable addresses)
  std::vector<std::shared_ptr<const void>> owners_;  ///< keep_alive: owners of shared names
  std::vector<Flow> flows_;
  /// Per flow slot: its index in finish_heap_, kNone when not in it. Dense (4 bytes a flow, not a
  /// field of the 80-byte Flow), because each level a sift moves writes the position of the entry
  /// it moves: a random flow's line, which the dense array keeps in the near caches.
  std::vector<std::uint32_t> heap_pos_;
  std::vector<FlowId> free_flows_;
  std::vector<HeapEntry> finish_heap_;
  std::vector<FlowId> changed_;  ///< solve_dirty's scratch: flows whose drain date moved
  std::vector<FlowId> due_;      ///< complete_due_flows' scratch: the flows due now, in heap order
  std::size_t active_count_ = 0;
  std::uint64_t next_flow_seq_ = 0;
  bool full_recompute_ = false;
  // pending work
  bool flush_pending_ = false;
  bool wake_pending_ = false;
  std::int64_t wake_ns_ = 0;
  std::uint64_t wake_generation_ = 0;
  // view for queries: rates "as if update() ran now", kept in the solver's preview (never in
  // the committed state); valid until the next change or until time moves
  bool view_valid_ = false;
  std::int64_t view_ns_ = 0;
  std::uint64_t view_epoch_ = 0;       ///< flows the preview numbered view_epoch_ reached have a view rate
  std::vector<FlowId> view_left_out_;  ///< flows due now, left out of the preview
  SolverCounters counters_;
};

}  // namespace traincast::sim
