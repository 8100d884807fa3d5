#pragma once
// Max-min fair rates of flows sharing resources (progressive filling), re-solved for the whole
// system or only for the connected components a change touched. Knows no clock and no events.
// Source: Bertsekas & Gallager, Data Networks (1992), §6.5.2 progressive filling; SimGrid's LMM
// System and its "selective update" (Velho et al., TOMACS 2013) for the incremental scheme.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace traincast::sim {

using ResourceId = std::uint32_t;
using FlowId = std::uint32_t;

/// Max-min fair rates for flows sharing directed links.
/// capacity_bytes_per_s: size L, each > 0 and finite.  routes[f]: link indices of flow f, size F
/// (a link may repeat: it then carries the flow twice).  rate_cap_bytes_per_s: size F, each > 0
/// (infinity = uncapped), or empty: every flow uncapped.
/// Returns rate per flow [bytes/s], size F; on every link the sum is <= its capacity (1e-9
/// relative), and every flow is at its cap or has a saturated link on which its rate is the largest.
/// A flow with an empty route runs at its cap.
/// weights: size 0 (every crossing carries its flow's rate) or F; weights[f] empty (the same for
/// flow f) or one per crossing of routes[f]: the fraction of f's rate that crosses it (a
/// multi-path flow, MaxMinSolver::add_flow); the capacity bound and bottleneck condition then
/// hold for the weighted loads (sum of weight x rate).
/// Throws std::invalid_argument if a route names a link >= L, a capacity or cap is out of range,
/// rate_cap_bytes_per_s has a size other than 0 or F, a flow with an empty route has no finite cap,
/// or weights do not match the routes.
/// Source: Bertsekas & Gallager, Data Networks, progressive filling.
std::vector<double> max_min_rates(std::span<const double> capacity_bytes_per_s,
                                  std::span<const std::vector<ResourceId>> routes,
                                  std::span<const double> rate_cap_bytes_per_s = {},
                                  std::span<const std::vector<double>> weights = {});

/// The max-min system (SimGrid's lmm System): resources are constraints with a capacity, flows
/// are variables with a route and a rate cap, elements are their crossings.
///
/// Rates: progressive filling (Bertsekas & Gallager §6.5.2): all unfixed flows of a component
/// rise together; when a resource runs out of capacity (or a flow reaches its rate cap) its flows
/// are fixed at that level. Every flow ends with a saturated bottleneck on which its rate is the
/// largest, or at its cap. On every resource the sum of rates is <= capacity (1e-9 relative).
///
/// Incremental ("selective update"): adding or removing a flow marks the resources it crosses
/// dirty (a removal with skip_slack from a route without a bottleneck does not: no other rate
/// changes); solve() re-solves only the connected components (flows <-> shared resources) that
/// touch a dirty resource, or every component when asked to (full). Each component reached is
/// filled on its own, so a round scans only its component's resources: a solve costs the sum
/// over its components of (levels x resources), not (all levels) x (all resources). The result
/// is bitwise the same either way: each round fixes every flow at exactly the level of the
/// round and updates each resource with one operation, so no quantity depends on the order of
/// visits, and a component's levels do not depend on the other components.
///
/// Flow ids are the caller's (dense small integers: per-flow tables are sized to the largest id
/// + 1); an id may be reused once its flow was removed. Nothing is allocated per solve once the
/// scratch has grown. Single-threaded.
class MaxMinSolver {
 public:
  /// One crossing of a resource by a flow. A flow's elements are contiguous, in route order.
  struct Element {
    ResourceId resource;     ///< the resource crossed
    std::uint32_t user_pos;  ///< solver bookkeeping: index of this crossing in users(resource)
    std::uint32_t slot;      ///< solver scratch: the resource's index in the component solved
  };
  /// A crossing's weight in units: kUnitWeight = the whole rate (a single-path flow's crossings);
  /// a multi-path flow's crossing carries the fraction of the flow's bytes whose paths cross it,
  /// at most the whole. Weights are fixed-point (2^-32 of the rate) so that a resource's sum of
  /// weights is an exact integer whatever the order it is summed in (the bitwise determinism
  /// below needs that); the sum cannot overflow (fewer than 2^32 crossings of at most 2^32 units).
  static constexpr std::uint64_t kUnitWeight = std::uint64_t{1} << 32;
  /// fraction (0 < fraction <= 1 of the rate) in units, rounded to the nearest; throws
  /// std::invalid_argument unless the units are in [1, kUnitWeight].
  static std::uint64_t weight_units(double fraction);
  /// A weight in units as a fraction of the rate (exact: kUnitWeight is a power of two).
  static double weight_fraction(std::uint64_t units) {
    return static_cast<double>(units) / static_cast<double>(kUnitWeight);
  }
  /// Entry of a resource's list of crossings (order is irrelevant: removal swaps).
  struct User {
    FlowId flow;
    std::uint32_t element;  ///< solver bookkeeping: index of the crossing in the element pool
  };

