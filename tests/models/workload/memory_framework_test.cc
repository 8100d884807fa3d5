// Memory of the framework mechanisms (issue 17): DeepSpeed's ZeRO-1/2 gradients and buckets,
// torchtitan's op-level selective checkpointing, unfused cross-entropy and the re-run layer's
// working set. Byte counts by hand for a small Llama-shaped model; each test fails if its
// mechanism is removed from models/workload/memory_model.cc.

#include <gtest/gtest.h>

#include "models/hardware/catalog.h"
#include "models/workload/memory_model.h"
#include "tests/models/workload/llama_small.h"

namespace traincast::models {
namespace {

using test_support::llama_small;

const GpuSpec& h100() { return find_gpu("H100-SXM5-80GB"); }

constexpr double kTokens = 1024;  // s x b

TEST(MemoryFramework, DeepSpeedKeepsSixteenBitGradientsBesideFp32AndItsBuckets) {
  Scenario sc = llama_small();
  const MemoryBreakdown megatron = stage_memory(sc, h100(), 0, 4, 1);
  const double psi = megatron.weights_bytes / 2;
  EXPECT_DOUBLE_EQ(megatron.grads_bytes, 4 * psi);  // one fp32 main-gradient buffer
  sc.parallel.zero_implementation = ZeroImplementation::deepspeed;
  sc.parallel.reduce_bucket_elements = 1e6;
  // bf16 at ZeRO-1 (BF16_Optimizer): bf16 param.grad 2 B + fp32 accumulation 4 B per parameter,
  // plus a reduce and an all-gather bucket of 1e6 16-bit elements.
  const MemoryBreakdown bf16 = stage_memory(sc, h100(), 0, 4, 1);
  EXPECT_DOUBLE_EQ(bf16.grads_bytes, 2 * psi + 4 * psi + 2 * 1e6 * 2);
  EXPECT_DOUBLE_EQ(bf16.peak_bytes_per_gpu - megatron.peak_bytes_per_gpu, 2 * psi + 4e6);
  // fp16 (the ZeRO optimizer): fp16 param.grad plus the fp32 gradient of the 1/8 shard.
  sc.training.precision = Precision::fp16;
  EXPECT_DOUBLE_EQ(stage_memory(sc, h100(), 0, 4, 1).grads_bytes, 2 * psi + 4 * psi / 8 + 4e6);
  // ZeRO-2: the 16-bit gradients are sharded too; the buckets capped by the stage's parameters.
  sc.parallel.zero_stage = 2;
  sc.parallel.reduce_bucket_elements = 1e12;
  EXPECT_DOUBLE_EQ(stage_memory(sc, h100(), 0, 4, 1).grads_bytes, 2 * psi / 8 + 4 * psi / 8 + 2 * psi * 2);
}

TEST(MemoryFramework, TorchtitanOpLevelSelectiveKeepsEveryOtherMatmulAndAttentionOutput) {
  Scenario sc = llama_small();
  sc.training.recompute = Recompute::selective;
  const double megatron = activation_bytes_per_layer(sc);
  // Megatron selective: 2 B x (4h replicated + q + 2kv + o + 3f) + 4a fp32 LSE per token.
  EXPECT_DOUBLE_EQ(megatron, kTokens * (2.0 * (4 * 1024 + 1024 + 512 + 1024 + 3 * 4096) + 4 * 8));
  sc.training.selective_policy = SelectivePolicy::torchtitan_op;
  // Block input h, wq out 1024, wv out 256, w1 out 4096, w2 out 1024, SDPA out 1024 (2 B each)
  // and the fp32 log-sum-exp of 8 heads per token.
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc), kTokens * (2.0 * (1024 + 1024 + 256 + 4096 + 1024 + 1024) + 32));
  EXPECT_LT(activation_bytes_per_layer(sc), megatron);
}

TEST(MemoryFramework, UnfusedCrossEntropyHoldsThreeFp32LogitCopies) {
  Scenario sc = llama_small();
  const double fused = stage_memory(sc, h100(), 0, 4, 1).activations_bytes;
  sc.training.cross_entropy = CrossEntropy::unfused;
  const double unfused = stage_memory(sc, h100(), 0, 4, 1).activations_bytes;
  // 4 B per logit fused, 12 B unfused (LogSoftmaxBackward0: saved output, incoming gradient,
  // gradient of its input, all fp32): 8 B x s x b x V more.
  EXPECT_DOUBLE_EQ(unfused - fused, 8 * kTokens * 32000);
}

TEST(MemoryFramework, ReRunLayerWorkingSetUnderFullRecomputeAndOpLevelSelective) {
  Scenario sc = llama_small();
  // Without recomputation, per token: 2 B x (4h + q + 2kv + o + 3f) + 4a.
  const double none = kTokens * (2.0 * (4 * 1024 + 1024 + 512 + 1024 + 3 * 4096) + 32);
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc), none);
  const double logits = 4 * kTokens * 32000;
  sc.training.recompute = Recompute::full;
  const double input = 2 * kTokens * 1024;  // the checkpointed layer input
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc), input);
  // 3 micro-batches x 4 layers of checkpoints, plus one layer's re-run set of one micro-batch.
  EXPECT_DOUBLE_EQ(stage_memory(sc, h100(), 0, 4, 12).activations_bytes, 12 * input + (none - input) + logits);
  sc.training.recompute = Recompute::selective;
  sc.training.selective_policy = SelectivePolicy::torchtitan_op;
  const double op = activation_bytes_per_layer(sc);
  EXPECT_DOUBLE_EQ(stage_memory(sc, h100(), 0, 4, 12).activations_bytes, 12 * op + (none - op) + logits);
  // Megatron's selective recomputation re-runs only the attention core: no re-run set.
  sc.training.selective_policy = SelectivePolicy::megatron;
  EXPECT_DOUBLE_EQ(stage_memory(sc, h100(), 0, 4, 12).activations_bytes, 12 * activation_bytes_per_layer(sc) + logits);
}

}  // namespace
}  // namespace traincast::models
