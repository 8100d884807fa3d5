#pragma once
// The ops of one scenario's transformer blocks for one TP rank and one micro-batch
// (TransformerOps), shared by the two halves of build_transformer_programs (transformer.h):
// transformer_programs.cc assembles the layer kinds, transformer_stage_ends.cc the embedding, the
// heads and the parameter counts. Internal to models/workload.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "models/workload/eager_elementwise.h"
#include "models/workload/fp8_recipe.h"
#include "models/workload/memory_model.h"
#include "models/workload/program_builder.h"
#include "models/workload/transformer.h"
#include "models/workload/transformer_shape.h"

namespace traincast::models::detail {

inline Kernel gemm(double m, double n, double k, double e, double batch = 1) {
  return Kernel{KernelKind::gemm, 2 * batch * m * n * k, e * batch * (m * k + k * n + m * n), batch * m, n, k};
}
inline Kernel elementwise(double bytes) { return Kernel{KernelKind::elementwise, 0, bytes}; }
inline Kernel norm(double bytes) { return Kernel{KernelKind::norm, 0, bytes}; }

/// The kernels of one scenario's transformer blocks for one TP rank and one micro-batch: the
/// shape, the sizes and choices derived from it once (tokens, TP collectives, LoRA adapters,
/// context and expert parallelism), and a method that appends each block's segments, forward and
/// backward. Throws std::invalid_argument from the constructor for LoRA targets the scenario
/// checker would reject (lora_targets_of) and from the methods when the GPU lacks the
/// precision's math.
struct TransformerOps {
  TransformerOps(const Scenario& scenario, const GpuSpec& gpu, const ComputeParams& params)
      : sc(scenario), x(transformer_shape(scenario)), pb(gpu, params, scenario.training) {}

  const Scenario& sc;
  const TransformerShape x;
  ProgramBuilder pb;
  const double T = x.tokens(), Tsp = x.tokens_sp(), e = x.e, t = x.t;
  const double heads_t = x.a / t;
  const bool tp = x.t > 1;
  const bool overlap = sc.parallel.tp_comm_overlap;
  // Sequence parallelism: all-gather before column-parallel GEMMs, reduce-scatter after
  // row-parallel ones; plain TP: all-reduce after row-parallel GEMMs (Megatron "g" operator).
  const CollectiveOp reduce_op = x.sp ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce;
  const double act_bytes = T * x.h * e;  // full activation, nccl-tests size for AR / AG / RS
  // The layers' TP all-gathers (inputs of the column-parallel GEMMs, output gradients before the
  // row-parallel GEMMs' backward) carry the fp8 recipe's element size when it gathers in fp8
  // (torchao's float8 TP styles under tensorwise scaling; fp8_recipe.h); reduce-scatters,
  // all-reduces and the head's gather stay at the activation's.
  const double gather_bytes =
      T * x.h *
      (sc.training.precision == Precision::fp8 ? fp8_recipe_cost(sc.training.fp8_recipe).tp_all_gather_bytes_per_element
                                               : e);
  const Overlap fwd_gather = overlap ? Overlap::with_next : Overlap::blocking;
  const Overlap fwd_reduce = overlap ? Overlap::with_prev : Overlap::blocking;

  // ---- sequence parallelism on batch-first activations (parallel.activation_layout) ----
  // PyTorch DTensor TP as torchtitan applies it keeps [b, s, h] activations and shards SP on the
  // sequence, Shard(1) (torchtitan/models/llama3/infra/parallelize.py apply_tp: SequenceParallel
  // norms, PrepareModuleInput Shard(1) -> Replicate before attention and feed_forward,
  // RowwiseParallel(output_layouts=Shard(1)) on wo and w2; the embedding's output and the output
  // layer's input likewise). DTensor's Shard(1) redistributions (torch/distributed/tensor/
  // placement_types.py Shard._to_replicate_tensor, _reduce_shard_tensor) call the functional
  // collectives with dim 1, and those gather and reduce-scatter along dim 0 only
  // (torch/distributed/_functional_collectives.py): all_gather_tensor runs
  // torch.cat(torch.chunk(out, group_size, dim=0), dim=gather_dim) after the gather,
  // reduce_scatter_tensor torch.cat(torch.chunk(in, group_size, dim=scatter_dim)) before the
  // reduce-scatter. Each is a copy of the whole tensor on the compute stream: read and write,
  // 2 x its bytes, a memory-bound kernel. The backward of each is the other collective on dim 1
  // (a copy too); torchtitan's op-level recompute re-runs the gathers and their copies. Under
  // async TP (chunked) the micro-pipeline pass fuses the collective with its GEMM and forces the
  // producer's stride order instead (torch/_inductor/fx_passes/micro_pipeline_tp.py:
  // restride_A_shard_for_fused_all_gather_matmul, restride_A_for_fused_matmul_reduce_scatter):
  // no copy around it (async_wgrad_copy below: the weight gradients' one). Megatron's seq-first
  // [s, b, h] shards dim 0: no copy.
  const bool sp_copies = x.sp && tp && sc.parallel.activation_layout == ActivationLayout::batch_first;
  /// The copy beside an SP all-gather or reduce-scatter of `bytes` (the full tensor) on
  /// batch-first activations (segment `label`); nothing otherwise.
  void sp_copy(Program& p, const std::string& label, double bytes) {
    if (sp_copies) pb.compute(p, label + "_cat", {elementwise(2 * bytes)});
  }
  // Async TP keeps one copy per fused all-gather whose gathered input a weight-gradient GEMM reads
  // in the same graph: fused_all_gather_matmul returns it as a movedim view, [b, s, h] laid out
  // [s, b, h] (_symmetric_memory _fused_all_gather_matmul_impl: unflatten), and the pass hands it
  // to every user of the gather's result (micro_pipeline_tp.py fuse_all_gather_matmul:
  // all_gather.replace_with), the weight-gradient mm's reshape to [b s, h] among them, which
  // cannot view those strides and copies. The backward's output-gradient gathers (wo's and w2's
  // weight gradients) and the recompute's gathers always; the forward's where backward reads the
  // forward's gathered input (no recomputation, or Megatron's selective) or, under full
  // recomputation, in the replay (`replay`). Not with a frozen base (LoRA: no weight gradient).
  bool replay = false;
  bool forward_gather_feeds_wgrad() const {
    const Recompute rc = sc.training.recompute;
    if (rc == Recompute::full) return replay;
    return !(rc == Recompute::selective && torchtitan_op_applies(sc));
  }
  void async_wgrad_copy(Program& p, const std::string& ag_label, double bytes) {
    if (lora || (ag_label == "tp_ag" && !forward_gather_feeds_wgrad())) return;
    sp_copy(p, ag_label + "_wgrad", bytes);
  }

