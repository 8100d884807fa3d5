#pragma once
// A small Llama-shaped scenario whose byte and FLOP counts the workload tests work out by hand
// (memory_framework_test.cc, torchtitan_recompute_test.cc).

#include "models/spec/scenario.h"

namespace traincast::models::test_support {

/// 4 layers, h 1024, 8 heads of 128, GQA 2 (K and V 256 wide), gated MLP 4096, vocab 32,000 (a
/// multiple of 128: not padded), seq 1024, micro-batch 1, global batch 8, bf16, flash attention,
/// no dropout, DP 8, ZeRO-1.
inline Scenario llama_small() {
  Scenario sc;
  sc.model.num_layers = 4;
  sc.model.hidden_size = 1024;
  sc.model.num_attention_heads = 8;
  sc.model.num_query_groups = 2;
  sc.model.ffn_hidden_size = 4096;
  sc.model.gated_mlp = true;
  sc.model.untied_embeddings = true;
  sc.model.vocab_size = 32000;
  sc.model.seq_length = 1024;
  sc.model.attention_dropout = 0;
  sc.model.hidden_dropout = 0;
  sc.parallel.dp = 8;
  sc.parallel.zero_stage = 1;
  sc.training.global_batch_size = 8;
  sc.training.micro_batch_size = 1;
  sc.training.precision = Precision::bf16;
  sc.training.flash_attention = true;
  return sc;
}

}  // namespace traincast::models::test_support
