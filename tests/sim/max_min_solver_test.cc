// Tests for sim::MaxMinSolver and sim::max_min_rates, with no clock: each states its analytic
// expectation; random networks check incremental (component) against full re-solves, the
// capacity invariant on every link and the bottleneck property of max-min fairness.
// Units: capacities and rates in bytes/s. GB/s = 1e9 bytes/s.

#include "sim/max_min_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace traincast::sim {
namespace {

constexpr double kGBps = 1e9;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kRel = 1e-9;

using Routes = std::vector<std::vector<ResourceId>>;

std::string invalid_argument_message(const auto& fn) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

TEST(MaxMinSolverTest, SingleLinkIsSharedEqually) {
  // One 12 GB/s link, three flows: each gets 12 / 3 = 4 GB/s.
  const std::vector<double> caps{12 * kGBps};
  const std::vector<double> rates = max_min_rates(caps, Routes{{0}, {0}, {0}});
  ASSERT_EQ(rates.size(), 3u);
  for (const double r : rates) EXPECT_DOUBLE_EQ(r, 4 * kGBps);
}

TEST(MaxMinSolverTest, TwoLinkLineOneFlowCrossesBoth) {
  // The classic case: L0 = L1 = 1 GB/s in a line; f0 crosses both, f1 only L0, f2 and f3 only L1.
  // L1's share 1/3 is below L0's 1/2: f0 = f2 = f3 = 1/3 GB/s; L0 has 1 - 1/3 = 2/3 left for
  // f1 alone: f1 = 2/3 GB/s (equal sharing would have given f1 only 1/2).
  // With L0 = 1, L1 = 2 GB/s and one flow per link besides f0: L0's share 1/2 is the lowest,
  // f0 = f1 = 1/2 GB/s, and L1 keeps 2 - 1/2 = 3/2 for f2.
  {
    const std::vector<double> rates =
        max_min_rates(std::vector<double>{1 * kGBps, 1 * kGBps}, Routes{{0, 1}, {0}, {1}, {1}});
    EXPECT_DOUBLE_EQ(rates[0], kGBps / 3);
    EXPECT_DOUBLE_EQ(rates[1], 2 * kGBps / 3);
    EXPECT_DOUBLE_EQ(rates[2], kGBps / 3);
    EXPECT_DOUBLE_EQ(rates[3], kGBps / 3);
  }
  {
    const std::vector<double> rates =
        max_min_rates(std::vector<double>{1 * kGBps, 2 * kGBps}, Routes{{0, 1}, {0}, {1}});
    EXPECT_DOUBLE_EQ(rates[0], 0.5 * kGBps);
    EXPECT_DOUBLE_EQ(rates[1], 0.5 * kGBps);
    EXPECT_DOUBLE_EQ(rates[2], 1.5 * kGBps);
  }
}

TEST(MaxMinSolverTest, RateCapsBindBelowTheFairShareAndLeaveTheRestToOthers) {
  // One 10 GB/s link, three flows; f0 capped at 1 GB/s (below the fair share 10/3), f1 at
  // 20 GB/s (above any share it could get). f0 = 1; the other two share the 9 left: 4.5 each.
  const std::vector<double> rates = max_min_rates(std::vector<double>{10 * kGBps}, Routes{{0}, {0}, {0}},
                                                  std::vector<double>{1 * kGBps, 20 * kGBps, kInf});
  EXPECT_DOUBLE_EQ(rates[0], 1 * kGBps);
  EXPECT_DOUBLE_EQ(rates[1], 4.5 * kGBps);
  EXPECT_DOUBLE_EQ(rates[2], 4.5 * kGBps);
  // A flow with an empty route runs at its cap; one on a link no other flow uses gets all of it.
  const std::vector<double> alone =
      max_min_rates(std::vector<double>{10 * kGBps, 3 * kGBps}, Routes{{}, {1}}, std::vector<double>{7 * kGBps, kInf});
  EXPECT_DOUBLE_EQ(alone[0], 7 * kGBps);
  EXPECT_DOUBLE_EQ(alone[1], 3 * kGBps);
}

TEST(MaxMinSolverTest, FlowOnAnUnusedLinkAndAnUnusedLinkChangeNothingElse) {
  // L0 = 4 GB/s carries f0 and f1 (2 each); L1 = 5 GB/s carries only f2, which gets all 5;
  // L2 = 1 GB/s carries nothing and constrains nobody.
  const std::vector<double> rates =
      max_min_rates(std::vector<double>{4 * kGBps, 5 * kGBps, 1 * kGBps}, Routes{{0}, {0}, {1}});
  EXPECT_DOUBLE_EQ(rates[0], 2 * kGBps);
  EXPECT_DOUBLE_EQ(rates[1], 2 * kGBps);
  EXPECT_DOUBLE_EQ(rates[2], 5 * kGBps);
}

TEST(MaxMinSolverTest, RepeatedLinkCarriesTheFlowTwice) {
  // f0 crosses L0 (6 GB/s) twice, f1 once: three crossings at 2 GB/s each, f0 = f1 = 2 GB/s.
  const std::vector<double> rates = max_min_rates(std::vector<double>{6 * kGBps}, Routes{{0, 0}, {0}});
  EXPECT_DOUBLE_EQ(rates[0], 2 * kGBps);
  EXPECT_DOUBLE_EQ(rates[1], 2 * kGBps);
}

TEST(MaxMinSolverTest, MultiPathFlowTakesItsWeightOfEachLink) {
  // A multi-path flow m sends 3/4 of its bytes over L0 and 1/4 over L1, all of them through L2
  // (its NIC: weights L2 1, L0 3/4, L1 1/4); s0 is alone on L0's other crossing, s1 on L1's.
  // L0 = 3, L1 = 4, L2 = 10 GB/s. Fair shares (remaining / sum of unfixed weights):
  //   L0 3 / (3/4 + 1) = 12/7, L1 4 / (1/4 + 1) = 16/5, L2 10 / 1 = 10  -> level 12/7 on L0:
  //   m = s0 = 12/7 GB/s (L0: 3/4 x 12/7 + 12/7 = 3, full).
  //   L1 keeps 4 - 1/4 x 12/7 = 25/7 for s1 alone: s1 = 25/7 GB/s (L1: 3/7 + 25/7 = 4, full);
  //   L2 carries 12/7 of its 10.
  // Split into two single-path flows (3/4 and 1/4 of m's bytes at separate rates) it would not be
  // one rate: the L1 part alone would get L1's 4 / 2 = 2 GB/s.
  MaxMinSolver s;
  s.add_resource(3 * kGBps);
  s.add_resource(4 * kGBps);
  s.add_resource(10 * kGBps);
  s.add_flow(0, std::vector<ResourceId>{2, 0, 1}, std::vector<double>{1.0, 0.75, 0.25}, kInf);
  s.add_flow(1, std::vector<ResourceId>{0}, kInf);
  s.add_flow(2, std::vector<ResourceId>{1}, kInf);
  s.solve(/*full=*/false);
  EXPECT_DOUBLE_EQ(s.rate(0), 12 * kGBps / 7);
  EXPECT_DOUBLE_EQ(s.rate(1), 12 * kGBps / 7);
  EXPECT_DOUBLE_EQ(s.rate(2), 25 * kGBps / 7);
  const std::span<const std::uint64_t> weights = s.weights(0);
  ASSERT_EQ(weights.size(), 3u);
  EXPECT_EQ(weights[0], MaxMinSolver::kUnitWeight);
  EXPECT_EQ(weights[1], MaxMinSolver::kUnitWeight / 4 * 3);
  EXPECT_EQ(weights[2], MaxMinSolver::kUnitWeight / 4);
  EXPECT_TRUE(s.weights(1).empty());  // single-path routes store no weight
  // max_min_rates takes the same weights; weight 1 everywhere is the single-path flow, bit for bit.
  const std::vector<double> rates =
      max_min_rates(std::vector<double>{3 * kGBps, 4 * kGBps, 10 * kGBps}, Routes{{2, 0, 1}, {0}, {1}}, {},
                    std::vector<std::vector<double>>{{1.0, 0.75, 0.25}, {}, {1.0}});
  EXPECT_EQ(rates[0], s.rate(0));
  EXPECT_EQ(rates[2], s.rate(2));
  // A flow's cap binds on its rate (the sum over its paths): m capped at 1 GB/s leaves L0
  // 3 - 3/4 = 9/4 for s0 and L1 4 - 1/4 = 15/4 for s1.
  s.remove_flow(0);
  s.add_flow(0, std::vector<ResourceId>{2, 0, 1}, std::vector<double>{1.0, 0.75, 0.25}, 1 * kGBps);
  s.solve(/*full=*/false);
  EXPECT_DOUBLE_EQ(s.rate(0), 1 * kGBps);
  EXPECT_DOUBLE_EQ(s.rate(1), 2.25 * kGBps);
  EXPECT_DOUBLE_EQ(s.rate(2), 3.75 * kGBps);
  // Weights outside (0, 1] or of the wrong count are refused.
  EXPECT_THROW(s.add_flow(3, std::vector<ResourceId>{0}, std::vector<double>{1.5}, kInf), std::invalid_argument);
  EXPECT_THROW(s.add_flow(3, std::vector<ResourceId>{0}, std::vector<double>{0.0}, kInf), std::invalid_argument);
  EXPECT_EQ(invalid_argument_message([&] {
              s.add_flow(3, std::vector<ResourceId>{0, 1}, std::vector<double>{1.0}, kInf);
            }),
            "MaxMinSolver::add_flow: 1 weights for a route of 2 resources (expected one per crossing)");
}

TEST(MaxMinSolverTest, IncrementalSolveReachesOnlyTheTouchedComponent) {
  // Two components: {L0: f0, f1} and {L1: f2}. Adding f3 on L1 re-solves only f2 and f3
  // (2.5 GB/s each on L1 = 5); f0 and f1 keep 2 GB/s from the first solve.
  MaxMinSolver s;
  const ResourceId l0 = s.add_resource(4 * kGBps);
  const ResourceId l1 = s.add_resource(5 * kGBps);
  const std::vector<ResourceId> on_l0{l0}, on_l1{l1};
  s.add_flow(0, on_l0, kInf);
  s.add_flow(1, on_l0, kInf);
  s.add_flow(2, on_l1, kInf);
  EXPECT_EQ(s.solve(false).size(), 3u);
  EXPECT_FALSE(s.has_dirty());
  EXPECT_TRUE(s.solve(false).empty());  // nothing dirty: nothing to do
  s.add_flow(3, on_l1, kInf);
  const std::span<const FlowId> solved = s.solve(false);
  EXPECT_EQ(std::vector<FlowId>(solved.begin(), solved.end()), (std::vector<FlowId>{2, 3}));
  EXPECT_DOUBLE_EQ(s.rate(0), 2 * kGBps);
  EXPECT_DOUBLE_EQ(s.rate(2), 2.5 * kGBps);
  EXPECT_DOUBLE_EQ(s.rate(3), 2.5 * kGBps);
  // Removing f1 leaves L0 to f0 alone (4 GB/s); a preview leaving f3 out shows f2 alone on L1
  // (5 GB/s) without committing it: the dirty mark of L0 stays for the next solve.
  EXPECT_TRUE(s.remove_flow(1).empty());  // L0 still carries f0
  const std::vector<FlowId> left_out{3};
  s.preview(false, left_out);
  EXPECT_TRUE(s.in_solve(2, s.last_solve()));
  EXPECT_DOUBLE_EQ(s.rate(2), 5 * kGBps);
  EXPECT_DOUBLE_EQ(s.rate(0), 4 * kGBps);
  EXPECT_TRUE(s.has_dirty());
  s.solve(false);
  EXPECT_DOUBLE_EQ(s.rate(0), 4 * kGBps);
  EXPECT_FALSE(s.in_solve(2, s.last_solve()));  // L1 was not touched by the committed changes
  // f0 was the last flow on L0: removing it leaves L0 idle.
  const std::span<const ResourceId> idle = s.remove_flow(0);
  EXPECT_EQ(std::vector<ResourceId>(idle.begin(), idle.end()), std::vector<ResourceId>{l0});
}

TEST(MaxMinSolverTest, CrossingListsKeepVectorOrderInlineAndSpilledAndSurviveCopies) {
  // A resource keeps its first three crossings in its own line and spills to the heap past
  // that: users(r) must list them exactly as a vector with swap-removal would, whichever storage
  // holds them, and copies or moves of the solver (resources_ grows by moving) must keep them.
  MaxMinSolver s;
  const ResourceId l = s.add_resource(12 * kGBps);
  const std::vector<ResourceId> on_l{l};
  std::vector<FlowId> expected;  // the vector model of users(l)
  const auto listed = [&s, l] {
    std::vector<FlowId> flows;
    for (const MaxMinSolver::User& u : s.users(l)) flows.push_back(u.flow);
    return flows;
  };
  const auto add = [&](FlowId f) {
    s.add_flow(f, on_l, kInf);
    expected.push_back(f);
  };
  const auto remove = [&](FlowId f) {
    s.remove_flow(f);
    const auto at = std::find(expected.begin(), expected.end(), f);
    *at = expected.back();
    expected.pop_back();
  };
  for (FlowId f = 0; f < 3; ++f) add(f);  // inline
  EXPECT_EQ(listed(), expected);
  remove(0);
  EXPECT_EQ(listed(), expected);          // {2, 1}
  for (FlowId f = 3; f < 9; ++f) add(f);  // spills (3 -> 6 -> 12 entries)
  EXPECT_EQ(listed(), expected);
  remove(4);
  remove(2);
  EXPECT_EQ(listed(), expected);
  // many resources added after: the vector of resources moves them
  for (int i = 0; i < 100; ++i) s.add_resource(kGBps);
  EXPECT_EQ(listed(), expected);
  s.solve(false);
  const std::size_t n = expected.size();
  for (const FlowId f : expected) EXPECT_DOUBLE_EQ(s.rate(f), 12 * kGBps / static_cast<double>(n));
  MaxMinSolver copy = s;  // deep copy: the copy's lists are its own
  remove(1);
  EXPECT_EQ(listed(), expected);
  ASSERT_EQ(copy.users(l).size(), n);
  copy.add_flow(20, on_l, kInf);
  EXPECT_EQ(copy.users(l).size(), n + 1);
  EXPECT_EQ(s.users(l).size(), n - 1);
  MaxMinSolver moved = std::move(copy);
  EXPECT_EQ(moved.users(l).size(), n + 1);
  EXPECT_EQ(moved.users(l).back().flow, 20u);
  while (!expected.empty()) remove(expected.back());  // back to none, then inline again
  EXPECT_TRUE(s.users(l).empty());
  add(30);
  EXPECT_EQ(listed(), expected);
}

TEST(MaxMinSolverTest, RemovingAFlowWithNoBottleneckOnItsRouteReSolvesNothing) {
  // L0 10 GB/s carries A (cap 1 GB/s) and B (cap 2 GB/s): 3 of 10 GB/s, no bottleneck. L1 4 GB/s
  // carries C and D (uncapped): 2 GB/s each, L1 saturated. Removing A with skip_slack leaves
  // nothing dirty (B keeps 2 GB/s); removing C does not (D rises to 4 GB/s).
  MaxMinSolver s;
  s.add_resource(10 * kGBps);
  s.add_resource(4 * kGBps);
  s.add_flow(0, std::vector<ResourceId>{0}, 1 * kGBps);
  s.add_flow(1, std::vector<ResourceId>{0}, 2 * kGBps);
  s.add_flow(2, std::vector<ResourceId>{1}, kInf);
  s.add_flow(3, std::vector<ResourceId>{1}, kInf);
  s.solve(/*full=*/false);
  EXPECT_EQ(s.rate(1), 2 * kGBps);
  EXPECT_EQ(s.rate(3), 2 * kGBps);
  s.remove_flow(0, /*skip_slack=*/true);
  EXPECT_FALSE(s.has_dirty());
  EXPECT_EQ(s.slack_removals(), 1u);
  EXPECT_EQ(s.rate(1), 2 * kGBps);
  s.remove_flow(2, /*skip_slack=*/true);
  EXPECT_TRUE(s.has_dirty());
  EXPECT_EQ(s.slack_removals(), 1u);
  s.solve(/*full=*/false);
  EXPECT_EQ(s.rate(3), 4 * kGBps);
  // without skip_slack a removal always marks its route dirty (the full-recompute oracle)
  s.remove_flow(1);
  EXPECT_TRUE(s.has_dirty());
}

TEST(MaxMinSolverTest, BadInputsThrow) {
  MaxMinSolver s;
  EXPECT_EQ(invalid_argument_message([&] { s.add_resource(0.0); }),
            "MaxMinSolver::add_resource: capacity_bytes_per_s must be finite and > 0");
  EXPECT_THROW(s.add_resource(kInf), std::invalid_argument);
  s.add_resource(1 * kGBps);
  const std::vector<ResourceId> bad{0, 3};
  EXPECT_EQ(invalid_argument_message([&] { s.add_flow(0, bad, kInf); }),
            "MaxMinSolver::add_flow: route[1] = 3 is not a resource id (solver has 1)");
  const std::vector<ResourceId> good{0};
  EXPECT_THROW(s.add_flow(0, good, 0.0), std::invalid_argument);
  s.add_flow(0, good, kInf);
  EXPECT_EQ(invalid_argument_message([&] { s.add_flow(0, good, kInf); }),
            "MaxMinSolver::add_flow: flow 0 is already in the solver");
  EXPECT_EQ(invalid_argument_message([&] { s.remove_flow(1); }),
            "MaxMinSolver::remove_flow: flow 1 is not in the solver");
  EXPECT_EQ(invalid_argument_message([&] { max_min_rates(std::vector<double>{1.0}, Routes{{}}); }),
            "max_min_rates: flow 0 has an empty route and needs a finite rate cap");
  EXPECT_EQ(invalid_argument_message([&] {
              max_min_rates(std::vector<double>{1.0}, Routes{{0}}, std::vector<double>{1.0, 2.0});
            }),
            "max_min_rates: rate_cap_bytes_per_s has 2 entries for 1 flows (give one per flow, or none)");
}

// ---------------------------------------------------------------------------------------------
// Random networks
// ---------------------------------------------------------------------------------------------

/// A random system: `links` links of 1-100 GB/s; flows on 1-4 links drawn inside groups of
/// `group` links (so there are several components), a third of them capped at 0.5-50 GB/s.
struct RandomSystem {
  std::mt19937_64 rng;
  std::vector<double> capacity;
  Routes routes;              ///< by flow id; empty once removed
  std::vector<double> caps;   ///< by flow id
  std::vector<bool> present;  ///< by flow id
  int group;