  /// Reserves room for `count` resources in all (results unchanged).
  void reserve_resources(std::size_t count) { resources_.reserve(count); }
  /// capacity_bytes_per_s > 0 and finite; throws std::invalid_argument otherwise, and
  /// std::length_error past 2^32 - 1 resources. Returns dense ids 0, 1, 2, ...
  ResourceId add_resource(double capacity_bytes_per_s);
  /// Resources added so far (ids 0 .. num_resources() - 1).
  std::size_t num_resources() const { return resources_.size(); }
  /// Capacity [bytes/s] as given to add_resource. r is not range-checked.
  double capacity(ResourceId r) const { return resources_[r].capacity_bytes_per_s; }

  /// Adds flow f (not in the solver) on `route` (resource ids; may be empty: then f is in no
  /// component and its rate is its cap) with rate_cap_bytes_per_s > 0 (infinity = uncapped), and
  /// marks the route's resources dirty. Its rate is set by the next solve() that reaches it.
  /// Throws std::invalid_argument for a flow already in, an unknown resource id or a bad cap.
  void add_flow(FlowId f, std::span<const ResourceId> route, double rate_cap_bytes_per_s);
  /// add_flow for a multi-path flow: route[i] carries fractions[i] x its rate (weight_units).
  /// Throws std::invalid_argument as add_flow does, and for fractions.size() != route.size() or
  /// a fraction out of weight_units' range.
  void add_flow(FlowId f, std::span<const ResourceId> route, std::span<const double> fractions,
                double rate_cap_bytes_per_s);
  /// add_flow without the route and cap checks, for a caller that has made them already
  /// (FlowNetwork::start_flow checks every hop and the cap once per flow, on the hot path).
  /// Precondition: every route id < num_resources(), rate_cap_bytes_per_s > 0, route.size() < kNone.
  void add_checked_flow(FlowId f, std::span<const ResourceId> route, double rate_cap_bytes_per_s);
  /// A multi-path flow: rate r puts weights[i] / kUnitWeight x r on route[i] (weights from
  /// weight_units: each in [1, kUnitWeight]; route may still repeat an id). Progressive filling
  /// generalises as is: a resource's fair share is its remaining capacity / the sum of the
  /// weights of its unfixed crossings, a flow is fixed at the lowest share over its route, and a
  /// fixed flow takes weight x level from each resource it crosses. All weights kUnitWeight is
  /// add_checked_flow(f, route, cap), bit for bit. Same preconditions, and weights.size() ==
  /// route.size(), each weight >= 1 (unchecked).
  void add_checked_flow(FlowId f, std::span<const ResourceId> route, std::span<const std::uint64_t> weights,
                        double rate_cap_bytes_per_s);
  /// Takes flow f out and marks its route's resources dirty. Returns the resources it leaves
  /// without any flow, in route order (valid until the next call that changes the solver).
  /// Throws std::invalid_argument for a flow not in the solver.
  ///
  /// skip_slack: leave the route clean when no resource of it was a bottleneck (saturated at
  /// some level) in the last solve() that reached it. Then removing f changes no other flow's
  /// rate, bit for bit: in a re-solve every resource f leaves has a fair share >= the one it had
  /// at each round (f's weight x level is no longer subtracted, or a smaller exact integer sum of
  /// weights divides the same remainder; IEEE rounding is monotone), so still above the level of
  /// every round, and every other resource sees the same rounds; the bottlenecks stay the same set. A pending change
  /// elsewhere in the component marks it dirty anyway. Off: the full-recompute oracle.
  std::span<const ResourceId> remove_flow(FlowId f, bool skip_slack = false);
  /// Removals that skip_slack left clean (no re-solve needed), for counters.
  std::uint64_t slack_removals() const { return slack_removals_; }
  /// The crossings of flow f (in the solver), in route order. f is not checked.
  std::span<const Element> route(FlowId f) const {
    const Variable& v = variables_[f];
    return {elements_.data() + v.first_element, v.path_length};
  }
  /// The weights of flow f's crossings [units], beside route(f): empty for a single-path flow
  /// (every crossing kUnitWeight; single-path routes store no weight). f is not checked.
  std::span<const std::uint64_t> weights(FlowId f) const {
    const Variable& v = variables_[f];
    if (!v.weighted) return {};
    return {weights_.data() + v.first_element, v.path_length};
  }
  /// Cache hints (they change nothing): flow f's record; its route's crossings (reads the
  /// record); resource r's line. f and r are not checked (f may be any id the solver has seen).
  void prefetch_flow(FlowId f) const { __builtin_prefetch(&variables_[f], 1); }
  void prefetch_route(FlowId f) const {
    const Variable& v = variables_[f];
    if (v.path_length == 0) return;
    const Element* first = elements_.data() + v.first_element;
    __builtin_prefetch(first, 1);
    __builtin_prefetch(first + v.path_length - 1, 1);
  }
  void prefetch_resource(ResourceId r) const { __builtin_prefetch(&resources_[r], 1); }
  /// The crossings of resource r by flows in the solver. r is not range-checked.
  std::span<const User> users(ResourceId r) const {
    const UserList& list = resources_[r].users;
    return {list.data(), list.size()};
  }
  /// The weight of crossing u (an entry of users(r)) as a fraction of its flow's rate: 1 for a
  /// single-path flow.
  double crossing_fraction(const User& u) const {
    return variables_[u.flow].weighted ? weight_fraction(weights_[u.element]) : 1.0;
  }

