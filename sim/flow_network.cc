// FlowNetwork: max-min fair sharing of directed resources, re-solved per connected component
// by the MaxMinSolver; here the flows' progress, drain dates and completion events.
//
// Layout (all dense integer ids, nothing allocated per flow once the pools have grown):
//   solver_               paths (crossings per resource and per flow), capacities, rate caps
//   flows_[f]             flow slots, recycled through free_flows_ once the listener is told
//   finish_heap_          indexed 4-ary min-heap of active flows by (drain date, start order);
//                         entries carry their key, heap_pos_[f] is f's index in it (a dense
//                         array beside flows_: a sift writes one position per level)
//
// Events the network schedules on the Simulator (tag = kind in the top 2 bits | payload):
//   kWake   | generation  the earliest drain date; stale when the generation is not the latest
//   kFlush  | 0           zero-delay event after the first change of an instant
//   kNotify | flow id     the listener's call, drain date + path latency
//
// Incremental == full recompute, bit for bit: see sim/max_min_solver.cc. A flow whose solved
// rate has the same bits as its committed one keeps its anchor and drain date.

#include "sim/flow_network.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/dary_heap.h"
#include "sim/heap_key.h"

namespace traincast::sim {
namespace {

constexpr std::uint64_t kKindShift = 62;
constexpr std::uint64_t kPayloadMask = (std::uint64_t{1} << kKindShift) - 1;
constexpr std::uint64_t kWake = 0;
constexpr std::uint64_t kFlush = 1;
constexpr std::uint64_t kNotify = 2;

/// A flow is drained once remaining <= max(kAbsEpsilonBytes, kRelEpsilon * size).
constexpr double kAbsEpsilonBytes = 1e-3;
constexpr double kRelEpsilon = 1e-9;

/// The completion heap's order, (finish_ns, seq), as one branch-free 128-bit compare
/// (sim/heap_key.h). seq is unique: a total order.
constexpr auto kEarlier = [](const auto& a, const auto& b) {
  return heap_key(a.finish_ns, a.seq) < heap_key(b.finish_ns, b.seq);
};

constexpr std::uint64_t make_tag(std::uint64_t kind, std::uint64_t payload) { return (kind << kKindShift) | payload; }

}  // namespace

FlowNetwork::FlowNetwork(Simulator& sim) : sim_(sim) {}

// ---------------------------------------------------------------------------------------------
// Building and starting
// ---------------------------------------------------------------------------------------------

void FlowNetwork::check_resource(double capacity_bytes_per_s, Time latency, const std::string& name) {
  if (!(capacity_bytes_per_s > 0.0) || !std::isfinite(capacity_bytes_per_s)) {
    throw std::invalid_argument("FlowNetwork::add_resource(\"" + name +
                                "\"): capacity_bytes_per_s must be finite and > 0");
  }
  if (latency < Time::zero()) {
    throw std::invalid_argument("FlowNetwork::add_resource(\"" + name + "\"): latency must be >= 0");
  }
}

ResourceId FlowNetwork::add_resource(double capacity_bytes_per_s, Time latency, std::string name) {
  check_resource(capacity_bytes_per_s, latency, name);  // before the name is kept
  return add_resource_shared_name(capacity_bytes_per_s, latency, own_names_.emplace_back(std::move(name)));
}

ResourceId FlowNetwork::add_resource_shared_name(double capacity_bytes_per_s, Time latency, const std::string& name) {
  check_resource(capacity_bytes_per_s, latency, name);
  if (resources_.size() >= kNone) throw std::length_error("FlowNetwork::add_resource: too many resources");
  solver_.add_resource(capacity_bytes_per_s);
  Resource res;
  res.latency_ns = latency.ns();
  resources_.push_back(res);
  names_.push_back(&name);
  return static_cast<ResourceId>(resources_.size() - 1);
}

void FlowNetwork::reserve_resources(std::size_t count) {
  solver_.reserve_resources(count);
  resources_.reserve(count);
  names_.reserve(count);
}

void FlowNetwork::check_start(std::span<const ResourceId> path, double bytes, double rate_cap_bytes_per_s) const {
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] >= resources_.size()) {
      throw std::invalid_argument("FlowNetwork::start_flow: path[" + std::to_string(i) +
                                  "] = " + std::to_string(path[i]) + " is not a resource id (network has " +
                                  std::to_string(resources_.size()) + ")");
    }
  }
  if (!(bytes >= 0.0) || !std::isfinite(bytes)) {
    throw std::invalid_argument("FlowNetwork::start_flow: bytes must be finite and >= 0");
  }
  if (!(rate_cap_bytes_per_s > 0.0)) {
    throw std::invalid_argument("FlowNetwork::start_flow: rate_cap_bytes_per_s must be > 0 (infinity = uncapped)");
  }
  if (path.empty() && bytes > 0.0 && !std::isfinite(rate_cap_bytes_per_s)) {
    throw std::invalid_argument(
        "FlowNetwork::start_flow: a flow with an empty path and bytes > 0 needs a finite rate_cap_bytes_per_s");
  }
  if (path.size() >= kNone) throw std::invalid_argument("FlowNetwork::start_flow: path too long");
}

