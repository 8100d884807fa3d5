// BERT-style encoders: parameter counts against the papers, FLOP accounting against the decoder
// (bidirectional attention, masked-LM head on 15% of the positions), positioned errors for the
// encoder fields, utilisation fields, and the direction of the shipped what-ifs
// (scenarios/whatif/, scenarios/models/bert_large.textproto, tinybert.textproto).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/io/scenario_io.h"
#include "models/workload/transformer.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::models {
namespace {

const std::string kSourceDir = TRAINCAST_SOURCE_DIR;

ModelSpec bert_large() {
  ModelSpec m;
  m.architecture = Architecture::encoder;
  m.num_layers = 24;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.ffn_hidden_size = 4096;
  m.vocab_size = 30522;
  m.seq_length = 512;
  m.max_position_embeddings = 512;
  return m;
}

TEST(Encoder, BertLargeParameters) {
  // HF BertForPreTraining (bert-large-uncased): 336,226,108; BertModel (encoder + pooler):
  // 335,141,888 = total minus the MLM transform, its LayerNorm, the output bias and NSP. Devlin
  // et al. 2019 round to 340M.
  const ModelSpec m = bert_large();
  EXPECT_DOUBLE_EQ(total_parameters(m), 336226108.0);
  const double h = m.hidden_size;
  EXPECT_DOUBLE_EQ(total_parameters(m) - (h * h + h) - 2 * h - m.vocab_size - (2 * h + 2), 335141888.0);
}

TEST(Encoder, TinyBertParameters) {
  // Jiao et al. 2020, §4.1: TinyBERT4 has 14.5M parameters.
  ModelSpec m = bert_large();
  m.num_layers = 4;
  m.hidden_size = 312;
  m.num_attention_heads = 12;
  m.ffn_hidden_size = 1200;
  m.seq_length = 128;
  EXPECT_NEAR(total_parameters(m) / 1e6, 14.5, 0.05);
}

Scenario one_gpu(Architecture arch) {
  Scenario sc;
  sc.cluster.node_template = "pcie_1gpu_ib_hdr";
  sc.cluster.gpu = "A100-PCIe-80GB";
  sc.cluster.fabric.kind = FabricKind::none;
  sc.model = bert_large();
  sc.model.architecture = arch;
  sc.training.global_batch_size = 8;
  sc.training.micro_batch_size = 8;
  return sc;
}

TEST(Encoder, FlopsAgainstDecoderOfTheSameShape) {
  const Scenario enc = one_gpu(Architecture::encoder), dec = one_gpu(Architecture::decoder);
  // V: BERT's 30,522 WordPiece tokens padded to a multiple of 128 (tp 1), as Megatron-LM pads them.
  const double B = 8, s = 512, h = 1024, V = 30592, l = 24;
  // Decoder: SC21 72·B·s·l·h²(1 + s/(6h)) + 6·B·s·h·V. Encoder: the same layers, the MLM head on
  // 15% of the positions (dense h² + vocabulary), pooler + NSP per sequence.
  const double layers = 72 * B * s * l * h * h * (1 + s / (6 * h));
  EXPECT_NEAR(model_flops_per_iteration(dec) / (layers + 6 * B * s * h * V), 1.0, 1e-12);
  const double head = 3 * (B * s * 0.15 * (2 * h * h + 2 * h * V) + B * (2 * h * h + 4 * h));
  EXPECT_NEAR(model_flops_per_iteration(enc) / (layers + head), 1.0, 1e-12);
  EXPECT_LT(model_flops_per_iteration(enc), model_flops_per_iteration(dec));

  // Executed attention: the encoder's flash kernels do the full s², the causal decoder's half.
  const GpuSpec& gpu = find_gpu("A100-PCIe-80GB");
  const ComputeParams params = default_compute_params(gpu);
  const ModelPrograms pe = build_transformer_programs(enc, gpu, params);
  const ModelPrograms pd = build_transformer_programs(dec, gpu, params);
  auto segment_flops = [](const Program& p, const std::string& label) {
    for (const Segment& seg : p)
      if (seg.label == label) return seg.flops;
    ADD_FAILURE() << "no segment " << label;
    return 0.0;
  };
  const double attn_e = segment_flops(pe.layer_kinds[0].forward, "attn");
  EXPECT_DOUBLE_EQ(attn_e, 4 * B * s * s * h);
  EXPECT_DOUBLE_EQ(attn_e, 2 * segment_flops(pd.layer_kinds[0].forward, "attn"));
  // The MLM projection runs on 15% of the rows.
  EXPECT_NEAR(segment_flops(pe.head_forward, "logits") / segment_flops(pd.head_forward, "logits"), 0.15, 1e-12);
}

using io::test_support::errors_of;

std::string bert_text(const std::string& model_extra) {
  return "name: \"t\"\n"
         "cluster { node_template: \"dgx_a100\" num_nodes: 1 }\n"
         "workload {\n"
         "  model { num_layers: 2 hidden_size: 256 num_attention_heads: 4 vocab_size: 1000 seq_length: 128 " +
         model_extra +
         " }\n"
         "  parallel { dp: 8 }\n"
         "  training { global_batch_size: 8 }\n"
         "}\n";
}

TEST(Encoder, PositionedErrors) {
  EXPECT_NO_THROW(io::load_scenario_text(bert_text("architecture: encoder"), "t.textproto", io::Format::text));
  auto one = [](const std::string& extra) {
    const std::vector<std::string> e = errors_of(bert_text(extra));
    EXPECT_EQ(e.size(), 1u);
    return e.empty() ? std::string() : e[0];
  };
  EXPECT_EQ(one("mlm_prediction_fraction: 0.2"),
            "t.textproto:4:98: workload.model.mlm_prediction_fraction: is set but architecture is decoder (expected "
            "architecture: encoder)");
  EXPECT_NE(one("architecture: encoder mlm_prediction_fraction: 1.5")
                .find("t.textproto:4:120: workload.model.mlm_prediction_fraction: got 1.5 (expected a number > 0 "
                      "and <= 1"),
            std::string::npos);
  EXPECT_NE(one("architecture: encoder max_position_embeddings: 64")
                .find("workload.model.max_position_embeddings: got 64 (expected 0 for seq_length, or an integer >= "
                      "seq_length = 128)"),
            std::string::npos);
  EXPECT_NE(one("architecture: encoder gated_mlp: true").find("workload.model.gated_mlp: is true for an encoder"),
            std::string::npos);
  EXPECT_NE(one("architecture: transformer").find("architecture"), std::string::npos);
}

TEST(Encoder, RoundTripKeepsEncoderFields) {
  const Scenario sc = io::load_scenario_file(kSourceDir + "/scenarios/models/bert_large.textproto");
  EXPECT_EQ(sc.model.architecture, Architecture::encoder);
  const Scenario back = io::load_scenario_text(io::scenario_to_text(sc), "rt.textproto", io::Format::text);
  EXPECT_EQ(back.model.architecture, Architecture::encoder);
  EXPECT_DOUBLE_EQ(back.model.mlm_prediction_fraction, 0.15);
  EXPECT_EQ(back.model.max_position_embeddings, 512);
  EXPECT_TRUE(back == sc);  // and every other field
}

// scenarios/whatif/bert_large_4x_a30_ib.textproto: 4x A30 (4 x 165 TFLOP/s) with full
// recomputation (4/3 the layer FLOPs) must out-run one A100 (312 TFLOP/s) on sequences per second,
// and without recomputation the A30s' 24 GB must not hold the 64 x 512-token activations.
TEST(Encoder, WhatIfFourA30AgainstOneA100) {
  const Scenario a100 = io::load_scenario_file(kSourceDir + "/scenarios/models/bert_large.textproto");
  const Scenario a30 = io::load_scenario_file(kSourceDir + "/scenarios/whatif/bert_large_4x_a30_ib.textproto");
  const Report r100 = simulate_training(a100, nullptr);
  const Report r30 = simulate_training(a30, nullptr);
  EXPECT_FALSE(r100.memory.oom);
  EXPECT_FALSE(r30.memory.oom);
  const double seq_per_s_100 = a100.training.global_batch_size / r100.iteration_time_s;
  const double seq_per_s_30 = a30.training.global_batch_size / r30.iteration_time_s;
  EXPECT_GT(seq_per_s_30, seq_per_s_100);
  // Bounded by peak: 4 x 165 / 312 = 2.12x, divided by the recomputation's 4/3 share.
  EXPECT_LT(seq_per_s_30 / seq_per_s_100, 4 * 165.0 / 312.0);
  Scenario no_ckpt = a30;
  no_ckpt.training.recompute = Recompute::none;
  EXPECT_TRUE(simulate_training(no_ckpt, nullptr).memory.oom);
  EXPECT_GT(r30.utilization.nic_links_used, 0);  // the gradient all-reduce crosses InfiniBand
  EXPECT_GT(r30.utilization.nic_utilization_mean, 0.0);
}

// scenarios/models/tinybert.textproto: utilisation is reported and consistent with the breakdown.
TEST(Encoder, TinyBertUtilisationOnDgxA100) {
  const Scenario sc = io::load_scenario_file(kSourceDir + "/scenarios/models/tinybert.textproto");
  const Report r = simulate_training(sc, nullptr);
  const UtilizationReport& u = r.utilization;
  // Busy fraction of the breakdown's GPU: compute + optimizer over the iteration.
  EXPECT_NEAR(u.gpu_compute_busy_fraction_max, (r.breakdown.compute_s + r.breakdown.optimizer_s) / r.iteration_time_s,
              1e-9);
  EXPECT_GT(u.gpu_compute_busy_fraction_min, 0.0);
  EXPECT_LE(u.gpu_compute_busy_fraction_min, u.gpu_compute_busy_fraction_mean);
  EXPECT_LE(u.gpu_compute_busy_fraction_mean, u.gpu_compute_busy_fraction_max);
  EXPECT_GT(u.nvlink_links_used, 0);  // DP all-reduce over NVSwitch
  EXPECT_GT(u.nvlink_utilization_mean, 0.0);
  EXPECT_LE(u.nvlink_utilization_max, 1.0);
  EXPECT_EQ(u.nic_links_used, 0);  // one node
  // Small GEMMs (h = 312) keep the tensor cores far from peak.
  EXPECT_LT(r.mfu, u.gpu_compute_busy_fraction_mean);
}

}  // namespace
}  // namespace traincast::models
