// Tests of tools/cli/sweep_run: running one sweep point gives ok, oom and invalid outcomes with
// their reasons, and the same row every time.

#include "tools/cli/sweep_run.h"

#include <gtest/gtest.h>

#include "models/io/sweep_csv.h"
#include "tests/models/io/sweep_files.h"

namespace traincast::cli {
namespace {

using io::sweep_csv_row;
using io::SweepOutcome;
using io::SweepStatus;
using io::test_support::kBase;
using io::test_support::load;

TEST(SweepPoint, OutcomesOkInvalidAndOom) {
  const models::Sweep s = load(kBase +
                               "set: \"workload.parallel.dp=8\"\n"
                               "axis { path: \"workload.parallel.tp\" values: \"1\" values: \"3\" }\n"
                               "axis { path: \"workload.model.hidden_size\" values: \"1024\" values: \"65536\" }\n"
                               "metric: \"num_gpus\"\nmetric: \"micro_batches\"\n");
  ASSERT_EQ(s.num_points(), 4u);
  const SweepOutcome ok = run_sweep_point(s, 0);  // tp 1, h 1024: 8 GPUs of DP
  EXPECT_EQ(ok.status, SweepStatus::ok) << ok.reason;
  EXPECT_EQ(ok.reason, "");
  // dp 8 x micro-batch 1 over 16 sequences: 2 micro-batches per pipeline.
  EXPECT_EQ(sweep_csv_row(s, 0, ok), "0,1,1024,ok,8,2,\n");
  const SweepOutcome oom = run_sweep_point(s, 1);  // h 65536: ~400B parameters on one GPU each
  EXPECT_EQ(oom.status, SweepStatus::oom);
  EXPECT_EQ(oom.reason.rfind("peak ", 0), 0u) << oom.reason;
  const SweepOutcome invalid = run_sweep_point(s, 2);  // tp 3: 3 * 1 * 8 != 8 and 3 does not divide 16 heads
  EXPECT_EQ(invalid.status, SweepStatus::invalid);
  // Each at the axis value that set tp: line 3, the second `values` (column 49).
  EXPECT_EQ(invalid.reason,
            "t.sweep.textproto:3:49: workload.parallel.tp: 3 does not divide num_attention_heads 16 (expected a "
            "divisor of 16); t.sweep.textproto:3:49: workload.parallel.tp: tp * pp * dp = 3 * 1 * 8 = 24 but the "
            "cluster has 8 GPUs (1 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 8)");
  EXPECT_EQ(sweep_csv_row(s, 2, invalid), "2,3,1024,invalid,,," + invalid.reason + "\n");
  // The same point twice: the same row (deterministic).
  EXPECT_EQ(sweep_csv_row(s, 0, run_sweep_point(s, 0)), sweep_csv_row(s, 0, ok));
}

}  // namespace
}  // namespace traincast::cli
