// Tests of models/io's semantic checks (scenario_checks.h): every error message of a scenario
// that parses, exact text with file:line:col (or the --set that wrote the value) and field path.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"
#include "tests/models/io/small_scenario.h"

namespace traincast::io {
namespace {

using test_support::errors_of;
using test_support::small;

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// One node, the given model/parallel/training blocks. Lines: 1 cluster, 2 workload, 3 model,
/// 4 parallel, 5 training.
std::string scenario(const std::string& model, const std::string& parallel, const std::string& training) {
  return "cluster { node_template: \"dgx_h100\" }\n"
         "workload {\n"
         "  model { " +
         model +
         " }\n"
         "  parallel { " +
         parallel +
         " }\n"
         "  training { " +
         training +
         " }\n"
         "}\n";
}

const std::string kModel = "num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048";

// ------------------------------------------------------------------------------------------------
// Errors: one test per error, exact text
// ------------------------------------------------------------------------------------------------

TEST(ScenarioIoErrors, GpuProductBlamesTheOverriddenField) {
  // small(): tp 2 x pp 2 x dp 2 = 8 GPUs of one DGX H100; --set tp=4 makes 16. The error used to
  // blame dp at its line in the file, a field the user did not touch.
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.parallel.tp=4"}),
            std::vector<std::string>{"--set: workload.parallel.tp: tp * pp * dp = 4 * 2 * 2 = 16 but the cluster has 8 "
                                     "GPUs (1 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 8)"});
  EXPECT_EQ(errors_of(small(), Format::text, {"cluster.num_nodes=2"}),
            std::vector<std::string>{"--set: cluster.num_nodes: tp * pp * dp = 2 * 2 * 2 = 8 but the cluster has 16 "
                                     "GPUs (2 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 16)"});
}

TEST(ScenarioIoErrors, HeadsNotDividingHidden) {
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.model.hidden_size=1000"}),
            std::vector<std::string>{
                "t.textproto:4:43: workload.model.num_attention_heads: 16 does not divide hidden_size 1000 "
                "(expected a divisor of 1000)"});
}

