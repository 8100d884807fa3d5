#pragma once
// For scenario-loader tests: a small valid scenario text (one DGX H100 node) with fields spliced
// into its model, parallel and training blocks.

#include <string>

namespace traincast::io::test_support {

/// A valid scenario (1 DGX H100 node, TP 2 x PP 2 x DP 2) with `extra` spliced into `parallel`.
/// Line numbers: line 1 name, 2 cluster, 3 workload, 4 model, 5 parallel, 6 training.
inline std::string small(const std::string& model_extra = "", const std::string& parallel_extra = "",
                         const std::string& training_extra = "") {
  return "name: \"t\"\n"
         "cluster { node_template: \"dgx_h100\" num_nodes: 1 }\n"
         "workload {\n"
         "  model { num_layers: 8 hidden_size: 1024 num_attention_heads: 16 vocab_size: 32000 seq_length: 2048" +
         model_extra +
         " }\n"
         "  parallel { tp: 2 pp: 2 dp: 2" +
         parallel_extra +
         " }\n"
         "  training { global_batch_size: 16" +
         training_extra +
         " }\n"
         "}\n";
}

}  // namespace traincast::io::test_support