FlowId FlowNetwork::start_flow(std::span<const ResourceId> path, double bytes, FlowListener* listener,
                               std::uint64_t tag, double rate_cap_bytes_per_s) {
  check_start(path, bytes, rate_cap_bytes_per_s);
  std::int64_t latency_ns = 0;
  for (const ResourceId r : path) latency_ns += resources_[r].latency_ns;
  return start_checked(path, {}, latency_ns, bytes, listener, tag, rate_cap_bytes_per_s);
}

FlowNetwork::MultiPathRoute FlowNetwork::multipath_route(std::span<const std::span<const ResourceId>> paths,
                                                         std::span<const double> fractions) const {
  if (paths.empty() || paths.size() != fractions.size()) {
    throw std::invalid_argument("FlowNetwork::multipath_route: " + std::to_string(paths.size()) + " paths and " +
                                std::to_string(fractions.size()) + " fractions (expected one per path, at least one)");
  }
  double total = 0.0;
  for (const double f : fractions) {
    if (!(f > 0.0) || !std::isfinite(f)) {
      throw std::invalid_argument("FlowNetwork::multipath_route: a path's fraction must be finite and > 0");
    }
    total += f;
  }
  MultiPathRoute route;
  std::vector<double> share;  // per route.resources entry: the fraction of the bytes crossing it
  for (std::size_t p = 0; p < paths.size(); ++p) {
    std::int64_t latency_ns = 0;
    for (std::size_t i = 0; i < paths[p].size(); ++i) {
      const ResourceId r = paths[p][i];
      latency_ns += resource_checked(r, "multipath_route").latency_ns;
      if (std::find(paths[p].begin(), paths[p].begin() + static_cast<std::ptrdiff_t>(i), r) !=
          paths[p].begin() + static_cast<std::ptrdiff_t>(i)) {
        throw std::invalid_argument("FlowNetwork::multipath_route: path " + std::to_string(p) + " crosses " +
                                    *names_[r] + " twice (expected each resource at most once per path)");
      }
      // routes are short (a few hops per path): a linear search beats any index here
      const auto at = std::find(route.resources.begin(), route.resources.end(), r);
      if (at == route.resources.end()) {
        route.resources.push_back(r);
        share.push_back(fractions[p] / total);
      } else {
        share[static_cast<std::size_t>(at - route.resources.begin())] += fractions[p] / total;
      }
    }
    route.latency_ns = std::max(route.latency_ns, latency_ns);
  }
  route.weights.reserve(share.size());
  for (const double w : share) route.weights.push_back(MaxMinSolver::weight_units(w));
  return route;
}

