// MaxMinSolver: progressive filling over the components of the resource/flow graph that a change
// touched (or over all of them), and max_min_rates, the one-shot form of it.
//
// Layout (all dense integer ids, nothing allocated per flow once the pools have grown):
//   resources_[r].users   active crossings of r: (flow, element) pairs, swap-removed; the first
//                         three in the resource's own line (UserList)
//   elements_[...]        every flow's route as a contiguous range of (resource, user_pos);
//                         ranges are recycled through free lists keyed by route length
//
// Determinism of the solver (why incremental == full recompute, bit for bit): each round of
// progressive filling takes the smallest fair share (or rate cap) over the component, fixes
// every flow of every resource at exactly that level at once, and updates each resource with
// one operation, remaining -= w * level (w = the sum of the weights of the crossings fixed in
// the round, an exact integer number of units: kUnitWeight per crossing of a single-path flow,
// so w is the crossings' count k, as before weights existed). No quantity depends
// on the order in which resources or flows are visited, and a component's rounds are not
// affected by the rounds of another component solved at the same time: so each connected
// component is filled on its own (solve_components), its rounds scanning only its resources.

#include "sim/max_min_solver.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace traincast::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// 1 / MaxMinSolver::kUnitWeight, exactly (a power of two).
constexpr double kRatePerUnit = 1.0 / static_cast<double>(MaxMinSolver::kUnitWeight);

/// A sum of weights [units] as a multiple of the rate: exact below 2^53 units (and for any
/// number of crossings of weight 1), and a function of the integer alone, so of no summing
/// order. For n crossings of weight 1 it is n, bit for bit.
double weight_sum(std::uint64_t units) {
  return static_cast<double>(static_cast<std::int64_t>(units)) *
         kRatePerUnit;  // < 2^63; signed converts in one instruction
}

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

}  // namespace

std::vector<double> max_min_rates(std::span<const double> capacity_bytes_per_s,
                                  std::span<const std::vector<ResourceId>> routes,
                                  std::span<const double> rate_cap_bytes_per_s,
                                  std::span<const std::vector<double>> weights) {
  if (!rate_cap_bytes_per_s.empty() && rate_cap_bytes_per_s.size() != routes.size()) {
    throw std::invalid_argument("max_min_rates: rate_cap_bytes_per_s has " +
                                std::to_string(rate_cap_bytes_per_s.size()) + " entries for " +
                                std::to_string(routes.size()) + " flows (give one per flow, or none)");
  }
  if (!weights.empty() && weights.size() != routes.size()) {
    throw std::invalid_argument("max_min_rates: weights has " + std::to_string(weights.size()) + " entries for " +
                                std::to_string(routes.size()) + " flows (give one per flow, or none)");
  }
  MaxMinSolver solver;
  for (const double c : capacity_bytes_per_s) solver.add_resource(c);
  for (std::size_t f = 0; f < routes.size(); ++f) {
    const double cap = rate_cap_bytes_per_s.empty() ? kInf : rate_cap_bytes_per_s[f];
    if (routes[f].empty() && !std::isfinite(cap)) {
      throw std::invalid_argument("max_min_rates: flow " + std::to_string(f) +
                                  " has an empty route and needs a finite rate cap");
    }
    if (weights.empty() || weights[f].empty()) {
      solver.add_flow(static_cast<FlowId>(f), routes[f], cap);
    } else {
      solver.add_flow(static_cast<FlowId>(f), routes[f], weights[f], cap);
    }
  }
  solver.solve(/*full=*/true);
  std::vector<double> rates(routes.size());
  for (std::size_t f = 0; f < routes.size(); ++f) rates[f] = solver.rate(static_cast<FlowId>(f));
  return rates;
}

// ---------------------------------------------------------------------------------------------
// Building: resources, flows, the element pool
// ---------------------------------------------------------------------------------------------

ResourceId MaxMinSolver::add_resource(double capacity_bytes_per_s) {
  if (!(capacity_bytes_per_s > 0.0) || !std::isfinite(capacity_bytes_per_s)) {
    throw std::invalid_argument("MaxMinSolver::add_resource: capacity_bytes_per_s must be finite and > 0");
  }
  if (resources_.size() >= kNone) throw std::length_error("MaxMinSolver::add_resource: too many resources");
  Resource res;
  res.capacity_bytes_per_s = capacity_bytes_per_s;
  resources_.push_back(std::move(res));
  return static_cast<ResourceId>(resources_.size() - 1);
}

