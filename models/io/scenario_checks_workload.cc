// The semantic checks of the workload's optional features: eager elementwise ops, the activation
// layout, LoRA, CPU offload, encoder, dropout, mixture of experts, context parallelism, the data
// loader and ResNet fields (scenario_checks.h).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "models/io/scenario_checks.h"
#include "models/workload/offload.h"
#include "models/workload/transformer.h"

namespace traincast::io::detail {

namespace {

void check_elementwise_fusion(const models::Scenario& s, Checker& k) {
  const models::ModelSpec& m = s.model;
  if (s.training.elementwise_fusion != models::ElementwiseFusion::eager) return;
  // The eager kernel list is Llama's (RMSNorm, RoPE, SwiGLU); the scenario names no norm or
  // position encoding, and a gated MLP is the Llama family's mark (GPT's LayerNorm runs as one
  // native kernel in eager, not RMSNorm's eight).
  if (m.family != models::ModelFamily::transformer || m.architecture != models::Architecture::decoder ||
      m.num_experts > 0 || m.multi_latent_attention || !m.gated_mlp)
    k.error("workload.training.elementwise_fusion",
            "is eager for a model whose eager ops are not modelled (expected fused, or a dense Llama-style "
            "decoder: family transformer, architecture decoder, gated_mlp true, num_experts 0, "
            "multi_latent_attention false; eager counts torchtitan's Llama block)");
}

}  // namespace

void check_lora(const models::Scenario& s, Checker& k) {
  const models::TrainingSpec& t = s.training;
  const models::ModelSpec& m = s.model;
  if (t.lora_rank == 0) {
    if (k.present("workload.training.lora_target_modules"))
      k.error("workload.training.lora_target_modules", "is set but lora_rank is 0 (expected lora_rank >= 1)");
    return;
  }
  if (!k.int_field("workload.training.lora_rank", t.lora_rank)) return;
  if (m.hidden_size > 0 && t.lora_rank > m.hidden_size) {
    k.error("workload.training.lora_rank",
            "got " + std::to_string(t.lora_rank) +
                " (expected 0 for full training, or a LoRA rank from 1 to hidden_size" +
                (m.hidden_size > 0 ? " = " + std::to_string(m.hidden_size) : std::string()) + ")");
    return;
  }
  if (m.family != models::ModelFamily::transformer || m.architecture != models::Architecture::decoder ||
      m.num_experts > 0) {
    k.error("workload.training.lora_rank",
            "got " + std::to_string(t.lora_rank) +
                " for a model LoRA is not modelled for (expected 0, or a dense decoder: family transformer, "
                "architecture decoder, num_experts 0)");
    return;
  }
  models::LoraTargets targets;
  std::string why;
  if (!models::parse_lora_targets(t.lora_target_modules, m.gated_mlp, targets, &why))
    k.error("workload.training.lora_target_modules",
            "\"" + t.lora_target_modules + "\": " + why +
                " (expected comma-separated names from q, k, v, o, gate, up, down, or all-linear)");
}

void check_offload(const models::Scenario& s, const models::NodeTemplate* node, Checker& k) {
  const models::OffloadSpec& o = s.offload;
  // Floors: one channel of DDR3-800 moves 6.4 GB/s (JEDEC JESD79-3), so no host memory system is
  // below 1 GB/s; below 1 % of it, CPU-Adam would not be a memory-bound kernel. Lower values sent
  // the offload time past the simulator's 292-year clock.
  if (o.host_memory_bytes_per_s != 0 &&
      (!std::isfinite(o.host_memory_bytes_per_s) || !(o.host_memory_bytes_per_s >= 1e9)))
    k.error("workload.offload.host_memory_bytes_per_s",
            "got " + Checker::number(o.host_memory_bytes_per_s) +
                " (expected 0 = the CPU's table figure, or at least 1e9 bytes/s: one DDR3-800 channel moves 6.4e9)");
  if (!std::isfinite(o.cpu_adam_efficiency) || !(o.cpu_adam_efficiency >= 0.01 && o.cpu_adam_efficiency <= 1))
    k.error("workload.offload.cpu_adam_efficiency",
            "got " + Checker::number(o.cpu_adam_efficiency) + " (expected a number from 0.01 to 1)");
  if (!o.optimizer) {
    for (const char* f : {"workload.offload.host_memory_bytes_per_s", "workload.offload.cpu_adam_efficiency"})
      if (k.present(f)) k.error(f, "is set but offload.optimizer is false (expected optimizer: true)");
    return;
  }
  const models::ParallelSpec& p = s.parallel;
  // The optimizer is sharded over the dp x cp ranks that hold the same parameters.
  if (p.dp * std::max(1, p.cp) > 1 && p.zero_stage == 0)
    k.layout_error(
        "workload.offload.optimizer",
        "is true with dp = " + std::to_string(p.dp) + (p.cp > 1 ? " x cp = " + std::to_string(p.cp) : "") +
            " and zero_stage 0 (expected zero_stage >= 1: ZeRO-Offload shards the offloaded optimizer over DP, "
            "as DeepSpeed's offload_optimizer is a ZeRO option)");
  if (s.model.family == models::ModelFamily::resnet)
    k.error("workload.offload.optimizer",
            "is true for a ResNet (expected false: offload is modelled for Adam on "
            "transformers; the ResNet recipe is SGD on the GPU)");
  if (node != nullptr && o.host_memory_bytes_per_s == 0 && models::socket_memory_bytes_per_s(node->cpu) <= 0)
    k.error("workload.offload.optimizer",
            "node template " + node->name + " has CPU \"" + node->cpu +
                "\" with no host-memory bandwidth in the table (expected workload.offload.host_memory_bytes_per_s "
                "> 0: DRAM bandwidth of one socket)");
}

void check_encoder(const models::Scenario& s, Checker& k) {
  const models::ModelSpec& m = s.model;
  if (m.architecture != models::Architecture::encoder) {
    for (const char* f : {"workload.model.mlm_prediction_fraction", "workload.model.max_position_embeddings"})
      if (k.present(f)) k.error(f, "is set but architecture is decoder (expected architecture: encoder)");
    return;
  }
  if (m.family != models::ModelFamily::transformer) {
    k.error("workload.model.architecture", "is encoder with a non-transformer family (expected family: transformer)");
    return;
  }
  const double q = m.mlm_prediction_fraction;
  if (!std::isfinite(q) || !(q > 0.0 && q <= 1.0))
    k.error("workload.model.mlm_prediction_fraction",
            "got " + Checker::number(q) + " (expected a number > 0 and <= 1; BERT: 0.15)");
  if (m.max_position_embeddings != 0 && m.max_position_embeddings < m.seq_length)
    k.error("workload.model.max_position_embeddings", "got " + std::to_string(m.max_position_embeddings) +
                                                          " (expected 0 for seq_length, or an integer >= " +
                                                          "seq_length = " + std::to_string(m.seq_length) + ")");
  if (m.num_experts > 0)
    k.error("workload.model.num_experts",
            "got " + std::to_string(m.num_experts) + " for an encoder (expected 0: MoE is modelled for decoders only)");
  if (m.gated_mlp) k.error("workload.model.gated_mlp", "is true for an encoder (expected false: BERT's MLP is GELU)");
  if (m.untied_embeddings)
    k.error("workload.model.untied_embeddings",
            "is true for an encoder (expected false: BERT ties the MLM projection to the embedding)");
}

void check_elementwise_ops(const models::Scenario& s, Checker& k) {
  check_elementwise_fusion(s, k);
  if (s.model.family != models::ModelFamily::transformer) return;  // check_resnet rejects them
  for (const auto& [f, p] :
       {std::pair<const char*, double>{"workload.model.attention_dropout", s.model.attention_dropout},
        {"workload.model.hidden_dropout", s.model.hidden_dropout}})
    if (!std::isfinite(p) || !(p >= 0.0 && p < 1.0))
      k.error(f, "got " + Checker::number(p) +
                     " (expected a probability >= 0 and < 1: 0.1 for GPT/BERT, 0 for Llama-family models)");
}

void check_activation_layout(const models::Scenario& s, Checker& k) {
  const models::ParallelSpec& p = s.parallel;
  if (p.activation_layout == models::ActivationLayout::batch_first && p.tp > 1 && p.tp_comm_overlap &&
      p.tp_overlap_implementation == models::TpOverlapImplementation::userbuffers)
    k.error("workload.parallel.activation_layout",
            "is batch_first with Transformer Engine's userbuffers overlap (tp_comm_overlap with "
            "tp_overlap_implementation userbuffers), which runs Megatron's seq-first layout (expected seq_first, "
            "or tp_overlap_implementation async_tp: PyTorch's async TP)");
}

void check_moe(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const models::ParallelSpec& p = s.parallel;
  const bool experts_ok = k.int_field("workload.model.num_experts", m.num_experts);
  const bool moe = experts_ok && m.num_experts > 0;
  if (moe) {
    if (k.int_field("workload.model.moe_top_k", m.moe_top_k) && m.moe_top_k > m.num_experts)
      k.error("workload.model.moe_top_k", "got " + to_string(m.moe_top_k) + " (expected an integer from 1 to " +
                                              "num_experts = " + to_string(m.num_experts) + ")");
    k.int_field("workload.model.moe_ffn_hidden_size", m.moe_ffn_hidden_size);
    k.int_field("workload.model.num_shared_experts", m.num_shared_experts);
    if (k.int_field("workload.model.first_dense_layers", m.first_dense_layers) && m.num_layers >= 1 &&
        m.first_dense_layers >= m.num_layers)
      k.error("workload.model.first_dense_layers",
              "got " + to_string(m.first_dense_layers) +
                  " (expected an integer from 0 to num_layers - 1 = " + to_string(m.num_layers - 1) + ")");
    const double cf = m.moe_capacity_factor;
    if (!std::isfinite(cf) || !(cf == 0.0 || (cf >= 1.0 && cf <= 64.0)))
      k.error("workload.model.moe_capacity_factor",
              "got " + Checker::number(cf) + " (expected 0 for dropless routing, or a number from 1 to 64)");
    if (p.tp > 1 && !p.sequence_parallel)
      k.layout_error("workload.parallel.sequence_parallel",
                     "a MoE model with tp > 1 needs sequence parallelism, as Megatron-Core does (expected "
                     "sequence_parallel: true)");
    const int mffn = m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : m.ffn_hidden_size;
    if (m.num_shared_experts > 0 && p.tp > 1 && mffn > 0 &&
        (static_cast<std::int64_t>(mffn) * m.num_shared_experts) % p.tp != 0)
      k.layout_error("workload.parallel.tp", to_string(p.tp) + " does not divide the shared experts' width " +
                                                 to_string(m.num_shared_experts) + " x " + to_string(mffn) +
                                                 " (expected a divisor of it)");
  } else {
    for (const char* f : {"workload.model.moe_top_k", "workload.model.moe_ffn_hidden_size",
                          "workload.model.num_shared_experts", "workload.model.first_dense_layers",
                          "workload.model.moe_capacity_factor", "workload.model.moe_expert_imbalance"})
      if (k.present(f)) k.error(f, "is set but num_experts is 0 (expected num_experts >= 1 for a MoE model)");
  }
  if (k.int_field("workload.parallel.ep", p.ep) && p.ep > 1) {
    if (!moe) {
      k.error("workload.parallel.ep",
              "got " + to_string(p.ep) + " for a dense model (expected 1, or num_experts >= 1)");
    } else if (m.num_experts % p.ep != 0) {
      // megatron/training/arguments.py validate_args, "Expert parallelism check": "Number of experts
      // should be a multiple of expert model parallel_size." dp % ep below: Megatron-Core's expert
      // groups tile tp x dp with expert_tensor_parallel_size = tp (its default).
      k.error("workload.parallel.ep", to_string(p.ep) + " does not divide num_experts " + to_string(m.num_experts) +
                                          " (expected a divisor of " + to_string(m.num_experts) + ")");
    } else if (p.dp >= 1 && p.dp % p.ep != 0) {
      k.layout_error("workload.parallel.ep",
                     to_string(p.ep) + " does not divide dp " + to_string(p.dp) +
                         " (expected a divisor of dp: experts are split over data-parallel ranks)");
    }
  }
}

void check_context_parallel(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const models::ParallelSpec& p = s.parallel;
  if (!k.int_field("workload.parallel.cp", p.cp) || p.cp == 1) return;
  const std::string got = "got " + to_string(p.cp);
  if (m.family != models::ModelFamily::transformer) {
    k.error("workload.parallel.cp", got + " for a ResNet (expected 1: ResNets are trained with DDP)");
    return;
  }
  if (m.num_experts > 0) {
    k.error("workload.parallel.cp",
            got + " with num_experts > 0 (expected 1: context parallelism is modelled for dense models only)");
  }
  const std::int64_t chunks = 2 * static_cast<std::int64_t>(p.cp);
  if (m.seq_length >= 1 && m.seq_length % chunks != 0) {
    k.error("workload.parallel.cp", "seq_length " + to_string(m.seq_length) +
                                        " is not divisible by 2 * cp = " + to_string(chunks) +
                                        " (expected 2 * cp to divide seq_length: the load-balanced split cuts each "
                                        "sequence into 2 * cp equal chunks)");
  }
  if (!s.training.flash_attention) {
    k.error("workload.training.flash_attention",
            "is false with cp = " + to_string(p.cp) +
                " (expected true: context parallelism runs on the fused attention kernel, as Megatron-Core with "
                "TransformerEngine does)");
  }
}

void check_data_loader(const models::Scenario& s, Checker& k) {
  if (!s.data_loader) return;
  if (s.model.family != models::ModelFamily::resnet) {
    k.error("workload.data_loader",
            "is set for a transformer (expected it absent, or family: resnet: input copies are modelled for image "
            "batches)");
    return;
  }
  const double b = s.data_loader->input_bytes_per_element;
  if (!(b == 1.0 || b == 2.0 || b == 4.0))
    k.error("workload.data_loader.input_bytes_per_element",
            "got " + Checker::number(b) + " (expected 1 for uint8, 2 for fp16 or 4 for fp32)");
}

void check_resnet(const models::Scenario& s, Checker& k) {
  using std::to_string;
  const models::ModelSpec& m = s.model;
  const models::ParallelSpec& p = s.parallel;
  if (m.num_layers != 50 && m.num_layers != 101 && m.num_layers != 152)
    k.error("workload.model.num_layers",
            "got " + to_string(m.num_layers) + " for a ResNet (expected the depth: 50, 101 or 152)");
  k.int_field("workload.model.image_size", m.image_size);
  k.int_field("workload.model.num_classes", m.num_classes);
  for (const char* f :
       {"workload.model.hidden_size", "workload.model.num_attention_heads", "workload.model.num_query_groups",
        "workload.model.ffn_hidden_size", "workload.model.vocab_size", "workload.model.seq_length",
        "workload.model.gated_mlp", "workload.model.untied_embeddings", "workload.model.num_experts",
        "workload.model.attention_dropout", "workload.model.hidden_dropout"})
    if (k.present(f)) k.error(f, "is a transformer field but family is resnet (expected it absent)");
  for (const auto& [f, v] : {std::pair<const char*, int>{"workload.parallel.tp", p.tp}, {"workload.parallel.pp", p.pp}})
    if (v != 1) k.error(f, "got " + to_string(v) + " for a ResNet (expected 1: ResNets are trained with DDP)");
  if (p.zero_stage != 0)
    k.error("workload.parallel.zero_stage", "got " + to_string(p.zero_stage) + " for a ResNet (expected 0: DDP)");
}

}  // namespace traincast::io::detail