TEST(ScenarioIoErrors, TpNotDividingHeads) {
  // 16 heads on 8 GPUs as tp 8 is fine; 12 heads (hidden 1200) are not divisible by tp 8.
  EXPECT_EQ(errors_of(scenario("num_layers: 8 hidden_size: 1200 num_attention_heads: 12 vocab_size: 10 seq_length: 16",
                               "tp: 8", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:14: workload.parallel.tp: 8 does not divide num_attention_heads 12 (expected a divisor "
                "of 12)"});
}

// PyTorch's async TP needs each TP group inside one node (symmetric memory maps peers over
// NVLink / P2P): tp 16 on two 8-GPU nodes is refused at the field; userbuffers and tp 8 are not.
TEST(ScenarioIoErrors, AsyncTpAcrossNodes) {
  const std::string two_nodes = "cluster { node_template: \"dgx_h100\" num_nodes: 2 }\n";
  const std::string workload = "workload {\n  model { " + kModel +
                               " }\n  parallel { tp: 16 sequence_parallel: true tp_comm_overlap: true "
                               "tp_overlap_implementation: async_tp }\n  training { global_batch_size: 8 }\n}\n";
  EXPECT_EQ(errors_of(two_nodes + workload),
            std::vector<std::string>{
                "t.textproto:4:67: workload.parallel.tp_overlap_implementation: async_tp with tp 16 on nodes of 8 "
                "GPUs: a TP group would span nodes, and PyTorch's symmetric memory reaches peers only inside a node "
                "(expected tp dividing 8, or userbuffers)"});
  std::string userbuffers = workload;
  userbuffers.replace(userbuffers.find("async_tp"), 8, "userbuffers");
  EXPECT_NO_THROW(load_scenario_text(two_nodes + userbuffers, "t.textproto", Format::text, {}));
  std::string tp8 = workload;
  tp8.replace(tp8.find("tp: 16"), 6, "tp: 8 dp: 2");
  EXPECT_NO_THROW(load_scenario_text(two_nodes + tp8, "t.textproto", Format::text, {}));
}

TEST(ScenarioIoErrors, TpNotDividingQueryGroups) {
  EXPECT_EQ(errors_of(scenario(kModel + " num_query_groups: 4", "tp: 8", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:14: workload.parallel.tp: 8 does not divide num_query_groups 4 (expected a divisor of "
                "4)"});
}

TEST(ScenarioIoErrors, QueryGroupsNotDividingHeads) {
  EXPECT_EQ(errors_of(scenario(kModel + " num_query_groups: 5", "dp: 8", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:3:102: workload.model.num_query_groups: 5 does not divide num_attention_heads 16 "
                "(expected a divisor of 16)"});
}

TEST(ScenarioIoErrors, PpNotDividingLayers) {
  EXPECT_EQ(errors_of(scenario("num_layers: 6 hidden_size: 1024 num_attention_heads: 16 vocab_size: 10 seq_length: 16",
                               "tp: 2 pp: 4", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:20: workload.parallel.pp: 4 does not divide num_layers 6 (expected a divisor of 6, or "
                "uneven_stages: true)"});
}

TEST(ScenarioIoErrors, MoreStagesThanLayers) {
  EXPECT_EQ(errors_of(scenario("num_layers: 4 hidden_size: 1024 num_attention_heads: 16 vocab_size: 10 seq_length: 16",
                               "pp: 8 uneven_stages: true", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:14: workload.parallel.pp: 8 stages for 4 layers (expected at most num_layers = 4)"});
}

TEST(ScenarioIoErrors, TpPpDpNotTheGpuCount) {
  // Nothing overridden: dp is blamed at its position. Overridden: the --set is.
  EXPECT_EQ(errors_of(scenario(kModel, "tp: 2 pp: 2 dp: 4", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:26: workload.parallel.dp: tp * pp * dp = 2 * 2 * 4 = 16 but the cluster has 8 GPUs "
                "(1 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 8)"});
  EXPECT_EQ(
      errors_of(scenario(kModel, "tp: 2 pp: 2 dp: 4", "global_batch_size: 8"), Format::text, {"cluster.num_nodes=3"}),
      std::vector<std::string>{"--set: cluster.num_nodes: tp * pp * dp = 2 * 2 * 4 = 16 but the cluster has 24 GPUs "
                               "(3 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 24)"});
}

TEST(ScenarioIoErrors, GlobalBatchNotDivisibleByDpTimesMicroBatch) {
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8", "global_batch_size: 20 micro_batch_size: 2")),
            std::vector<std::string>{
                "t.textproto:5:14: workload.training.global_batch_size: 20 is not divisible by dp * micro_batch_size "
                "= 8 * 2 = 16 (expected a multiple of 16)"});
}

TEST(ScenarioIoErrors, InterleavedScheduleRules) {
  // interleaved needs pp >= 2 and virtual_stages >= 2 (neither written: both point at `parallel`) ...
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 schedule: interleaved_one_f_one_b", "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:4:3: workload.parallel.pp: got 1 with schedule interleaved_one_f_one_b (expected pp >= "
                "2, or schedule: one_f_one_b)",
                "t.textproto:4:3: workload.parallel.virtual_stages: got 1 with schedule interleaved_one_f_one_b "
                "(expected virtual_stages >= 2)"}));
  // ... and pp * virtual_stages dividing num_layers (8 layers, 2 x 3 chunks) ...
  EXPECT_EQ(
      errors_of(
          scenario(kModel, "pp: 2 dp: 4 schedule: interleaved_one_f_one_b virtual_stages: 3", "global_batch_size: 8")),
      std::vector<std::string>{
          "t.textproto:4:60: workload.parallel.virtual_stages: num_layers 8 is not divisible by pp * "
          "virtual_stages = 2 * 3 = 6 (expected pp * virtual_stages to divide num_layers, or uneven_stages: true)"});
  // ... and virtual stages mean nothing without it.
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 virtual_stages: 2", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:20: workload.parallel.virtual_stages: got 2 with schedule one_f_one_b (expected 1, or "
                "schedule: interleaved_one_f_one_b)"});
  EXPECT_NO_THROW(load_scenario_text(
      scenario(kModel, "pp: 2 dp: 4 schedule: interleaved_one_f_one_b virtual_stages: 2", "global_batch_size: 8"),
      "t.textproto", Format::text));
  // Megatron runs interleaved micro-batches in groups of pp: 4 / (dp 4 x 1) = 1 micro-batch is not.
  EXPECT_EQ(errors_of(scenario(kModel, "pp: 2 dp: 4 schedule: interleaved_one_f_one_b virtual_stages: 2",
                               "global_batch_size: 4")),
            std::vector<std::string>{
                "t.textproto:5:14: workload.training.global_batch_size: 4 gives 1 micro-batches per pipeline, not a "
                "multiple of pp = 2 as interleaved_one_f_one_b needs (expected a multiple of 8)"});
}

TEST(ScenarioIoErrors, ZeroStageOutOfRange) {
  EXPECT_EQ(
      errors_of(scenario(kModel, "dp: 8 zero_stage: 4", "global_batch_size: 8")),
      std::vector<std::string>{"t.textproto:4:20: workload.parallel.zero_stage: got 4 (expected an integer from 0 "
                               "to 3: 0 = none, 1 = optimizer state, 2 = + gradients, 3 = + parameters sharded "
                               "over DP)"});
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 zero_stage: -1", "global_batch_size: 8")).size(), 1u);
  EXPECT_EQ(
      load_scenario_text(scenario(kModel, "dp: 8 zero_stage: 3", "global_batch_size: 8"), "t.textproto", Format::text)
          .parallel.zero_stage,
      3);
}

TEST(ScenarioIoErrors, TpCommOverlapNeedsSequenceParallel) {
  EXPECT_EQ(errors_of(scenario(kModel, "tp: 8 tp_comm_overlap: true", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:20: workload.parallel.tp_comm_overlap: needs sequence parallelism (expected "
                "sequence_parallel: true, or tp_comm_overlap: false)"});
}

TEST(ScenarioIoErrors, FsdpFieldsNeedZero3) {
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 zero_stage: 2 reshard_after_forward: false", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:34: workload.parallel.reshard_after_forward: false with zero_stage 2: only ZeRO-3 / "
                "FSDP gathers parameters per layer (expected zero_stage: 3, or reshard_after_forward: true)"});
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 zero_stage: 3 reshard_after_backward: false", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:34: workload.parallel.reshard_after_backward: false needs the parameters kept after "
                "forward (expected reshard_after_forward: false, or reshard_after_backward: true)"});
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 zero_stage: 3 param_gather_bytes: 3", "global_batch_size: 8")),
            std::vector<std::string>{"t.textproto:4:34: workload.parallel.param_gather_bytes: got 3 (expected 0 for "
                                     "the weights' width, 2 or 4)"});
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 zero_stage: 1 param_gather_bytes: 4", "global_batch_size: 8")),
            std::vector<std::string>{
                "t.textproto:4:34: workload.parallel.param_gather_bytes: got 4 with zero_stage 1: only ZeRO-3 / FSDP "
                "gathers parameters per layer (expected zero_stage: 3, or param_gather_bytes: 0)"});
  EXPECT_EQ(
      errors_of(scenario(kModel, "dp: 8 zero_stage: 1 grad_sync_every_microbatch: false", "global_batch_size: 8")),
      std::vector<std::string>{
          "t.textproto:4:34: workload.parallel.grad_sync_every_microbatch: false with zero_stage 1: gradients "
          "are reduced once per iteration already (expected zero_stage: 2 or 3, or grad_sync_every_microbatch: "
          "true)"});
  const models::Scenario ok = load_scenario_text(
      scenario(kModel,
               "dp: 8 zero_stage: 3 reshard_after_forward: false reshard_after_backward: false param_gather_bytes: 4 "
               "grad_sync_every_microbatch: false",
               "global_batch_size: 8"),
      "t.textproto", Format::text);
  EXPECT_FALSE(ok.parallel.reshard_after_forward);
  EXPECT_FALSE(ok.parallel.reshard_after_backward);
  EXPECT_EQ(ok.parallel.param_gather_bytes, 4);
  EXPECT_FALSE(ok.parallel.grad_sync_every_microbatch);
}

TEST(ScenarioIoErrors, MixtureOfExpertsFields) {
  const std::string moe = kModel + " num_experts: 8";
  EXPECT_NO_THROW(
      load_scenario_text(scenario(moe, "dp: 8 ep: 4", "global_batch_size: 8"), "t.textproto", Format::text));
  EXPECT_EQ(errors_of(scenario(moe + " moe_top_k: 9 moe_capacity_factor: 0.5 first_dense_layers: 8", "dp: 8 ep: 3",
                               "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:3:117: workload.model.moe_top_k: got 9 (expected an integer from 1 to num_experts = 8)",
                "t.textproto:3:130: workload.model.moe_capacity_factor: got 0.5 (expected 0 for dropless routing, or "
                "a number from 1 to 64)",
                "t.textproto:3:155: workload.model.first_dense_layers: got 8 (expected an integer from 0 to "
                "num_layers - 1 = 7)",
                "t.textproto:4:20: workload.parallel.ep: 3 does not divide num_experts 8 (expected a divisor of 8)"}));
  EXPECT_EQ(errors_of(scenario(moe, "tp: 2 dp: 4 ep: 8", "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:4:3: workload.parallel.sequence_parallel: a MoE model with tp > 1 needs sequence "
                "parallelism, as Megatron-Core does (expected sequence_parallel: true)",
                "t.textproto:4:26: workload.parallel.ep: 8 does not divide dp 4 (expected a divisor of dp: experts "
                "are split over data-parallel ranks)"}));
  EXPECT_EQ(errors_of(scenario(kModel + " moe_top_k: 2", "dp: 8 ep: 2", "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:3:102: workload.model.moe_top_k: is set but num_experts is 0 (expected num_experts >= 1 "
                "for a MoE model)",
                "t.textproto:4:20: workload.parallel.ep: got 2 for a dense model (expected 1, or num_experts >= 1)"}));
}

TEST(ScenarioIoErrors, UnknownNodeTemplateAndGpu) {
  const std::string text = "cluster { node_template: \"dgx_h10\" gpu: \"H100\" }\n";
  // In line:column order: after the workload's "not set" errors at 1:1 (the file has no workload).
  const std::vector<std::string> errors = errors_of(text, Format::text, {"workload.model.num_layers=1"});
  const auto template_error =
      std::find(errors.begin(), errors.end(),
                "t.textproto:1:11: cluster.node_template: unknown node template \"dgx_h10\", did you mean "
                "\"dgx_h100\"? (expected one of: " +
                    joined(models::node_template_names()) + ")");
  ASSERT_NE(template_error, errors.end());
  ASSERT_NE(template_error + 1, errors.end());
  EXPECT_EQ(*(template_error + 1),
            "t.textproto:1:36: cluster.gpu: unknown GPU \"H100\" (expected \"\" for the node "
            "template's GPU, or one of: " +
                joined(models::gpu_names()) + ")");
}

TEST(ScenarioIoErrors, PrecisionTheGpuLacks) {
  // The catalog's A100 has no fp8 peak (Ampere has no fp8 tensor cores).
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8", "global_batch_size: 8 precision: fp8"), Format::text,
                      {"cluster.node_template=dgx_a100"}),
            std::vector<std::string>{
                "t.textproto:5:35: workload.training.precision: fp8 is not supported by A100-SXM4-80GB (expected "
                "one of: fp32, tf32, fp16, bf16)"});
}