void MaxMinSolver::check_flow(std::span<const ResourceId> route, double rate_cap_bytes_per_s) const {
  for (std::size_t i = 0; i < route.size(); ++i) {
    if (route[i] >= resources_.size()) {
      throw std::invalid_argument("MaxMinSolver::add_flow: route[" + std::to_string(i) +
                                  "] = " + std::to_string(route[i]) + " is not a resource id (solver has " +
                                  std::to_string(resources_.size()) + ")");
    }
  }
  if (!(rate_cap_bytes_per_s > 0.0)) {
    throw std::invalid_argument("MaxMinSolver::add_flow: rate_cap_bytes_per_s must be > 0 (infinity = uncapped)");
  }
  if (route.size() >= kNone) throw std::invalid_argument("MaxMinSolver::add_flow: route too long");
}

void MaxMinSolver::add_flow(FlowId id, std::span<const ResourceId> route, double rate_cap_bytes_per_s) {
  check_flow(route, rate_cap_bytes_per_s);
  add_checked_flow(id, route, rate_cap_bytes_per_s);
}

void MaxMinSolver::add_flow(FlowId id, std::span<const ResourceId> route, std::span<const double> fractions,
                            double rate_cap_bytes_per_s) {
  check_flow(route, rate_cap_bytes_per_s);
  if (fractions.size() != route.size()) {
    throw std::invalid_argument("MaxMinSolver::add_flow: " + std::to_string(fractions.size()) +
                                " weights for a route of " + std::to_string(route.size()) +
                                " resources (expected one per crossing)");
  }
  std::vector<std::uint64_t> units(fractions.size());
  for (std::size_t i = 0; i < fractions.size(); ++i) units[i] = weight_units(fractions[i]);
  add_checked_flow(id, route, units, rate_cap_bytes_per_s);
}

std::uint64_t MaxMinSolver::weight_units(double fraction) {
  const double units = std::round(fraction * static_cast<double>(kUnitWeight));
  if (!(units >= 1.0) || !(units <= static_cast<double>(kUnitWeight))) {
    throw std::invalid_argument("MaxMinSolver::weight_units: weight " + std::to_string(fraction) +
                                " is out of range (expected 2^-33 <= weight <= 1: the fraction of the flow's rate)");
  }
  return static_cast<std::uint64_t>(units);
}

void MaxMinSolver::add_checked_flow(FlowId id, std::span<const ResourceId> route, double rate_cap_bytes_per_s) {
  add_checked_flow(id, route, {}, rate_cap_bytes_per_s);
}

void MaxMinSolver::add_checked_flow(FlowId id, std::span<const ResourceId> route,
                                    std::span<const std::uint64_t> weights, double rate_cap_bytes_per_s) {
  if (id == kNone) throw std::length_error("MaxMinSolver::add_flow: flow id out of range");
  if (id >= variables_.size()) {
    variables_.resize(std::size_t{id} + 1);
    flow_mark_.resize(std::size_t{id} + 1, 0);
    flow_fixed_.resize(std::size_t{id} + 1, 0);
    flow_left_out_.resize(std::size_t{id} + 1, 0);
  }
  if (variables_[id].present) {
    throw std::invalid_argument("MaxMinSolver::add_flow: flow " + std::to_string(id) + " is already in the solver");
  }
  const auto length = static_cast<std::uint32_t>(route.size());
  const std::uint32_t first = allocate_elements(length);
  Variable& v = variables_[id];
  v.rate_cap_bytes_per_s = rate_cap_bytes_per_s;
  v.rate_bytes_per_s = length == 0 ? rate_cap_bytes_per_s : 0.0;  // alone: its cap is its rate
  v.first_element = first;
  v.path_length = length;
  v.present = true;
  v.weighted = !weights.empty();
  if (v.weighted) {  // single-path routes store no weight (kUnitWeight implied)
    if (weights_.size() < elements_.size()) weights_.resize(elements_.size());
    std::copy(weights.begin(), weights.end(), weights_.begin() + first);
  }
  for (std::uint32_t i = 0; i < length; ++i) {
    const ResourceId r = route[i];
    Resource& res = resources_[r];
    elements_[first + i] = Element{r, res.users.size(), 0};
    res.users.push_back(User{id, first + i});
    mark_dirty(r);
  }
}

