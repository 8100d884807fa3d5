#include "models/workload/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace traincast::models {

std::vector<PipelineStep> pipeline_steps(int stage, int stages, int micro_batches, int chunks) {
  if (stages < 1 || micro_batches < 1 || chunks < 1 || stage < 0 || stage >= stages)
    throw std::invalid_argument("pipeline_steps: bad stage/stages/micro_batches/chunks");
  std::vector<PipelineStep> steps;
  steps.reserve(2 * static_cast<std::size_t>(micro_batches) * static_cast<std::size_t>(chunks));
  if (chunks == 1) {
    const int warmup = std::min(stages - stage - 1, micro_batches);
    int next_f = 0, next_b = 0;
    for (int i = 0; i < warmup; ++i) steps.push_back({true, next_f++, 0});
    while (next_f < micro_batches) {
      steps.push_back({true, next_f++, 0});
      steps.push_back({false, next_b++, 0});
    }
    while (next_b < micro_batches) steps.push_back({false, next_b++, 0});
    return steps;
  }
  if (micro_batches % stages != 0)
    throw std::invalid_argument("interleaved 1F1B needs micro-batches (" + std::to_string(micro_batches) +
                                ") divisible by pipeline stages (" + std::to_string(stages) + ")");
  // Megatron-LM forward_backward_pipelining_with_interleaving: virtual micro-step k maps to
  // chunk (k mod (P·v)) / P and micro-batch (k / (P·v))·P + k mod P; backward chunks reversed.
  const int total = micro_batches * chunks;
  const int group = stages * chunks;
  auto chunk_of = [&](int k, bool forward) {
    const int c = (k % group) / stages;
    return forward ? c : chunks - 1 - c;
  };
  auto mb_of = [&](int k) { return (k / group) * stages + k % stages; };
  const int warmup = std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
  int kf = 0, kb = 0;
  for (int i = 0; i < warmup; ++i, ++kf) steps.push_back({true, mb_of(kf), chunk_of(kf, true)});
  while (kf < total) {
    steps.push_back({true, mb_of(kf), chunk_of(kf, true)});
    ++kf;
    steps.push_back({false, mb_of(kb), chunk_of(kb, false)});
    ++kb;
  }
  while (kb < total) {
    steps.push_back({false, mb_of(kb), chunk_of(kb, false)});
    ++kb;
  }
  return steps;
}

double peak_inflight_layers(const std::vector<PipelineStep>& steps, const std::vector<int>& layers_per_chunk) {
  double alive = 0, peak = 0;
  for (const PipelineStep& s : steps) {
    const double layers = layers_per_chunk.at(static_cast<std::size_t>(s.chunk));
    if (s.forward) {
      alive += layers;
      peak = std::max(peak, alive);
    } else {
      alive -= layers;
    }
  }
  return peak;
}

std::vector<int> layers_per_stage(int num_layers, int stages) {
  std::vector<int> out(static_cast<std::size_t>(stages), num_layers / stages);
  for (int i = 0; i < num_layers % stages; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

std::vector<std::vector<int>> chunk_layer_counts(int num_layers, int stages, int chunks) {
  const std::vector<int> per_stage = layers_per_stage(num_layers, stages);
  std::vector<std::vector<int>> out(static_cast<std::size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    const int L = per_stage[static_cast<std::size_t>(s)];
    for (int c = 0; c < chunks; ++c) out[static_cast<std::size_t>(s)].push_back(L / chunks + (c < L % chunks ? 1 : 0));
  }
  return out;
}

std::vector<std::vector<int>> chunk_first_layers(const std::vector<std::vector<int>>& chunk_layers) {
  const std::size_t stages = chunk_layers.size();
  const std::size_t chunks = stages > 0 ? chunk_layers[0].size() : 0;
  std::vector<std::vector<int>> out(stages, std::vector<int>(chunks, 0));
  int next = 0;
  for (std::size_t c = 0; c < chunks; ++c)
    for (std::size_t s = 0; s < stages; ++s) {
      out[s][c] = next;
      next += chunk_layers[s][c];
    }
  return out;
}

namespace {
/// Whether the scenario's per-stage layer list applies: one entry per stage (the loader refuses
/// any other length; a scenario built in code is taken as even otherwise).
bool stage_list_applies(const Scenario& sc) {
  return !sc.parallel.pipeline_stage_layers.empty() &&
         static_cast<int>(sc.parallel.pipeline_stage_layers.size()) == sc.parallel.pp;
}
}  // namespace

std::vector<int> stage_layer_counts(const Scenario& sc) {
  if (stage_list_applies(sc)) return sc.parallel.pipeline_stage_layers;
  return layers_per_stage(sc.model.num_layers, sc.parallel.pp);
}

std::vector<int> stage_layer_indices(const Scenario& sc, int stage) {
  if (stage_list_applies(sc)) {
    // 1F1B only (the loader refuses the field with interleaving): stage s follows stages 0..s-1.
    const std::vector<int>& counts = sc.parallel.pipeline_stage_layers;
    int first = 0;
    for (int s = 0; s < stage; ++s) first += counts[static_cast<std::size_t>(s)];
    std::vector<int> out(static_cast<std::size_t>(counts[static_cast<std::size_t>(stage)]));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = first + static_cast<int>(i);
    return out;
  }
  const int chunks =
      sc.parallel.schedule == PipelineSchedule::interleaved_one_f_one_b ? std::max(1, sc.parallel.virtual_stages) : 1;
  const auto counts = chunk_layer_counts(sc.model.num_layers, sc.parallel.pp, chunks);
  const auto first = chunk_first_layers(counts);
  std::vector<int> out;
  for (int c = 0; c < chunks; ++c)
    for (int i = 0; i < counts[static_cast<std::size_t>(stage)][static_cast<std::size_t>(c)]; ++i)
      out.push_back(first[static_cast<std::size_t>(stage)][static_cast<std::size_t>(c)] + i);
  return out;
}

}  // namespace traincast::models
