// Dropout (workload.model.attention_dropout, hidden_dropout): the masks' activation memory against
// Korthikanti et al. 2022 §4.1 worked by hand, no mask memory or mask traffic without dropout
// (Llama), the model zoo's values, and positioned errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/executor/training_executor.h"
#include "models/io/scenario_io.h"
#include "models/workload/memory_model.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::models {
namespace {

const std::string kSourceDir = TRAINCAST_SOURCE_DIR;

/// One Llama-2-7B layer (Touvron et al. 2023: h 4096, 32 heads, SwiGLU width 11008), s 4096,
/// micro-batch 1, bf16, one GPU, no recomputation.
Scenario llama2_7b_layer(bool flash) {
  Scenario sc;
  sc.cluster.node_template = "dgx_a100";
  sc.model.num_layers = 1;
  sc.model.hidden_size = 4096;
  sc.model.num_attention_heads = 32;
  sc.model.ffn_hidden_size = 11008;
  sc.model.gated_mlp = true;
  sc.model.untied_embeddings = true;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 4096;
  sc.parallel.dp = 8;
  sc.training.global_batch_size = 8;
  sc.training.micro_batch_size = 1;
  sc.training.precision = Precision::bf16;
  sc.training.recompute = Recompute::none;
  sc.training.flash_attention = flash;
  return sc;
}

TEST(Dropout, LlamaLayerActivationsWithAndWithoutMasks) {
  // Korthikanti et al. 2022 §4.1, per layer, 16-bit activations, 1-byte masks:
  //   attention: QKV input 2sbh, Q and K 4sbh, softmax output 2as²b, its dropout mask as²b,
  //     the dropped probabilities 2as²b (input of attention x V), V 2sbh, projection input 2sbh,
  //     the projection's dropout mask sbh                          = 11sbh + 5as²b
  //   MLP (GPT, 4h): FC1 input 2sbh, GeLU input 8sbh, FC2 input 8sbh, dropout mask sbh = 19sbh;
  //     SwiGLU of width f (Llama): FC1 input 2sbh, gate and up outputs 4sbf, FC2 input 2sbf, mask
  //     sbh                                                        = 3sbh + 6sbf
  //   two LayerNorm (RMSNorm) inputs                               = 4sbh
  // Masks: sbh (projection) + as²b (attention probabilities) + sbh (MLP output), plus the dropped
  // copy 2as²b that exists only because of dropout (without it attention x V reads the softmax
  // output, already counted).
  // Llama-2-7B, s = 4096, b = 1: sbh = 16,777,216; sbf = 45,088,768; as²b = 536,870,912.
  //   with dropout:    18sbh + 6sbf + 5as²b = 301,989,888 + 270,532,608 + 2,684,354,560 = 3,256,877,056 B
  //   without dropout: 16sbh + 6sbf + 2as²b = 268,435,456 + 270,532,608 + 1,073,741,824 = 1,612,709,888 B
  // With flash attention nothing s² is kept (a 4-byte log-sum-exp per head and row, 4as = 524,288 B;
  // the attention-dropout mask is regenerated from the RNG state), so only the 2sbh of hidden masks
  // differ: 18sbh + 6sbf + 4as = 573,046,784 B against 16sbh + 6sbf + 4as = 539,492,352 B (-5.9%).
  Scenario sc = llama2_7b_layer(false);
  sc.model.attention_dropout = 0.1;
  sc.model.hidden_dropout = 0.1;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc), 3256877056.0);
  sc.model.attention_dropout = 0.0;
  sc.model.hidden_dropout = 0.0;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc), 1612709888.0);
  // Each kind alone: hidden dropout's 2sbh; attention dropout's 3as²b.
  sc.model.hidden_dropout = 0.1;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc), 1612709888.0 + 2 * 16777216.0);
  sc.model.hidden_dropout = 0.0;
  sc.model.attention_dropout = 0.1;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(sc), 1612709888.0 + 3 * 536870912.0);

  Scenario fa = llama2_7b_layer(true);
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(fa), 573046784.0);  // struct default: 0.1 (Megatron-LM)
  fa.model.attention_dropout = 0.0;
  fa.model.hidden_dropout = 0.0;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(fa), 539492352.0);
}

