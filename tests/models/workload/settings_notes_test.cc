// workload_settings_without_effect (models/workload/settings_notes.h): a note exactly where the
// memory model or the pipeline schedule ignores the field, none where it acts.
#include "models/workload/settings_notes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace traincast::models {
namespace {

Scenario base() {
  Scenario sc;
  sc.model.num_layers = 32;
  sc.parallel.pp = 4;
  sc.parallel.zero_stage = 1;
  sc.training.precision = Precision::bf16;
  sc.training.recompute = Recompute::selective;
  sc.training.flash_attention = true;
  return sc;
}

TEST(WorkloadSettingsNotes, NamedWhereTheFieldHasNoEffect) {
  EXPECT_TRUE(workload_settings_without_effect(base()).empty());
  Scenario sc = base();
  sc.parallel.uneven_stages = true;  // 4 stages of 8 layers: nothing uneven
  ASSERT_EQ(workload_settings_without_effect(sc).size(), 1u);
  EXPECT_EQ(workload_settings_without_effect(sc)[0],
            "workload.parallel.uneven_stages has no effect: pp 4 splits the 32 layers evenly (expected a pp that "
            "does not divide num_layers for uneven stages to act)");
  sc.model.num_layers = 30;  // 30 on 4 stages: it acts
  EXPECT_TRUE(workload_settings_without_effect(sc).empty());

  sc = base();
  sc.parallel.zero_implementation = ZeroImplementation::deepspeed;
  EXPECT_TRUE(workload_settings_without_effect(sc).empty());  // ZeRO-1 of a bf16 run: acts
  sc.parallel.reduce_bucket_elements = 2e8;
  EXPECT_TRUE(workload_settings_without_effect(sc).empty());
  sc.parallel.zero_stage = 3;
  const std::vector<std::string> z3 = workload_settings_without_effect(sc);
  ASSERT_EQ(z3.size(), 2u);
  EXPECT_EQ(z3[0].rfind("workload.parallel.zero_implementation deepspeed has no effect with zero_stage 3", 0), 0u);
  EXPECT_EQ(z3[1].rfind("workload.parallel.reduce_bucket_elements has no effect", 0), 0u);
  sc.parallel.zero_stage = 1;
  sc.training.precision = Precision::fp32;
  EXPECT_EQ(workload_settings_without_effect(sc).at(0).rfind(
                "workload.parallel.zero_implementation deepspeed has no effect with 32-bit training", 0),
            0u);

  sc = base();
  sc.training.selective_policy = SelectivePolicy::torchtitan_op;
  EXPECT_TRUE(workload_settings_without_effect(sc).empty());
  sc.training.flash_attention = false;  // torchtitan runs SDPA: without it Megatron's set holds
  EXPECT_EQ(workload_settings_without_effect(sc),
            std::vector<std::string>{"workload.training.selective_policy has no effect: flash_attention is off "
                                     "(expected selective recomputation of a dense model with flash attention, as "
                                     "torchtitan runs it; here Megatron's selective set is kept)"});
  sc.training.flash_attention = true;
  sc.training.recompute = Recompute::full;
  EXPECT_EQ(workload_settings_without_effect(sc).at(0),
            "workload.training.selective_policy has no effect: recompute is not selective (expected selective "
            "recomputation of a dense model with flash attention, as torchtitan runs it; here recompute full re-runs "
            "every layer's forward)");
  sc.training.recompute = Recompute::none;  // fresh-user finding: it said "Megatron's selective set is kept"
  EXPECT_NE(workload_settings_without_effect(sc).at(0).find("here recompute none keeps every activation)"),
            std::string::npos);
  sc = base();
  sc.parallel.zero_implementation = ZeroImplementation::deepspeed;
  sc.offload.optimizer = true;  // ZeRO-Offload's layout: not counted twice
  EXPECT_EQ(workload_settings_without_effect(sc).at(0).rfind(
                "workload.parallel.zero_implementation deepspeed has no effect with offload.optimizer", 0),
            0u);
}

// tp_overlap_implementation async_tp says how overlapped TP communication runs: named without
// tp_comm_overlap or without TP.
TEST(WorkloadSettingsNotes, AsyncTpNamedWithoutTpOverlap) {
  Scenario sc = base();
  sc.parallel.tp_overlap_implementation = TpOverlapImplementation::async_tp;
  EXPECT_EQ(workload_settings_without_effect(sc),
            std::vector<std::string>{"workload.parallel.tp_overlap_implementation async_tp has no effect: tp is 1 "
                                     "(expected tp_comm_overlap: true with tp > 1: it says how overlapped TP "
                                     "communication runs)"});
  sc.parallel.tp = 8;
  EXPECT_NE(workload_settings_without_effect(sc).at(0).find("no effect: tp_comm_overlap is off"), std::string::npos);
  sc.parallel.tp_comm_overlap = true;
  EXPECT_TRUE(workload_settings_without_effect(sc).empty());
}

// An fp8 recipe other than the default under bf16 (new-user pass: compare --vary over recipes gave
// identical columns without a word).
TEST(WorkloadSettingsNotes, Fp8RecipeNamedOutsideFp8) {
  Scenario sc = base();
  sc.training.precision = Precision::bf16;
  sc.training.fp8_recipe = Fp8Recipe::rowwise;
  EXPECT_EQ(compute_settings_without_effect(sc), (std::vector<std::string>{"workload.training.fp8_recipe rowwise has "
                                                                           "no effect: precision is bf16 (expected "
                                                                           "precision fp8)"}));
  sc.training.precision = Precision::fp8;
  EXPECT_TRUE(compute_settings_without_effect(sc).empty());
  sc.training.precision = Precision::bf16;
  sc.training.fp8_recipe = Fp8Recipe::delayed_tensorwise;  // the default: not told from unset
  EXPECT_TRUE(compute_settings_without_effect(sc).empty());
}

}  // namespace
}  // namespace traincast::models

