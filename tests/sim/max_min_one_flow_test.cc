// Tests for sim::MaxMinSolver's components of one flow (solve_single_flow, and a solve whose
// components all hold one flow, filled without grouping): exact rates, bottleneck marks (seen
// through skip_slack removals), and the same bits as each flow solved alone, next to components
// of several flows (the grouped, general path). Units: bytes/s.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/max_min_solver.h"

namespace traincast::sim {
namespace {

constexpr double kGBps = 1e9;
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(MaxMinOneFlowTest, RateIsTheSmallestShareOrTheCapAndMarksFollow) {
  // L0 10 GB/s, L1 8 GB/s, L2 20 GB/s. A flow alone gets the smallest capacity / crossings over
  // its route, or its cap when that is at or below; its resources at that level are bottlenecks
  // (its removal is not slack) unless the cap is lower.
  struct Case {
    std::vector<ResourceId> route;
    double cap_bytes_per_s;
    double rate_bytes_per_s;
    bool slack;
  };
  const std::vector<Case> cases = {
      {{0, 1}, kInf, 8 * kGBps, false},      {{0, 0, 2}, kInf, 5 * kGBps, false},  // L0 crossed twice: 10 / 2
      {{0, 1}, 3 * kGBps, 3 * kGBps, true},   // the cap binds below every share: no bottleneck
      {{0, 1}, 8 * kGBps, 8 * kGBps, false},  // cap equal to the level: L1 saturates too
      {{2}, kInf, 20 * kGBps, false},
  };
  for (std::size_t c = 0; c < cases.size(); ++c) {
    for (const bool full : {false, true}) {
      MaxMinSolver s;
      for (const double cap : {10 * kGBps, 8 * kGBps, 20 * kGBps}) s.add_resource(cap);
      s.add_flow(0, cases[c].route, cases[c].cap_bytes_per_s);
      s.solve(full);
      EXPECT_EQ(s.rate(0), cases[c].rate_bytes_per_s) << "case " << c;
      s.remove_flow(0, /*skip_slack=*/true);
      EXPECT_EQ(s.slack_removals(), cases[c].slack ? 1u : 0u) << "case " << c;
      EXPECT_EQ(s.has_dirty(), !cases[c].slack) << "case " << c;
    }
  }
}

TEST(MaxMinOneFlowTest, ManyOneFlowComponentsInOneSolveEqualEachFlowAlone) {
  // 40 flows, flow f on links 2f and 2f + 1 (every third crossing link 2f twice), solved at once:
  // 40 one-flow components (no grouping). Then 10 flows joining neighbours make components of
  // several flows (the grouped path) beside the remaining one-flow ones. Every one-flow rate has
  // the bits of the same flow solved alone, incremental and full alike.
  std::mt19937_64 rng(32);
  std::uniform_real_distribution<double> gbps(1.0, 100.0);
  constexpr std::uint32_t kFlows = 40;
  std::vector<double> capacity(2 * kFlows + 2);
  for (double& c : capacity) c = gbps(rng) * kGBps;
  std::vector<std::vector<ResourceId>> routes(kFlows);
  std::vector<double> caps(kFlows);
  for (std::uint32_t f = 0; f < kFlows; ++f) {
    routes[f] =
        f % 3 == 0 ? std::vector<ResourceId>{2 * f, 2 * f, 2 * f + 1} : std::vector<ResourceId>{2 * f, 2 * f + 1};
    caps[f] = f % 4 == 0 ? gbps(rng) * kGBps : kInf;
  }
  std::vector<double> alone(kFlows);
  for (std::uint32_t f = 0; f < kFlows; ++f) {
    MaxMinSolver s;
    for (const double c : capacity) s.add_resource(c);
    s.add_flow(f, routes[f], caps[f]);
    s.solve(/*full=*/false);
    alone[f] = s.rate(f);
  }
  for (const bool full : {false, true}) {
    MaxMinSolver s;
    for (const double c : capacity) s.add_resource(c);
    for (std::uint32_t f = 0; f < kFlows; ++f) s.add_flow(f, routes[f], caps[f]);
    EXPECT_EQ(s.solve(full).size(), kFlows);
    for (std::uint32_t f = 0; f < kFlows; ++f) EXPECT_EQ(s.rate(f), alone[f]) << "flow " << f << " full " << full;
    // joins flows 4k and 4k + 1 (links 8k + 1 and 8k + 2): a component of three flows each
    for (std::uint32_t k = 0; k < 10; ++k) {
      s.add_flow(kFlows + k, std::vector<ResourceId>{8 * k + 1, 8 * k + 2}, kInf);
    }
    s.solve(full);
    for (std::uint32_t f = 0; f < kFlows; ++f) {
      if (f % 4 < 2) continue;  // joined
      EXPECT_EQ(s.rate(f), alone[f]) << "flow " << f << " full " << full;
    }
    // the joined components satisfy capacity on their shared links
    for (std::uint32_t k = 0; k < 10; ++k) {
      const double twice = (4 * k + 1) % 3 == 0 ? 2.0 : 1.0;  // flow 4k + 1 may cross link 8k + 2 twice
      EXPECT_LE(s.rate(4 * k) + s.rate(kFlows + k), capacity[8 * k + 1] * (1 + 1e-9)) << "k " << k;
      EXPECT_LE(twice * s.rate(4 * k + 1) + s.rate(kFlows + k), capacity[8 * k + 2] * (1 + 1e-9)) << "k " << k;
    }
  }
}

}  // namespace
}  // namespace traincast::sim