  /// true when a change since the last solve() marked some resource dirty.
  bool has_dirty() const { return !dirty_.empty(); }
  /// Re-solves the components that touch a dirty resource (every component when `full`) and
  /// clears the dirty marks; does nothing when nothing is dirty. Returns the flows re-solved
  /// (their rate() is new), valid until the next solve() or preview().
  std::span<const FlowId> solve(bool full);
  /// The rates solve(full) would give after removing the `left_out` flows (flows in the solver),
  /// computed without removing them and without clearing the dirty marks: the flows reached
  /// have in_solve(f, last_solve()) and their rate() is the preview's. For queries that must
  /// not change what the committed solve will do.
  void preview(bool full, std::span<const FlowId> left_out);

  /// Rate [bytes/s] of flow f from the latest solve() or preview() that reached it (its cap for
  /// an empty route). f is not checked.
  double rate(FlowId f) const { return variables_[f].rate_bytes_per_s; }
  /// Number of the latest solve() or preview() (0 before the first).
  std::uint64_t last_solve() const { return epoch_; }
  /// true when solve (or preview) number `solve` reached flow f.
  bool in_solve(FlowId f, std::uint64_t solve) const { return f < flow_mark_.size() && flow_mark_[f] == solve; }
  /// Progressive-filling rounds (levels) run so far, over every solve() and preview().
  std::uint64_t rounds() const { return rounds_; }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  /// A resource's crossings: a vector (push_back, swap-remove, same order) whose first
  /// kInlineUsers entries live in the resource's own cache line. Most resources carry one to
  /// three flows at a time (1.07 crossings per resource a solve reaches in the unfolded
  /// Llama-405B runs with d_mod_k, 1.15 with ECMP hashing), so a flow's start and completion no
  /// longer miss on a separate heap block per hop (docs/speed.md, "Per-event cost against GPU
  /// count": that miss grows with the network's size).
  class UserList {
   public:
    static constexpr std::uint32_t kInlineUsers = 3;
    UserList() = default;
    UserList(const UserList& other) { append_all(other); }
    UserList(UserList&& other) noexcept : size_(other.size_), capacity_(other.capacity_), heap_(other.heap_) {
      std::copy(other.inline_, other.inline_ + kInlineUsers, inline_);
      other.size_ = 0;
      other.capacity_ = kInlineUsers;
      other.heap_ = nullptr;
    }
    UserList& operator=(const UserList& other) {
      if (this != &other) {
        size_ = 0;
        append_all(other);
      }
      return *this;
    }
    UserList& operator=(UserList&& other) noexcept {
      if (this != &other) {
        delete[] heap_;
        size_ = other.size_;
        capacity_ = other.capacity_;
        heap_ = other.heap_;
        std::copy(other.inline_, other.inline_ + kInlineUsers, inline_);
        other.size_ = 0;
        other.capacity_ = kInlineUsers;
        other.heap_ = nullptr;
      }
      return *this;
    }
    ~UserList() { delete[] heap_; }

