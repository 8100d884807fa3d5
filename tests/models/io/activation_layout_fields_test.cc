// workload.parallel.activation_layout (issue 17: torchtitan's sequence parallelism on batch-first
// activations): loaded into the struct with the seq_first default, spelled the same by --set, and
// batch_first refused with its positioned error beside Transformer Engine's userbuffers overlap.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/io/scenario_io.h"
#include "tests/models/io/scenario_errors.h"

namespace traincast::io {
namespace {

using test_support::errors_of;

/// Four DGX H100 (32 GPUs); line 4 is the parallel block (its fields start at column 14).
std::string scenario(const std::string& parallel) {
  return "cluster { node_template: \"dgx_h100\" num_nodes: 4 }\n"
         "workload {\n"
         "  model { num_layers: 4 hidden_size: 1024 num_attention_heads: 16 num_query_groups: 4 gated_mlp: true "
         "vocab_size: 32000 seq_length: 2048 }\n"
         "  parallel { " +
         parallel + " }\n  training { global_batch_size: 32 }\n}\n";
}

TEST(ActivationLayoutFields, LoadedWithTheSeqFirstDefault) {
  const std::string sp = "tp: 4 dp: 8 sequence_parallel: true";
  EXPECT_EQ(load_scenario_text(scenario(sp), "t.textproto", Format::text).parallel.activation_layout,
            models::ActivationLayout::seq_first);
  EXPECT_EQ(load_scenario_text(scenario(sp + " activation_layout: batch_first"), "t.textproto", Format::text)
                .parallel.activation_layout,
            models::ActivationLayout::batch_first);
  EXPECT_EQ(
      load_scenario_text(scenario(sp), "t.textproto", Format::text, {"workload.parallel.activation_layout=batch_first"})
          .parallel.activation_layout,
      models::ActivationLayout::batch_first);
  // With PyTorch's async TP it is torchtitan's case: accepted.
  EXPECT_EQ(load_scenario_text(scenario(sp + " tp_comm_overlap: true tp_overlap_implementation: async_tp "
                                             "activation_layout: batch_first"),
                               "t.textproto", Format::text)
                .parallel.activation_layout,
            models::ActivationLayout::batch_first);
}

TEST(ActivationLayoutFields, BadValuesArePositioned) {
  EXPECT_EQ(errors_of(scenario("tp: 4 dp: 8 sequence_parallel: true tp_comm_overlap: true activation_layout: "
                               "batch_first")),
            (std::vector<std::string>{
                "t.textproto:4:72: workload.parallel.activation_layout: is batch_first with Transformer Engine's "
                "userbuffers overlap (tp_comm_overlap with tp_overlap_implementation userbuffers), which runs "
                "Megatron's seq-first layout (expected seq_first, or tp_overlap_implementation async_tp: "
                "PyTorch's async TP)"}));
  const std::vector<std::string> bad = errors_of(scenario("dp: 32 activation_layout: sbh"));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rfind("t.textproto:4:", 0), 0u) << bad[0];
}

}  // namespace
}  // namespace traincast::io
