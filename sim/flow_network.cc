// FlowNetwork: max-min fair sharing of directed resources, re-solved per connected component.
//
// Layout (all dense integer ids, nothing allocated per flow once the pools have grown):
//   resources_[r].users   active crossings of r: (flow, element) pairs, swap-removed
//   elements_[...]        every flow's path as a contiguous range of (resource, user_pos);
//                         ranges are recycled through free lists keyed by path length
//   flows_[f]             flow slots, recycled through free_flows_ once the listener is told
//   finish_heap_          indexed binary min-heap of active flows by (drain date, start order)
//
// Events the network schedules on the Simulator (tag = kind in the top 2 bits | payload):
//   kWake   | generation  the earliest drain date; stale when the generation is not the latest
//   kFlush  | 0           zero-delay event after the first change of an instant
//   kNotify | flow id     the listener's call, drain date + path latency
//
// Determinism of the solver (why incremental == full recompute, bit for bit): each round of
// progressive filling takes the smallest fair share (or rate cap) over the component, fixes
// every flow of every resource at exactly that level at once, and updates each resource with
// one operation, remaining -= k * level (k = crossings fixed in the round). No quantity depends
// on the order in which resources or flows are visited, and a component's rounds are not
// affected by the rounds of another component solved at the same time.

#include "sim/flow_network.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace traincast::sim {
namespace {

constexpr std::uint64_t kKindShift = 62;
constexpr std::uint64_t kPayloadMask = (std::uint64_t{1} << kKindShift) - 1;
constexpr std::uint64_t kWake = 0;
constexpr std::uint64_t kFlush = 1;
constexpr std::uint64_t kNotify = 2;

constexpr double kInf = std::numeric_limits<double>::infinity();
/// A flow is drained once remaining <= max(kAbsEpsilonBytes, kRelEpsilon * size).
constexpr double kAbsEpsilonBytes = 1e-3;
constexpr double kRelEpsilon = 1e-9;

/// Smallest value of a vector of positive doubles (+inf when empty). Four independent
/// accumulators: the compiler will not reorder a floating-point reduction by itself, and min
/// is exact in any order for non-NaN values.
double min_share(const std::vector<double>& v) {
  double m0 = kInf, m1 = kInf, m2 = kInf, m3 = kInf;
  const std::size_t n = v.size();
  std::size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    m0 = v[j] < m0 ? v[j] : m0;
    m1 = v[j + 1] < m1 ? v[j + 1] : m1;
    m2 = v[j + 2] < m2 ? v[j + 2] : m2;
    m3 = v[j + 3] < m3 ? v[j + 3] : m3;
  }
  for (; j < n; ++j) m0 = v[j] < m0 ? v[j] : m0;
  m0 = m1 < m0 ? m1 : m0;
  m2 = m3 < m2 ? m3 : m2;
  return m2 < m0 ? m2 : m0;
}

constexpr std::uint64_t make_tag(std::uint64_t kind, std::uint64_t payload) { return (kind << kKindShift) | payload; }

}  // namespace

FlowNetwork::FlowNetwork(Simulator& sim) : sim_(sim) {}

// ---------------------------------------------------------------------------------------------
// Building and starting
// ---------------------------------------------------------------------------------------------

ResourceId FlowNetwork::add_resource(double capacity_bytes_per_s, Time latency, std::string name) {
  if (!(capacity_bytes_per_s > 0.0) || !std::isfinite(capacity_bytes_per_s)) {
    throw std::invalid_argument("FlowNetwork::add_resource(\"" + name +
                                "\"): capacity_bytes_per_s must be finite and > 0");
  }
  if (latency < Time::zero()) {
    throw std::invalid_argument("FlowNetwork::add_resource(\"" + name + "\"): latency must be >= 0");
  }
  if (resources_.size() >= kNone) throw std::length_error("FlowNetwork::add_resource: too many resources");
  Resource res;
  res.capacity_bytes_per_s = capacity_bytes_per_s;
  res.latency_ns = latency.ns();
  resources_.push_back(std::move(res));
  names_.push_back(std::move(name));
  return static_cast<ResourceId>(resources_.size() - 1);
}

