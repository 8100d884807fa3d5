// workload.training.ep_all_to_all and moe_max_nodes_per_token (issue 19: DeepEP's hierarchical
// all-to-all and node-limited routing): loaded into the struct and every bad value refused with
// its exact positioned error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// Four DGX H100 (32 GPUs), DP 32 with EP 32 over the 4 nodes; line 5 is the training block (its
/// extra fields start at column 37).
std::string scenario(const std::string& training, const std::string& moe = "num_experts: 64 moe_top_k: 8",
                     const std::string& parallel = "dp: 32 ep: 32") {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 4 }\n"
         "workload {\n"
         "  model { num_layers: 4 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048 " +
         moe + " }\n  parallel { " + parallel + " }\n  training { global_batch_size: 32 " + training + " }\n}\n";
}

TEST(EpAllToAllFields, LoadedWithDefaults) {
  const models::Scenario flat = load_scenario_text(scenario(""), "t.textproto", Format::text);
  EXPECT_EQ(flat.training.ep_all_to_all, models::EpAllToAll::flat);
  EXPECT_EQ(flat.training.moe_max_nodes_per_token, 0);
  const models::Scenario deep =
      load_scenario_text(scenario("ep_all_to_all: deepep moe_max_nodes_per_token: 2"), "t.textproto", Format::text);
  EXPECT_EQ(deep.training.ep_all_to_all, models::EpAllToAll::deepep);
  EXPECT_EQ(deep.training.moe_max_nodes_per_token, 2);
  // --set takes the same spelling.
  const models::Scenario set =
      load_scenario_text(scenario(""), "t.textproto", Format::text,
                         {"workload.training.ep_all_to_all=deepep", "workload.training.moe_max_nodes_per_token=4"});
  EXPECT_EQ(set.training.ep_all_to_all, models::EpAllToAll::deepep);
  EXPECT_EQ(set.training.moe_max_nodes_per_token, 4);
}

TEST(EpAllToAllFields, BadValuesArePositioned) {
  // The node limit describes the router: accepted with flat too (whose bytes do not depend on it),
  // so a what-if can switch the all-to-all alone.
  EXPECT_EQ(load_scenario_text(scenario("moe_max_nodes_per_token: 2"), "t.textproto", Format::text)
                .training.moe_max_nodes_per_token,
            2);
  EXPECT_EQ(errors_of(scenario("moe_max_nodes_per_token: 4", "num_experts: 0", "dp: 32")),
            (std::vector<std::string>{"t.textproto:5:36: workload.training.moe_max_nodes_per_token: is set but "
                                      "num_experts is 0 (expected num_experts >= 1 for a MoE model)"}));
  EXPECT_EQ(errors_of(scenario("ep_all_to_all: deepep moe_max_nodes_per_token: -1")),
            (std::vector<std::string>{"t.textproto:5:58: workload.training.moe_max_nodes_per_token: got -1 (expected "
                                      "an integer from 0 to 65536, 0 for no node limit)"}));
  EXPECT_EQ(errors_of(scenario("ep_all_to_all: deepep", "num_experts: 0", "dp: 32")),
            (std::vector<std::string>{"t.textproto:5:36: workload.training.ep_all_to_all: is deepep for a dense "
                                      "model (expected flat, or num_experts >= 1)"}));
  EXPECT_EQ(errors_of(scenario("ep_all_to_all: deepep", "num_experts: 64 moe_top_k: 8", "dp: 32")),
            (std::vector<std::string>{"t.textproto:5:36: workload.training.ep_all_to_all: is deepep with ep 1 "
                                      "(expected ep > 1: without expert parallelism there is no all-to-all)"}));
  EXPECT_EQ(errors_of(scenario("ep_all_to_all: deepep", "num_experts: 64 moe_top_k: 8 moe_capacity_factor: 1.25")),
            (std::vector<std::string>{"t.textproto:5:36: workload.training.ep_all_to_all: is deepep with "
                                      "moe_capacity_factor 1.25 (expected moe_capacity_factor 0: DeepEP dispatches "
                                      "dropless, without padded slots)"}));
  // 32 experts over the EP group's 4 nodes: 8 per node; top-16 needs at least 2 nodes.
  EXPECT_EQ(errors_of(scenario("ep_all_to_all: deepep moe_max_nodes_per_token: 1", "num_experts: 32 moe_top_k: 16")),
            (std::vector<std::string>{"t.textproto:5:58: workload.training.moe_max_nodes_per_token: got 1: 1 of the "
                                      "EP group's 4 nodes hold 8 experts, fewer than moe_top_k 16 (expected 0 for no "
                                      "limit, or >= 2)"}));
  EXPECT_FALSE(errors_of(scenario("ep_all_to_all: hierarchical")).empty());
}

}  // namespace
}  // namespace traincast::io