FlowId FlowNetwork::start_multipath_flow(const MultiPathRoute& route, double bytes, FlowListener* listener,
                                         std::uint64_t tag, double rate_cap_bytes_per_s) {
  check_start(route.resources, bytes, rate_cap_bytes_per_s);
  if (route.weights.size() != route.resources.size() || route.latency_ns < 0) {
    throw std::invalid_argument("FlowNetwork::start_flow: a multi-path route needs one weight per resource");
  }
  for (const std::uint64_t w : route.weights) {
    if (w == 0) throw std::invalid_argument("FlowNetwork::start_flow: a multi-path route's weight must be >= 1");
  }
  return start_checked(route.resources, route.weights, route.latency_ns, bytes, listener, tag, rate_cap_bytes_per_s);
}

FlowId FlowNetwork::start_checked(std::span<const ResourceId> path, std::span<const std::uint64_t> weights,
                                  std::int64_t latency_ns, double bytes, FlowListener* listener, std::uint64_t tag,
                                  double rate_cap_bytes_per_s) {
  const std::int64_t now = sim_.now().ns();
  FlowId id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    if (flows_.size() >= (std::size_t{1} << 32) - 1) throw std::length_error("FlowNetwork::start_flow: too many flows");
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    heap_pos_.push_back(kNone);
  }

  Flow& f = flows_[id];
  f.remaining_bytes = bytes;
  f.rate_bytes_per_s = 0.0;
  f.epsilon_bytes = std::max(kAbsEpsilonBytes, kRelEpsilon * bytes);
  f.anchor_ns = now;
  f.finish_ns = kNever;
  f.seq = next_flow_seq_++;
  f.listener = listener;
  f.tag = tag;
  heap_pos_[id] = kNone;
  f.latency_ns = latency_ns;
  for (const ResourceId r : path) ++resources_[r].flows;

  view_valid_ = false;
  if (bytes == 0.0) {  // never takes bandwidth: told after the latencies
    f.state = FlowState::kNotifying;
    sim_.schedule_at(Time::from_ns(now + f.latency_ns), this, make_tag(kNotify, id));
    return id;
  }

  for (const ResourceId r : path) {
    if (solver_.users(r).empty()) resources_[r].busy_since_ns = now;
    charge_flow_time(r, now);
  }
  solver_.add_checked_flow(id, path, weights, rate_cap_bytes_per_s);  // checked above; marks the path dirty
  f.state = FlowState::kActive;
  ++active_count_;
  if (path.empty()) {  // alone: its cap is its rate, for good
    f.rate_bytes_per_s = rate_cap_bytes_per_s;
    f.finish_ns = drain_date(f, now);
    heap_insert_or_update(id);
    schedule_wake();
  } else {
    request_flush();
  }
  return id;
}

void FlowNetwork::request_flush() {
  if (flush_pending_) return;
  flush_pending_ = true;
  sim_.schedule_at(sim_.now(), this, make_tag(kFlush, 0));
}

// ---------------------------------------------------------------------------------------------
// Events and the update cycle
// ---------------------------------------------------------------------------------------------

void FlowNetwork::on_event(std::uint64_t tag) {
  const std::uint64_t kind = tag >> kKindShift;
  const std::uint64_t payload = tag & kPayloadMask;
  switch (kind) {
    case kWake:
      if (!wake_pending_ || payload != (wake_generation_ & kPayloadMask)) return;  // stale
      wake_pending_ = false;
      update();
      return;
    case kFlush:
      flush_pending_ = false;
      update();
      return;
    case kNotify: {
      const auto id = static_cast<FlowId>(payload);
      Flow& f = flows_[id];
      FlowListener* const listener = f.listener;
      const std::uint64_t flow_tag = f.tag;
      f.state = FlowState::kFree;
      f.listener = nullptr;
      free_flows_.push_back(id);  // the slot may be reused by a flow the listener starts
      if (listener != nullptr) listener->on_flow_complete(id, flow_tag);
      return;
    }
    default:
      throw std::logic_error("FlowNetwork::on_event: unknown event kind");
  }
}

void FlowNetwork::prefetch(std::uint64_t tag) const {
  switch (tag >> kKindShift) {
    case kWake:
      if (!finish_heap_.empty()) prefetch_flow(finish_heap_.front().flow);
      return;
    case kNotify:
      __builtin_prefetch(&flows_[static_cast<FlowId>(tag & kPayloadMask)]);
      return;
    default:
      return;
  }
}