namespace traincast::models {
namespace {

// training.attention_kernel cudnn acts on Hopper with fused attention (compute_model.cc
// with_compute_model; constants measured on an H200), and is named elsewhere.
TEST(WorkloadSettingsNotes, CudnnAttentionNamedWhereItHasNoEffect) {
  Scenario sc = base();
  sc.cluster.node_template = "dgx_h100";
  sc.training.attention_kernel = AttentionKernel::cudnn;
  ASSERT_EQ(workload_settings_without_effect(sc).size(), 1u);  // compute_model training_fit
  EXPECT_NE(workload_settings_without_effect(sc)[0].find("no effect with compute_model training_fit"),
            std::string::npos);
  sc.training.compute_model = ComputeModel::kernel;
  EXPECT_TRUE(workload_settings_without_effect(sc).empty());
  sc.cluster.node_template = "dgx_a100";
  ASSERT_EQ(workload_settings_without_effect(sc).size(), 1u);
  EXPECT_NE(workload_settings_without_effect(sc)[0].find("attention_kernel cudnn has no effect on A100"),
            std::string::npos)
      << workload_settings_without_effect(sc)[0];
  sc.cluster.node_template = "dgx_h100";
  sc.training.flash_attention = false;
  ASSERT_EQ(workload_settings_without_effect(sc).size(), 1u);
  EXPECT_EQ(
      workload_settings_without_effect(sc)[0],
      "workload.training.attention_kernel cudnn has no effect: flash_attention is off (expected fused attention)");
}

// FlashAttention has no 32-bit kernel (FlashAttention-2: fp16 and bf16): a 32-bit transformer run
// with flash_attention is told what is timed instead; 16-bit runs, runs without fused attention and
// CNNs are not.
TEST(WorkloadSettingsNotes, FlashAttentionAt32BitsSaysWhatRuns) {
  Scenario sc = base();
  sc.training.flash_attention = true;
  for (const Precision p : {Precision::fp32, Precision::tf32}) {
    sc.training.precision = p;
    const std::vector<std::string> notes = compute_settings_without_effect(sc);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].rfind(std::string("workload.training.flash_attention with precision ") + precision_name(p) +
                                 ": FlashAttention has no 32-bit kernel",
                             0),
              0u)
        << notes[0];
  }
  for (const Precision p : {Precision::fp16, Precision::bf16}) {
    sc.training.precision = p;
    EXPECT_TRUE(compute_settings_without_effect(sc).empty());
  }
  sc.training.precision = Precision::fp32;
  sc.training.flash_attention = false;
  EXPECT_TRUE(compute_settings_without_effect(sc).empty());
  sc.training.flash_attention = true;
  sc.model.family = ModelFamily::resnet;
  EXPECT_TRUE(compute_settings_without_effect(sc).empty());
}

}  // namespace
}  // namespace traincast::models
