// workload.parallel.cp: loading, round trip and the positioned errors of bad layouts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// One DGX H100 (8 GPUs). Lines: 1 cluster, 2 workload, 3 model, 4 parallel, 5 training.
std::string scenario(const std::string& model, const std::string& parallel, const std::string& training = "") {
  return "cluster { node_template: \"dgx_h100\" }\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 " +
         model +
         " }\n"
         "  parallel { " +
         parallel +
         " }\n"
         "  training { global_batch_size: 8 " +
         training +
         " }\n"
         "}\n";
}

TEST(ContextParallelIo, LoadsAndRoundTrips) {
  const models::Scenario sc =
      load_scenario_text(scenario("seq_length: 8192", "tp: 2 cp: 4"), "t.textproto", Format::text);
  EXPECT_EQ(sc.parallel.cp, 4);
  const models::Scenario back = load_scenario_text(scenario_to_text(sc), "rt.textproto", Format::text);
  EXPECT_EQ(back.parallel.cp, 4);
  EXPECT_TRUE(back == sc);  // and every other field
  // cp 1 is not written, so files from before the field read the same.
  EXPECT_EQ(scenario_to_text(load_scenario_text(scenario("seq_length: 8192", "tp: 8"), "t.textproto", Format::text))
                .find("cp:"),
            std::string::npos);
}

TEST(ContextParallelIo, PositionedErrors) {
  // 8 GPUs: tp 2 x cp 2 x dp 1 = 4 (dp is not written: reported at the parallel block).
  EXPECT_EQ(errors_of(scenario("seq_length: 8192", "tp: 2 cp: 2")),
            (std::vector<std::string>{"t.textproto:4:3: workload.parallel.dp: tp * cp * pp * dp = 2 * 2 * 1 * 1 = 4 "
                                      "but the cluster has 8 GPUs (1 x dgx_h100 with 8 GPUs each) (expected tp * cp * "
                                      "pp * dp = 8)"}));
  // seq 8190 is not divisible by 2 * cp = 8; cp 0 is out of range.
  EXPECT_EQ(errors_of(scenario("seq_length: 8190", "tp: 2 cp: 4")),
            (std::vector<std::string>{"t.textproto:4:20: workload.parallel.cp: seq_length 8190 is not divisible by 2 * "
                                      "cp = 8 (expected 2 * cp to divide seq_length: the load-balanced split cuts each "
                                      "sequence into 2 * cp equal chunks)"}));
  EXPECT_EQ(
      errors_of(scenario("seq_length: 8192", "tp: 8 cp: 0"))[0],
      "t.textproto:4:20: workload.parallel.cp: got 0 (expected an integer from 1 to 65536: the simulator's range)");
  // Flash attention is needed; MoE is not modelled with CP.
  EXPECT_EQ(errors_of(scenario("seq_length: 8192", "tp: 2 cp: 4", "flash_attention: false")),
            (std::vector<std::string>{"t.textproto:5:35: workload.training.flash_attention: is false with cp = 4 "
                                      "(expected true: context parallelism runs on the fused attention kernel, as "
                                      "Megatron-Core with TransformerEngine does)"}));
  EXPECT_EQ(errors_of(scenario("seq_length: 8192 num_experts: 8", "tp: 2 sequence_parallel: true cp: 4"))[0],
            "t.textproto:4:44: workload.parallel.cp: got 4 with num_experts > 0 (expected 1: context parallelism is "
            "modelled for dense models only)");
}

TEST(ContextParallelIo, OffloadNeedsZeroOverDpTimesCp) {
  // dp 1 but cp 4: the optimizer state is replicated over the 4 CP ranks unless ZeRO shards it.
  const std::string text =
      "cluster { node_template: \"dgx_h100\" }\n"
      "workload {\n"
      "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 8192 }\n"
      "  parallel { tp: 2 cp: 4 }\n"
      "  training { global_batch_size: 8 }\n"
      "  offload { optimizer: true }\n"
      "}\n";
  EXPECT_EQ(errors_of(text),
            (std::vector<std::string>{"t.textproto:6:13: workload.offload.optimizer: is true with dp = 1 x cp = 4 and "
                                      "zero_stage 0 (expected zero_stage >= 1: ZeRO-Offload shards the offloaded "
                                      "optimizer over DP, as DeepSpeed's offload_optimizer is a ZeRO option)"}));
}

}  // namespace
}  // namespace traincast::io