TEST(Dropout, NoDropoutRunsNoMaskKernels) {
  // Without dropout the dropout kernels and the masks' bytes are gone: strictly less time, for
  // unfused attention (the s² dropout kernels) more so than with flash attention (mask bytes only).
  for (bool flash : {false, true}) {
    Scenario with = llama2_7b_layer(flash);
    with.model.num_layers = 4;
    with.model.seq_length = 2048;
    Scenario without = with;
    without.model.attention_dropout = 0.0;
    without.model.hidden_dropout = 0.0;
    const Report a = simulate_training(with), b = simulate_training(without);
    EXPECT_LT(b.breakdown.compute_s, a.breakdown.compute_s) << flash;
    EXPECT_LT(b.memory.activations_bytes, a.memory.activations_bytes) << flash;
    // A probability's value does not matter, only whether dropout runs.
    Scenario other = with;
    other.model.attention_dropout = 0.3;
    other.model.hidden_dropout = 0.05;
    EXPECT_EQ(simulate_training(other).iteration_time_s, a.iteration_time_s) << flash;
  }
}

TEST(Dropout, ModelZooValues) {
  // Llama-family entries train without dropout; GPT-3 and BERT keep 0.1.
  for (const char* f : {"llama2_7b", "llama3_70b", "llama3_405b", "mixtral_8x7b", "deepseek_v2_lite"}) {
    const Scenario sc = io::load_scenario_file(kSourceDir + "/scenarios/models/" + f + ".textproto");
    EXPECT_EQ(sc.model.attention_dropout, 0.0) << f;
    EXPECT_EQ(sc.model.hidden_dropout, 0.0) << f;
  }
  for (const char* f : {"gpt3_175b", "bert_large"}) {
    const Scenario sc = io::load_scenario_file(kSourceDir + "/scenarios/models/" + f + ".textproto");
    EXPECT_EQ(sc.model.attention_dropout, 0.1) << f;
    EXPECT_EQ(sc.model.hidden_dropout, 0.1) << f;
  }
}

using io::test_support::errors_of;

std::string text_with(const std::string& model_extra, const std::string& family = "") {
  return "name: \"t\"\n"
         "cluster { node_template: \"dgx_a100\" num_nodes: 1 }\n"
         "workload {\n"
         "  model { " +
         family + "num_layers: 2 hidden_size: 256 num_attention_heads: 4 vocab_size: 1000 seq_length: 128 " +
         model_extra +
         " }\n"
         "  parallel { dp: 8 }\n"
         "  training { global_batch_size: 8 }\n"
         "}\n";
}

TEST(Dropout, PositionedErrors) {
  const Scenario ok =
      io::load_scenario_text(text_with("attention_dropout: 0 hidden_dropout: 0.2"), "t.textproto", io::Format::text);
  EXPECT_EQ(ok.model.attention_dropout, 0.0);
  EXPECT_EQ(ok.model.hidden_dropout, 0.2);
  std::vector<std::string> e = errors_of(text_with("attention_dropout: 1"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0],
            "t.textproto:4:98: workload.model.attention_dropout: got 1 (expected a probability >= 0 and < 1: 0.1 for "
            "GPT/BERT, 0 for Llama-family models)");
  e = errors_of(text_with("hidden_dropout: -0.1"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("workload.model.hidden_dropout: got -0.1 (expected a probability >= 0 and < 1"),
            std::string::npos);
  e = errors_of(
      "name: \"t\"\ncluster { node_template: \"dgx_a100\" num_nodes: 1 }\n"
      "workload { model { family: resnet num_layers: 50 hidden_dropout: 0 } parallel { dp: 8 } "
      "training { global_batch_size: 256 micro_batch_size: 32 } }\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("workload.model.hidden_dropout: is a transformer field but family is resnet"), std::string::npos);
}

}  // namespace
}  // namespace traincast::models