FlowId FlowNetwork::start_flow(std::span<const ResourceId> path, double bytes, FlowListener* listener,
                               std::uint64_t tag, double rate_cap_bytes_per_s) {
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

  const std::int64_t now = sim_.now().ns();
  FlowId id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    if (flows_.size() >= (std::size_t{1} << 32) - 1) throw std::length_error("FlowNetwork::start_flow: too many flows");
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    flow_mark_.push_back(0);
    flow_fixed_.push_back(0);
  }
  const auto length = static_cast<std::uint32_t>(path.size());
  const std::uint32_t first = bytes > 0.0 ? allocate_elements(length) : 0;

  Flow& f = flows_[id];
  f.remaining_bytes = bytes;
  f.rate_bytes_per_s = 0.0;
  f.rate_cap_bytes_per_s = rate_cap_bytes_per_s;
  f.epsilon_bytes = std::max(kAbsEpsilonBytes, kRelEpsilon * bytes);
  f.anchor_ns = now;
  f.finish_ns = kNever;
  f.seq = next_flow_seq_++;
  f.listener = listener;
  f.tag = tag;
  f.first_element = first;
  f.path_length = bytes > 0.0 ? length : 0;
  f.heap_pos = kNone;
  f.latency_ns = 0;
  for (const ResourceId r : path) {
    f.latency_ns += resources_[r].latency_ns;
    ++resources_[r].flows;
  }

  view_valid_ = false;
  if (bytes == 0.0) {  // never takes bandwidth: told after the latencies
    f.state = FlowState::kNotifying;
    sim_.schedule_at(Time::from_ns(now + f.latency_ns), this, make_tag(kNotify, id));
    return id;
  }

  f.state = FlowState::kActive;
  ++active_count_;
  for (std::uint32_t i = 0; i < length; ++i) {
    const ResourceId r = path[i];
    Resource& res = resources_[r];
    if (res.users.empty()) res.busy_since_ns = now;
    elements_[first + i] = Element{r, static_cast<std::uint32_t>(res.users.size()), 0};
    res.users.push_back(User{id, first + i});
    mark_dirty(r);
  }
  if (length == 0) {  // alone: its cap is its rate, for good
    f.rate_bytes_per_s = rate_cap_bytes_per_s;
    f.finish_ns = drain_date(f, now);
    heap_insert_or_update(id);
    schedule_wake();
  } else {
    request_flush();
  }
  return id;
}

void FlowNetwork::mark_dirty(ResourceId r) {
  view_valid_ = false;
  Resource& res = resources_[r];
  if (res.dirty) return;
  res.dirty = true;
  dirty_.push_back(r);
}

void FlowNetwork::request_flush() {
  if (flush_pending_) return;
  flush_pending_ = true;
  sim_.schedule_at(sim_.now(), this, make_tag(kFlush, 0));
}

std::uint32_t FlowNetwork::allocate_elements(std::uint32_t n) {
  if (n < free_elements_.size() && !free_elements_[n].empty()) {
    const std::uint32_t first = free_elements_[n].back();
    free_elements_[n].pop_back();
    return first;
  }
  if (elements_.size() + n >= kNone) throw std::length_error("FlowNetwork: element pool exhausted");
  const auto first = static_cast<std::uint32_t>(elements_.size());
  elements_.resize(elements_.size() + n);
  return first;
}