    std::uint32_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const User* data() const { return heap_ != nullptr ? heap_ : inline_; }
    User* data() { return heap_ != nullptr ? heap_ : inline_; }
    const User* begin() const { return data(); }
    const User* end() const { return data() + size_; }
    User& operator[](std::uint32_t i) { return data()[i]; }
    const User& back() const { return data()[size_ - 1]; }
    void pop_back() { --size_; }
    void push_back(const User& u) {
      if (size_ == capacity_) grow();
      data()[size_++] = u;
    }

   private:
    void grow() {  // doubles, as a vector would; entries keep their positions
      const std::uint32_t capacity = 2 * capacity_;
      User* const heap = new User[capacity];
      std::copy(data(), data() + size_, heap);
      delete[] heap_;
      heap_ = heap;
      capacity_ = capacity;
    }
    void append_all(const UserList& other) {
      for (const User& u : other) push_back(u);
    }
    std::uint32_t size_ = 0;
    std::uint32_t capacity_ = kInlineUsers;
    User inline_[kInlineUsers] = {};
    User* heap_ = nullptr;  ///< entries once more than kInlineUsers were held at once (kept after)
  };

  /// One cache line each, the crossings' first entries included: adding or removing a flow
  /// touches every resource of its route.
  struct alignas(64) Resource {
    double capacity_bytes_per_s = 0.0;
    std::uint64_t mark = 0;  ///< component epoch
    std::uint32_t slot = 0;  ///< index in comp_resources_ while mark == epoch_
    bool dirty = false;
    bool bottleneck = false;  ///< saturated at some level of the last solve() that reached it
    UserList users;           ///< active crossings (swap-removed; order is irrelevant)
  };
  static_assert(sizeof(Resource) == 64, "a resource and its first crossings: one cache line");
  struct Variable {
    double rate_cap_bytes_per_s = 0.0;
    double rate_bytes_per_s = 0.0;  ///< solver output
    std::uint32_t first_element = 0;
    std::uint32_t path_length = 0;
    bool present = false;
    bool weighted = false;  ///< multi-path: its weights are in weights_ (else kUnitWeight each)
  };

