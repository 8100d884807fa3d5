// Upper bounds of the workload's size fields (new-user test: train_tokens = 1e30 was accepted and
// printed a 1.6e20-day training). Bounds and their sources: scenarios/README.md, workload.training.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

// A small valid scenario (one DGX H100, DP 8); `training` is the body of its training block.
std::string with_training(const std::string& training) {
  return "cluster { node_template: \"dgx_h100\" }\n"
         "workload {\n"
         "  model { num_layers: 2 hidden_size: 256 num_attention_heads: 4 vocab_size: 1000 seq_length: 128 }\n"
         "  parallel { dp: 8 }\n"
         "  training { " +
         training + " }\n}\n";
}

TEST(InputBounds, TrainTokensAboveTheLargestPublishedRunsTimesTwentyEight) {
  // Line 5: "  training { " puts the first field at column 14.
  EXPECT_EQ(errors_of(with_training("global_batch_size: 8 train_tokens: 1e30")),
            std::vector<std::string>{
                "t.textproto:5:35: workload.training.train_tokens: got 1e+30 (expected 0 for no token budget, or 1 to "
                "1e15 tokens: about 28x "
                "the largest published pretraining runs: Qwen3 36T tokens (Qwen3 Technical Report 2025), Llama 3 "
                "15.6T (Meta 2024))"});
  EXPECT_EQ(errors_of(with_training("global_batch_size: 8 train_tokens: 1.0000001e15")).size(), 1u);
  // Infinity was already refused as non-finite; the bound does not change that message.
  EXPECT_EQ(errors_of(with_training("global_batch_size: 8 train_tokens: inf")),
            std::vector<std::string>{
                "t.textproto:5:35: workload.training.train_tokens: got inf (expected a finite number >= 0)"});
}

TEST(InputBounds, TrainTokensAtTheBoundLoad) {
  const models::Scenario s =
      load_scenario_text(with_training("global_batch_size: 8 train_tokens: 1e15"), "t.textproto", Format::text);
  EXPECT_EQ(s.training.train_tokens, 1e15);
}

TEST(InputBounds, GlobalAndMicroBatchAtMostTwoToTheTwentyFour) {
  // 2^25 = 33554432 sequences (a multiple of dp = 8), and a micro-batch of 2^25.
  EXPECT_EQ(errors_of(with_training("global_batch_size: 33554432 micro_batch_size: 33554432")),
            (std::vector<std::string>{
                "t.textproto:5:14: workload.training.global_batch_size: got 33554432 (expected an integer from 1 to "
                "16777216: about 200x the largest published global batches: 81,920 images for ResNet-50 (Yamazaki et "
                "al. 2019), 2,048 x 8,192-token sequences for Llama 3 405B (Meta 2024))",
                "t.textproto:5:42: workload.training.micro_batch_size: got 33554432 (expected an integer from 1 to "
                "16777216: about 200x the largest published global batches: 81,920 images for ResNet-50 (Yamazaki et "
                "al. 2019), 2,048 x 8,192-token sequences for Llama 3 405B (Meta 2024))"}));
  // 2^24 = 16777216 (divisible by 8) loads.
  EXPECT_EQ(load_scenario_text(with_training("global_batch_size: 16777216"), "t.textproto", Format::text)
                .training.global_batch_size,
            16777216);
}

}  // namespace
}  // namespace traincast::io
