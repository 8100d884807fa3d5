#pragma once
// Pipeline schedules as the order in which one stage runs its forward and backward passes
// (Megatron-LM schedules.py: 1F1B of Narayanan et al. SC21 §2.2 and its interleaved variant).

#include <vector>

#include "models/spec/scenario.h"

namespace traincast::models {

struct PipelineStep {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;  ///< model chunk (virtual stage) on this device, 0 without interleaving
};

/// Steps of stage `stage` (0-based) of `stages`, with `micro_batches` per iteration and
/// `chunks` model chunks per device (1 = plain 1F1B).
/// Throws std::invalid_argument if chunks > 1 and micro_batches % stages != 0 (Megatron's rule).
std::vector<PipelineStep> pipeline_steps(int stage, int stages, int micro_batches, int chunks);

/// Peak number of (chunk, micro-batch) activation sets alive at once on that stage, each
/// weighted by the layers of its chunk: the basis of the activation-memory peak.
double peak_inflight_layers(const std::vector<PipelineStep>& steps, const std::vector<int>& layers_per_chunk);

/// Layers on each stage (size stages): even split, or with uneven_stages the first L % P stages
/// carry one more layer.
std::vector<int> layers_per_stage(int num_layers, int stages);

/// Layers of each model chunk of each stage, out[stage][chunk]: the stage's layers split into
/// `chunks` (the first L % chunks chunks one more).
std::vector<std::vector<int>> chunk_layer_counts(int num_layers, int stages, int chunks);

/// Global index of the first layer of each (stage, chunk): model chunk chunk·stages + stage
/// follows every model chunk before it (Megatron's interleaved assignment; plain 1F1B: stage order).
std::vector<std::vector<int>> chunk_first_layers(const std::vector<std::vector<int>>& chunk_layers);

/// Layers on each stage (size pp) of the scenario: parallel.pipeline_stage_layers when given, else
/// layers_per_stage(num_layers, pp).
std::vector<int> stage_layer_counts(const Scenario& scenario);

/// Global indices of the layers stage `stage` holds under the scenario's pipeline layout.
std::vector<int> stage_layer_indices(const Scenario& scenario, int stage);

}  // namespace traincast::models
