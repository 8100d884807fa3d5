// workload.training.elementwise_fusion (issue 17: eager vs compiled elementwise kernels): loaded
// into the struct, spelled the same by --set, and eager refused with its positioned error where
// its kernel list (torchtitan's dense Llama block) does not apply.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// Four DGX H100 (32 GPUs), DP 32; line 5 is the training block (its extra fields start at
/// column 36).
std::string scenario(const std::string& training, const std::string& model = "num_query_groups: 4 gated_mlp: true",
                     const std::string& parallel = "dp: 32") {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 4 }\n"
         "workload {\n"
         "  model { num_layers: 4 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 " +
         model + " }\n  parallel { " + parallel + " }\n  training { global_batch_size: 32 " + training + " }\n}\n";
}

TEST(ElementwiseFusionFields, LoadedWithTheFusedDefault) {
  EXPECT_EQ(load_scenario_text(scenario(""), "t.textproto", Format::text).training.elementwise_fusion,
            models::ElementwiseFusion::fused);
  EXPECT_EQ(load_scenario_text(scenario("elementwise_fusion: eager"), "t.textproto", Format::text)
                .training.elementwise_fusion,
            models::ElementwiseFusion::eager);
  EXPECT_EQ(
      load_scenario_text(scenario(""), "t.textproto", Format::text, {"workload.training.elementwise_fusion=eager"})
          .training.elementwise_fusion,
      models::ElementwiseFusion::eager);
}

TEST(ElementwiseFusionFields, BadValuesArePositioned) {
  const std::string why =
      ": workload.training.elementwise_fusion: is eager for a model whose eager ops are not modelled (expected "
      "fused, or a dense Llama-style decoder: family transformer, architecture decoder, gated_mlp true, "
      "num_experts 0, multi_latent_attention false; eager counts torchtitan's Llama block)";
  EXPECT_EQ(
      errors_of(scenario("elementwise_fusion: eager", "gated_mlp: true num_experts: 32 moe_top_k: 2", "dp: 32 ep: 32")),
      (std::vector<std::string>{"t.textproto:5:36" + why}));
  EXPECT_EQ(errors_of(scenario("elementwise_fusion: eager", "architecture: encoder")),
            (std::vector<std::string>{"t.textproto:5:36" + why}));
  EXPECT_EQ(errors_of(scenario("elementwise_fusion: eager", "num_query_groups: 4")),  // GPT-style MLP
            (std::vector<std::string>{"t.textproto:5:36" + why}));
  // fused is accepted on every model.
  EXPECT_EQ(load_scenario_text(
                scenario("elementwise_fusion: fused", "gated_mlp: true num_experts: 32 moe_top_k: 2", "dp: 32 ep: 32"),
                "t.textproto", Format::text)
                .training.elementwise_fusion,
            models::ElementwiseFusion::fused);
  const std::vector<std::string> bad = errors_of(scenario("elementwise_fusion: compiled"));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rfind("t.textproto:5:", 0), 0u) << bad[0];
}

}  // namespace
}  // namespace traincast::io
