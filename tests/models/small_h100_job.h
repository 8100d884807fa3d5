#pragma once
// A small GPT-style job on one DGX H100 for the power, thermal and straggler tests: TP 2 x DP 4,
// 2 layers of hidden 8192 (GEMM-heavy, so power and clocks matter), bf16, two iterations.

#include <string>

#include "models/spec/scenario.h"

namespace traincast::models::test_support {

inline Scenario small_h100_job(const std::string& name) {
  Scenario sc;
  sc.name = name;
  sc.cluster.node_template = "dgx_h100";
  sc.model.num_layers = 2;
  sc.model.hidden_size = 8192;
  sc.model.num_attention_heads = 64;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 2048;
  sc.parallel.tp = 2;
  sc.parallel.dp = 4;
  sc.training.global_batch_size = 16;
  sc.training.micro_batch_size = 2;
  sc.training.precision = Precision::bf16;
  sc.options.iterations = 2;
  return sc;
}

}  // namespace traincast::models::test_support
