#pragma once
// Why one simulated layout lost to another: the difference of their time breakdowns
// (models/spec/report.h TimeBreakdown), component by component, each tied to the layout
// differences that cause it (e.g. "PP 16 vs 8", "TP 16 spans 2 nodes").

#include <string>
#include <vector>

#include "models/planner/planner.h"

namespace traincast::models::planner {

/// One breakdown component's change from the winner to the other layout.
struct ComponentDelta {
  std::string component;  ///< "compute", "exposed TP communication", "exposed DP communication",
                          ///< "exposed PP send/recv", "pipeline bubble", "optimizer step"
  double delta_s = 0;     ///< other - winner [s], per iteration
  double percent = 0;     ///< delta_s / winner iteration time x 100
  std::string reason;     ///< the layout differences behind it (may be empty)
};

struct Explanation {
  /// One sentence: the layout, how much slower, then each listed component with its first
  /// reason, e.g. "TP 8 x PP 16 x DP 8, mb 1, recompute none is 4.1% slower (28.90 s vs
  /// 27.76 s per iteration): +3.9% pipeline bubble (PP 16 x 1 chunk ... vs ...), +0.6% compute".
  std::string headline;
  /// Components that moved by at least 0.5% of the winner's iteration (at least the largest
  /// one), losses first (largest first), then gains.
  std::vector<ComponentDelta> components;
};

/// Explains why `other` is slower than (or as fast as) `winner`. Both must be simulated
/// (PlanEntry::simulated with an empty error); gpus_per_node tells when TP crosses nodes, the
/// scenario the layouts were applied to how many layers a stage holds (its model, its per-stage
/// list; planner::apply_layout). Throws std::invalid_argument otherwise or when gpus_per_node or
/// the model's num_layers < 1.
Explanation explain_difference(const PlanEntry& winner, const PlanEntry& other, int gpus_per_node,
                               const Scenario& scenario);

}  // namespace traincast::models::planner
