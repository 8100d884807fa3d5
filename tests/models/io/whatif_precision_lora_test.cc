// The shipped what-ifs of scenarios/whatif/ on precision, gradient accumulation and a 70B LoRA
// fine-tune: each loads, and its answer goes the way the datasheets bound it.
#include <gtest/gtest.h>

#include <string>

#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/io/scenario_io.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

const std::string kWhatIf = std::string(TRAINCAST_SOURCE_DIR) + "/scenarios/whatif/";

TEST(WhatIf, MixedPrecisionWithinTheDatasheetRatios) {
  const Scenario bf16 = io::load_scenario_file(kWhatIf + "dgx_a100_mixed_precision.textproto");
  const Scenario tf32 =
      io::load_scenario_file(kWhatIf + "dgx_a100_mixed_precision.textproto", {"workload.training.precision=tf32"});
  const Scenario fp32 =
      io::load_scenario_file(kWhatIf + "dgx_a100_mixed_precision.textproto", {"workload.training.precision=fp32"});
  const double t_bf16 = simulate_training(bf16).iteration_time_s;
  const double t_tf32 = simulate_training(tf32).iteration_time_s;
  const double t_fp32 = simulate_training(fp32).iteration_time_s;
  // A100 datasheet (dense): fp32 19.5, tf32 156, bf16 312 TFLOP/s. No kernel gains more than its
  // peak ratio (compute bound) or the 2x of 2-byte activations (memory bound), so the step can
  // gain at most 16x from fp32 and 2x from tf32; and each step down is faster.
  const GpuSpec& a100 = find_gpu("A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(a100.peak_bf16_flops / a100.peak_fp32_flops, 16.0);
  EXPECT_GT(t_tf32, t_bf16);
  EXPECT_LE(t_tf32, 2.0 * t_bf16);
  EXPECT_GT(t_fp32, 2.0 * t_tf32);  // tf32's 8x peak over fp32 is most of the GEMM time
  EXPECT_LE(t_fp32, 16.0 * t_bf16);
}

TEST(WhatIf, GradientAccumulationVersusALargerMicroBatch) {
  const std::string file = kWhatIf + "dgx_a100_grad_accumulation.textproto";
  const Scenario acc = io::load_scenario_file(file);
  const Scenario big = io::load_scenario_file(file, {"workload.training.micro_batch_size=8"});
  ASSERT_EQ(acc.training.global_batch_size, big.training.global_batch_size);
  const Report r_acc = simulate_training(acc), r_big = simulate_training(big);
  EXPECT_EQ(r_acc.micro_batches, 8);
  EXPECT_EQ(r_big.micro_batches, 1);
  // Same FLOPs; the larger micro-batch is no slower (bigger GEMMs, fewer launches) and keeps 8x
  // the activations.
  EXPECT_DOUBLE_EQ(r_acc.model_flops_per_iteration, r_big.model_flops_per_iteration);
  EXPECT_LE(r_big.iteration_time_s, r_acc.iteration_time_s);
  EXPECT_NEAR(r_big.memory.activations_bytes, 8 * r_acc.memory.activations_bytes,
              1e-9 * r_big.memory.activations_bytes);
  EXPECT_GT(r_big.memory.peak_bytes_per_gpu, r_acc.memory.peak_bytes_per_gpu);
}

TEST(WhatIf, Lora70bOnH200VersusA100) {
  const Scenario h200 = io::load_scenario_file(kWhatIf + "lora_70b_8x_h200.textproto");
  const Scenario a100 = io::load_scenario_file(kWhatIf + "lora_70b_16x_a100.textproto");
  // 80 layers x 16 x ((8192 + 8192) + (8192 + 1024)) = 32,768,000 adapter parameters.
  EXPECT_DOUBLE_EQ(h200.model.num_layers * lora_layer_parameters(h200), 32768000.0);
  const Report rh = simulate_training(h200), ra = simulate_training(a100);
  EXPECT_FALSE(rh.memory.oom);
  EXPECT_FALSE(ra.memory.oom);
  // Same work per iteration; 8 H200 have 1.58x the dense bf16 peak of 16 A100 (8 x 989 vs
  // 16 x 312 TFLOP/s) and 1.18x the HBM bandwidth (8 x 4.8 vs 16 x 2.04 TB/s): faster, but by less
  // than the peak ratio.
  EXPECT_DOUBLE_EQ(rh.model_flops_per_iteration, ra.model_flops_per_iteration);
  EXPECT_LT(rh.iteration_time_s, ra.iteration_time_s);
  EXPECT_GT(rh.iteration_time_s, ra.iteration_time_s / 1.6);
  // Only the adapters' gradients cross InfiniBand: the A100 pair exposes little DP time.
  EXPECT_LT(ra.breakdown.dp_comm_exposed_s, 0.01 * ra.iteration_time_s);
}

}  // namespace
}  // namespace traincast::models
