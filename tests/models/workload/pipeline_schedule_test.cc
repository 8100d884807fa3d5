// Activation in-flight counts of the pipeline schedules against the published formulas.
//
// Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models"
// (arXiv:2205.05198), §4.2.3: under 1F1B the first stage keeps p micro-batches of its L/p layers
// (L layers' worth); under the interleaved schedule of Narayanan et al. (SC21) with m model chunks
// per device it keeps L·(1 + (p-1)/(p·m)) layers' worth. Megatron-LM's interleaved schedule
// (schedules.py, forward_backward_pipelining_with_interleaving) runs
// 2·(p - rank - 1) + (m - 1)·p warm-up chunk forwards, all of them when that reaches the
// iteration's chunk forwards (then every micro-batch is in flight at once).

#include <gtest/gtest.h>

#include "models/workload/pipeline_schedule.h"

namespace traincast::models {
namespace {

TEST(PipelineSchedule, OneFOneBFirstStageHoldsPMicroBatches) {
  // p = 4 stages, 6 layers per stage, 16 micro-batches: stage 0 keeps p = 4 micro-batches of 6
  // layers = 24 = L layers' worth (Korthikanti §4.2.3); stage 3 (last) keeps 1.
  const std::vector<int> chunk{6};
  EXPECT_DOUBLE_EQ(peak_inflight_layers(pipeline_steps(0, 4, 16, 1), chunk), 24.0);
  EXPECT_DOUBLE_EQ(peak_inflight_layers(pipeline_steps(3, 4, 16, 1), chunk), 6.0);
  // Fewer micro-batches than stages: at most all of them (2 x 6).
  EXPECT_DOUBLE_EQ(peak_inflight_layers(pipeline_steps(0, 4, 2, 1), chunk), 12.0);
}

TEST(PipelineSchedule, InterleavedFirstStageMatchesKorthikanti) {
  // p = 4, m = 2 chunks of 2 layers (L = 16 layers, 4 per stage), 16 micro-batches (enough that
  // the warm-up does not reach them all): L·(1 + (p-1)/(p·m)) = 16·(1 + 3/8) = 22 layers.
  // Megatron's warm-up: 2·3 + 1·4 = 10 chunk forwards, + 1 before the first backward = 11 chunks
  // of 2 layers = 22.
  EXPECT_DOUBLE_EQ(peak_inflight_layers(pipeline_steps(0, 4, 16, 2), {2, 2}), 22.0);
  // Stage 1: 2·2 + 4 + 1 = 9 chunks = 18 layers; the last stage: 0·2 + 4 + 1 = 5 chunks = 10.
  EXPECT_DOUBLE_EQ(peak_inflight_layers(pipeline_steps(1, 4, 16, 2), {2, 2}), 18.0);
  EXPECT_DOUBLE_EQ(peak_inflight_layers(pipeline_steps(3, 4, 16, 2), {2, 2}), 10.0);
  // p = 8, m = 4 chunks of 1 layer (L = 32), 64 micro-batches: 32·(1 + 7/32) = 39 layers.
  EXPECT_DOUBLE_EQ(peak_inflight_layers(pipeline_steps(0, 8, 64, 4), {1, 1, 1, 1}), 39.0);
}

TEST(PipelineSchedule, InterleavedAllWarmupWhenMicroBatchesEqualStages) {
  // Llama 3 405B's layout (Llama 3 paper Table 4): p = 16, m = 4 chunks, 16 micro-batches per
  // pipeline. Stage 0's warm-up, 2·15 + 3·16 = 78, exceeds the 64 chunk forwards, so all 16
  // micro-batches of its 8 layers (2 per chunk) are in flight: 128 layers' worth. Korthikanti's
  // formula, which assumes enough micro-batches, gives more: 8·16·(1 + 15/64) = 158 layers; the
  // schedule cannot hold more than it has, so 128 is the count, not an overcount.
  EXPECT_DOUBLE_EQ(peak_inflight_layers(pipeline_steps(0, 16, 16, 4), {2, 2, 2, 2}), 128.0);
  // Stage 8: 2·7 + 48 = 62 < 64, so one 1F1B step runs before the last forwards: 63 chunks in
  // flight at the peak = 126 layers.
  EXPECT_DOUBLE_EQ(peak_inflight_layers(pipeline_steps(8, 16, 16, 4), {2, 2, 2, 2}), 126.0);
}

}  // namespace
}  // namespace traincast::models