std::span<const ResourceId> MaxMinSolver::remove_flow(FlowId id, bool skip_slack) {
  if (id >= variables_.size() || !variables_[id].present) {
    throw std::invalid_argument("MaxMinSolver::remove_flow: flow " + std::to_string(id) + " is not in the solver");
  }
  Variable& v = variables_[id];
  idle_.clear();
  bool slack = skip_slack;
  for (std::uint32_t i = 0; slack && i < v.path_length; ++i) {
    slack = !resources_[elements_[v.first_element + i].resource].bottleneck;
  }
  if (slack) ++slack_removals_;
  for (std::uint32_t i = 0; i < v.path_length; ++i) {
    const Element e = elements_[v.first_element + i];
    Resource& res = resources_[e.resource];
    // swap-remove the crossing from the resource's list
    const User moved = res.users.back();
    res.users[e.user_pos] = moved;
    elements_[moved.element].user_pos = e.user_pos;
    res.users.pop_back();
    if (res.users.empty()) idle_.push_back(e.resource);
    if (!slack) mark_dirty(e.resource);
  }
  release_elements(v.first_element, v.path_length);
  v.path_length = 0;
  v.rate_bytes_per_s = 0.0;
  v.present = false;
  v.weighted = false;
  return idle_;
}

void MaxMinSolver::mark_dirty(ResourceId r) {
  Resource& res = resources_[r];
  if (res.dirty) return;
  res.dirty = true;
  dirty_.push_back(r);
}

std::uint32_t MaxMinSolver::allocate_elements(std::uint32_t n) {
  if (n < free_elements_.size() && !free_elements_[n].empty()) {
    const std::uint32_t first = free_elements_[n].back();
    free_elements_[n].pop_back();
    return first;
  }
  if (elements_.size() + n >= kNone) throw std::length_error("MaxMinSolver: element pool exhausted");
  const auto first = static_cast<std::uint32_t>(elements_.size());
  elements_.resize(elements_.size() + n);
  return first;
}

void MaxMinSolver::release_elements(std::uint32_t first, std::uint32_t n) {
  if (n == 0) return;
  if (n >= free_elements_.size()) free_elements_.resize(n + 1);
  free_elements_[n].push_back(first);
}

// ---------------------------------------------------------------------------------------------
// Selective update: component discovery, then progressive filling
// ---------------------------------------------------------------------------------------------

std::span<const FlowId> MaxMinSolver::solve(bool full) {
  if (dirty_.empty()) return {};
  ++epoch_;
  comp_resources_.clear();
  comp_flows_.clear();
  for (const ResourceId r : dirty_) resources_[r].dirty = false;
  seed_all_or_dirty(full);
  dirty_.clear();
  collect_component(/*preview=*/false);
  if (comp_flows_.empty()) return {};
  committing_ = true;
  solve_components();
  committing_ = false;
  return comp_flows_;
}

void MaxMinSolver::preview(bool full, std::span<const FlowId> left_out) {
  ++epoch_;
  comp_resources_.clear();
  comp_flows_.clear();
  seed_all_or_dirty(full);
  // what solve() would re-solve after the removals: also the resources of the flows left out
  if (!full) {
    for (const FlowId id : left_out) {
      for (const Element& e : route(id)) seed_resource(e.resource);
    }
  }
  for (const FlowId id : left_out) flow_left_out_[id] = 1;
  collect_component(/*preview=*/true);
  for (const FlowId id : left_out) flow_left_out_[id] = 0;
  if (!comp_flows_.empty()) solve_components();
}

void MaxMinSolver::seed_all_or_dirty(bool full) {
  if (full) {
    for (ResourceId r = 0; r < resources_.size(); ++r) seed_resource(r);
  } else {
    for (const ResourceId r : dirty_) seed_resource(r);
  }
}

/// Adds r (if it carries flows and is not in yet) to the component being collected.
void MaxMinSolver::seed_resource(ResourceId r) {
  Resource& res = resources_[r];
  if (res.users.empty() || res.mark == epoch_) return;
  res.mark = epoch_;
  res.slot = static_cast<std::uint32_t>(comp_resources_.size());
  comp_resources_.push_back(r);
}