  /// add_flow's route and cap checks (throws std::invalid_argument).
  void check_flow(std::span<const ResourceId> route, double rate_cap_bytes_per_s) const;
  void mark_dirty(ResourceId r);
  std::uint32_t allocate_elements(std::uint32_t n);
  void release_elements(std::uint32_t first, std::uint32_t n);
  void seed_resource(ResourceId r);
  void seed_all_or_dirty(bool full);
  void collect_component(bool preview);
  std::uint32_t find_tree(std::uint32_t t);
  void solve_components();
  void solve_max_min(std::span<const std::uint32_t> slots, std::span<const FlowId> flows);
  void solve_single_flow(std::span<const std::uint32_t> slots, FlowId id);
  void fix_flow(FlowId f, double rate_bytes_per_s);
  // The multi-path parts, out of the single-path loops (kept small enough to inline).
  void deduct_weights();
  void fix_weighted_flow(const Variable& v);

  std::vector<Resource> resources_;
  std::vector<Variable> variables_;
  // per-flow scratch kept dense (indexed by FlowId) so that scanning a resource's users does not
  // touch their Variable records
  std::vector<std::uint64_t> flow_mark_;     ///< component epoch
  std::vector<std::uint8_t> flow_fixed_;     ///< fixed in the current solve
  std::vector<std::uint8_t> flow_left_out_;  ///< left out of the current preview
  std::vector<Element> elements_;            ///< pooled routes
  /// Beside elements_ (same index), read only at the elements of a weighted flow: its crossings'
  /// weights [units]. Grown to elements_' size when a weighted flow is added.
  std::vector<std::uint64_t> weights_;
  std::vector<FlowId> weighted_flows_;                     ///< collect_component: the weighted flows it reached
  std::vector<std::vector<std::uint32_t>> free_elements_;  ///< free ranges by length
  std::vector<ResourceId> dirty_;
  std::vector<ResourceId> idle_;  ///< remove_flow's answer
  std::uint64_t rounds_ = 0;
  std::uint64_t slack_removals_ = 0;
  bool committing_ = false;  ///< solve() (sets Resource::bottleneck), not preview()
  // solver scratch, reused across solves
  std::uint64_t epoch_ = 0;
  std::vector<ResourceId> comp_resources_;
  std::vector<FlowId> comp_flows_;
  // Connected components among comp_resources_: each seed slot starts a search tree; trees
  // that share a flow are joined (union-find). Component `root` (a root tree) has slots
  // comp_slots_[comp_slot_start_[root] .. comp_slot_start_[root + 1]) and flows likewise in
  // comp_flow_list_.
  std::vector<std::uint32_t> slot_tree_;        ///< per slot: the tree whose search reached it
  std::vector<std::uint32_t> flow_tree_;        ///< per comp_flows_ entry: the tree that reached it
  std::vector<std::uint32_t> tree_parent_;      ///< union-find forest over trees
  std::vector<std::uint32_t> comp_slots_;       ///< slots grouped by component
  std::vector<std::uint32_t> comp_slot_start_;  ///< per root tree: start in comp_slots_
  std::vector<FlowId> comp_flow_list_;          ///< comp_flows_ grouped by component
  std::vector<std::uint32_t> comp_flow_start_;  ///< per root tree: start in comp_flow_list_
  // per component resource, indexed by slot (dense, so the level search scans contiguous memory)
  std::vector<double> slot_remaining_;         ///< capacity not yet given to fixed flows [bytes/s]
  std::vector<double> slot_share_;             ///< remaining / unfixed [bytes/s]
  std::vector<std::uint64_t> slot_unfixed_;    ///< sum of the weights of unfixed crossings [units]
  std::vector<std::uint64_t> slot_fixed_now_;  ///< sum of the weights fixed in the current round [units]
  std::vector<double> live_share_;             ///< shares of live slots, +inf once a slot is done
  std::vector<std::uint32_t> live_slot_;       ///< slot of each live_share_ entry
  std::vector<std::uint32_t> slot_live_pos_;   ///< position of a slot in live_share_
  std::vector<std::uint32_t> saturated_;       ///< slots at the current level
  std::vector<std::uint32_t> touched_;         ///< slots with crossings fixed in the current round
  std::vector<FlowId> capped_;
  std::size_t unfixed_ = 0;
};

}  // namespace traincast::sim
