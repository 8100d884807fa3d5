// parallel.activation_layout batch_first (issue 17, torchtitan at TP 8): PyTorch DTensor's
// sequence parallelism on [b, s, h] activations re-lays out every SP all-gather's output and every
// SP reduce-scatter's input with a copy of the whole tensor (torch/distributed/
// _functional_collectives.py all_gather_tensor, reduce_scatter_tensor with dim 1). Worked by hand
// for one layer of the shared small Llama (llama_small.h) at TP 2 with SP; under async TP's fused
// ops only the weight gradients' reshapes of the gathered inputs; nothing without SP.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/hardware/catalog.h"
#include "models/workload/transformer.h"
#include "tests/models/workload/llama_small.h"

namespace traincast::models {
namespace {

const GpuSpec& h100() { return find_gpu("H100-SXM5-80GB"); }

double compute_seconds(const Program& p) {
  double s = 0;
  for (const Segment& seg : p) s += seg.is_collective ? 0 : seg.seconds;
  return s;
}

int copies(const Program& p) {
  int n = 0;
  for (const Segment& seg : p) {
    const std::string& l = seg.label;
    if (!seg.is_collective && l.size() > 4 && l.compare(l.size() - 4, 4, "_cat") == 0) ++n;
  }
  return n;
}

// llama_small at TP 2 (SP), DP 4, micro-batch 2: T = 2 x 1,024 = 2,048 tokens of h = 1,024 in
// bf16, so each gathered (or to-be-scattered) tensor is 2,048 x 1,024 x 2 = 4,194,304 B and its
// copy reads and writes it: 8,388,608 B. torchtitan's op-level recompute.
Scenario sp_tp2() {
  Scenario sc = test_support::llama_small();
  sc.parallel.tp = 2;
  sc.parallel.dp = 4;
  sc.parallel.sequence_parallel = true;
  sc.training.micro_batch_size = 2;
  sc.training.recompute = Recompute::selective;
  sc.training.selective_policy = SelectivePolicy::torchtitan_op;
  return sc;
}

constexpr double kCopyBytes = 2.0 * 2048 * 1024 * 2;

TEST(ActivationLayout, BatchFirstCopiesEverySequenceParallelCollectiveByHand) {
  const Scenario seq = sp_tp2();
  Scenario batch = seq;
  batch.parallel.activation_layout = ActivationLayout::batch_first;
  const ComputeParams params = default_compute_params(h100());
  const ModelPrograms f = build_transformer_programs(seq, h100(), params);
  const ModelPrograms g = build_transformer_programs(batch, h100(), params);
  ASSERT_EQ(f.layer_kinds.size(), 1u);
  ASSERT_EQ(g.layer_kinds.size(), 1u);
  EXPECT_DOUBLE_EQ(kCopyBytes, 8388608);
  // One copy kernel: bytes / (HBM x memory_efficiency) + the per-kernel fixed time.
  const double copy_s =
      kCopyBytes / (h100().hbm_bandwidth_bytes_per_s * params.memory_efficiency) + params.kernel_fixed_s;
  for (const Segment& seg : g.layer_kinds[0].forward) {
    if (copies(Program{seg}) == 1) {
      EXPECT_DOUBLE_EQ(seg.seconds, copy_s);
    }
  }
  // Forward: after the gathers before wq/wk/wv and w1/w3, before the reduce-scatters after wo and
  // w2: 4 copies. Recompute: the gathers before wk and w3 again: 2. Backward: after the output
  // gradients' gathers before wo's and w2's backward, before the input gradients'
  // reduce-scatters after w1/w3's and wq/wk/wv's: 4.
  const LayerPrograms& a = f.layer_kinds[0];
  const LayerPrograms& b = g.layer_kinds[0];
  EXPECT_EQ(copies(a.forward) + copies(a.recompute) + copies(a.backward), 0);
  EXPECT_EQ(copies(b.forward), 4);
  EXPECT_EQ(copies(b.recompute), 2);
  EXPECT_EQ(copies(b.backward), 4);
  EXPECT_NEAR(compute_seconds(b.forward) - compute_seconds(a.forward), 4 * copy_s, 1e-12);
  EXPECT_NEAR(compute_seconds(b.recompute) - compute_seconds(a.recompute), 2 * copy_s, 1e-12);
  EXPECT_NEAR(compute_seconds(b.backward) - compute_seconds(a.backward), 4 * copy_s, 1e-12);
  // The collectives themselves do not change: same count, kinds and bytes.
  for (const auto& [x, y] : {std::pair{&a.forward, &b.forward}, std::pair{&a.backward, &b.backward}}) {
    std::vector<double> xb, yb;
    for (const Segment& s : *x)
      if (s.is_collective) xb.push_back(s.bytes);
    for (const Segment& s : *y)
      if (s.is_collective) yb.push_back(s.bytes);
    EXPECT_EQ(xb, yb);
  }
  // The stage ends: the embedding's reduce-scatter (forward), the output layer's gather
  // (forward) and its backward reduce-scatter: one copy each.
  EXPECT_EQ(copies(g.embedding_forward), 1);
  EXPECT_EQ(copies(g.head_forward), 1);
  EXPECT_EQ(copies(g.head_backward), 1);
  EXPECT_NEAR(compute_seconds(g.head_forward) - compute_seconds(f.head_forward), copy_s, 1e-12);
}

// Async TP: the fused all-gather -> GEMM and GEMM -> reduce-scatter force the producer's stride
// order (no copy around the collective), but each fused gather whose gathered input a
// weight-gradient GEMM reads returns it as a [b, s, h] view laid out [s, b, h], which the weight
// gradient's reshape copies: under torchtitan's op-level recompute the recompute's two gathers
// (wk's and w3's, read by the wq/wk/wv and w1/w3 weight gradients) and the backward's two
// output-gradient gathers (wo's and w2's), none in forward. The embedding and the output layer,
// outside the compiled blocks, copy as without async TP.
TEST(ActivationLayout, AsyncTpCopiesOnlyTheGatheredInputsOfTheWeightGradients) {
  const ComputeParams params = default_compute_params(h100());
  Scenario seq = sp_tp2();
  seq.parallel.tp_comm_overlap = true;
  seq.parallel.tp_overlap_implementation = TpOverlapImplementation::async_tp;
  Scenario batch = seq;
  batch.parallel.activation_layout = ActivationLayout::batch_first;
  const ModelPrograms f = build_transformer_programs(seq, h100(), params);
  const ModelPrograms g = build_transformer_programs(batch, h100(), params);
  const LayerPrograms& a = f.layer_kinds[0];
  const LayerPrograms& b = g.layer_kinds[0];
  const double copy_s =
      kCopyBytes / (h100().hbm_bandwidth_bytes_per_s * params.memory_efficiency) + params.kernel_fixed_s;
  EXPECT_EQ(copies(b.forward), 0);
  EXPECT_EQ(copies(b.recompute), 2);
  EXPECT_EQ(copies(b.backward), 2);
  EXPECT_DOUBLE_EQ(compute_seconds(b.forward), compute_seconds(a.forward));
  EXPECT_NEAR(compute_seconds(b.recompute) - compute_seconds(a.recompute), 2 * copy_s, 1e-12);
  EXPECT_NEAR(compute_seconds(b.backward) - compute_seconds(a.backward), 2 * copy_s, 1e-12);
  EXPECT_EQ(copies(g.embedding_forward) + copies(g.head_forward) + copies(g.head_backward), 3);
  // Without op-level recompute backward reads the forward's gathered inputs: the two copies move
  // to the forward; with full recomputation they are in the replay, not the forward.
  Scenario none = batch;
  none.training.recompute = Recompute::none;
  const ModelPrograms none_prog = build_transformer_programs(none, h100(), params);
  const LayerPrograms& n = none_prog.layer_kinds[0];
  EXPECT_EQ(copies(n.forward), 2);
  EXPECT_EQ(copies(n.backward), 2);
  Scenario full = batch;
  full.training.recompute = Recompute::full;
  const ModelPrograms full_prog = build_transformer_programs(full, h100(), params);
  const LayerPrograms& u = full_prog.layer_kinds[0];
  EXPECT_EQ(copies(u.forward), 0);
  EXPECT_EQ(copies(u.recompute), 2);
  EXPECT_EQ(copies(u.backward), 2);
}

// Without SP (all-reduces) or with one TP rank: nothing to copy.
TEST(ActivationLayout, NoCopyWithoutSequenceParallelism) {
  const ComputeParams params = default_compute_params(h100());
  Scenario plain = sp_tp2();
  plain.parallel.sequence_parallel = false;
  for (const Scenario& seq : std::vector<Scenario>{plain, test_support::llama_small()}) {
    Scenario batch = seq;
    batch.parallel.activation_layout = ActivationLayout::batch_first;
    const ModelPrograms f = build_transformer_programs(seq, h100(), params);
    const ModelPrograms g = build_transformer_programs(batch, h100(), params);
    const LayerPrograms& b = g.layer_kinds[0];
    EXPECT_EQ(copies(b.forward) + copies(b.recompute) + copies(b.backward), 0);
    EXPECT_DOUBLE_EQ(compute_seconds(b.forward), compute_seconds(f.layer_kinds[0].forward));
    EXPECT_DOUBLE_EQ(compute_seconds(b.backward), compute_seconds(f.layer_kinds[0].backward));
    EXPECT_EQ(copies(g.embedding_forward) + copies(g.head_forward) + copies(g.head_backward), 0);
  }
}

}  // namespace
}  // namespace traincast::models