  // ---- TP overlap as PyTorch async TP pipelines it (tp_comm_overlap, SP, async_tp) ----
  // torch/distributed/_symmetric_memory/__init__.py; micro_pipeline_tp_pass fuses every
  // all_gather -> mm and mm -> reduce_scatter, forward and backward. All-gather -> GEMM
  // (_pipelined_multi_all_gather_and_consume): the shard is copied into the rank's symmetric buffer
  // (not overlapped; the barrier after it is not charged), the own shard's GEMM runs, then per step
  // each rank pulls one peer's shard with copy_ (a cudaMemcpyAsync on copy engines, no SM: a TP
  // ring send_recv of bytes / t with copy_engine set, timed by CollectiveEngine::start_peer_copy)
  // and runs that slice (m / t rows) once it is in: g + (t - 1) max(g, c). GEMM -> reduce-scatter
  // (_pipelined_produce_and_all2all): t slices, after each of the first t - 1 the owner pulls it,
  // the own slice last, then reduce_partials sums the t partials: g + (t - 1) max(g, c) + the
  // reduction. The source's two streams (step k on the backend stream for odd k, the current one
  // for even k; "cp" from different streams cannot overlap) give exactly these dependencies: each
  // copy waits for the copy before it (all copies on the tp stream) and for the slice before it on
  // its own source stream (gather: the slice two steps back; scatter: the slice it carries), and
  // the next slice on that stream waits for the copy (Overlap::with_next).
  // Two slices of the two streams may share the GPU at once, which the executor's one compute
  // stream per worker does not model: here they run one after the other (docs/accuracy.md, "Async
  // TP"). Transformer Engine's userbuffers keep the whole collective beside the whole GEMM (its
  // pipelines were scored and removed: docs/accuracy.md, "Async TP").
  const bool chunked =
      overlap && x.sp && tp && sc.parallel.tp_overlap_implementation == TpOverlapImplementation::async_tp;
  const int nt = static_cast<int>(x.t);
  /// The GEMMs ks[first, last) cut into `chunks` row slices (one slice's kernels).
  std::vector<Kernel> row_slice(const std::vector<Kernel>& ks, std::size_t first, std::size_t last,
                                double chunks) const {
    std::vector<Kernel> out;
    for (std::size_t i = first; i < last; ++i) out.push_back(gemm(ks[i].m / chunks, ks[i].n, ks[i].k, e));
    return out;
  }
  static std::vector<Kernel> concat(std::vector<Kernel> a, const std::vector<Kernel>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  static std::vector<Kernel> range(const std::vector<Kernel>& ks, std::size_t first, std::size_t last) {
    return {ks.begin() + static_cast<std::ptrdiff_t>(first), ks.begin() + static_cast<std::ptrdiff_t>(last)};
  }
  /// An all-gather of `bytes` (the gathered size) and the compute segment `label` that consumes it:
  /// ks[first, last) are the GEMMs on the gathered rows (plain GEMMs, m = T), the kernels before
  /// them run first, those after them last. Unchunked: the collective with `plain` overlap, then ks.
  void gather_into(Program& p, const std::string& ag_label, double bytes, Overlap plain, const std::string& label,
                   const std::vector<Kernel>& ks, std::size_t first, std::size_t last) {
    if (!chunked || first >= last) {
      ProgramBuilder::collective(p, ag_label, CollectiveOp::all_gather, bytes, plain);
      sp_copy(p, ag_label, bytes);
      pb.compute(p, label, ks);
      return;
    }
    if (first > 0) pb.compute(p, label, range(ks, 0, first));
    // copy_shard(dst=local_p2p_bufs, src=shard): read and write of the shard.
    pb.compute(p, ag_label + "_stage", {elementwise(2 * bytes / t)});
    const std::vector<Kernel> slice = row_slice(ks, first, last, t);
    for (int i = 0; i < nt; ++i) {
      if (i + 1 < nt) {
        ProgramBuilder::collective(p, ag_label, CollectiveOp::send_recv, bytes / t, Overlap::with_next);
        p.back().copy_engine = true;
      }
      pb.compute(p, label, slice, 1 / t);
    }
    async_wgrad_copy(p, ag_label, bytes);
    if (last < ks.size()) pb.compute(p, label, range(ks, last, ks.size()));
  }
  /// The compute segment `label` whose output is reduce-scattered (`bytes`: the full size), ks as
  /// in gather_into. Unchunked: ks, then the collective with `plain` overlap (TP only).
  void scatter_from(Program& p, const std::string& label, const std::vector<Kernel>& ks, std::size_t first,
                    std::size_t last, const std::string& rs_label, double bytes, Overlap plain) {
    if (!chunked || first >= last) {
      pb.compute(p, label, ks);
      if (!tp) return;
      sp_copy(p, rs_label, bytes);
      ProgramBuilder::collective(p, rs_label, reduce_op, bytes, plain);
      return;
    }
    if (first > 0) pb.compute(p, label, range(ks, 0, first));
    const std::vector<Kernel> slice = row_slice(ks, first, last, t);
    for (int i = 0; i < nt; ++i) {
      pb.compute(p, label, slice, 1 / t);
      if (i + 1 < nt) {
        ProgramBuilder::collective(p, rs_label, CollectiveOp::send_recv, bytes / t, Overlap::with_next);
        p.back().copy_engine = true;
      }
    }
    // reduce_partials: read the t stacked partials (bytes), write the shard (bytes / t).
    pb.compute(p, rs_label + "_reduce", {elementwise(bytes + bytes / t)});
    if (last < ks.size()) pb.compute(p, label, range(ks, last, ks.size()));
  }

  // LoRA: the frozen base skips its weight-gradient GEMMs (and the embedding's and output
  // layer's); each adapted matrix (d_in x d_out) adds x*A (T x d_in -> r) and *B (r -> d_out) in
  // forward and four skinny GEMMs in backward (dB, the gradient into x*A, dA, the input gradient
  // through A): 2x the forward FLOPs. The adapter work is split evenly over TP like its base
  // matrix (NeMo's parallel adapters replicate one factor and all-reduce an r-wide partial sum:
  // r / h of the layer's TP traffic, not modelled).
  const bool lora = sc.training.lora_rank > 0;
  const double r = sc.training.lora_rank;
  const LoraTargets targets = lora ? lora_targets_of(sc) : LoraTargets{};
  std::vector<Kernel> adapter_forward(double d_in, double d_out) {
    return std::vector<Kernel>{gemm(T, r, d_in / t, e), gemm(T, d_out / t, r, e)};
  }
  std::vector<Kernel> adapter_backward(double d_in, double d_out) {
    return std::vector<Kernel>{gemm(r, d_out / t, T, e), gemm(T, r, d_out / t, e), gemm(d_in / t, r, T, e),
                               gemm(T, d_in / t, r, e)};
  }
  // Appends the adapter kernels of the adapted matrices among `which` to `ks`.
  std::vector<Kernel> with_adapters(std::vector<Kernel> ks, bool backward,
                                    std::initializer_list<std::pair<bool, std::pair<double, double>>> which) {
    for (const auto& [adapted, shape] : which) {
      if (!adapted) continue;
      for (const Kernel& k :
           backward ? adapter_backward(shape.first, shape.second) : adapter_forward(shape.first, shape.second))
        ks.push_back(k);
    }
    return ks;
  }

  // Context parallelism (ring attention): per layer, the attention core runs as cp steps, one per
  // K/V block; the block for step i+1 travels the CP ring (send to the next rank, receive from the
  // previous) beside step i's kernel (Overlap::with_next: issued after the previous compute, waited
  // for by the step after the next), so only the part of a transfer longer than a step is exposed.
  // Backward (TransformerEngine AttnFuncWithCPAndKVP2P.backward): K/V and the partial dK/dV of a
  // block travel together (2x the forward bytes), and after the last block the accumulated dK/dV
  // makes one more hop to its owner, blocking (nothing of the attention is left to hide it).
  const ContextParallelAttention cpa = context_parallel_attention(sc);
  const bool cp = x.cp > 1 && x.flash;
  /// A fused attention kernel with its shape (models/compute/attention_model.h): `keys` per query,
  /// the query/key head dim, causal or not.
  Kernel fused_attention(KernelKind kind, double flops, double bytes, double keys_per_query, bool causal) const {
    Kernel k{kind, flops, bytes};
    k.attention_seq_len = keys_per_query;
    k.attention_head_dim = x.att.d_qk;
    k.attention_causal = causal;
    return k;
  }
  void cp_attention_forward(Program& p, const std::string& label) {
    const double bytes = e * T * (x.att.q + x.att.o + x.att.k_v) / t;  // each step reads Q, its K/V block, rewrites O
    for (int i = 0; i < cpa.steps; ++i) {
      if (i + 1 < cpa.steps)
        ProgramBuilder::collective(p, "cp_kv", CollectiveOp::send_recv, cpa.kv_bytes_per_step, Overlap::with_next,
                                   CommGroup::cp);
      // One block of s/cp queries against s/cp keys per step (the diagonal one masked): shaped as
      // an unmasked s/cp block.
      pb.compute(
          p, label,
          {fused_attention(KernelKind::attention_forward, cpa.forward_flops_per_step, bytes, x.s / x.cp, false)});
    }
  }
  void cp_attention_backward(Program& p) {
    const double bytes = 2 * e * T * (x.att.q + x.att.o + x.att.k_v) / t;
    for (int i = 0; i < cpa.steps; ++i) {
      if (i + 1 < cpa.steps)
        ProgramBuilder::collective(p, "cp_kv_dkv_bwd", CollectiveOp::send_recv,
                                   (i == 0 ? 1.0 : 2.0) * cpa.kv_bytes_per_step, Overlap::with_next, CommGroup::cp);
      pb.compute(p, "attn_bwd",
                 {fused_attention(KernelKind::attention_backward, 2.5 * cpa.forward_flops_per_step, bytes, x.s / x.cp,
                                  false)});
    }
    ProgramBuilder::collective(p, "cp_dkv_bwd", CollectiveOp::send_recv, cpa.kv_bytes_per_step, Overlap::blocking,
                               CommGroup::cp);
  }

  // Sliding-window layers (set by add_layer_kinds while it builds a windowed layer kind): each
  // query attends to the last `window` keys. 0 = full attention.
  double window = 0;
  /// Keys per query of the unfused kernels: s, or the window (a banded score tensor).
  double keys() const { return window > 0 ? window : x.s; }
  /// Forward FLOPs of the fused kernel per rank: full causal s^2 / 2 query-key pairs; a causal
  /// window w attends to sum_i min(i + 1, w) ~ s·w - w^2 / 2 pairs (the first w queries see fewer).
  double flash_forward_flops() const {
    if (window <= 0) return 4 * x.b * x.s * x.s * x.att.core / t * (x.causal ? 0.5 : 1.0);
    return 4 * x.b * (x.s * window - window * window / 2) * x.att.core / t;
  }
  // Attention core, forward, per rank. Q·K^T over d_qk per head, attention×V over d_v.
  void attention_forward(Program& p, const std::string& label) {
    if (cp) {
      cp_attention_forward(p, label);
    } else if (x.flash) {
      pb.compute(p, label,
                 {fused_attention(KernelKind::attention_forward, flash_forward_flops(),
                                  e * T * (x.att.q + x.att.o + x.att.k_v) / t, keys(), x.causal)});
    } else {
      const double scores = x.b * heads_t * x.s * keys();                     // elements of the score tensor
      std::vector<Kernel> k{gemm(x.s, keys(), x.att.d_qk, e, x.b * heads_t),  // QK^T (batched over heads)
                            elementwise(2 * e * scores)};                     // fused scale-mask-softmax
      if (x.attn_mask > 0) k.push_back(elementwise(scores * (2 * e + 1)));    // dropout: read, write, 1-byte mask
      k.push_back(gemm(x.s, x.att.d_v, keys(), e, x.b * heads_t));            // attention × V
      pb.compute(p, label, k);
    }
  }
  void attention_backward(Program& p) {
    if (cp) {
      cp_attention_backward(p);
    } else if (x.flash) {
      // FlashAttention backward recomputes the scores: 2.5× the forward matmul FLOPs (Dao 2023).
      const double flops = 2.5 * flash_forward_flops();
      pb.compute(p, "attn_bwd",
                 {fused_attention(KernelKind::attention_backward, flops,
                                  2 * e * T * (x.att.q + x.att.o + x.att.k_v) / t, keys(), x.causal)});
    } else {
      const double scores = x.b * heads_t * x.s * keys();
      const double dv = x.att.d_v, dqk = x.att.d_qk, bh = x.b * heads_t;
      std::vector<Kernel> k{gemm(x.s, keys(), dv, e, bh), gemm(x.s, dv, keys(), e, bh)};  // d(attn×V)
      if (x.attn_mask > 0) k.push_back(elementwise(scores * (3 * e + 1)));                // dropout bwd
      k.push_back(elementwise(3 * e * scores));                                           // softmax bwd
      k.push_back(gemm(x.s, dqk, keys(), e, bh));                                         // d(QK^T)
      k.push_back(gemm(x.s, dqk, keys(), e, bh));
      pb.compute(p, "attn_bwd", k);
    }
  }

  // The attention block's input GEMMs (attention_input_projections: one fused QKV GEMM, or MLA's
  // down- and up-projections) per rank; MLA adds the RMSNorms of its latents (read, write).
  double split(const AttentionProjection& pr) const { return pr.tp_split ? pr.out / t : pr.out; }
  std::vector<Kernel> qkv_forward_kernels() const {
    std::vector<Kernel> k;
    for (const AttentionProjection& pr : x.proj) k.push_back(gemm(T, split(pr), pr.in, e));
    if (x.att.mla) {
      if (x.att.q_lora > 0) k.push_back(norm(2 * T * x.att.q_lora * e));
      k.push_back(norm(2 * T * x.att.kv_lora * e));
    }
    return k;
  }
  std::vector<Kernel> qkv_dgrad_kernels() const {
    std::vector<Kernel> k;
    for (const AttentionProjection& pr : x.proj) k.push_back(gemm(T, pr.in, split(pr), e));
    if (x.att.mla) {
      if (x.att.q_lora > 0) k.push_back(norm(3 * T * x.att.q_lora * e));
      k.push_back(norm(3 * T * x.att.kv_lora * e));
    }
    return k;
  }
  std::vector<Kernel> qkv_wgrad_kernels() const {
    std::vector<Kernel> k;
    for (const AttentionProjection& pr : x.proj) k.push_back(gemm(pr.in, split(pr), T, e));
    return k;
  }

  // ---- elementwise ops: fused (Megatron-Core / TE, Inductor) or eager (PyTorch eager) ----
  // training.elementwise_fusion eager (eager_elementwise.h): torchtitan's Llama block op by op.
  // Norms and residual adds on the T_sp tokens of the residual stream; RoPE and repeat_kv on this
  // rank's heads; the gradient sums of a tensor read by several linears (wq, wk, wv; w1, w3) on
  // the T tokens they read (the gathered input under SP). The fused model has no RoPE kernel
  // (Megatron-Core's fused RoPE is not modelled) and one QKV and one fc1 GEMM (no gradient sums).
  const bool eager = sc.training.elementwise_fusion == ElementwiseFusion::eager;
  const double stream = Tsp * x.h;  // elements of the residual stream per rank
  /// A norm's forward (ln1, ln2, the final norm).
  std::vector<Kernel> norm_forward() const {
    return eager ? eager_rms_norm_forward(stream, x.h, e) : std::vector<Kernel>{norm(2 * Tsp * x.h * e)};
  }
  /// A norm's backward and, `residual`, the sum of the residual stream's two gradients.
  std::vector<Kernel> norm_backward(bool residual) const {
    if (!eager) {
      std::vector<Kernel> k{norm(3 * Tsp * x.h * e)};
      if (residual) k.push_back(elementwise(3 * Tsp * x.h * e));
      return k;
    }
    std::vector<Kernel> k = eager_rms_norm_backward(stream, x.h, e);
    if (residual) k.push_back(eager_add(stream, e));
    return k;
  }
  /// A residual add (bias-dropout-add): fused, one kernel with the dropout mask; eager, the add and
  /// a dropout kernel of its own (read, write, the 1-byte mask) where hidden dropout runs.
  std::vector<Kernel> residual_add() const {
    if (!eager) return {elementwise(stream * (3 * e + x.hidden_mask))};
    std::vector<Kernel> k{eager_add(stream, e)};
    if (x.hidden_mask > 0) k.push_back(elementwise(stream * (2 * e + x.hidden_mask)));
    return k;
  }
  /// Eager: RoPE on this rank's q and k and repeat_kv's copies of k and v, after the projections
  /// (forward and recompute). The frequencies: complex64 (8 B) per position and head_dim / 2.
  double freqs_bytes() const { return 8 * (x.s / x.cp) * x.att.d_qk / 2; }
  void append_eager_rope(std::vector<Kernel>& k) const {
    if (!eager) return;
    for (double width : {x.att.q / t, x.kv / t})
      k = concat(std::move(k), eager_rope_forward(T * width, freqs_bytes(), e));
    for (double width : {x.att.q / t, x.att.o / t})
      k = concat(std::move(k), eager_repeat_kv_forward(T * x.kv / t, T * width, e));
  }
  /// Their backward, before the projections' input gradients.
  std::vector<Kernel> eager_rope_grad() const {
    std::vector<Kernel> k;
    if (!eager) return k;
    for (double width : {x.att.q / t, x.att.o / t})
      k = concat(std::move(k), eager_repeat_kv_backward(T * x.kv / t, T * width, e));
    for (double width : {x.att.q / t, x.kv / t})
      k = concat(std::move(k), eager_rope_backward(T * width, freqs_bytes(), e));
    return k;
  }

  // ---- one layer, forward: attention block, then a dense MLP or a MoE block ----
  void attention_block_forward(Program& p) {
    pb.compute(p, "ln1", norm_forward());
    std::vector<Kernel> qkv =
        with_adapters(qkv_forward_kernels(), false,
                      {{targets.q, {x.h, x.att.q}}, {targets.k, {x.h, x.kv}}, {targets.v, {x.h, x.kv}}});
    append_eager_rope(qkv);
    if (x.sp)
      gather_into(p, "tp_ag", gather_bytes, fwd_gather, "qkv", qkv, 0, x.proj.size());
    else
      pb.compute(p, "qkv", qkv);
    attention_forward(p, "attn");
    scatter_from(p, "proj", with_adapters({gemm(T, x.h, x.att.o / t, e)}, false, {{targets.o, {x.att.o, x.h}}}), 0, 1,
                 x.sp ? "tp_rs" : "tp_ar", act_bytes, fwd_reduce);
    // Bias-dropout-add: read the projection output and the residual, write the sum (3e), and the
    // 1-byte mask with hidden dropout.
    pb.compute(p, "bda_ln2", concat(residual_add(), norm_forward()));
  }
  // A TP-split MLP of total width `width` (the dense MLP, or DeepSeek's shared experts).
  void mlp_forward(Program& p, double width, const std::string& prefix) {
    const double act_in = x.gate * T * width / t;  // elements into the activation function
    const bool dense = prefix.empty();             // LoRA adapts the dense MLP only (no MoE)
    const std::vector<Kernel> fc1 =
        with_adapters(concat({gemm(T, x.gate * width / t, x.h, e)},
                             eager ? eager_mlp_activation_forward(T * width / t, x.gate > 1, e)
                                   : std::vector<Kernel>{elementwise(e * (act_in + T * width / t))}),
                      false, {{dense && targets.gate, {x.h, width}}, {dense && targets.up, {x.h, width}}});
    if (x.sp)
      gather_into(p, "tp_ag", gather_bytes, fwd_gather, prefix + "fc1", fc1, 0, 1);
    else
      pb.compute(p, prefix + "fc1", fc1);
    scatter_from(p, prefix + "fc2",
                 with_adapters({gemm(T, x.h, width / t, e)}, false, {{dense && targets.down, {width, x.h}}}), 0, 1,
                 x.sp ? "tp_rs" : "tp_ar", act_bytes, fwd_reduce);
  }
  // Routed experts (Megatron-Core MoE layer with the all-to-all token dispatcher): each rank
  // routes its Tsp tokens (sequence-parallel shard), permutes the slots by expert, sends them to
  // the experts' owners (all-to-all over EP), runs its experts_local experts as a grouped GEMM,
  // and sends the results back. Balanced routing: every rank receives as many slots as it sends.
  const double experts_local = x.experts / x.ep;
  const double slots = Tsp * x.slots;  // expert token slots per rank
  // Expert imbalance: the rank holding the busiest expert (imbalance x the mean load) sets the
  // step; its experts together process (experts_local - 1 + imbalance) / experts_local x the
  // balanced share. The all-to-all buffers keep the balanced size (a NOT MODELLED part: the
  // busiest rank also receives more).
  const double busy_slots = x.imbalance > 1
                                ? slots*(std::max(1.0, experts_local) - 1 + x.imbalance) / std::max(1.0, experts_local)
                                : slots;
  const double per_expert = busy_slots / std::max(1.0, experts_local);  // GEMM rows per local expert
  const double a2a_bytes = slots * x.h * e;                             // all-to-all send buffer per rank
  const bool ep = x.ep > 1;
  // The EP all-to-all's kind (workload.training.ep_all_to_all): flat sends every slot on its own;
  // deepep sends a token once per destination node over RDMA and once per destination GPU over
  // NVLink (models/collectives/moe_dispatch.h: the expected fan-out in closed form, with
  // moe_max_nodes_per_token's node-limited routing). The call keeps the flat send buffer's size
  // (a2a_bytes, the tokens' top-k slots); the plan gives each link its deduplicated share. The
  // memory model is unaffected: the permuted buffers are the same tokens x top-k slots.
  const MoeDispatch moe_dispatch{sc.training.ep_all_to_all, static_cast<int>(x.experts), static_cast<int>(x.top_k),
                                 sc.training.moe_max_nodes_per_token};
  // Megatron-Core --moe-shared-expert-overlap (shared_experts.py, the all-to-all dispatcher): the
  // shared experts' fc1 + activation run on a side stream beside the dispatch all-to-all, fc2
  // beside the combine, their backward beside the backward ones (with_next: the routed experts
  // wait for the all-to-all). Their TP gather / reduction run outside userbuffers (blocking), and
  // the gathered input is kept for fc1's weight gradient (no second gather in backward).
  const bool shared_overlap = ep && x.shared > 0 && sc.parallel.moe_shared_expert_overlap;
  const double sw = x.shared * x.fe / t;  // shared experts' width per TP rank
  const Overlap ep_overlap = shared_overlap ? Overlap::with_next : Overlap::blocking;
  void ep_all_to_all(Program& p, const char* label) {
    ProgramBuilder::collective(p, label, CollectiveOp::all_to_all, a2a_bytes, ep_overlap, CommGroup::ep);
    p.back().moe = moe_dispatch;
  }
  void shared_tp(Program& p, const char* label, CollectiveOp op, double bytes) {
    if (shared_overlap) ProgramBuilder::collective(p, label, op, bytes, Overlap::blocking);
  }
  void routed_forward(Program& p) {
    // Router logits (fp32 softmax and top-k over E) and the permutation (gather of the slots).
    pb.compute(p, "router", {gemm(Tsp, x.experts, x.h, e), elementwise(Tsp * x.experts * (e + 8))});
    if (x.sp) shared_tp(p, "shared_tp_ag", CollectiveOp::all_gather, gather_bytes);
    pb.compute(p, "permute", {elementwise(2 * slots * x.h * e)});
    if (ep) ep_all_to_all(p, "ep_dispatch");
    if (shared_overlap)
      pb.compute(p, "shared_fc1", {gemm(T, x.gate * sw, x.h, e), elementwise(e * T * sw * (x.gate + 1))});
    const double act_in = x.gate * busy_slots * x.fe;
    pb.compute(p, "expert_fc1",
               {gemm(per_expert, x.gate * x.fe, x.h, e, experts_local), elementwise(e * (act_in + busy_slots * x.fe))});
    pb.compute(p, "expert_fc2", {gemm(per_expert, x.h, x.fe, e, experts_local)});
    if (ep) ep_all_to_all(p, "ep_combine");
    if (shared_overlap) pb.compute(p, "shared_fc2", {gemm(T, x.h, sw, e)});
    if (tp) shared_tp(p, x.sp ? "shared_tp_rs" : "shared_tp_ar", reduce_op, act_bytes);
    // Unpermute: scatter back and sum the top-k outputs weighted by the router probabilities.
    pb.compute(p, "unpermute", {elementwise(2 * slots * x.h * e + Tsp * x.h * e)});
  }
  void layer_forward(Program& p, bool moe) {
    attention_block_forward(p);
    if (!moe) {
      mlp_forward(p, x.f, "");
    } else {
      if (x.shared > 0 && !shared_overlap) mlp_forward(p, x.shared * x.fe, "shared_");
      routed_forward(p);
    }
    pb.compute(p, "bda", residual_add());
  }

  // torchtitan's op-level selective checkpointing (training.selective_policy torchtitan_op; the
  // policy and what it keeps: memory_model.cc torchtitan_op_kept_bytes). In backward the block's
  // forward is replayed (torch.utils.checkpoint, non-reentrant) and every op whose output the
  // policy does not save runs again: the norms and the residual add, the SP all-gathers
  // (_c10d_functional.all_gather_into_tensor is not in the save list; the reduce-scatters are),
  // and every second aten.mm of Llama's wq, wk, wv, wo, w1, w3, w2: wk, wo and w3 (without a gated
  // MLP: wk, wo and w1's activation). The saved mm outputs, the SDPA output and the reduce-scatter
  // outputs are read back, not recomputed. Source: pytorch/torchtitan
  // torchtitan/models/llama3/infra/parallelize.py (_save_list, _custom_policy: "Saves output of
  // all compute ops, except every second mm"). Shapes per rank: T tokens (T_sp in the norms),
  // column-parallel widths over TP. torchao's fp8 linears run aten._scaled_mm, which the policy
  // does not count; the same three GEMMs are assumed at the run's precision (not modelled).
  void torchtitan_op_recompute(Program& p) {
    pb.compute(p, "ln1_recompute", norm_forward());
    // wk consumes the gathered input (a chunked pipeline under TP overlap), wo the attention output.
    // Eager: RoPE and repeat_kv run again (their outputs, attention's inputs, are not saved).
    std::vector<Kernel> wk_wo{gemm(T, x.kv / t, x.h, e), gemm(T, x.h, x.att.o / t, e)};
    append_eager_rope(wk_wo);
    if (x.sp)
      gather_into(p, "tp_ag_recompute", gather_bytes, fwd_gather, "wk_wo_recompute", wk_wo, 0, 1);
    else
      pb.compute(p, "wk_wo_recompute", wk_wo);
    pb.compute(p, "add_ln2_recompute",
               concat({eager ? eager_add(stream, e) : elementwise(3 * Tsp * x.h * e)}, norm_forward()));
    const double width = x.f / t;
    if (x.gate > 1) {
      // w3, then SiLU(w1 out) x w3 out: read both, write the product (w2's input); eager, SiLU and
      // the product as two kernels.
      const std::vector<Kernel> w3 =
          concat({gemm(T, width, x.h, e)}, eager ? eager_mlp_activation_forward(T * width, true, e)
                                                 : std::vector<Kernel>{elementwise(3 * e * T * width)});
      if (x.sp)
        gather_into(p, "tp_ag_recompute", gather_bytes, fwd_gather, "w3_recompute", w3, 0, 1);
      else
        pb.compute(p, "w3_recompute", w3);
    } else {
      // The activation of w1's (saved) output, w2's input. The sixth mm is w2, after the last
      // tensor backward needs: the replay stops before it (torch.utils.checkpoint's early stop,
      // its default).
      if (x.sp) ProgramBuilder::collective(p, "tp_ag_recompute", CollectiveOp::all_gather, gather_bytes, fwd_gather);
      sp_copy(p, "tp_ag_recompute", gather_bytes);
      pb.compute(p, "act_recompute", {elementwise(2 * e * T * width)});
    }
  }

  // ---- one layer, backward ----
  // A column-parallel GEMM's input gradient (ks as in gather_into), its TP reduction (beside the
  // weight gradient: Megatron, TE's bulk overlap; blocking without overlap_tp_grad_reduce) and the
  // SP all-gather of the input for the weight gradient (not with a frozen base); async TP fuses
  // (scatter_from) where one matmul produces the gradient (`fused`: qkv_one_matmul, fc1_...).
  void dgrad_then_wgrad(Program& p, const std::string& label, const std::vector<Kernel>& ks, std::size_t first,
                        std::size_t last, bool fused) {
    const std::string rs_label = x.sp ? "tp_rs_bwd" : "tp_ar_bwd";
    const Overlap reduce_overlap = sc.parallel.overlap_tp_grad_reduce ? Overlap::with_next : Overlap::blocking;
    if (chunked && fused) {
      scatter_from(p, label, ks, first, last, rs_label, act_bytes, Overlap::with_next);
      if (!lora)
        ProgramBuilder::collective(p, "tp_ag_wgrad", CollectiveOp::all_gather, gather_bytes, Overlap::with_next);
      return;
    }
    pb.compute(p, label, ks);
    sp_copy(p, rs_label, act_bytes);  // the reduce-scatter's input (DTensor keeps the gathered input: no wgrad gather)
    if (x.sp && !lora)
      ProgramBuilder::collective(p, "tp_ag_wgrad", CollectiveOp::all_gather, gather_bytes, Overlap::with_next);
    if (tp) ProgramBuilder::collective(p, rs_label, reduce_op, act_bytes, reduce_overlap);
  }
  // The input gradients' TP reductions as dgrad_then_wgrad; AG of the output gradient (SP) blocks.
  void mlp_backward(Program& p, double width, const std::string& prefix) {
    const bool dense = prefix.empty();
    // fc2's input gradient (dgrad, the gathered rows) is the all-gather's consumer; its weight
    // gradient needs the whole gathered gradient and runs after.
    const std::vector<Kernel> fc2 =
        lora ? with_adapters({gemm(T, width / t, x.h, e)}, true, {{dense && targets.down, {width, x.h}}})
             : std::vector<Kernel>{gemm(T, width / t, x.h, e), gemm(width / t, x.h, T, e)};
    if (x.sp)
      gather_into(p, "tp_ag_bwd", gather_bytes, fwd_gather, prefix + "fc2_bwd", fc2, 0, 1);
    else
      pb.compute(p, prefix + "fc2_bwd", fc2);
    const double act_in = x.gate * T * width / t;
    // Eager: the activation's backward kernels, and w1's and w3's input gradients summed.
    const std::vector<Kernel> act_grad = eager ? eager_mlp_activation_backward(T * width / t, x.gate > 1, e)
                                               : std::vector<Kernel>{elementwise(e * (2 * act_in + T * width / t))};
    std::vector<Kernel> fc1_kernels = concat(act_grad, {gemm(T, x.h, x.gate * width / t, e)});
    if (eager && x.gate > 1) fc1_kernels.push_back(eager_add(T * x.h, e));
    const std::vector<Kernel> fc1_dgrad =
        with_adapters(fc1_kernels, true, {{dense && targets.gate, {x.h, width}}, {dense && targets.up, {x.h, width}}});
    dgrad_then_wgrad(p, prefix + "fc1_dgrad", fc1_dgrad, act_grad.size(), act_grad.size() + 1, x.fc1_one_matmul);
    if (!lora) pb.compute(p, prefix + "fc1_wgrad", {gemm(x.h, x.gate * width / t, T, e)});
  }
  void routed_backward(Program& p) {
    pb.compute(p, "unpermute_bwd", {elementwise(3 * slots * x.h * e)});
    if (x.sp) shared_tp(p, "shared_tp_ag_bwd", CollectiveOp::all_gather, gather_bytes);  // the RS's backward
    if (ep) ep_all_to_all(p, "ep_combine_bwd");
    if (shared_overlap) pb.compute(p, "shared_fc2_bwd", {gemm(T, sw, x.h, e), gemm(sw, x.h, T, e)});
    pb.compute(p, "expert_fc2_bwd",
               {gemm(per_expert, x.fe, x.h, e, experts_local), gemm(x.fe, x.h, per_expert, e, experts_local)});
    const double act_in = x.gate * busy_slots * x.fe;
    pb.compute(
        p, "expert_fc1_bwd",
        {elementwise(e * (2 * act_in + busy_slots * x.fe)), gemm(per_expert, x.h, x.gate * x.fe, e, experts_local),
         gemm(x.h, x.gate * x.fe, per_expert, e, experts_local)});
    if (ep) ep_all_to_all(p, "ep_dispatch_bwd");
    if (shared_overlap)
      pb.compute(
          p, "shared_fc1_bwd",
          {elementwise(e * T * sw * (2 * x.gate + 1)), gemm(T, x.h, x.gate * sw, e), gemm(x.h, x.gate * sw, T, e)});
    if (tp) shared_tp(p, x.sp ? "shared_tp_rs_bwd" : "shared_tp_ar_bwd", reduce_op, act_bytes);
    pb.compute(p, "router_bwd",
               {elementwise(3 * slots * x.h * e + Tsp * x.experts * (e + 8)), gemm(Tsp, x.h, x.experts, e),
                gemm(x.h, x.experts, Tsp, e)});
  }
  void layer_backward(Program& p, bool moe) {
    // Eager: the add passes its gradient on (no kernel); hidden dropout's backward is its own kernel.
    if (!eager)
      pb.compute(p, "bda_bwd", {elementwise(stream * (3 * e + x.hidden_mask))});
    else if (x.hidden_mask > 0)
      pb.compute(p, "bda_bwd", {elementwise(stream * (2 * e + x.hidden_mask))});
    if (!moe) {
      mlp_backward(p, x.f, "");
    } else {
      routed_backward(p);
      if (x.shared > 0 && !shared_overlap) mlp_backward(p, x.shared * x.fe, "shared_");
    }
    pb.compute(p, "ln2_bwd", norm_backward(true));
    const std::vector<Kernel> proj =
        lora ? with_adapters({gemm(T, x.att.o / t, x.h, e)}, true, {{targets.o, {x.att.o, x.h}}})
             : std::vector<Kernel>{gemm(T, x.att.o / t, x.h, e), gemm(x.att.o / t, x.h, T, e)};
    if (x.sp)
      gather_into(p, "tp_ag_bwd", gather_bytes, fwd_gather, "proj_bwd", proj, 0, 1);
    else
      pb.compute(p, "proj_bwd", proj);
    attention_backward(p);
    // Eager: repeat_kv's and RoPE's backward first; after the GEMMs, the input gradients of wq, wk
    // and wv summed (two adds).
    const std::vector<Kernel> rope_grad = eager_rope_grad();
    std::vector<Kernel> qkv_kernels = concat(rope_grad, qkv_dgrad_kernels());
    if (eager) qkv_kernels = concat(qkv_kernels, {eager_add(T * x.h, e), eager_add(T * x.h, e)});
    dgrad_then_wgrad(p, "qkv_dgrad",
                     with_adapters(qkv_kernels, true,
                                   {{targets.q, {x.h, x.att.q}}, {targets.k, {x.h, x.kv}}, {targets.v, {x.h, x.kv}}}),
                     rope_grad.size(), rope_grad.size() + x.proj.size(), x.qkv_one_matmul);
    if (!lora) pb.compute(p, "qkv_wgrad", qkv_wgrad_kernels());
    pb.compute(p, "ln1_bwd", norm_backward(true));
  }
};

/// Embedding (first stage) segments of `out` (transformer_stage_ends.cc).
void add_embedding(TransformerOps& ops, ModelPrograms& out);
/// Head (last stage) of an encoder (BERT's heads).
void add_encoder_head(TransformerOps& ops, ModelPrograms& out);
/// Head (last stage) of a decoder.
void add_decoder_head(TransformerOps& ops, ModelPrograms& out);
/// Parameters per rank of the embedding and the head, the pipeline send size, LoRA's counts.
void set_parameter_counts(const TransformerOps& ops, ModelPrograms& out);

}  // namespace traincast::models::detail