void FlowNetwork::update() {
  const std::int64_t now = sim_.now().ns();
  complete_due_flows(now);
  solve_dirty(now);
  schedule_wake();
}

void FlowNetwork::complete_due_flows(std::int64_t now_ns) {
  if (finish_heap_.empty() || finish_heap_.front().finish_ns > now_ns) return;
  // The due flows first, in the heap's (drain date, start order): nothing below touches the heap,
  // so completing them after all the pops is the order of popping one and completing it, bit for
  // bit. Knowing them all ahead lets their records load while earlier ones complete: each
  // completion walks flow -> route -> resources, three dependent loads of records chosen at
  // random in state that grows with the network (docs/speed.md, "Per-event cost against GPU
  // count"); the prefetches below run that chain kPrefetchAhead flows ahead, a level a step.
  due_.clear();
  while (!finish_heap_.empty() && finish_heap_.front().finish_ns <= now_ns) due_.push_back(heap_pop());
  const std::size_t n = due_.size();
  for (std::size_t j = 0; j < std::min(n, kPrefetchAhead); ++j) prefetch_flow(due_[j]);
  for (std::size_t j = 0; j < std::min(n, kPrefetchAhead / 2); ++j) solver_.prefetch_route(due_[j]);
  for (std::size_t j = 0; j < std::min(n, kPrefetchAhead / 4); ++j) prefetch_route_resources(due_[j]);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) prefetch_flow(due_[i + kPrefetchAhead]);
    if (i + kPrefetchAhead / 2 < n) solver_.prefetch_route(due_[i + kPrefetchAhead / 2]);
    if (i + kPrefetchAhead / 4 < n) prefetch_route_resources(due_[i + kPrefetchAhead / 4]);
    complete_flow(due_[i], now_ns);
  }
}

void FlowNetwork::prefetch_flow(FlowId id) const {
  __builtin_prefetch(&flows_[id], 1);
  solver_.prefetch_flow(id);
}

void FlowNetwork::prefetch_route_resources(FlowId id) const {
  for (const MaxMinSolver::Element& e : solver_.route(id)) {
    __builtin_prefetch(&resources_[e.resource], 1);
    solver_.prefetch_resource(e.resource);
  }
}

/// One due flow leaves the network: its last bytes are charged, the solver drops it, and its
/// listener is told after the path latency.
void FlowNetwork::complete_flow(FlowId id, std::int64_t now_ns) {
  Flow& f = flows_[id];
  // By definition of the drain date, everything left at the anchor went out since then.
  const double last_bytes = f.remaining_bytes;
  const std::span<const MaxMinSolver::Element> route = solver_.route(id);
  const std::span<const std::uint64_t> weights = solver_.weights(id);  // empty: one path
  for (std::size_t k = 0; k < route.size(); ++k) {
    resources_[route[k].resource].bytes_carried +=
        weights.empty() ? last_bytes : last_bytes * MaxMinSolver::weight_fraction(weights[k]);
    charge_flow_time(route[k].resource, now_ns);
  }
  // Without a bottleneck on its route, its departure changes no other rate: nothing to
  // re-solve (MaxMinSolver::remove_flow); the full-recompute oracle re-solves anyway.
  for (const ResourceId r : solver_.remove_flow(id, /*skip_slack=*/!full_recompute_)) {  // the resources it leaves idle
    Resource& res = resources_[r];
    res.busy_total_ns += now_ns - res.busy_since_ns;
  }
  view_valid_ = false;
  f.remaining_bytes = 0.0;
  f.rate_bytes_per_s = 0.0;
  f.anchor_ns = now_ns;
  f.state = FlowState::kNotifying;
  --active_count_;
  sim_.schedule_at(Time::from_ns(now_ns + f.latency_ns), this, make_tag(kNotify, id));
}

void FlowNetwork::schedule_wake() {
  if (finish_heap_.empty()) return;
  const std::int64_t t = finish_heap_.front().finish_ns;
  if (t == kNever || (wake_pending_ && wake_ns_ == t)) return;
  ++wake_generation_;
  wake_pending_ = true;
  wake_ns_ = t;
  sim_.schedule_at(Time::from_ns(t), this, make_tag(kWake, wake_generation_ & kPayloadMask));
}

