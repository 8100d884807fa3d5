// What torchtitan's op-level selective checkpointing re-runs in backward (issue 17;
// training.selective_policy torchtitan_op): every second aten.mm of Llama's wq, wk, wv, wo, w1,
// w3, w2 (wk, wo, w3), the norms and residual add, and the sequence-parallel all-gathers; the
// saved matmul, SDPA and reduce-scatter outputs are read back. FLOPs worked by hand for a small
// Llama-shaped model; each test fails if the recompute program or its FLOP count is removed.

#include <gtest/gtest.h>

#include "models/compute/compute_model.h"
#include "models/hardware/catalog.h"
#include "models/workload/transformer.h"
#include "tests/models/workload/llama_small.h"

namespace traincast::models {
namespace {

// The shared small Llama (llama_small.h) at micro-batch 2, global batch 16, under torchtitan's
// op-level selective checkpointing.
Scenario llama_small() {
  Scenario sc = test_support::llama_small();
  sc.parallel.zero_stage = 0;
  sc.training.global_batch_size = 16;
  sc.training.micro_batch_size = 2;
  sc.training.recompute = Recompute::selective;
  sc.training.selective_policy = SelectivePolicy::torchtitan_op;
  return sc;
}

const GpuSpec& h100() { return find_gpu("H100-SXM5-80GB"); }

double program_flops(const Program& p) {
  double f = 0;
  for (const Segment& s : p) f += s.flops;
  return f;
}

int all_gathers(const Program& p) {
  int n = 0;
  for (const Segment& s : p) n += s.is_collective && s.op == CollectiveOp::all_gather ? 1 : 0;
  return n;
}

TEST(TorchtitanRecompute, HardwareFlopsAddWkWoAndW3PerLayer) {
  const Scenario sc = llama_small();
  // Per token and layer: wk 2 x 1024 x 256, wo 2 x 1024 x 1024, w3 2 x 1024 x 4096 = 10,944,512;
  // 16 x 1024 tokens x 4 layers.
  const double recomputed = 16.0 * 1024 * 4 * 2 * 1024 * (256 + 1024 + 4096);
  EXPECT_DOUBLE_EQ(transformer_hardware_flops_per_iteration(sc) - transformer_model_flops_per_iteration(sc),
                   recomputed);
  // Megatron's selective set with flash attention re-runs nothing.
  Scenario megatron = sc;
  megatron.training.selective_policy = SelectivePolicy::megatron;
  EXPECT_DOUBLE_EQ(transformer_hardware_flops_per_iteration(megatron), transformer_model_flops_per_iteration(megatron));
  // Without a gated MLP the sixth mm is w2, after the last tensor backward needs: only wk and wo.
  Scenario plain = sc;
  plain.model.gated_mlp = false;
  EXPECT_DOUBLE_EQ(transformer_hardware_flops_per_iteration(plain) - transformer_model_flops_per_iteration(plain),
                   16.0 * 1024 * 4 * 2 * 1024 * (256 + 1024));
}

TEST(TorchtitanRecompute, ProgramReRunsThreeGemmsAndTheSequenceParallelGathers) {
  Scenario sc = llama_small();
  sc.parallel.tp = 2;
  sc.parallel.dp = 4;
  sc.parallel.sequence_parallel = true;
  const ComputeParams params = default_compute_params(h100());
  const ModelPrograms pr = build_transformer_programs(sc, h100(), params);
  ASSERT_EQ(pr.layer_kinds.size(), 1u);
  const Program& re = pr.layer_kinds[0].recompute;
  // One TP rank, one micro-batch of 2 x 1024 tokens: wk 256 / 2 and w3 4096 / 2 columns, wo over
  // 1024 / 2 inputs.
  const double tokens = 2 * 1024;
  EXPECT_DOUBLE_EQ(program_flops(re), tokens * 2 * 1024 * (128 + 512 + 2048));
  EXPECT_EQ(all_gathers(re), 2);  // before the attention and the MLP inputs
  for (const Segment& s : re) {
    if (s.is_collective) {
      EXPECT_DOUBLE_EQ(s.bytes, tokens * 1024 * 2);  // the full bf16 activation
    }
  }
  // Megatron's policy with flash attention: nothing re-run.
  sc.training.selective_policy = SelectivePolicy::megatron;
  EXPECT_TRUE(build_transformer_programs(sc, h100(), params).layer_kinds[0].recompute.empty());
  // Full recomputation replays the whole forward, more than the op-level set.
  sc.training.recompute = Recompute::full;
  EXPECT_GT(program_flops(build_transformer_programs(sc, h100(), params).layer_kinds[0].recompute), program_flops(re));
}

}  // namespace
}  // namespace traincast::models
