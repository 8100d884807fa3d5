#pragma once
// Workload fields a scenario sets that the models ignore for this layout, so that the CLI can say
// so (as Cluster::settings_without_effect does for fabric fields) instead of answering as if they
// acted.

#include <string>
#include <vector>

#include "models/spec/scenario.h"

namespace traincast::models {

/// One line per field written away from its default that has no effect here, "workload.x.y has
/// no effect: why (expected ...)": parallel.uneven_stages when the stages split the layers evenly
/// or pp is 1; parallel.zero_implementation deepspeed and parallel.reduce_bucket_elements outside
/// DeepSpeed's modelled case (ZeRO-1/2, 16-bit training, no LoRA); parallel.tp_overlap_implementation
/// async_tp without tp_comm_overlap or with tp 1; parallel.overlap_tp_grad_reduce false with tp 1;
/// training.selective_policy
/// outside selective recomputation; and compute_settings_without_effect's. Never throws; empty when
/// every setting acts.
std::vector<std::string> workload_settings_without_effect(const Scenario& scenario);

/// The part that does not depend on the layout (for `plan`, which replaces the layout):
/// training.fp8_recipe away from fp8; training.flash_attention at fp32 or tf32 (no FlashAttention
/// kernel: says what is timed instead, also when the GPU's default turned it on);
/// training.attention_kernel cudnn under compute_model training_fit, without flash attention, or on
/// a GPU with no cuDNN attention constants. Never throws.
std::vector<std::string> compute_settings_without_effect(const Scenario& scenario);

}  // namespace traincast::models
