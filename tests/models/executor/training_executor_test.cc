// Executor tests: analytic expectations on small jobs, conservation of the time breakdown,
// determinism, folding vs unfolded, memory accounting.
#include "models/executor/training_executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "models/compute/compute_model.h"
#include "models/executor/graph_builder.h"
#include "models/hardware/catalog.h"
#include "models/workload/memory_model.h"
#include "models/workload/transformer.h"
#include "tests/support/breakdown.h"

namespace traincast::models {
namespace {

using traincast::test_support::sum_breakdown;

/// GPT-style 1.3B-ish model on one DGX A100, TP 8.
Scenario small_gpt() {
  Scenario sc;
  sc.name = "test";
  sc.cluster.node_template = "dgx_a100";
  sc.cluster.num_nodes = 1;
  sc.model.num_layers = 4;
  sc.model.hidden_size = 2048;
  sc.model.num_attention_heads = 16;
  sc.model.vocab_size = 51200;
  sc.model.seq_length = 2048;
  sc.parallel.tp = 8;
  sc.training.global_batch_size = 4;
  sc.training.micro_batch_size = 1;
  sc.training.precision = Precision::fp16;
  sc.training.flash_attention = false;
  return sc;
}

TEST(TrainingExecutor, BreakdownAddsUpToIterationTime) {
  for (int pp : {1, 2, 4}) {
    Scenario sc = small_gpt();
    sc.parallel.tp = 8 / pp;
    sc.model.num_attention_heads = 16;
    sc.parallel.pp = pp;
    const Report r = simulate_training(sc);
    EXPECT_GT(r.iteration_time_s, 0);
    EXPECT_NEAR(sum_breakdown(r), r.iteration_time_s, 1e-9 * 100) << "pp=" << pp;
  }
}

TEST(TrainingExecutor, SingleStageWithoutTpIsComputePlusOptimizer) {
  // TP 1, PP 1, DP 8: every GPU computes alone; with DP all-reduce overlapped the iteration is
  // at least the compute of 4 micro-batches... here 1 micro-batch per GPU (batch 8, mb 1).
  Scenario sc = small_gpt();
  sc.parallel.tp = 1;
  sc.parallel.dp = 8;
  sc.training.global_batch_size = 8;
  const Report r = simulate_training(sc);
  EXPECT_DOUBLE_EQ(r.breakdown.tp_comm_exposed_s, 0.0);
  EXPECT_DOUBLE_EQ(r.breakdown.pp_comm_exposed_s, 0.0);
  EXPECT_GT(r.breakdown.compute_s, 0.5 * r.iteration_time_s);
}

TEST(TrainingExecutor, DeterministicAndThreadIndependent) {
  Scenario sc = small_gpt();
  sc.parallel.tp = 2;
  sc.parallel.pp = 2;
  sc.parallel.dp = 2;
  sc.model.num_attention_heads = 16;
  sc.training.global_batch_size = 8;
  const Report a = simulate_training(sc);
  sc.options.threads = 2;
  const Report b = simulate_training(sc);
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.breakdown.pipeline_bubble_s, b.breakdown.pipeline_bubble_s);
}

TEST(TrainingExecutor, PipelineBubbleMatchesOneFOneBFormula) {
  // 1F1B with p stages and m micro-batches idles (p-1)/m of the ideal time (SC21 §2.2.1) when
  // compute dominates; TP 1 and a single node keep communication small.
  // A tiny vocabulary keeps the embedding and head stages as long as the others.
  Scenario sc = small_gpt();
  sc.model.num_layers = 8;
  sc.model.vocab_size = 256;
  sc.parallel.tp = 1;
  sc.parallel.pp = 8;
  sc.training.global_batch_size = 16;
  const Report r = simulate_training(sc);
  const double p = 8, m = 16;
  const double bubble_fraction = r.breakdown.pipeline_bubble_s / r.iteration_time_s;
  // Ideal: (p-1)/(m+p-1) of the iteration; p2p transfers and the optimizer step shift it a little.
  EXPECT_NEAR(bubble_fraction, (p - 1) / (m + p - 1), 0.05 * (p - 1) / (m + p - 1));
}

TEST(TrainingExecutor, FoldedEqualsUnfoldedOnSymmetricJob) {
  Scenario sc = small_gpt();
  sc.cluster.num_nodes = 4;
  sc.parallel.tp = 8;
  sc.parallel.dp = 4;
  sc.training.global_batch_size = 8;
  sc.options.fold_symmetric = true;
  const Report folded = simulate_training(sc);
  sc.options.fold_symmetric = false;
  const Report full = simulate_training(sc);
  EXPECT_TRUE(folded.folded);
  EXPECT_FALSE(full.folded);
  EXPECT_EQ(folded.iteration_time_s, full.iteration_time_s);
  EXPECT_LT(folded.events, full.events);
}

TEST(TrainingExecutor, MoreMicroBatchesLowerBubbleShare) {
  Scenario sc = small_gpt();
  sc.model.num_layers = 8;
  sc.parallel.tp = 2;
  sc.parallel.pp = 4;
  sc.training.global_batch_size = 4;
  const Report few = simulate_training(sc);
  sc.training.global_batch_size = 32;
  const Report many = simulate_training(sc);
  EXPECT_LT(many.breakdown.pipeline_bubble_s / many.iteration_time_s,
            few.breakdown.pipeline_bubble_s / few.iteration_time_s);
}

TEST(TrainingExecutor, InterleavingShrinksTheBubble) {
  Scenario sc = small_gpt();
  sc.model.num_layers = 16;
  sc.parallel.tp = 2;
  sc.parallel.pp = 4;
  sc.training.global_batch_size = 8;
  const Report plain = simulate_training(sc);
  sc.parallel.schedule = PipelineSchedule::interleaved_one_f_one_b;
  sc.parallel.virtual_stages = 2;
  const Report inter = simulate_training(sc);
  EXPECT_LT(inter.breakdown.pipeline_bubble_s, plain.breakdown.pipeline_bubble_s);
}

TEST(TrainingExecutor, FlopsMatchSc21Equation3) {
  // 96·B·s·l·h²(1 + s/(6h) + V/(16·l·h)) with full recomputation (SC21 eq. 3).
  Scenario sc = small_gpt();
  sc.model.num_layers = 24;
  sc.training.recompute = Recompute::full;
  sc.training.global_batch_size = 512;
  const double B = 512, s = 2048, l = 24, h = 2048, V = 51200;
  const double eq3 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(hardware_flops_per_iteration(sc) / eq3, 1.0, 1e-12);
  const double model = 72 * B * s * l * h * h * (1 + s / (6 * h)) + 6 * B * s * h * V;
  EXPECT_NEAR(model_flops_per_iteration(sc) / model, 1.0, 1e-12);
}

/// Pipeline-receive all-gathers (Megatron's scatter/gather) of worker `stage` of replica 0 whose
/// label is `label`; each one's all-gather bytes must equal `bytes`.
int count_receive_gathers(const Scenario& sc, int stage, const std::string& label, double bytes) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  Cluster cluster(sc.cluster, net);
  const TrainingGraph job = build_training_graph(sc, cluster);
  int n = 0;
  for (std::uint32_t i = job.op_base[static_cast<std::size_t>(stage)];
       i < job.op_base[static_cast<std::size_t>(stage) + 1]; ++i) {
    const Op& op = job.graph.ops[i];
    if (job.labels[op.label] != label) continue;
    ++n;
    EXPECT_EQ(op.role, Role::tp_comm);
    EXPECT_EQ(op.stream, kCompute);
    EXPECT_EQ(job.graph.tasks[op.task].op, CollectiveOp::all_gather);
    EXPECT_DOUBLE_EQ(job.graph.tasks[op.task].bytes, bytes);
  }
  return n;
}