TEST(ScenarioIoErrors, FabricNoneWithSeveralNodes) {
  EXPECT_EQ(errors_of("cluster {\n  num_nodes: 2\n  fabric { kind: none }\n}\nworkload {\n  model { " + kModel +
                      " }\n  parallel { dp: 16 }\n  training { global_batch_size: 16 }\n}\n"),
            std::vector<std::string>{
                "t.textproto:3:12: cluster.fabric.kind: none cannot connect 2 nodes (expected rail_optimized or "
                "fat_tree when num_nodes > 1)"});
}

TEST(ScenarioIoErrors, NonFiniteAndOutOfRangeNumbers) {
  EXPECT_EQ(errors_of(scenario(kModel, "dp: 8 dp_bucket_bytes: 0", "global_batch_size: 8 train_tokens: nan"),
                      Format::text, {"cluster.fabric.oversubscription=0.5", "cluster.fabric.switch_latency_ns=-1"}),
            (std::vector<std::string>{
                "--set: cluster.fabric.oversubscription: got 0.5 (expected a finite number >= 1)",
                "--set: cluster.fabric.switch_latency_ns: got -1 (expected an integer from 0 to 1000000000: the "
                "simulator's range)",
                "t.textproto:4:20: workload.parallel.dp_bucket_bytes: got 0 (expected a finite number > 0)",
                "t.textproto:5:35: workload.training.train_tokens: got nan (expected 0 for no token budget, or a whole "
                "number of tokens from 1 to 1e15: about 28x the largest published pretraining runs: Qwen3 36T tokens "
                "(Qwen3 Technical "
                "Report 2025), Llama 3 15.6T (Meta 2024))"}));
}

