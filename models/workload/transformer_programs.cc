// Builds a transformer's per-rank programs (build_transformer_programs, transformer.h): the layer
// kinds from the block ops of TransformerOps (transformer_ops.h), then the embedding, the head and
// the parameter counts (transformer_stage_ends.cc).
#include <cstddef>
#include <utility>
#include <vector>

#include "models/workload/transformer.h"
#include "models/workload/transformer_ops.h"

namespace traincast::models {
namespace {
using detail::TransformerOps;

/// One program set per distinct layer kind, in order of first appearance: dense or MoE, each with
/// full or sliding-window attention.
void add_layer_kinds(TransformerOps& ops, ModelPrograms& out) {
  const Scenario& sc = ops.sc;
  const TransformerShape& x = ops.x;
  const double t = ops.t;
  const ModelSpec& model = sc.model;
  out.layer_kind.assign(static_cast<std::size_t>(model.num_layers), 0);
  int kinds[2][2] = {{-1, -1}, {-1, -1}};  // [moe][windowed]
  for (int layer = 0; layer < model.num_layers; ++layer) {
    const bool moe = is_moe_layer(model, layer);
    const bool windowed = is_windowed_layer(model, layer);
    int& kind = kinds[moe ? 1 : 0][windowed ? 1 : 0];
    if (kind < 0) {
      kind = static_cast<int>(out.layer_kinds.size());
      ops.window = windowed ? attention_keys(model, layer) : 0.0;
      LayerPrograms lp;
      ops.layer_forward(lp.forward, moe);
      if (sc.training.recompute == Recompute::full) {
        ops.replay = true;  // the replay, not the forward, feeds the weight gradients
        ops.layer_forward(lp.recompute, moe);
        ops.replay = false;
      } else if (sc.training.recompute == Recompute::selective && !x.flash) {
        // Selective recomputation re-runs the attention core (softmax, dropout, attention over
        // values) instead of storing the s² tensors (Korthikanti et al. §5). With flash attention
        // nothing s² is stored and the backward kernel recomputes internally.
        ops.attention_forward(lp.recompute, "attn_recompute");
      } else if (torchtitan_op_applies(sc)) {
        ops.torchtitan_op_recompute(lp.recompute);
      }
      ops.pb.backward_gemms(true);
      ops.layer_backward(lp.backward, moe);
      ops.pb.backward_gemms(false);
      const LayerParameters lparams = layer_parameters(model, layer);
      lp.params_per_rank = lparams.replicated_per_rank(t);
      lp.expert_params_per_rank = lparams.experts / x.ep;
      out.layer_kinds.push_back(std::move(lp));
    }
    out.layer_kind[static_cast<std::size_t>(layer)] = kind;
  }
}

}  // namespace

ModelPrograms build_transformer_programs(const Scenario& sc, const GpuSpec& gpu, const ComputeParams& params) {
  TransformerOps ops(sc, gpu, params);
  ModelPrograms out;
  add_layer_kinds(ops, out);
  detail::add_embedding(ops, out);
  // ---- head (last stage): final norm, logits, vocab-parallel cross-entropy ----
  if (!ops.x.causal)
    detail::add_encoder_head(ops, out);
  else
    detail::add_decoder_head(ops, out);
  detail::set_parameter_counts(ops, out);
  return out;
}

}  // namespace traincast::models
