// LoRA scenario fields (workload.training.lora_rank, lora_target_modules): loading, round trip,
// and the exact positioned error for each bad input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

/// A valid Llama-style scenario on one DGX A100 with `model_extra` and `training_extra` spliced
/// in. Line 4 holds the model, line 6 the training fields; "  training { global_batch_size: 8"
/// is 33 characters, so the first extra field starts at column 35.
std::string llama(const std::string& training_extra, const std::string& model_extra = " gated_mlp: true") {
  return "name: \"t\"\n"
         "cluster { node_template: \"dgx_a100\" num_nodes: 1 }\n"
         "workload {\n"
         "  model { num_layers: 4 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 1024" +
         model_extra +
         " }\n"
         "  parallel { dp: 8 }\n"
         "  training { global_batch_size: 8" +
         training_extra +
         " }\n"
         "}\n";
}

using test_support::errors_of;

TEST(LoraIo, LoadsAndRoundTrips) {
  const models::Scenario sc =
      load_scenario_text(llama(" lora_rank: 16 lora_target_modules: \"q,k,v,o\""), "t.textproto", Format::text);
  EXPECT_EQ(sc.training.lora_rank, 16);
  EXPECT_EQ(sc.training.lora_target_modules, "q,k,v,o");
  const models::Scenario back = load_scenario_text(scenario_to_text(sc), "rt.textproto", Format::text);
  EXPECT_EQ(back.training.lora_rank, 16);
  EXPECT_EQ(back.training.lora_target_modules, "q,k,v,o");
  EXPECT_TRUE(back == sc);  // and every other field
  // Default targets when only the rank is given.
  EXPECT_EQ(load_scenario_text(llama(" lora_rank: 8"), "t.textproto", Format::text).training.lora_target_modules,
            "q,v");
}

TEST(LoraIo, PositionedErrors) {
  EXPECT_EQ(
      errors_of(llama(" lora_rank: -1")),
      std::vector<std::string>{"t.textproto:6:35: workload.training.lora_rank: got -1 (expected an integer from 0 "
                               "to 1048576: 0 for full training, or a LoRA rank up to hidden_size)"});
  EXPECT_EQ(errors_of(llama(" lora_rank: 2048")),
            std::vector<std::string>{"t.textproto:6:35: workload.training.lora_rank: got 2048 (expected 0 for full "
                                     "training, or a LoRA rank from 1 to hidden_size = 1024)"});
  EXPECT_EQ(errors_of(llama(" lora_rank: 8 lora_target_modules: \"q,qkv\"")),
            std::vector<std::string>{"t.textproto:6:48: workload.training.lora_target_modules: \"q,qkv\": unknown "
                                     "module \"qkv\" (expected comma-separated names from q, k, v, o, gate, up, "
                                     "down, or all-linear)"});
  EXPECT_EQ(errors_of(llama(" lora_rank: 8 lora_target_modules: \"gate\"", "")),
            std::vector<std::string>{"t.textproto:6:48: workload.training.lora_target_modules: \"gate\": module "
                                     "\"gate\" needs a gated MLP (model.gated_mlp: true) (expected comma-separated "
                                     "names from q, k, v, o, gate, up, down, or all-linear)"});
  EXPECT_EQ(errors_of(llama(" lora_target_modules: \"q\"")),
            std::vector<std::string>{"t.textproto:6:35: workload.training.lora_target_modules: is set but lora_rank "
                                     "is 0 (expected lora_rank >= 1)"});
  EXPECT_EQ(errors_of(llama(" lora_rank: 8", " num_experts: 8 moe_top_k: 2")),
            std::vector<std::string>{"t.textproto:6:35: workload.training.lora_rank: got 8 for a model LoRA is not "
                                     "modelled for (expected 0, or a dense decoder: family transformer, "
                                     "architecture decoder, num_experts 0)"});
}

}  // namespace
}  // namespace traincast::io
