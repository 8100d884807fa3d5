#pragma once
// The sum of a report's time breakdown rows (models/spec/report.h TimeBreakdown), which the
// executor's tests check against iteration_time_s: every row, so a new category cannot be left
// out of one test's copy of the sum.

#include "models/spec/report.h"

namespace traincast::test_support {

/// Every row of r.breakdown [s].
inline double sum_breakdown(const models::Report& r) {
  const models::TimeBreakdown& b = r.breakdown;
  return b.compute_s + b.optimizer_s + b.tp_comm_exposed_s + b.dp_comm_exposed_s + b.pp_comm_exposed_s +
         b.pipeline_bubble_s + b.storage_stall_s + b.ep_comm_exposed_s + b.offload_s + b.cp_comm_exposed_s +
         b.input_copy_exposed_s + b.straggler_wait_s;
}

}  // namespace traincast::test_support