TEST(ScenarioIoErrors, SeveralErrorsCollectedAtOnce) {
  // Three independent semantic errors in one file, reported together in field order.
  EXPECT_EQ(errors_of(scenario("num_layers: 0 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 "
                               "seq_length: 2048",
                               "tp: 3 pp: 1 dp: 8", "global_batch_size: 8")),
            (std::vector<std::string>{
                "t.textproto:3:11: workload.model.num_layers: got 0 (expected an integer from 1 to 100000: the "
                "simulator's range)",
                "t.textproto:4:14: workload.parallel.tp: 3 does not divide num_attention_heads 16 (expected a "
                "divisor of 16)",
                "t.textproto:4:26: workload.parallel.dp: tp * pp * dp = 3 * 1 * 8 = 24 but the cluster has 8 GPUs "
                "(1 x dgx_h100 with 8 GPUs each) (expected tp * pp * dp = 8)"}));
}

// ------------------------------------------------------------------------------------------------
// The simulator's range and the later semantic rules (scenarios/README.md, "Limits" and "Checks")
// ------------------------------------------------------------------------------------------------

TEST(ScenarioIoLimits, SizesBeyondTheSimulatorsRangeAreErrors) {
  EXPECT_EQ(errors_of(small(), Format::text, {"workload.model.seq_length=1000000000"}),
            std::vector<std::string>{"--set: workload.model.seq_length: got 1000000000 (expected an integer from 1 to "
                                     "16777216: the simulator's range)"});
  EXPECT_EQ(
      errors_of(small(), Format::text, {"options.iterations=2147483647"}),
      std::vector<std::string>{
          "--set: options.iterations: got 2147483647 (expected an integer from 1 to 1000: the simulator's range)"});
  EXPECT_EQ(errors_of(small(), Format::text, {"cluster.fabric.oversubscription=1e12"}),
            std::vector<std::string>{
                "--set: cluster.fabric.oversubscription: got 1e12 (expected 1 to 1000: the simulator's range)"});
  const auto too_many = errors_of(small(), Format::text, {"cluster.num_nodes=268435455"});
  ASSERT_FALSE(too_many.empty());
  EXPECT_EQ(too_many[0],
            "--set: cluster.num_nodes: 268435455 nodes of 8 GPUs = 2147483640 GPUs (expected at most 1048576 GPUs: the "
            "simulator's range)");
}