// ---------------------------------------------------------------------------------------------
// Selective update: component discovery, solve, advance the flows whose rate changed
// ---------------------------------------------------------------------------------------------

void FlowNetwork::solve_dirty(std::int64_t now_ns) {
  if (!solver_.has_dirty()) return;
  view_valid_ = false;
  const std::span<const FlowId> solved = solver_.solve(full_recompute_);
  counters_.rounds = solver_.rounds();
  if (solved.empty()) return;

  ++counters_.solves;
  counters_.flows_solved += solved.size();
  changed_.clear();
  for (const FlowId id : solved) {
    Flow& f = flows_[id];
    const double new_rate = solver_.rate(id);
    if (new_rate == f.rate_bytes_per_s) continue;  // same bits: keep anchor and date
    ++counters_.rate_changes;
    advance(id, now_ns);
    f.rate_bytes_per_s = new_rate;
    f.finish_ns = drain_date(f, now_ns);
    changed_.push_back(id);
  }
  heap_update_batch(changed_);
}

/// Moves the flow's anchor to now: remaining -= rate * dt, charged to every resource crossed.
void FlowNetwork::advance(FlowId id, std::int64_t now_ns) {
  Flow& f = flows_[id];
  const std::int64_t dt_ns = now_ns - f.anchor_ns;
  if (dt_ns > 0 && f.rate_bytes_per_s > 0.0) {
    const double sent = std::min(f.remaining_bytes, f.rate_bytes_per_s * static_cast<double>(dt_ns) * 1e-9);
    f.remaining_bytes -= sent;
    const std::span<const MaxMinSolver::Element> route = solver_.route(id);
    const std::span<const std::uint64_t> weights = solver_.weights(id);  // empty: one path
    if (weights.empty()) {
      for (const MaxMinSolver::Element& e : route) resources_[e.resource].bytes_carried += sent;
    } else {
      for (std::size_t k = 0; k < route.size(); ++k) {
        resources_[route[k].resource].bytes_carried += sent * MaxMinSolver::weight_fraction(weights[k]);
      }
    }
  }
  f.anchor_ns = now_ns;
}

/// First integer ns (>= now + 1) at which remaining - rate * dt <= epsilon; kNever if beyond range.
std::int64_t FlowNetwork::drain_date(const Flow& f, std::int64_t now_ns) const {
  double dt_ns = std::ceil((f.remaining_bytes - f.epsilon_bytes) / f.rate_bytes_per_s * 1e9);
  if (!(dt_ns >= 1.0)) dt_ns = 1.0;  // also catches NaN
  if (dt_ns >= static_cast<double>(kNever - now_ns)) return kNever;
  return now_ns + static_cast<std::int64_t>(dt_ns);
}

// ---------------------------------------------------------------------------------------------
// Indexed heap of drain dates
// ---------------------------------------------------------------------------------------------

void FlowNetwork::heap_place(std::uint32_t pos, const HeapEntry& e) {
  finish_heap_[pos] = e;
  heap_pos_[e.flow] = pos;
}

void FlowNetwork::heap_sift_up(std::uint32_t pos) {
  const HeapEntry e = finish_heap_[pos];
  dary::sift_up(finish_heap_.data(), pos, e, kEarlier, place_fn());
}

void FlowNetwork::heap_sift_down(std::uint32_t pos) {
  const HeapEntry e = finish_heap_[pos];
  dary::sift_down(finish_heap_.data(), finish_heap_.size(), pos, e, kEarlier, place_fn());
}

void FlowNetwork::heap_insert_or_update(FlowId f) {
  const Flow& flow = flows_[f];
  std::uint32_t pos = heap_pos_[f];
  if (pos == kNone) {
    pos = static_cast<std::uint32_t>(finish_heap_.size());
    finish_heap_.push_back(HeapEntry{flow.finish_ns, flow.seq, f});
    heap_pos_[f] = pos;
    heap_sift_up(pos);
    return;
  }
  finish_heap_[pos].finish_ns = flow.finish_ns;
  heap_sift_up(pos);
  heap_sift_down(heap_pos_[f]);
}