/// Breadth-first closure of comp_resources_ over "a flow crosses a resource", marking with
/// epoch_ and summing each resource's crossings' weights (slot_unfixed_: every crossing of a
/// resource it holds belongs to a flow the closure reaches once). In a preview, the flows left
/// out are skipped, as if removed: they are flagged fixed so the solver skips them.
/// Components on the way: the seeds (slots 0 .. n_seeds - 1) each start a search tree; every
/// slot and flow records the tree that reached it (slot_tree_, flow_tree_), and a flow that
/// crosses a slot of another tree joins the two (union-find over trees, tree_parent_). Labels
/// are kept at the current root, so this costs one compare per crossing already visited, and
/// comp_flows_ keeps the search's order.
void MaxMinSolver::collect_component(bool preview) {
  flow_tree_.clear();
  const auto n_seeds = static_cast<std::uint32_t>(comp_resources_.size());
  // A resource's sum of weights = its crossings x kUnitWeight (counted in a register while its
  // users are scanned, as the single-path count always was) less, for each crossing of a
  // multi-path flow, kUnitWeight - weight: deducted after the scan, from the weighted flows met.
  slot_unfixed_.clear();
  weighted_flows_.clear();
  slot_tree_.resize(n_seeds);
  tree_parent_.resize(n_seeds);
  for (std::uint32_t t = 0; t < n_seeds; ++t) slot_tree_[t] = tree_parent_[t] = t;
  for (std::size_t i = 0; i < comp_resources_.size(); ++i) {
    const Resource& res = resources_[comp_resources_[i]];
    std::uint32_t tree = find_tree(slot_tree_[i]);  // a root: what this search labels with
    std::uint64_t crossings = 0;
    for (const User& u : res.users) {
      if (preview && flow_left_out_[u.flow]) {
        flow_fixed_[u.flow] = 1;
        continue;
      }
      ++crossings;
      if (flow_mark_[u.flow] == epoch_) continue;
      flow_mark_[u.flow] = epoch_;
      comp_flows_.push_back(u.flow);
      flow_tree_.push_back(tree);
      const Variable& v = variables_[u.flow];
      for (std::uint32_t k = 0; k < v.path_length; ++k) {
        Element& e = elements_[v.first_element + k];
        Resource& res2 = resources_[e.resource];
        if (res2.mark != epoch_) {
          res2.mark = epoch_;
          res2.slot = static_cast<std::uint32_t>(comp_resources_.size());
          comp_resources_.push_back(e.resource);
          slot_tree_.push_back(tree);
        } else if (slot_tree_[res2.slot] != tree) {  // rare: the label is kept at the root
          const std::uint32_t other = find_tree(slot_tree_[res2.slot]);
          if (other != tree) {
            tree_parent_[std::max(tree, other)] = std::min(tree, other);  // the root is the smallest tree
            tree = std::min(tree, other);
          }
          slot_tree_[res2.slot] = tree;
        }
        e.slot = res2.slot;
      }
      if (v.weighted) weighted_flows_.push_back(u.flow);
    }
    slot_unfixed_.push_back(crossings * kUnitWeight);  // slot i: comp_resources_ is scanned in slot order
  }
  if (!weighted_flows_.empty()) deduct_weights();
}

/// collect_component's deductions: each crossing of a flow reached was counted once, at its
/// resource's scan, as kUnitWeight (all its resources have slots now).
void MaxMinSolver::deduct_weights() {
  for (const FlowId f : weighted_flows_) {
    const Variable& v = variables_[f];
    for (std::uint32_t k = 0; k < v.path_length; ++k) {
      slot_unfixed_[elements_[v.first_element + k].slot] -= kUnitWeight - weights_[v.first_element + k];
    }
  }
}

std::uint32_t MaxMinSolver::find_tree(std::uint32_t t) {
  while (tree_parent_[t] != t) t = tree_parent_[t] = tree_parent_[tree_parent_[t]];  // path halving
  return t;
}