TEST(ScenarioIoErrors, TpMustDivideFfnHiddenSize) {
  EXPECT_EQ(errors_of(small(" ffn_hidden_size: 4097")),
            std::vector<std::string>{"t.textproto:5:14: workload.parallel.tp: 2 does not divide ffn_hidden_size 4097 "
                                     "(expected a divisor of 4097)"});
}

TEST(ScenarioIoErrors, OverlapParamGatherNeedsZero) {
  EXPECT_EQ(errors_of(small("", " overlap_param_gather: true")),
            std::vector<std::string>{"t.textproto:5:32: workload.parallel.overlap_param_gather: needs the distributed "
                                     "optimizer, which gathers parameters (expected zero_stage: 1 or 2, or "
                                     "overlap_param_gather: false)"});
}

TEST(ScenarioIoErrors, OverlapParamGatherNotWithZero3) {
  EXPECT_EQ(errors_of(small("", " zero_stage: 3 overlap_param_gather: true")),
            std::vector<std::string>{"t.textproto:5:46: workload.parallel.overlap_param_gather: ZeRO-3 gathers each "
                                     "layer's parameters right before use, with prefetch, not after the step "
                                     "(expected overlap_param_gather: false with zero_stage: 3)"});
}

TEST(ScenarioIoErrors, TextMustBeUtf8) {
  const std::string text = "name: \"\\xff\\xfe\"\n" + small().substr(small().find('\n') + 1);
  EXPECT_EQ(errors_of(text),
            std::vector<std::string>{"t.textproto:1:1: name: is not valid UTF-8 (expected UTF-8 text)"});
}