void FlowNetwork::heap_update_batch(std::span<const FlowId> changed) {
  // k sifts cost up to about 2 k log2(n) compares (a 4-ary sift down compares four children per
  // level over log4(n) levels), a rebuild (Floyd's construction, dary::make_heap) O(n) plus the
  // n position updates: rebuild when k log2(n) > 2n.
  const std::size_t n = finish_heap_.size() + changed.size();
  const auto log2_n = static_cast<std::size_t>(std::bit_width(n));
  if (changed.size() * log2_n <= 2 * n) {
    for (const FlowId id : changed) heap_insert_or_update(id);
    return;
  }
  finish_heap_.reserve(n);
  for (const FlowId id : changed) {
    const Flow& f = flows_[id];
    if (heap_pos_[id] == kNone) {
      heap_pos_[id] = static_cast<std::uint32_t>(finish_heap_.size());
      finish_heap_.push_back(HeapEntry{f.finish_ns, f.seq, id});
    } else {
      finish_heap_[heap_pos_[id]].finish_ns = f.finish_ns;
    }
  }
  // every entry's heap_pos_ is its position here; each entry the rebuild moves is placed anew
  dary::make_heap(finish_heap_.data(), finish_heap_.size(), kEarlier, place_fn());
}

FlowId FlowNetwork::heap_pop() {
  const FlowId top = finish_heap_.front().flow;
  heap_pos_[top] = kNone;
  const HeapEntry last = finish_heap_.back();
  finish_heap_.pop_back();
  dary::pop_root(finish_heap_.data(), finish_heap_.size(), last, kEarlier, place_fn());
  return top;
}

// ---------------------------------------------------------------------------------------------
// Queries: answers "as of now" that never change the committed state. Pending work (flows due
// now whose wake has not run yet, dirty components) is solved into scratch (the view) only.
// The network is never a const object, so the const_cast to reach the scratch is well defined.
// ---------------------------------------------------------------------------------------------

/// Calls fn(id) for every active flow whose drain date is <= now_ns (a prefix of the heap).
template <typename Fn>
void FlowNetwork::for_each_due(std::int64_t now_ns, Fn&& fn) const {
  if (finish_heap_.empty() || finish_heap_.front().finish_ns > now_ns) return;
  // depth-first over the heap nodes that are due (children of a node that is not due are not)
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t pos = stack.back();
    stack.pop_back();
    const HeapEntry& e = finish_heap_[pos];
    if (e.finish_ns > now_ns) continue;
    fn(e.flow);
    const std::size_t c0 = dary::first_child(pos);
    for (std::size_t c = c0; c < c0 + dary::kArity && c < finish_heap_.size(); ++c) {
      stack.push_back(static_cast<std::uint32_t>(c));
    }
  }
}

void FlowNetwork::build_view() {
  const std::int64_t now = sim_.now().ns();
  if (view_valid_ && view_ns_ == now) return;
  view_valid_ = true;
  view_ns_ = now;
  view_epoch_ = 0;
  const bool any_due = !finish_heap_.empty() && finish_heap_.front().finish_ns <= now;
  if (!solver_.has_dirty() && !any_due) return;  // committed rates are current
  // what update() would re-solve: the dirty resources and those of the flows due now, which
  // update() would have removed first
  view_left_out_.clear();
  for_each_due(now, [this](FlowId id) { view_left_out_.push_back(id); });
  solver_.preview(full_recompute_, view_left_out_);
  view_epoch_ = solver_.last_solve();
  counters_.rounds = solver_.rounds();
}

double FlowNetwork::view_rate(FlowId id, std::int64_t now_ns) const {
  const Flow& f = flows_[id];
  if (f.state != FlowState::kActive || f.finish_ns <= now_ns) return 0.0;
  if (view_epoch_ != 0 && solver_.in_solve(id, view_epoch_)) return solver_.rate(id);
  return f.rate_bytes_per_s;
}