/// Fills each connected component of comp_resources_ / comp_flows_ (several when several
/// regions were dirty, or all of them in a full solve) on its own. comp_flows_ keeps its order:
/// the caller advances the flows in it, charging bytes to resources in that order.
void MaxMinSolver::solve_components() {
  const auto n_slots = static_cast<std::uint32_t>(comp_resources_.size());
  const auto n_trees = static_cast<std::uint32_t>(tree_parent_.size());
  slot_share_.resize(n_slots);
  std::uint32_t roots = 0;
  for (std::uint32_t t = 0; t < n_trees; ++t) roots += find_tree(t) == t ? 1 : 0;
  // As many components as flows: each holds one flow (in solve(), every component holds one
  // at least: its seed carries flows, all of them reached), and its resources are the ones the
  // flow crosses (a seed carries it; every other slot was reached through it). Then no grouping:
  // each flow is filled over its route's slots (a repeated resource repeats its slot, which
  // changes nothing in solve_single_flow). Most solves of the unfolded runs (24 components each
  // on average in the SC21 1T run).
  if (committing_ && roots == comp_flows_.size()) {
    for (const FlowId id : comp_flows_) {
      const Variable& v = variables_[id];
      if (comp_slots_.size() < v.path_length) comp_slots_.resize(v.path_length);
      for (std::uint32_t k = 0; k < v.path_length; ++k) comp_slots_[k] = elements_[v.first_element + k].slot;
      solve_single_flow(std::span<const std::uint32_t>(comp_slots_).first(v.path_length), id);
    }
    return;
  }
  slot_remaining_.resize(n_slots);
  slot_fixed_now_.assign(n_slots, 0);
  slot_live_pos_.resize(n_slots);
  comp_slots_.resize(n_slots);
  if (roots == 1) {  // one component: no grouping
    for (std::uint32_t s = 0; s < n_slots; ++s) comp_slots_[s] = s;
    solve_max_min(comp_slots_, comp_flows_);
    return;
  }
  // Group slots and flows by root tree (counting sort): counts at [root + 2], starts at
  // [root + 1] while filling, so that afterwards component `root` spans [start[root], start[root + 1]).
  comp_slot_start_.assign(std::size_t{n_trees} + 2, 0);
  comp_flow_start_.assign(std::size_t{n_trees} + 2, 0);
  for (std::uint32_t t = 0; t < n_trees; ++t) tree_parent_[t] = find_tree(t);  // now every tree -> its root
  for (const std::uint32_t t : slot_tree_) ++comp_slot_start_[tree_parent_[t] + 2];
  for (const std::uint32_t t : flow_tree_) ++comp_flow_start_[tree_parent_[t] + 2];
  for (std::size_t i = 2; i < comp_slot_start_.size(); ++i) {
    comp_slot_start_[i] += comp_slot_start_[i - 1];
    comp_flow_start_[i] += comp_flow_start_[i - 1];
  }
  comp_flow_list_.resize(comp_flows_.size());
  for (std::uint32_t s = 0; s < n_slots; ++s) comp_slots_[comp_slot_start_[tree_parent_[slot_tree_[s]] + 1]++] = s;
  for (std::size_t j = 0; j < comp_flows_.size(); ++j)
    comp_flow_list_[comp_flow_start_[tree_parent_[flow_tree_[j]] + 1]++] = comp_flows_[j];
  for (std::uint32_t root = 0; root < n_trees; ++root) {
    if (tree_parent_[root] != root) continue;
    const std::uint32_t f0 = comp_flow_start_[root], f1 = comp_flow_start_[root + 1];
    if (f0 == f1) continue;  // a preview's resource whose flows are all left out
    const std::uint32_t s0 = comp_slot_start_[root], s1 = comp_slot_start_[root + 1];
    solve_max_min(std::span<const std::uint32_t>(comp_slots_).subspan(s0, s1 - s0),
                  std::span<const FlowId>(comp_flow_list_).subspan(f0, f1 - f0));
  }
}