TEST(ScenarioIoErrors, ResNetFieldsArePositioned) {
  const std::string text =
      "cluster { node_template: \"dgx_a100\" }\n"
      "workload {\n"
      "  model { family: resnet num_layers: 34 hidden_size: 1024 image_size: 8 }\n"
      "  parallel { tp: 2 dp: 4 }\n"
      "  training { global_batch_size: 256 micro_batch_size: 64 }\n"
      "}\n";
  const std::vector<std::string> errors = errors_of(text);
  const std::vector<std::string> expected_starts = {
      "t.textproto:3:26: workload.model.num_layers: got 34 for a ResNet (expected the depth: 50, 101 or 152)",
      "t.textproto:3:59: workload.model.image_size: got 8",
      "t.textproto:3:41: workload.model.hidden_size: is a transformer field but family is resnet",
      "t.textproto:4:14: workload.parallel.tp: got 2 for a ResNet (expected 1: ResNets are trained with DDP)"};
  for (const std::string& want : expected_starts)
    EXPECT_TRUE(std::any_of(errors.begin(), errors.end(), [&](const std::string& e) { return e.rfind(want, 0) == 0; }))
        << "missing: " << want;
  // A transformer with a ResNet field.
  const std::vector<std::string> t = errors_of(
      "workload {\n  model { num_layers: 2 hidden_size: 64 num_attention_heads: 4 vocab_size: 100 seq_length: 8 "
      "num_classes: 10 }\n  training { global_batch_size: 8 }\n  parallel { dp: 8 }\n}\n");
  EXPECT_TRUE(std::any_of(t.begin(), t.end(), [](const std::string& e) {
    return e.find("workload.model.num_classes: is set but family is transformer") != std::string::npos;
  }));
}