  RandomSystem(std::uint64_t seed, int links, int group_size) : rng(seed), group(group_size) {
    std::uniform_real_distribution<double> c(1.0, 100.0);
    for (int i = 0; i < links; ++i) capacity.push_back(c(rng) * kGBps);
  }
  std::vector<ResourceId> random_route() {
    const int groups = static_cast<int>(capacity.size()) / group;
    const int base = std::uniform_int_distribution<int>(0, groups - 1)(rng) * group;
    const int len = std::uniform_int_distribution<int>(1, 4)(rng);
    std::vector<ResourceId> route;
    route.reserve(static_cast<std::size_t>(len));
    for (int k = 0; k < len; ++k) {
      route.push_back(static_cast<ResourceId>(base + std::uniform_int_distribution<int>(0, group - 1)(rng)));
    }
    return route;
  }
  double random_cap() {
    if (std::uniform_int_distribution<int>(0, 2)(rng) != 0) return kInf;
    return std::uniform_real_distribution<double>(0.5, 50.0)(rng) * kGBps;
  }
  /// Three in four flows capped at 0.1-8 GB/s, mostly below a link's fair share (links 1-100
  /// GB/s), so that many departures leave no bottleneck.
  double mostly_low_cap() {
    return std::uniform_int_distribution<int>(0, 3)(rng) == 0
               ? kInf
               : std::uniform_real_distribution<double>(0.1, 8.0)(rng) * kGBps;
  }
  /// One batch of 1..max_changes random changes. Each draws a flow id in [0, n] (n = ids so
  /// far; n is a new id): a present flow departs (with probability 1 / depart_one_in, else the
  /// draw is skipped) and `depart(f)` is called after it is marked absent; an absent or new id
  /// arrives on a random route and `arrive(f)` sets its cap (and adds it to the solvers).
  template <class Depart, class Arrive>
  void churn(int max_changes, int depart_one_in, Depart depart, Arrive arrive) {
    const int changes = std::uniform_int_distribution<int>(1, max_changes)(rng);
    for (int k = 0; k < changes; ++k) {
      const std::size_t n = routes.size();
      const bool departs =
          depart_one_in == 1 || (n > 0 && std::uniform_int_distribution<int>(0, depart_one_in - 1)(rng) == 0);
      const auto f = static_cast<FlowId>(std::uniform_int_distribution<std::size_t>(0, n)(rng));
      if (f < n && present[f] && departs) {
        present[f] = false;
        routes[f].clear();
        depart(f);
      } else if (f == n || !present[f]) {
        if (f == n) {
          routes.emplace_back();
          caps.push_back(kInf);
          present.push_back(false);
        }
        routes[f] = random_route();
        present[f] = true;
        arrive(f);
      }
    }
  }
  /// The caps to solve the same flows from scratch with: an absent flow (empty route) at 1.
  std::vector<double> solve_caps() const {
    std::vector<double> c = caps;
    for (std::size_t f = 0; f < c.size(); ++f) c[f] = present[f] ? c[f] : 1.0;
    return c;
  }
};

using Weights = std::vector<std::vector<double>>;

/// weights[f][i] (1 when weights or weights[f] is empty): the fraction of flow f's rate on its
/// i-th crossing.
double weight_of(const Weights& weights, std::size_t f, std::size_t i) {
  return f < weights.size() && !weights[f].empty() ? weights[f][i] : 1.0;
}

/// Every link's load (sum of weight x rate) is <= its capacity (1e-9 relative), and every flow
/// is at its cap or has a saturated link on which no flow gets more (Bertsekas & Gallager's
/// bottleneck condition, on the flows' rates).
void expect_max_min(const std::vector<double>& capacity, const Routes& routes, const std::vector<double>& caps,
                    const std::vector<double>& rates, const Weights& weights = {}) {
  std::vector<double> load(capacity.size(), 0.0);
  std::vector<double> max_rate(capacity.size(), 0.0);
  for (std::size_t f = 0; f < routes.size(); ++f) {
    for (std::size_t i = 0; i < routes[f].size(); ++i) {
      const ResourceId r = routes[f][i];
      load[r] += weight_of(weights, f, i) * rates[f];
      max_rate[r] = std::max(max_rate[r], rates[f]);
    }
  }
  for (std::size_t r = 0; r < capacity.size(); ++r) EXPECT_LE(load[r], capacity[r] * (1 + kRel)) << "link " << r;
  for (std::size_t f = 0; f < routes.size(); ++f) {
    if (routes[f].empty()) continue;
    const bool at_cap = rates[f] >= caps[f] * (1 - kRel);
    bool bottleneck = false;
    for (const ResourceId r : routes[f]) {
      bottleneck = bottleneck || (load[r] >= capacity[r] * (1 - kRel) && rates[f] >= max_rate[r] * (1 - kRel));
    }
    EXPECT_TRUE(at_cap || bottleneck) << "flow " << f << " at " << rates[f];
  }
}

TEST(MaxMinSolverPropertyTest, IncrementalMatchesFullResolveAndKeepsInvariants) {
  for (const std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    RandomSystem sys(seed, 64, 8);
    MaxMinSolver solver;
    for (const double c : sys.capacity) solver.add_resource(c);
    for (int step = 0; step < 200; ++step) {
      // A batch of changes: a few arrivals (new ids or reused ones) and departures.
      sys.churn(
          6, 3, [&](FlowId f) { solver.remove_flow(f); },
          [&](FlowId f) {
            sys.caps[f] = sys.random_cap();
            solver.add_flow(f, sys.routes[f], sys.caps[f]);
          });
      solver.solve(/*full=*/false);
      // The same flows solved from scratch (flows not present: empty route at cap 1).
      const std::vector<double> caps = sys.solve_caps();
      const std::vector<double> full = max_min_rates(sys.capacity, sys.routes, caps);
      std::vector<double> incremental(full.size(), 1.0);
      for (std::size_t f = 0; f < full.size(); ++f) {
        if (!sys.present[f]) continue;
        incremental[f] = solver.rate(static_cast<FlowId>(f));
        EXPECT_NEAR(incremental[f], full[f], kRel * full[f]) << "seed " << seed << " step " << step << " flow " << f;
      }
      expect_max_min(sys.capacity, sys.routes, caps, incremental);
    }
  }
}

/// Textbook progressive filling over the whole system at once (Bertsekas & Gallager §6.5.2):
/// every round raises all unfixed flows of every component to the lowest fair share (or rate
/// cap) of the whole system. No components, no incremental state: the reference that
/// MaxMinSolver's per-component filling must match. Flows with an empty route get their cap.
std::vector<double> whole_system_reference(const std::vector<double>& capacity, const Routes& routes,
                                           const std::vector<double>& caps, const Weights& weights = {}) {
  std::vector<double> rate(routes.size(), 0.0), remaining = capacity;
  std::vector<bool> fixed(routes.size(), false);
  std::size_t unfixed = 0;
  for (std::size_t f = 0; f < routes.size(); ++f) {
    if (routes[f].empty()) {
      rate[f] = caps[f];
      fixed[f] = true;
    } else {
      ++unfixed;
    }
  }
  while (unfixed > 0) {
    std::vector<double> users(capacity.size(), 0.0);  // sum of the unfixed crossings' weights
    for (std::size_t f = 0; f < routes.size(); ++f)
      if (!fixed[f])
        for (std::size_t i = 0; i < routes[f].size(); ++i) users[routes[f][i]] += weight_of(weights, f, i);
    double level = kInf;
    for (std::size_t r = 0; r < capacity.size(); ++r)
      if (users[r] > 0) level = std::min(level, remaining[r] / users[r]);
    for (std::size_t f = 0; f < routes.size(); ++f)
      if (!fixed[f]) level = std::min(level, caps[f]);
    // fix the flows at their cap or on a resource at the level, then charge their resources
    std::vector<std::size_t> now;
    for (std::size_t f = 0; f < routes.size(); ++f) {
      if (fixed[f]) continue;
      bool at_level = caps[f] <= level;
      for (const ResourceId r : routes[f]) at_level = at_level || remaining[r] / users[r] <= level;
      if (at_level) now.push_back(f);
    }
    for (const std::size_t f : now) {
      fixed[f] = true;
      rate[f] = level;
      --unfixed;
      for (std::size_t i = 0; i < routes[f].size(); ++i) {
        const ResourceId r = routes[f][i];
        remaining[r] = std::max(0.0, remaining[r] - weight_of(weights, f, i) * level);
      }
    }
  }
  return rate;
}

TEST(MaxMinSolverPropertyTest, SlackRemovalsLeaveEveryOtherRateBitIdentical) {
  // remove_flow(f, skip_slack = true) re-solves nothing when no resource on f's route was a
  // bottleneck. Random systems where most flows are capped (so that many removals are slack):
  // after every batch of arrivals and departures, each rate equals a fresh full solve of the
  // same flows bit for bit (the 1e-9 of the other tests is not needed), and some removals took
  // each path.
  std::uint64_t slack = 0, departures = 0;
  for (const std::uint64_t seed : {11u, 12u, 13u, 14u, 15u, 16u, 17u, 18u}) {
    RandomSystem sys(seed, 48, 6);
    MaxMinSolver solver;
    for (const double c : sys.capacity) solver.add_resource(c);
    for (int step = 0; step < 300; ++step) {
      sys.churn(
          8, 2,
          [&](FlowId f) {
            solver.remove_flow(f, /*skip_slack=*/true);
            ++departures;
          },
          [&](FlowId f) {
            sys.caps[f] = sys.mostly_low_cap();
            solver.add_flow(f, sys.routes[f], sys.caps[f]);
          });
      solver.solve(/*full=*/false);
      const std::vector<double> full = max_min_rates(sys.capacity, sys.routes, sys.solve_caps());
      for (std::size_t f = 0; f < full.size(); ++f) {
        if (!sys.present[f]) continue;
        EXPECT_EQ(solver.rate(static_cast<FlowId>(f)), full[f]) << "seed " << seed << " step " << step << " flow " << f;
      }
    }
    slack += solver.slack_removals();
  }
  EXPECT_GT(slack, departures / 10);  // the skip is exercised ...
  EXPECT_LT(slack, departures);       // ... and so are removals from a bottleneck
}

TEST(MaxMinSolverPropertyTest, PerComponentFillingMatchesAWholeSystemReference) {
  // Many small components (groups of 4 links) changed several at a time, so one solve fills
  // several components, each on its own: every rate within 1e-9 of the whole-system reference,
  // after every batch, incremental and full alike.
  for (const std::uint64_t seed : {21u, 22u, 23u, 24u, 25u, 26u}) {
    RandomSystem sys(seed, 96, 4);
    MaxMinSolver incremental, full;
    for (const double c : sys.capacity) {
      incremental.add_resource(c);
      full.add_resource(c);
    }
    for (int step = 0; step < 120; ++step) {
      sys.churn(
          12, 1,
          [&](FlowId f) {
            incremental.remove_flow(f);
            full.remove_flow(f);
          },
          [&](FlowId f) {
            sys.caps[f] = sys.random_cap();
            incremental.add_flow(f, sys.routes[f], sys.caps[f]);
            full.add_flow(f, sys.routes[f], sys.caps[f]);
          });
      incremental.solve(/*full=*/false);
      full.solve(/*full=*/true);
      const std::vector<double> reference = whole_system_reference(sys.capacity, sys.routes, sys.solve_caps());
      for (std::size_t f = 0; f < reference.size(); ++f) {
        if (!sys.present[f]) continue;
        const auto id = static_cast<FlowId>(f);
        EXPECT_NEAR(incremental.rate(id), reference[f], kRel * reference[f])
            << "seed " << seed << " step " << step << " flow " << f;
        EXPECT_EQ(full.rate(id), incremental.rate(id)) << "seed " << seed << " step " << step << " flow " << f;
      }
    }
  }
}

TEST(MaxMinSolverPropertyTest, WeightedFlowsIncrementalMatchesFullResolveBitwise) {
  // Multi-path flows (two in three flows weighted: each crossing 0.02-1 of the rate, as a PAT
  // flow's peer paths) among single-path ones, arrivals and departures in batches, departures
  // with skip_slack: after every batch each rate equals a fresh full solve of the same flows bit
  // for bit (weights sum as exact integers, so no order matters), is within 1e-9 of the
  // whole-system reference, and the weighted loads keep the max-min invariants. Half the seeds
  // cap three flows in four (so that departures without a bottleneck are common), half use
  // random_cap; some removals take each path.
  std::uint64_t slack = 0, departures = 0;
  for (const std::uint64_t seed : {31u, 32u, 33u, 34u, 35u, 36u}) {
    RandomSystem sys(seed, 48, 6);
    Weights weights;
    MaxMinSolver solver;
    for (const double c : sys.capacity) solver.add_resource(c);
    for (int step = 0; step < 250; ++step) {
      sys.churn(
          8, 2,
          [&](FlowId f) {
            solver.remove_flow(f, /*skip_slack=*/true);
            ++departures;
            weights[f].clear();
          },
          [&](FlowId f) {
            if (weights.size() <= f) weights.resize(f + 1);
            sys.caps[f] = seed % 2 == 0 ? sys.random_cap() : sys.mostly_low_cap();
            weights[f].clear();
            if (std::uniform_int_distribution<int>(0, 2)(sys.rng) != 0) {
              for (std::size_t i = 0; i < sys.routes[f].size(); ++i) {
                // on the solver's 2^-32 grid (weight_units), so the reference solves the same system
                const double w = std::uniform_real_distribution<double>(0.02, 1.0)(sys.rng);
                weights[f].push_back(MaxMinSolver::weight_fraction(MaxMinSolver::weight_units(w)));
              }
              solver.add_flow(f, sys.routes[f], weights[f], sys.caps[f]);
            } else {
              solver.add_flow(f, sys.routes[f], sys.caps[f]);
            }
          });
      solver.solve(/*full=*/false);
      const std::vector<double> caps = sys.solve_caps();
      const std::vector<double> full = max_min_rates(sys.capacity, sys.routes, caps, weights);
      const std::vector<double> reference = whole_system_reference(sys.capacity, sys.routes, caps, weights);
      std::vector<double> incremental(full.size(), 1.0);
      for (std::size_t f = 0; f < full.size(); ++f) {
        if (!sys.present[f]) continue;
        incremental[f] = solver.rate(static_cast<FlowId>(f));
        EXPECT_EQ(incremental[f], full[f]) << "seed " << seed << " step " << step << " flow " << f;
        EXPECT_NEAR(incremental[f], reference[f], kRel * reference[f])
            << "seed " << seed << " step " << step << " flow " << f;
      }
      expect_max_min(sys.capacity, sys.routes, caps, incremental, weights);
    }
    slack += solver.slack_removals();
  }
  EXPECT_GT(slack, departures / 10);
  EXPECT_LT(slack, departures);
}

TEST(MaxMinSolverPropertyTest, UnitWeightsAreTheSinglePathFlowBitForBit) {
  // Every flow given weight 1 on each crossing solves to the same bits as without weights.
  RandomSystem sys(41, 64, 8);
  Weights ones;
  for (int f = 0; f < 300; ++f) {
    sys.routes.push_back(sys.random_route());
    sys.caps.push_back(sys.random_cap());
    ones.emplace_back(sys.routes.back().size(), 1.0);
  }
  const std::vector<double> plain = max_min_rates(sys.capacity, sys.routes, sys.caps);
  const std::vector<double> weighted = max_min_rates(sys.capacity, sys.routes, sys.caps, ones);
  for (std::size_t f = 0; f < plain.size(); ++f) EXPECT_EQ(weighted[f], plain[f]) << "flow " << f;
}

TEST(MaxMinSolverPropertyTest, FullResolveOfOneGiantComponentKeepsInvariants) {
  // One group of 32 links: every flow can reach every other (one component), 200 flows.
  RandomSystem sys(11, 32, 32);
  for (int f = 0; f < 200; ++f) {
    sys.routes.push_back(sys.random_route());
    sys.caps.push_back(sys.random_cap());
  }
  const std::vector<double> rates = max_min_rates(sys.capacity, sys.routes, sys.caps);
  expect_max_min(sys.capacity, sys.routes, sys.caps, rates);
}

}  // namespace
}  // namespace traincast::sim