/// Progressive filling over one component; writes Variable::rate_bytes_per_s.
void MaxMinSolver::solve_max_min(std::span<const std::uint32_t> slots, std::span<const FlowId> flows) {
  if (flows.size() == 1) {
    solve_single_flow(slots, flows.front());
    return;
  }
  live_share_.resize(slots.size());
  live_slot_.resize(slots.size());
  for (std::size_t j = 0; j < slots.size(); ++j) {
    const std::uint32_t s = slots[j];
    const Resource& res = resources_[comp_resources_[s]];
    slot_remaining_[s] = res.capacity_bytes_per_s;
    slot_share_[s] = slot_unfixed_[s] > 0 ? slot_remaining_[s] / weight_sum(slot_unfixed_[s]) : kInf;
    live_share_[j] = slot_share_[s];
    live_slot_[j] = s;
    slot_live_pos_[s] = static_cast<std::uint32_t>(j);
    if (committing_) resources_[comp_resources_[s]].bottleneck = false;
  }
  std::size_t dead = 0;  // live_share_ entries at +inf
  capped_.clear();
  for (const FlowId id : flows) {
    flow_fixed_[id] = 0;
    if (variables_[id].rate_cap_bytes_per_s < kInf) capped_.push_back(id);
  }
  std::sort(capped_.begin(), capped_.end(), [this](FlowId a, FlowId b) {
    return variables_[a].rate_cap_bytes_per_s < variables_[b].rate_cap_bytes_per_s;
  });
  std::size_t next_cap = 0;
  unfixed_ = flows.size();

  while (unfixed_ > 0) {
    ++rounds_;
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
    if (next_cap < capped_.size() && variables_[capped_[next_cap]].rate_cap_bytes_per_s <= level) {
      const double cap = variables_[capped_[next_cap]].rate_cap_bytes_per_s;
      if (cap < level) saturated_.clear();
      level = cap;
      for (; next_cap < capped_.size() && variables_[capped_[next_cap]].rate_cap_bytes_per_s <= level; ++next_cap) {
        if (!flow_fixed_[capped_[next_cap]]) fix_flow(capped_[next_cap], level);
      }
    }
    if (level == kInf) throw std::logic_error("MaxMinSolver: unfixed flows without a constraint");
    // 3. Saturated resources: all their unfixed flows get exactly `level`.
    for (const std::uint32_t s : saturated_) {
      if (committing_) resources_[comp_resources_[s]].bottleneck = true;
      for (const User& u : resources_[comp_resources_[s]].users) {
        if (!flow_fixed_[u.flow]) fix_flow(u.flow, level);
      }
    }
    // 4. One update per resource touched: remaining -= w * level (w: the weights fixed now).
    for (const std::uint32_t s : touched_) {
      const std::uint64_t w = slot_fixed_now_[s];
      slot_remaining_[s] = std::max(0.0, slot_remaining_[s] - weight_sum(w) * level);
      slot_unfixed_[s] -= w;
      slot_fixed_now_[s] = 0;
      if (slot_unfixed_[s] > 0) {
        slot_share_[s] = slot_remaining_[s] / weight_sum(slot_unfixed_[s]);
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

/// solve_max_min for a component of one flow (most components: 24.2 M of 24.6 M in the
/// unfolded SC21 1T run): the one round the general loop runs, without its scratch. The level is
/// the smallest share over the flow's resources (remaining = capacity / the weights of its
/// crossings, as the general loop computes it; min is exact in any order), or its cap when that
/// is at or below it; the resources at that level become bottlenecks unless the cap is lower.
/// Rate, bottleneck marks and round count are the general loop's, bit for bit.
void MaxMinSolver::solve_single_flow(std::span<const std::uint32_t> slots, FlowId id) {
  ++rounds_;
  double level = kInf;
  for (const std::uint32_t s : slots) {
    Resource& res = resources_[comp_resources_[s]];
    if (committing_) res.bottleneck = false;
    const double share = slot_unfixed_[s] > 0 ? res.capacity_bytes_per_s / weight_sum(slot_unfixed_[s]) : kInf;
    slot_share_[s] = share;
    level = share < level ? share : level;
  }
  bool saturates = level < kInf;  // the resources at `level` saturate (unless a lower cap binds)
  const double cap = variables_[id].rate_cap_bytes_per_s;
  if (cap <= level) {
    if (cap < level) saturates = false;
    level = cap;
  }
  if (level == kInf) throw std::logic_error("MaxMinSolver: unfixed flows without a constraint");
  if (committing_ && saturates) {
    for (const std::uint32_t s : slots) {
      if (slot_share_[s] == level) resources_[comp_resources_[s]].bottleneck = true;
    }
  }
  flow_fixed_[id] = 1;
  variables_[id].rate_bytes_per_s = level;
  unfixed_ = 0;
}

inline void MaxMinSolver::fix_flow(FlowId id, double rate_bytes_per_s) {  // inline: the hot loop's callee
  flow_fixed_[id] = 1;
  Variable& v = variables_[id];
  v.rate_bytes_per_s = rate_bytes_per_s;
  --unfixed_;
  if (v.weighted) {
    fix_weighted_flow(v);
    return;
  }
  for (std::uint32_t k = 0; k < v.path_length; ++k) {
    const std::uint32_t s = elements_[v.first_element + k].slot;
    if (slot_fixed_now_[s] == 0) touched_.push_back(s);
    slot_fixed_now_[s] += kUnitWeight;
  }
}

void MaxMinSolver::fix_weighted_flow(const Variable& v) {
  for (std::uint32_t k = 0; k < v.path_length; ++k) {
    const std::uint32_t s = elements_[v.first_element + k].slot;
    if (slot_fixed_now_[s] == 0) touched_.push_back(s);
    slot_fixed_now_[s] += weights_[v.first_element + k];
  }
}

}  // namespace traincast::sim
