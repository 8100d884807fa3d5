// The semantic checks of the attention shape (scenario_checks.h, check_attention): explicit head
// dim, multi-head latent attention, sliding-window layers, the MoE expert imbalance, and the
// expert-parallel all-to-all's kind with node-limited routing (check_ep_all_to_all).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "models/io/scenario_checks.h"

namespace traincast::io::detail {
namespace {

/// MLA: the widths are set only with multi_latent_attention, and then within their ranges, with
/// plain multi-head query groups and no head_dim; not with LoRA or context parallelism (their
/// programs assume a fused QKV GEMM and plain K/V blocks).
void check_mla(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const char* const widths[] = {"workload.model.q_lora_rank", "workload.model.kv_lora_rank",
                                "workload.model.qk_nope_head_dim", "workload.model.qk_rope_head_dim",
                                "workload.model.v_head_dim"};
  if (!m.multi_latent_attention) {
    for (const char* f : widths)
      if (k.present(f))
        k.error(f, "is set but multi_latent_attention is false (expected multi_latent_attention: true for MLA)");
    return;
  }
  const int values[] = {m.q_lora_rank, m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim};
  for (int i = 0; i < 5; ++i) {
    if (!k.int_field(widths[i], values[i])) continue;
    // kv_lora_rank, qk_nope_head_dim and v_head_dim are >= 1 with MLA (q_lora_rank 0 = no query
    // latent, as DeepSeek-V2-Lite; qk_rope_head_dim 0 = no decoupled RoPE key).
    if ((i == 1 || i == 2 || i == 4) && values[i] < 1)
      k.error(widths[i], (k.present(widths[i]) ? "got " + to_string(values[i]) : std::string("not set")) +
                             " with multi_latent_attention (expected an integer from 1 to 65536; DeepSeek-V3: " +
                             (i == 1 ? "512" : "128") + ")");
  }
  if (m.num_query_groups > 0)
    k.error("workload.model.num_query_groups",
            "got " + to_string(m.num_query_groups) +
                " with multi_latent_attention (expected 0: MLA's heads share one key/value latent, not groups)");
  if (m.head_dim > 0)
    k.error("workload.model.head_dim", "got " + to_string(m.head_dim) +
                                           " with multi_latent_attention (expected 0: MLA's head widths are "
                                           "qk_nope_head_dim + qk_rope_head_dim and v_head_dim)");
  if (s.training.lora_rank > 0)
    k.error("workload.training.lora_rank",
            "got " + to_string(s.training.lora_rank) +
                " with multi_latent_attention (expected 0: LoRA is modelled for plain and grouped-query attention)");
  if (s.parallel.cp > 1)
    k.error("workload.parallel.cp", "got " + to_string(s.parallel.cp) +
                                        " with multi_latent_attention (expected 1: ring attention is modelled for "
                                        "plain and grouped-query attention)");
}

/// Sliding windows: a decoder's layers only, a pattern only with a window, no context parallelism.
void check_sliding_window(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  if (!k.int_field("workload.model.sliding_window", m.sliding_window)) return;
  if (m.sliding_window == 0) {
    if (k.present("workload.model.sliding_window_pattern"))
      k.error("workload.model.sliding_window_pattern",
              "is set but sliding_window is 0 (expected sliding_window >= 1 for windowed layers)");
    return;
  }
  if (k.int_field("workload.model.sliding_window_pattern", m.sliding_window_pattern) && m.sliding_window_pattern == 1)
    k.error("workload.model.sliding_window_pattern",
            "got 1 (expected 0 for every layer windowed, or N >= 2 for every N-th layer global; GPT-OSS: 2)");
  if (m.architecture == models::Architecture::encoder)
    k.error("workload.model.sliding_window",
            "got " + to_string(m.sliding_window) +
                " for an encoder (expected 0: sliding windows are modelled for causal decoders)");
  if (s.parallel.cp > 1)
    k.error("workload.parallel.cp", "got " + to_string(s.parallel.cp) +
                                        " with sliding_window (expected 1: ring attention is modelled for full "
                                        "attention only)");
}

}  // namespace

void check_attention(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  if (m.family != models::ModelFamily::transformer) {
    for (const char* f :
         {"workload.model.head_dim", "workload.model.multi_latent_attention", "workload.model.sliding_window"})
      if (k.present(f)) k.error(f, "is a transformer field but family is resnet (expected it absent)");
    return;
  }
  k.int_field("workload.model.head_dim", m.head_dim);
  check_mla(s, k);
  check_sliding_window(s, k);
  if (m.num_experts > 0 && m.moe_top_k >= 1 && m.moe_top_k <= m.num_experts) {  // else check_moe's error
    // At most every slot on one expert: each token sends one of its top-k slots to it, so its load
    // is at most tokens = (experts / top_k) x the mean load.
    const double imbalance = m.moe_expert_imbalance;
    const double most = static_cast<double>(m.num_experts) / m.moe_top_k;
    if (!std::isfinite(imbalance) || !(imbalance >= 1.0 && imbalance <= most))
      k.error("workload.model.moe_expert_imbalance", "got " + Checker::number(imbalance) +
                                                         " (expected a number from 1 (balanced) to num_experts / " +
                                                         "moe_top_k = " + Checker::number(most) + ")");
  }
}

void check_ep_all_to_all(const models::Scenario& s, const models::NodeTemplate* node, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const models::TrainingSpec& t = s.training;
  const char* const kind = "workload.training.ep_all_to_all";
  const char* const limit = "workload.training.moe_max_nodes_per_token";
  // (A negative ep or num_shared_experts has its own range error: not named twice.)
  if (s.parallel.moe_shared_expert_overlap && s.parallel.ep >= 1 && m.num_shared_experts >= 0 &&
      (m.num_experts <= 0 || m.num_shared_experts < 1 || s.parallel.ep == 1))
    k.error("workload.parallel.moe_shared_expert_overlap",
            "is true with num_shared_experts " + to_string(m.num_shared_experts) + " and ep " +
                to_string(s.parallel.ep) +
                " (expected a MoE model with num_shared_experts >= 1 and ep > 1: the shared experts overlap the EP "
                "all-to-all)");
  if (m.num_experts <= 0) {
    if (t.ep_all_to_all == models::EpAllToAll::deepep)
      k.error(kind, "is deepep for a dense model (expected flat, or num_experts >= 1)");
    if (k.present(limit)) k.error(limit, "is set but num_experts is 0 (expected num_experts >= 1 for a MoE model)");
    return;
  }
  if (t.ep_all_to_all == models::EpAllToAll::deepep) {
    if (s.parallel.ep <= 1)
      k.error(kind, "is deepep with ep " + to_string(s.parallel.ep) +
                        " (expected ep > 1: without expert parallelism there is no all-to-all)");
    if (m.moe_capacity_factor != 0.0)
      k.error(kind, "is deepep with moe_capacity_factor " + Checker::number(m.moe_capacity_factor) +
                        " (expected moe_capacity_factor 0: DeepEP dispatches dropless, without padded slots)");
  }
  if (!k.int_field(limit, t.moe_max_nodes_per_token) || t.moe_max_nodes_per_token == 0 || node == nullptr ||
      node->gpus_per_node < 1 || m.moe_top_k < 1 || s.parallel.ep < 1 || m.num_experts % s.parallel.ep != 0)
    return;
  // The EP group: ep data-parallel ranks of one TP rank, tp apart (Megatron's tp-cp-dp-pp order).
  const std::int64_t span = static_cast<std::int64_t>(s.parallel.ep) * s.parallel.tp;
  const std::int64_t nodes = std::max<std::int64_t>(1, (span + node->gpus_per_node - 1) / node->gpus_per_node);
  if (m.num_experts % nodes != 0) return;  // uneven over nodes: the run's deepep plan says why
  const std::int64_t per_node = m.num_experts / nodes;
  const std::int64_t routed = std::min<std::int64_t>(t.moe_max_nodes_per_token, nodes);
  if (routed * per_node < m.moe_top_k)
    k.error(limit, "got " + to_string(t.moe_max_nodes_per_token) + ": " + to_string(routed) + " of the EP group's " +
                       to_string(nodes) + " nodes hold " + to_string(routed * per_node) +
                       " experts, fewer than moe_top_k " + to_string(m.moe_top_k) +
                       " (expected 0 for no limit, or >= " + to_string((m.moe_top_k + per_node - 1) / per_node) + ")");
}

}  // namespace traincast::io::detail