TEST(TrainingExecutor, ScatterGatherAllGathersTheFullActivationAfterEveryPipelineReceive) {
  // SC21 §4.1: each of the t TP ranks sends 1/t of the activation to the next stage, which
  // all-gathers the full s x b x h tensor over NVLink before computing; the same for gradients.
  Scenario sc = small_gpt();
  sc.parallel.tp = 4;
  sc.parallel.pp = 2;
  const double full = 2048.0 * 1 * 2048 * 2;  // seq x micro-batch x hidden x fp16 bytes
  const int m = sc.training.global_batch_size / sc.training.micro_batch_size;
  EXPECT_EQ(count_receive_gathers(sc, 1, "pp_gather_fwd", full), m);  // activations into stage 1
  EXPECT_EQ(count_receive_gathers(sc, 0, "pp_gather_bwd", full), m);  // gradients into stage 0
  EXPECT_EQ(count_receive_gathers(sc, 0, "pp_gather_fwd", full), 0);  // stage 0 receives no activation
  // Sequence parallelism: each rank sends its own sequence shard, the next layer's input layout.
  sc.parallel.sequence_parallel = true;
  EXPECT_EQ(count_receive_gathers(sc, 1, "pp_gather_fwd", full), 0);
  // TP 1: the whole activation is sent; nothing to gather.
  sc.parallel.sequence_parallel = false;
  sc.parallel.tp = 1;
  sc.parallel.dp = 4;
  EXPECT_EQ(count_receive_gathers(sc, 1, "pp_gather_fwd", full), 0);
}

TEST(MemoryModel, KorthikantiActivationFormulas) {
  // 22B (h 6144, a 64, s 2048, b 4), TP 8: sbh(10 + 24/t + 5as/(ht)) without SP/recompute;
  // sbh·34/t with SP + selective; 2sbh with full (Korthikanti et al. Table 2).
  Scenario sc = small_gpt();
  sc.model.hidden_size = 6144;
  sc.model.num_attention_heads = 64;
  sc.training.micro_batch_size = 4;
  const double s = 2048, b = 4, h = 6144, a = 64, t = 8;
  sc.training.recompute = Recompute::none;
  EXPECT_NEAR(activation_bytes_per_layer(sc), s * b * h * (10 + 24 / t + 5 * a * s / (h * t)), 1.0);
  sc.training.recompute = Recompute::selective;
  sc.parallel.sequence_parallel = true;
  EXPECT_NEAR(activation_bytes_per_layer(sc), s * b * h * 34 / t, 1.0);
  sc.training.recompute = Recompute::full;
  sc.parallel.sequence_parallel = false;
  EXPECT_NEAR(activation_bytes_per_layer(sc), 2 * s * b * h, 1.0);
}

TEST(MemoryModel, OomIsReportedWithAdvice) {
  Scenario sc = small_gpt();
  sc.model.num_layers = 96;
  sc.model.hidden_size = 12288;
  sc.model.num_attention_heads = 96;
  sc.training.micro_batch_size = 8;
  sc.training.global_batch_size = 8;
  const Report r = simulate_training(sc);
  EXPECT_TRUE(r.memory.oom);
  EXPECT_NE(r.memory.advice.find("recomputation"), std::string::npos);
}

}  // namespace
}  // namespace traincast::models