const FlowNetwork::Resource& FlowNetwork::resource_checked(ResourceId r, const char* what) const {
  if (r >= resources_.size()) {
    throw std::invalid_argument(std::string("FlowNetwork::") + what + ": unknown resource id " + std::to_string(r) +
                                " (network has " + std::to_string(resources_.size()) + ")");
  }
  return resources_[r];
}

const FlowNetwork::Flow& FlowNetwork::flow_checked(FlowId f, const char* what) const {
  if (f >= flows_.size()) {
    throw std::invalid_argument(std::string("FlowNetwork::") + what + ": unknown flow id " + std::to_string(f));
  }
  return flows_[f];
}

double FlowNetwork::rate(FlowId flow) const {
  flow_checked(flow, "rate");
  const_cast<FlowNetwork*>(this)->build_view();
  return view_rate(flow, sim_.now().ns());
}

double FlowNetwork::remaining_bytes(FlowId flow) const {
  const Flow& f = flow_checked(flow, "remaining_bytes");
  const std::int64_t now = sim_.now().ns();
  if (f.state != FlowState::kActive || f.finish_ns <= now) return 0.0;
  const double dt_ns = static_cast<double>(now - f.anchor_ns);
  return f.remaining_bytes - std::min(f.remaining_bytes, f.rate_bytes_per_s * dt_ns * 1e-9);
}

std::size_t FlowNetwork::active_flows() const {
  std::size_t due = 0;
  for_each_due(sim_.now().ns(), [&due](FlowId) { ++due; });
  return active_count_ - due;
}

std::size_t FlowNetwork::num_resources() const { return resources_.size(); }

const std::string& FlowNetwork::resource_name(ResourceId r) const {
  resource_checked(r, "resource_name");
  return *names_[r];
}

double FlowNetwork::capacity(ResourceId r) const {
  resource_checked(r, "capacity");
  return solver_.capacity(r);
}

Time FlowNetwork::latency(ResourceId r) const { return Time::from_ns(resource_checked(r, "latency").latency_ns); }

double FlowNetwork::load(ResourceId r) const {
  resource_checked(r, "load");
  const_cast<FlowNetwork*>(this)->build_view();
  const std::int64_t now = sim_.now().ns();
  double sum = 0.0;
  for (const MaxMinSolver::User& u : solver_.users(r)) {
    sum += view_rate(u.flow, now) * solver_.crossing_fraction(u);
  }
  return sum;
}

void FlowNetwork::charge_flow_time(ResourceId r, std::int64_t now_ns) {
  Resource& res = resources_[r];
  res.flow_ns += static_cast<double>(solver_.users(r).size()) * static_cast<double>(now_ns - res.flows_since_ns);
  res.flows_since_ns = now_ns;
}

ResourceStats FlowNetwork::stats(ResourceId r) const {
  const Resource& res = resource_checked(r, "stats");
  const std::int64_t now = sim_.now().ns();
  ResourceStats s;
  s.bytes_carried = res.bytes_carried;
  s.flows = res.flows;
  std::int64_t busy = res.busy_total_ns;
  const std::span<const MaxMinSolver::User> users = solver_.users(r);
  if (!users.empty()) busy += now - res.busy_since_ns;
  s.busy_ns = static_cast<double>(busy);
  s.flow_ns = res.flow_ns + static_cast<double>(users.size()) * static_cast<double>(now - res.flows_since_ns);
  // bytes sent by active flows since their anchor, not charged yet (rates up to now are the
  // committed ones, so no solve is needed); a flow due now has sent everything
  for (const MaxMinSolver::User& u : users) {
    const Flow& f = flows_[u.flow];
    s.bytes_carried +=
        (f.finish_ns <= now
             ? f.remaining_bytes
             : std::min(f.remaining_bytes, f.rate_bytes_per_s * static_cast<double>(now - f.anchor_ns) * 1e-9)) *
        solver_.crossing_fraction(u);
  }
  return s;
}

}  // namespace traincast::sim
