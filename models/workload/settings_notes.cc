// workload_settings_without_effect (settings_notes.h): the conditions are those under which
// memory_model.cc and the pipeline schedule read each field.
#include "models/workload/settings_notes.h"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "models/compute/attention_model.h"
#include "models/hardware/catalog.h"
#include "models/workload/memory_model.h"

namespace traincast::models {

std::vector<std::string> workload_settings_without_effect(const Scenario& sc) {
  std::vector<std::string> notes;
  const ParallelSpec& p = sc.parallel;
  const ParallelSpec defaults;
  const long long chunks = static_cast<long long>(p.pp) * std::max(1, p.virtual_stages);
  if (p.uneven_stages && p.pipeline_stage_layers.empty() && chunks > 0 && sc.model.num_layers % chunks == 0) {
    notes.push_back("workload.parallel.uneven_stages has no effect: pp " + std::to_string(p.pp) +
                    (p.virtual_stages > 1 ? " x virtual_stages " + std::to_string(p.virtual_stages) : std::string()) +
                    " splits the " + std::to_string(sc.model.num_layers) +
                    " layers evenly (expected a pp that does not divide num_layers for uneven stages to act)");
  }
  // DeepSpeed's gradient layout (memory_model.cc stage_memory): ZeRO-1/2 of a 16-bit run without
  // LoRA or optimizer offload.
  const bool sixteen_bit = sc.training.precision != Precision::fp32 && sc.training.precision != Precision::tf32;
  std::string why_not;
  if (p.zero_stage != 1 && p.zero_stage != 2)
    why_not = "zero_stage " + std::to_string(p.zero_stage);
  else if (!sixteen_bit)
    why_not = "32-bit training";
  else if (sc.training.lora_rank > 0)
    why_not = "LoRA";
  else if (sc.offload.optimizer)
    why_not = "offload.optimizer (ZeRO-Offload's layout holds: fp32 gradients on the host)";
  const char* const deepspeed_case =
      "zero_stage 1 or 2 of a 16-bit run without LoRA or optimizer offload: DeepSpeed's gradient layout is "
      "modelled there";
  const bool deepspeed = p.zero_implementation == ZeroImplementation::deepspeed;
  if (deepspeed && !why_not.empty())
    notes.push_back("workload.parallel.zero_implementation deepspeed has no effect with " + why_not + " (expected " +
                    deepspeed_case + ")");
  if (p.reduce_bucket_elements != defaults.reduce_bucket_elements && (!deepspeed || !why_not.empty()))
    notes.push_back(std::string("workload.parallel.reduce_bucket_elements has no effect: it sizes DeepSpeed's "
                                "buckets (expected zero_implementation deepspeed with ") +
                    deepspeed_case + ")");
  if (p.tp_overlap_implementation != TpOverlapImplementation::userbuffers && (!p.tp_comm_overlap || p.tp < 2))
    notes.push_back(std::string("workload.parallel.tp_overlap_implementation async_tp has no effect: ") +
                    (p.tp < 2 ? "tp is 1" : "tp_comm_overlap is off") +
                    " (expected tp_comm_overlap: true with tp > 1: it says how overlapped TP communication runs)");
  if (!p.overlap_tp_grad_reduce && p.tp < 2)
    notes.push_back(
        "workload.parallel.overlap_tp_grad_reduce has no effect: tp is 1, no TP reduction to overlap (expected tp "
        "> 1)");
  if (sc.training.selective_policy != SelectivePolicy::megatron && !torchtitan_op_applies(sc)) {
    const std::string why = sc.training.recompute != Recompute::selective ? "recompute is not selective"
                            : !sc.training.flash_attention                ? "flash_attention is off"
                            : sc.model.num_experts > 0                    ? "the model has routed experts"
                                                                          : "the model uses latent attention (MLA)";
    // What runs instead: Megatron's selective set where recomputation is selective, else the
    // recompute setting itself (fresh-user finding: "Megatron's selective set is kept" under none).
    const std::string instead = sc.training.recompute == Recompute::selective
                                    ? "Megatron's selective set is kept"
                                    : std::string("recompute ") + (sc.training.recompute == Recompute::full
                                                                       ? "full re-runs every layer's forward"
                                                                       : "none keeps every activation");
    notes.push_back("workload.training.selective_policy has no effect: " + why +
                    " (expected selective recomputation of a dense model with flash attention, as torchtitan runs "
                    "it; here " +
                    instead + ")");
  }
  const std::vector<std::string> compute = compute_settings_without_effect(sc);
  notes.insert(notes.end(), compute.begin(), compute.end());
  return notes;
}

std::vector<std::string> compute_settings_without_effect(const Scenario& sc) {
  std::vector<std::string> notes;
  // training.fp8_recipe (models/workload/fp8_recipe.h) shapes only fp8 GEMMs; its default
  // (delayed_tensorwise) cannot be told from an unset field, the others can.
  if (sc.training.precision != Precision::fp8 && sc.training.fp8_recipe != Fp8Recipe::delayed_tensorwise) {
    constexpr const char* kRecipe[] = {"delayed_tensorwise", "current_tensorwise", "rowwise", "mx_blockwise"};
    notes.push_back(std::string("workload.training.fp8_recipe ") + kRecipe[static_cast<int>(sc.training.fp8_recipe)] +
                    " has no effect: precision is " + precision_name(sc.training.precision) +
                    " (expected precision fp8)");
  }
  // FlashAttention's kernels take 16-bit inputs only (FlashAttention-2, Dao 2023, arXiv:2307.08691:
  // fp16 and bf16); a 32-bit run's fused attention is PyTorch SDPA's memory-efficient kernel.
  if (sc.training.flash_attention && sc.model.family == ModelFamily::transformer &&
      (sc.training.precision == Precision::fp32 || sc.training.precision == Precision::tf32))
    notes.push_back(std::string("workload.training.flash_attention with precision ") +
                    precision_name(sc.training.precision) +
                    ": FlashAttention has no 32-bit kernel (fp16 and bf16 only); the attention is timed as a fused "
                    "kernel at the 32-bit peak with flash's memory, as PyTorch SDPA's memory-efficient kernel runs "
                    "it (an assumption: no 32-bit fused attention was measured)");
  // training.attention_kernel (compute_model.cc with_compute_model): read for fused attention, and
  // cudnn has constants for the GPUs it was measured on (attention_model.h: Hopper).
  if (sc.training.attention_kernel == AttentionKernel::cudnn) {
    if (sc.training.compute_model != ComputeModel::kernel) {
      notes.push_back(
          "workload.training.attention_kernel cudnn has no effect with compute_model training_fit, which times "
          "attention at one fitted-era efficiency per GPU (expected compute_model kernel)");
    } else if (!sc.training.flash_attention) {
      notes.push_back(
          "workload.training.attention_kernel cudnn has no effect: flash_attention is off (expected fused attention)");
    } else {
      try {
        const GpuSpec& gpu = find_gpu(cluster_node_template(sc.cluster).gpu);
        if (!cudnn_attention_model(gpu.compute_capability))
          notes.push_back("workload.training.attention_kernel cudnn has no effect on " + gpu.name +
                          ": cuDNN attention was measured on Hopper (compute capability 9.0) only, so "
                          "FlashAttention-2's constants apply (models/compute/attention_model.h)");
      } catch (const std::exception&) {
        // A template the loader has not resolved: the loader reports it.
      }
    }
  }
  return notes;
}

}  // namespace traincast::models