void FlowNetwork::release_elements(std::uint32_t first, std::uint32_t n) {
  if (n == 0) return;
  if (n >= free_elements_.size()) free_elements_.resize(n + 1);
  free_elements_[n].push_back(first);
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

void FlowNetwork::update() {
  const std::int64_t now = sim_.now().ns();
  complete_due_flows(now);
  solve_dirty(now);
  schedule_wake();
}

void FlowNetwork::complete_due_flows(std::int64_t now_ns) {
  while (!finish_heap_.empty() && flows_[finish_heap_.front()].finish_ns <= now_ns) {
    const FlowId id = heap_pop();
    Flow& f = flows_[id];
    // By definition of the drain date, everything left at the anchor went out since then.
    const double last_bytes = f.remaining_bytes;
    for (std::uint32_t i = 0; i < f.path_length; ++i) {
      const Element e = elements_[f.first_element + i];
      Resource& res = resources_[e.resource];
      res.bytes_carried += last_bytes;
      // swap-remove the crossing from the resource's list
      const User moved = res.users.back();
      res.users[e.user_pos] = moved;
      elements_[moved.element].user_pos = e.user_pos;
      res.users.pop_back();
      if (res.users.empty()) res.busy_total_ns += now_ns - res.busy_since_ns;
      mark_dirty(e.resource);
    }
    release_elements(f.first_element, f.path_length);
    f.path_length = 0;
    f.remaining_bytes = 0.0;
    f.rate_bytes_per_s = 0.0;
    f.anchor_ns = now_ns;
    f.state = FlowState::kNotifying;
    --active_count_;
    sim_.schedule_at(Time::from_ns(now_ns + f.latency_ns), this, make_tag(kNotify, id));
  }
}

void FlowNetwork::schedule_wake() {
  if (finish_heap_.empty()) return;
  const std::int64_t t = flows_[finish_heap_.front()].finish_ns;
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
  if (dirty_.empty()) return;
  view_valid_ = false;
  ++epoch_;
  comp_resources_.clear();
  comp_flows_.clear();
  for (const ResourceId r : dirty_) resources_[r].dirty = false;
  if (full_recompute_) {
    for (ResourceId r = 0; r < resources_.size(); ++r) seed_resource(r);
  } else {
    for (const ResourceId r : dirty_) seed_resource(r);
  }
  dirty_.clear();
  collect_component(now_ns, /*view=*/false);
  if (comp_flows_.empty()) return;

  ++counters_.solves;
  counters_.flows_solved += comp_flows_.size();
  solve_max_min();

  for (const FlowId id : comp_flows_) {
    Flow& f = flows_[id];
    if (f.new_rate_bytes_per_s == f.rate_bytes_per_s) continue;  // same bits: keep anchor and date
    ++counters_.rate_changes;
    advance(f, now_ns);
    f.rate_bytes_per_s = f.new_rate_bytes_per_s;
    f.finish_ns = drain_date(f, now_ns);
    heap_insert_or_update(id);
  }
}

/// Adds r (if it carries flows and is not in yet) to the component being collected.
void FlowNetwork::seed_resource(ResourceId r) {
  Resource& res = resources_[r];
  if (res.users.empty() || res.mark == epoch_) return;
  res.mark = epoch_;
  res.slot = static_cast<std::uint32_t>(comp_resources_.size());
  comp_resources_.push_back(r);
}

/// Breadth-first closure of comp_resources_ over "a flow crosses a resource", marking with
/// epoch_ and counting each resource's crossings (slot_unfixed_). Flows due at now_ns (drain
/// date <= now_ns, only possible when a query builds its view before the wake has run) are
/// left out, as update() would have removed them: they are flagged fixed so the solver skips them.
void FlowNetwork::collect_component(std::int64_t now_ns, bool view) {
  slot_unfixed_.clear();
  for (std::size_t i = 0; i < comp_resources_.size(); ++i) {
    const Resource& res = resources_[comp_resources_[i]];
    std::uint32_t crossings = 0;
    for (const User& u : res.users) {
      if (view && flows_[u.flow].finish_ns <= now_ns) {
        flow_fixed_[u.flow] = 1;
        continue;
      }
      ++crossings;
      if (flow_mark_[u.flow] == epoch_) continue;
      flow_mark_[u.flow] = epoch_;
      comp_flows_.push_back(u.flow);
      const Flow& f = flows_[u.flow];
      for (std::uint32_t k = 0; k < f.path_length; ++k) {
        Element& e = elements_[f.first_element + k];
        Resource& res2 = resources_[e.resource];
        if (res2.mark != epoch_) {
          res2.mark = epoch_;
          res2.slot = static_cast<std::uint32_t>(comp_resources_.size());
          comp_resources_.push_back(e.resource);
        }
        e.slot = res2.slot;
      }
    }
    slot_unfixed_.push_back(crossings);
  }
}

/// Progressive filling over comp_resources_ / comp_flows_; writes Flow::new_rate_bytes_per_s.
void FlowNetwork::solve_max_min() {
  const std::size_t n_slots = comp_resources_.size();
  slot_remaining_.resize(n_slots);
  slot_share_.resize(n_slots);
  slot_fixed_now_.assign(n_slots, 0);
  slot_live_pos_.resize(n_slots);
  live_share_.resize(n_slots);
  live_slot_.resize(n_slots);
  for (std::uint32_t s = 0; s < n_slots; ++s) {
    const Resource& res = resources_[comp_resources_[s]];
    slot_remaining_[s] = res.capacity_bytes_per_s;
    slot_share_[s] = slot_unfixed_[s] > 0 ? slot_remaining_[s] / slot_unfixed_[s] : kInf;
    live_share_[s] = slot_share_[s];
    live_slot_[s] = s;
    slot_live_pos_[s] = s;
  }
  std::size_t dead = 0;  // live_share_ entries at +inf
  capped_.clear();
  for (const FlowId id : comp_flows_) {
    flow_fixed_[id] = 0;
    if (flows_[id].rate_cap_bytes_per_s < kInf) capped_.push_back(id);
  }
  std::sort(capped_.begin(), capped_.end(),
            [this](FlowId a, FlowId b) { return flows_[a].rate_cap_bytes_per_s < flows_[b].rate_cap_bytes_per_s; });
  std::size_t next_cap = 0;
  unfixed_ = comp_flows_.size();

  while (unfixed_ > 0) {
    ++counters_.rounds;
    // 1. The lowest fair share over the resources that still have unfixed flows: a min over
    //    contiguous doubles (vectorised), then the slots at exactly that level.
    double level = min_share(live_share_);
    saturated_.resize(live_share_.size());  // branch-free compaction of the slots at `level`
    std::size_t n_saturated = 0;
    for (std::size_t j = 0; j < live_share_.size(); ++j) {
      saturated_[n_saturated] = live_slot_[j];
      n_saturated += static_cast<std::size_t>(live_share_[j] == level);
    }
    saturated_.resize(level < kInf ? n_saturated : 0);
    // 2. Rate caps at or below that level bind now.
    while (next_cap < capped_.size() && flow_fixed_[capped_[next_cap]]) ++next_cap;
    if (next_cap < capped_.size() && flows_[capped_[next_cap]].rate_cap_bytes_per_s <= level) {
      const double cap = flows_[capped_[next_cap]].rate_cap_bytes_per_s;
      if (cap < level) saturated_.clear();
      level = cap;
      for (; next_cap < capped_.size() && flows_[capped_[next_cap]].rate_cap_bytes_per_s <= level; ++next_cap) {
        if (!flow_fixed_[capped_[next_cap]]) fix_flow(capped_[next_cap], level);
      }
    }
    if (level == kInf) throw std::logic_error("FlowNetwork: unfixed flows without a constraint");
    // 3. Saturated resources: all their unfixed flows get exactly `level`.
    for (const std::uint32_t s : saturated_) {
      for (const User& u : resources_[comp_resources_[s]].users) {
        if (!flow_fixed_[u.flow]) fix_flow(u.flow, level);
      }
    }
    // 4. One update per resource touched: remaining -= k * level.
    for (const std::uint32_t s : touched_) {
      const std::uint32_t k = slot_fixed_now_[s];
      slot_remaining_[s] = std::max(0.0, slot_remaining_[s] - static_cast<double>(k) * level);
      slot_unfixed_[s] -= k;
      slot_fixed_now_[s] = 0;
      if (slot_unfixed_[s] > 0) {
        slot_share_[s] = slot_remaining_[s] / slot_unfixed_[s];
        live_share_[slot_live_pos_[s]] = slot_share_[s];
      } else if (live_share_[slot_live_pos_[s]] != kInf) {
        live_share_[slot_live_pos_[s]] = kInf;  // done
        ++dead;
      }
    }
    touched_.clear();
    // Compact the live list once half of it is done (order of live entries is irrelevant).
    if (2 * dead > live_share_.size()) {
      std::size_t out = 0;
      for (std::size_t j = 0; j < live_share_.size(); ++j) {
        if (live_share_[j] == kInf) continue;
        live_share_[out] = live_share_[j];
        live_slot_[out] = live_slot_[j];
        slot_live_pos_[live_slot_[j]] = static_cast<std::uint32_t>(out);
        ++out;
      }
      live_share_.resize(out);
      live_slot_.resize(out);
      dead = 0;
    }
  }
}

void FlowNetwork::fix_flow(FlowId id, double rate_bytes_per_s) {
  flow_fixed_[id] = 1;
  Flow& f = flows_[id];
  f.new_rate_bytes_per_s = rate_bytes_per_s;
  --unfixed_;
  for (std::uint32_t k = 0; k < f.path_length; ++k) {
    const std::uint32_t s = elements_[f.first_element + k].slot;
    if (slot_fixed_now_[s]++ == 0) touched_.push_back(s);
  }
}

/// Moves the flow's anchor to now: remaining -= rate * dt, charged to every resource crossed.
void FlowNetwork::advance(Flow& f, std::int64_t now_ns) {
  const std::int64_t dt_ns = now_ns - f.anchor_ns;
  if (dt_ns > 0 && f.rate_bytes_per_s > 0.0) {
    const double sent = std::min(f.remaining_bytes, f.rate_bytes_per_s * static_cast<double>(dt_ns) * 1e-9);
    f.remaining_bytes -= sent;
    for (std::uint32_t k = 0; k < f.path_length; ++k) {
      resources_[elements_[f.first_element + k].resource].bytes_carried += sent;
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

bool FlowNetwork::heap_less(FlowId a, FlowId b) const {
  const Flow& fa = flows_[a];
  const Flow& fb = flows_[b];
  return fa.finish_ns < fb.finish_ns || (fa.finish_ns == fb.finish_ns && fa.seq < fb.seq);
}

void FlowNetwork::heap_place(std::uint32_t pos, FlowId f) {
  finish_heap_[pos] = f;
  flows_[f].heap_pos = pos;
}

void FlowNetwork::heap_sift_up(std::uint32_t pos) {
  const FlowId f = finish_heap_[pos];
  while (pos > 0) {
    const std::uint32_t parent = (pos - 1) / 2;
    if (!heap_less(f, finish_heap_[parent])) break;
    heap_place(pos, finish_heap_[parent]);
    pos = parent;
  }
  heap_place(pos, f);
}

void FlowNetwork::heap_sift_down(std::uint32_t pos) {
  const FlowId f = finish_heap_[pos];
  const auto n = static_cast<std::uint32_t>(finish_heap_.size());
  for (;;) {
    std::uint32_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_less(finish_heap_[child + 1], finish_heap_[child])) ++child;
    if (!heap_less(finish_heap_[child], f)) break;
    heap_place(pos, finish_heap_[child]);
    pos = child;
  }
  heap_place(pos, f);
}

void FlowNetwork::heap_insert_or_update(FlowId f) {
  std::uint32_t pos = flows_[f].heap_pos;
  if (pos == kNone) {
    pos = static_cast<std::uint32_t>(finish_heap_.size());
    finish_heap_.push_back(f);
    flows_[f].heap_pos = pos;
    heap_sift_up(pos);
    return;
  }
  heap_sift_up(pos);
  heap_sift_down(flows_[f].heap_pos);
}

FlowId FlowNetwork::heap_pop() {
  const FlowId top = finish_heap_.front();
  flows_[top].heap_pos = kNone;
  const FlowId last = finish_heap_.back();
  finish_heap_.pop_back();
  if (!finish_heap_.empty()) {
    finish_heap_[0] = last;
    flows_[last].heap_pos = 0;
    heap_sift_down(0);
  }
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
  if (finish_heap_.empty() || flows_[finish_heap_.front()].finish_ns > now_ns) return;
  // depth-first over the heap nodes that are due (children of a node that is not due are not)
  std::vector<std::uint32_t> stack{0};
  while (!stack.empty()) {
    const std::uint32_t pos = stack.back();
    stack.pop_back();
    const FlowId id = finish_heap_[pos];
    if (flows_[id].finish_ns > now_ns) continue;
    fn(id);
    for (std::uint32_t c = 2 * pos + 1; c <= 2 * pos + 2 && c < finish_heap_.size(); ++c) stack.push_back(c);
  }
}

void FlowNetwork::build_view() {
  const std::int64_t now = sim_.now().ns();
  if (view_valid_ && view_ns_ == now) return;
  view_valid_ = true;
  view_ns_ = now;
  view_epoch_ = 0;
  const bool any_due = !finish_heap_.empty() && flows_[finish_heap_.front()].finish_ns <= now;
  if (dirty_.empty() && !any_due) return;  // committed rates are current
  ++epoch_;
  view_epoch_ = epoch_;
  comp_resources_.clear();
  comp_flows_.clear();
  if (full_recompute_) {
    for (ResourceId r = 0; r < resources_.size(); ++r) seed_resource(r);
  } else {
    // what update() would re-solve: the dirty resources and those of the flows due now
    for (const ResourceId r : dirty_) seed_resource(r);
    for_each_due(now, [this](FlowId id) {
      const Flow& f = flows_[id];
      for (std::uint32_t k = 0; k < f.path_length; ++k) seed_resource(elements_[f.first_element + k].resource);
    });
  }
  collect_component(now, /*view=*/true);
  if (!comp_flows_.empty()) solve_max_min();
}

double FlowNetwork::view_rate(FlowId id, std::int64_t now_ns) const {
  const Flow& f = flows_[id];
  if (f.state != FlowState::kActive || f.finish_ns <= now_ns) return 0.0;
  if (view_epoch_ != 0 && flow_mark_[id] == view_epoch_) return f.new_rate_bytes_per_s;
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
  return names_[r];
}

double FlowNetwork::capacity(ResourceId r) const { return resource_checked(r, "capacity").capacity_bytes_per_s; }

Time FlowNetwork::latency(ResourceId r) const { return Time::from_ns(resource_checked(r, "latency").latency_ns); }

double FlowNetwork::load(ResourceId r) const {
  const Resource& res = resource_checked(r, "load");
  const_cast<FlowNetwork*>(this)->build_view();
  const std::int64_t now = sim_.now().ns();
  double sum = 0.0;
  for (const User& u : res.users) sum += view_rate(u.flow, now);
  return sum;
}

ResourceStats FlowNetwork::stats(ResourceId r) const {
  const Resource& res = resource_checked(r, "stats");
  const std::int64_t now = sim_.now().ns();
  ResourceStats s;
  s.bytes_carried = res.bytes_carried;
  s.flows = res.flows;
  std::int64_t busy = res.busy_total_ns;
  if (!res.users.empty()) busy += now - res.busy_since_ns;
  s.busy_ns = static_cast<double>(busy);
  // bytes sent by active flows since their anchor, not charged yet (rates up to now are the
  // committed ones, so no solve is needed); a flow due now has sent everything
  for (const User& u : res.users) {
    const Flow& f = flows_[u.flow];
    s.bytes_carried +=
        f.finish_ns <= now
            ? f.remaining_bytes
            : std::min(f.remaining_bytes, f.rate_bytes_per_s * static_cast<double>(now - f.anchor_ns) * 1e-9);
  }
  return s;
}

}  // namespace traincast::sim