// Power and thermal fields: every bad value names its field with what was expected.
TEST(ScenarioIoErrors, PowerAndThermalFields) {
  EXPECT_EQ(errors_of(small() + "power { gpu_power_limit_w: -5 pue: 0.9 }\n"),
            (std::vector<std::string>{
                "t.textproto:8:9: power.gpu_power_limit_w: got -5 (expected a finite number >= 0)",
                "t.textproto:8:31: power.pue: got 0.9 (expected 1 to 3 (facility / IT power; 1 = no overhead))"}));
  EXPECT_EQ(errors_of(small() + "power { gpu_power_limit_w: 800 }\n"),
            (std::vector<std::string>{"t.textproto:8:9: power.gpu_power_limit_w: got 800 W (expected 0 for no cap, "
                                      "or 200 to 700 W (the TDP) for H100-SXM5-80GB: nvidia-smi -pl refuses caps "
                                      "above its Max Power Limit, the TDP; leave the field out, or 0, for none)"}));
  // Below the board's minimum, as `nvidia-smi -pl 100` refuses it on an H100 SXM: Min Power Limit
  // 200 W (nvidia-smi -q, shared data power-thermal pt01), from a file and from --set.
  const std::string refused_100 =
      "power.gpu_power_limit_w: got 100 W (expected 0 for no cap, or 200 to 700 W (the TDP) for H100-SXM5-80GB: "
      "nvidia-smi -pl refuses caps below its Min Power Limit)";
  EXPECT_EQ(errors_of(small() + "power { gpu_power_limit_w: 100 }\n"),
            (std::vector<std::string>{"t.textproto:8:9: " + refused_100}));
  EXPECT_EQ(errors_of(small(), Format::text, {"power.gpu_power_limit_w=100"}),
            (std::vector<std::string>{"--set: " + refused_100}));
  EXPECT_TRUE(errors_of(small(), Format::text, {"power.gpu_power_limit_w=199.9"}).size() == 1);
  EXPECT_NO_THROW(load_scenario_text(small(), "t.textproto", Format::text, {"power.gpu_power_limit_w=200"}));
  // No published minimum (H100 PCIe): the model's floor, 50 + (350 - 50) x (345/1980) x
  // (0.725/1.10)^2 = 72.7 -> 73 W, the power at the lowest clock under full tensor load.
  const std::string pcie =
      "name: \"t\"\ncluster { node_template: \"pcie_8gpu_2socket\" gpu: \"H100-PCIe-80GB\" num_nodes: 1 }\n"
      "workload {\n  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: "
      "2048 }\n  parallel { dp: 8 }\n  training { global_batch_size: 16 }\n}\n";
  EXPECT_EQ(errors_of(pcie, Format::text, {"power.gpu_power_limit_w=72"}),
            (std::vector<std::string>{
                "--set: power.gpu_power_limit_w: got 72 W (expected 0 for no cap, or 73 to 350 W (the TDP) for "
                "H100-PCIe-80GB: below it the GPU draws more than the cap even at its lowest clock under full tensor "
                "load; the catalog has no published Min Power Limit for it)"}));
  EXPECT_EQ(errors_of(small() + "thermal { supply_air_c: -300 gpu_airflow_fraction: [1, 0] }\n"),
            (std::vector<std::string>{
                "t.textproto:8:11: thermal.supply_air_c: got -300 (expected 0 to 60 C)",
                "t.textproto:8:56: thermal.gpu_airflow_fraction[1]: got 0 (expected a fraction > 0 and <= 1 of the "
                "design airflow)"}));
  // Each list element is pointed at, also across repeated occurrences and in JSON.
  EXPECT_EQ(
      errors_of(small() + "thermal {\n  gpu_airflow_fraction: [1, 1,\n    -0.5, 1]\n  gpu_airflow_fraction: 2\n}\n"),
      (std::vector<std::string>{
          "t.textproto:10:5: thermal.gpu_airflow_fraction[2]: got -0.5 (expected a fraction > 0 and <= 1 of "
          "the design airflow)",
          "t.textproto:11:3: thermal.gpu_airflow_fraction[4]: got 2 (expected a fraction > 0 and <= 1 of the "
          "design airflow)"}));
  EXPECT_EQ(errors_of(small() + "thermal { cooling: liquid rack_cooling_capacity_w: 1000 }\n"),
            (std::vector<std::string>{"t.textproto:8:27: thermal.rack_cooling_capacity_w: applies to air cooling "
                                      "(expected 0 with cooling: liquid)"}));
  // A rack-scale template sets its cooling and rack size (NodeTemplate::liquid_cooled, gpus_per_rack):
  // unset they follow the rack, written otherwise they are refused.
  std::string nvl72 = scenario(kModel, "tp: 8 dp: 9", "global_batch_size: 9");
  nvl72.replace(nvl72.find("dgx_h100"), 8, "gb200_nvl72");
  const models::Scenario rack = load_scenario_text(nvl72, "t.textproto", Format::text, {});
  EXPECT_EQ(rack.thermal.cooling, models::Cooling::liquid);
  EXPECT_EQ(rack.thermal.nodes_per_rack, 1);
  const models::Scenario half = load_scenario_text(nvl72, "t.textproto", Format::text,
                                                   {"cluster.node_template=gb200_nvl72/36", "workload.parallel.tp=4"});
  EXPECT_EQ(half.thermal.nodes_per_rack, 2);
  EXPECT_EQ(load_scenario_text(small(), "t.textproto", Format::text, {}).thermal.cooling, models::Cooling::air);
  EXPECT_EQ(errors_of(nvl72 + "thermal { cooling: air nodes_per_rack: 4 }\n"),
            (std::vector<std::string>{
                "t.textproto:7:11: thermal.cooling: got air (expected liquid: gb200_nvl72 is built with cold plates "
                "only; leave it unset or write liquid)",
                "t.textproto:7:24: thermal.nodes_per_rack: got 4 (expected 1: gb200_nvl72 is a rack of 72 GPUs in "
                "nodes of 72; leave it unset)"}));
  EXPECT_EQ(errors_of(small() + "power { psu_redundant: 6 }\n"),
            (std::vector<std::string>{"t.textproto:8:9: power.psu_redundant: got 6 (expected 0 to 5: dgx_h100 has "
                                      "6 power supplies)"}));
  EXPECT_EQ(errors_of(small() + "power { cpu_load_fraction: 1.5 comm_fraction: -0.1 }\n"),
            (std::vector<std::string>{"t.textproto:8:9: power.cpu_load_fraction: got 1.5 (expected 0 to 1)",
                                      "t.textproto:8:32: power.comm_fraction: got -0.1 (expected 0 to 1)"}));
  // Below absolute zero (-273.15 C), negative resistance and capacitance, no racks.
  EXPECT_EQ(errors_of(small() + "thermal { cooling: liquid coolant_c: -300 r_k_per_w: -0.1 c_j_per_k: -5 "
                                "nodes_per_rack: 0 }\n"),
            (std::vector<std::string>{
                "t.textproto:8:27: thermal.coolant_c: got -300 (expected 0 to 70 C)",
                "t.textproto:8:43: thermal.r_k_per_w: got -0.1 (expected 0 to 10 K/W; 0 = the default)",
                "t.textproto:8:59: thermal.c_j_per_k: got -5 (expected 0 to 1e+06 J/K; 0 = the default)",
                "t.textproto:8:73: thermal.nodes_per_rack: got 0 (expected an integer from 1 to 1000: the "
                "simulator's range)"}));
  // A fresh user's 1e308: the run reported a GPU 1.77e62 K from its steady state, exit 0.
  EXPECT_EQ(
      errors_of(small() + "thermal { r_k_per_w: 11 c_j_per_k: 1e308 }\n"),
      (std::vector<std::string>{"t.textproto:8:11: thermal.r_k_per_w: got 11 (expected 0 to 10 K/W; 0 = the default)",
                                "t.textproto:8:25: thermal.c_j_per_k: got 1e308 (expected 0 to 1e+06 J/K; 0 = "
                                "the default)"}));
  // Host memory below one DDR3-800 channel's 6.4 GB/s by far: the offload time overflowed the clock.
  EXPECT_EQ(
      errors_of(small(), Format::text,
                {"workload.offload.optimizer=true", "workload.parallel.zero_stage=1",
                 "workload.offload.host_memory_bytes_per_s=1e-300", "workload.offload.cpu_adam_efficiency=0.001"}),
      (std::vector<std::string>{"--set: workload.offload.host_memory_bytes_per_s: got 1e-300 (expected 0 = the CPU's "
                                "table figure, or at least 1e9 bytes/s: one DDR3-800 channel moves 6.4e9)",
                                "--set: workload.offload.cpu_adam_efficiency: got 0.001 (expected a number from 0.01 "
                                "to 1)"}));
}

}  // namespace
}  // namespace traincast::io
