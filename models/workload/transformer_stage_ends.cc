// The embedding, the heads and the parameter counts of a transformer's per-rank programs
// (build_transformer_programs, transformer.h), from the block ops of TransformerOps
// (transformer_ops.h).
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "models/workload/transformer_ops.h"

namespace traincast::models::detail {

/// Embedding (first stage): the vocab-parallel lookup, its TP reduction and (encoder) the
/// position and token-type embeddings with their LayerNorm.
void add_embedding(TransformerOps& ops, ModelPrograms& out) {
  const TransformerShape& x = ops.x;
  ProgramBuilder& pb = ops.pb;
  const double T = ops.T, Tsp = ops.Tsp, e = ops.e;
  const bool tp = ops.tp, lora = ops.lora;
  const CollectiveOp reduce_op = ops.reduce_op;
  const double act_bytes = ops.act_bytes;
  // Vocab-parallel embedding: each rank looks up its vocabulary shard, then the partial
  // embeddings are summed over TP (all-reduce; reduce-scatter with SP).
  pb.compute(out.embedding_forward, "embedding", {elementwise(2 * T * x.h * e)});
  ops.sp_copy(out.embedding_forward, "tp_emb", act_bytes);  // batch-first SP: the reduce-scatter's input
  if (tp) ProgramBuilder::collective(out.embedding_forward, "tp_emb", reduce_op, act_bytes, Overlap::blocking);
  if (!x.causal) {  // BERT: + position + token-type embeddings (read 3, write 1), LayerNorm, dropout
    std::vector<Kernel> fwd{elementwise(4 * Tsp * x.h * e), norm(2 * Tsp * x.h * e)};
    if (x.hidden_mask > 0) fwd.push_back(elementwise(Tsp * x.h * (2 * e + 1)));  // read, write, 1-byte mask
    pb.compute(out.embedding_forward, "embedding_ln", fwd);
    std::vector<Kernel> bwd;
    if (x.hidden_mask > 0) bwd.push_back(elementwise(Tsp * x.h * (3 * e + 1)));  // dropout bwd
    bwd.push_back(norm(3 * Tsp * x.h * e));
    bwd.push_back(elementwise(4 * Tsp * x.h * e));
    pb.compute(out.embedding_backward, "embedding_ln_bwd", bwd);
  }
  // Embedding weight gradient (scatter-add of the output gradient); none when frozen (LoRA).
  if (!lora) pb.compute(out.embedding_backward, "embedding_bwd", {elementwise(3 * T * x.h * e)});
}

/// Head (last stage) of an encoder (BERT pre-training heads, Megatron BertLMHead): gather the M
/// masked positions, MLM transform (dense h x h + GELU + LayerNorm, replicated over TP),
/// vocab-parallel projection and cross-entropy as the decoder's on M rows; pooler (dense + tanh on
/// the first token) and next-sentence classifier (h x 2) on the b sequences.
void add_encoder_head(TransformerOps& ops, ModelPrograms& out) {
  const Scenario& sc = ops.sc;
  const TransformerShape& x = ops.x;
  ProgramBuilder& pb = ops.pb;
  const double T = ops.T, e = ops.e, t = ops.t;
  const bool tp = ops.tp;
  const CollectiveOp reduce_op = ops.reduce_op;
  const double act_bytes = ops.act_bytes;
  const double M = T * sc.model.mlm_prediction_fraction;
  Program& p = out.head_forward;
  pb.keep_gemms_in_bf16();
  if (x.sp) ProgramBuilder::collective(p, "tp_ag", CollectiveOp::all_gather, act_bytes, Overlap::blocking);
  pb.compute(p, "mlm_transform",
             {elementwise(2 * M * x.h * e), gemm(M, x.h, x.h, e), elementwise(2 * M * x.h * e), norm(2 * M * x.h * e)});
  pb.compute(p, "logits", {gemm(M, x.v / t, x.h, e), elementwise((32 + e) * M * x.v / t)});
  if (tp) ProgramBuilder::collective(p, "tp_ce", CollectiveOp::all_reduce, 2 * 4 * M, Overlap::blocking);
  pb.compute(p, "pooler_nsp", {gemm(x.b, x.h, x.h, e), elementwise(2 * x.b * x.h * e), gemm(x.b, 2, x.h, e)});
  Program& q = out.head_backward;
  pb.compute(q, "pooler_nsp_bwd",
             {gemm(x.b, x.h, 2, e), gemm(x.h, 2, x.b, e), elementwise(3 * x.b * x.h * e), gemm(x.b, x.h, x.h, e),
              gemm(x.h, x.h, x.b, e)});
  pb.compute(q, "logits_bwd",
             {elementwise((12 + e) * M * x.v / t), gemm(M, x.h, x.v / t, e), gemm(x.v / t, x.h, M, e)});
  if (tp) ProgramBuilder::collective(q, x.sp ? "tp_rs_bwd" : "tp_ar_bwd", reduce_op, act_bytes, Overlap::blocking);
  pb.compute(q, "mlm_transform_bwd",
             {norm(3 * M * x.h * e), elementwise(3 * M * x.h * e), gemm(M, x.h, x.h, e), gemm(x.h, x.h, M, e),
              elementwise(3 * T * x.h * e) /*scatter into the full-sequence gradient*/});
}

/// Head (last stage) of a decoder: final norm, logits, vocab-parallel cross-entropy.
void add_decoder_head(TransformerOps& ops, ModelPrograms& out) {
  const TransformerShape& x = ops.x;
  ProgramBuilder& pb = ops.pb;
  const double T = ops.T, e = ops.e, t = ops.t;
  const bool tp = ops.tp, lora = ops.lora;
  const CollectiveOp reduce_op = ops.reduce_op;
  const double act_bytes = ops.act_bytes;
  Program& p = out.head_forward;
  pb.keep_gemms_in_bf16();
  pb.compute(p, "final_ln", ops.norm_forward());
  if (x.sp) ProgramBuilder::collective(p, "tp_ag", CollectiveOp::all_gather, act_bytes, Overlap::blocking);
  ops.sp_copy(p, "tp_ag", act_bytes);  // batch-first SP: the gathered input re-laid out
  // Vocab-parallel cross-entropy as Megatron-Core's cross_entropy.py runs it on T·V/t logits:
  // cast to fp32 (read e, write 4), max (read 4), subtract max in place (r/w 8), exp in place
  // (r/w 8), sum (read 4), divide by the sum in place (r/w 8, kept for backward): 32 + e bytes
  // per element; plus two tiny all-reduces (max and sum over the vocabulary shards).
  pb.compute(p, "logits", {gemm(T, x.v / t, x.h, e), elementwise((32 + e) * T * x.v / t)});
  if (tp) ProgramBuilder::collective(p, "tp_ce", CollectiveOp::all_reduce, 2 * 4 * T, Overlap::blocking);
  Program& q = out.head_backward;
  // Backward: subtract one-hot, scale by the loss gradient in place (r/w 8), cast to the GEMM
  // dtype (read 4, write e).
  if (lora)  // frozen output layer: input gradient only
    pb.compute(q, "logits_bwd", {elementwise((12 + e) * T * x.v / t), gemm(T, x.h, x.v / t, e)});
  else
    pb.compute(q, "logits_bwd",
               {elementwise((12 + e) * T * x.v / t), gemm(T, x.h, x.v / t, e), gemm(x.v / t, x.h, T, e)});
  ops.sp_copy(q, "tp_rs_bwd", act_bytes);  // batch-first SP: the reduce-scatter's input
  if (tp) ProgramBuilder::collective(q, x.sp ? "tp_rs_bwd" : "tp_ar_bwd", reduce_op, act_bytes, Overlap::blocking);
  pb.compute(q, "final_ln_bwd", ops.norm_backward(false));
}

/// Parameters per rank of the embedding and the head, the pipeline send size, and LoRA's frozen
/// base and adapter parameters.
void set_parameter_counts(const TransformerOps& ops, ModelPrograms& out) {
  const Scenario& sc = ops.sc;
  const TransformerShape& x = ops.x;
  const double T = ops.T, e = ops.e, t = ops.t;
  const bool lora = ops.lora;
  // Encoder extras (position/type tables, MLM transform, pooler, NSP) are replicated over TP.
  out.embedding_params_per_rank = x.v * x.h / t + encoder_embedding_extra_parameters(sc.model);
  // GPT and BERT tie the output layer to the embedding: with one pipeline stage it is the same
  // tensor; with several the last stage holds a copy (Megatron-LM, share_embeddings_and_output_weights).
  const bool shared_with_embedding = !sc.model.untied_embeddings && sc.parallel.pp == 1;
  out.head_params_per_rank =
      (shared_with_embedding ? 0.0 : x.v * x.h / t) + (x.causal ? 2 * x.h : encoder_head_parameters(sc.model));
  // Megatron's scatter/gather optimisation (SC21 §4.1): each TP rank sends 1/t of the activation
  // and the receiving stage all-gathers it over its TP group (NVLink inside a DGX) before the next
  // compute. Not small next to the send: the 1T model's 105 MB activation gathers in ~0.41 ms on
  // 8 A100s against ~0.57 ms for its 13 MB share over one HDR NIC. With SP the shard is already
  // the layer's input layout (each rank sends its own sequence shard): no gather.
  out.p2p_bytes = T * x.h / t * e;
  out.p2p_gather_bytes = (ops.tp && !x.sp) ? T * x.h * e : 0.0;
  out.frozen_base = lora;
  out.adapter_params_per_layer_per_rank = lora ? lora_layer_parameters(sc) / t : 0.0;
}

}  // namespace traincast::models::detail
