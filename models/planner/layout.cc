#include "models/planner/layout.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/hardware/catalog.h"
#include "models/hardware/element_overrides.h"
#include "models/workload/memory_model.h"
#include "models/workload/pipeline_schedule.h"

namespace traincast::models::planner {

Layout layout_of(const Scenario& sc) {
  Layout l;
  l.tp = sc.parallel.tp;
  l.pp = sc.parallel.pp;
  l.dp = sc.parallel.dp;
  l.virtual_stages =
      sc.parallel.schedule == PipelineSchedule::interleaved_one_f_one_b ? std::max(1, sc.parallel.virtual_stages) : 1;
  l.sequence_parallel = sc.parallel.sequence_parallel && sc.parallel.tp > 1;
  l.zero_stage = sc.parallel.zero_stage;
  l.micro_batch_size = sc.training.micro_batch_size;
  l.recompute = sc.training.recompute;
  l.uneven_stages = sc.parallel.uneven_stages && sc.model.num_layers % std::max(1, sc.parallel.pp) != 0;
  return l;
}

Scenario apply_layout(const Scenario& base, const Layout& l) {
  Scenario sc = base;
  ParallelSpec& p = sc.parallel;
  p.tp = l.tp;
  p.pp = l.pp;
  p.dp = l.dp;
  p.virtual_stages = l.virtual_stages;
  p.schedule = l.virtual_stages > 1 ? PipelineSchedule::interleaved_one_f_one_b : PipelineSchedule::one_f_one_b;
  p.uneven_stages = l.uneven_stages;
  // A layout of its own pp: the base's per-stage layer list keeps only when the pp is the same.
  if (l.pp != base.parallel.pp || l.virtual_stages > 1) p.pipeline_stage_layers.clear();
  p.sequence_parallel = l.sequence_parallel && l.tp > 1;
  p.tp_comm_overlap = base.parallel.tp_comm_overlap && p.sequence_parallel;
  p.zero_stage = l.zero_stage;
  p.overlap_param_gather = base.parallel.overlap_param_gather && l.zero_stage >= 1;
  sc.training.micro_batch_size = l.micro_batch_size;
  sc.training.recompute = l.recompute;
  return sc;
}

std::string own_layout_note(const std::string& why) {
  return (why.rfind("zero_stage", 0) == 0 ? "the scenario's own layout has "
                                          : "the scenario's own layout is not valid: ") +
         why;
}

std::string layout_error(const Scenario& base, const Layout& l) {
  using std::to_string;
  const ModelSpec& m = base.model;
  const NodeTemplate& node = cluster_node_template(base.cluster);
  const std::int64_t gpus = static_cast<std::int64_t>(nodes_in_service(base.cluster)) * node.gpus_per_node;
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.virtual_stages < 1 || l.micro_batch_size < 1)
    return "tp, pp, dp, virtual_stages and micro_batch_size must be >= 1";
  if (m.num_attention_heads % l.tp != 0)
    return "tp " + to_string(l.tp) + " does not divide num_attention_heads " + to_string(m.num_attention_heads);
  if (m.num_query_groups > 0 && m.num_query_groups % l.tp != 0)
    return "tp " + to_string(l.tp) + " does not divide num_query_groups " + to_string(m.num_query_groups);
  if (m.ffn_hidden_size > 0 && m.ffn_hidden_size % l.tp != 0)
    return "tp " + to_string(l.tp) + " does not divide ffn_hidden_size " + to_string(m.ffn_hidden_size);
  if (static_cast<std::int64_t>(l.tp) * l.pp * l.dp != gpus)
    return "tp * pp * dp = " + to_string(static_cast<std::int64_t>(l.tp) * l.pp * l.dp) + " but the cluster has " +
           to_string(gpus) + " GPUs";
  if (l.pp > m.num_layers) return "pp " + to_string(l.pp) + " exceeds num_layers " + to_string(m.num_layers);
  const bool divides = m.num_layers % l.pp == 0;
  if (l.uneven_stages == divides)
    return divides ? "uneven_stages set but pp " + to_string(l.pp) + " divides num_layers " + to_string(m.num_layers)
                   : "pp " + to_string(l.pp) + " does not divide num_layers " + to_string(m.num_layers);
  if (l.zero_stage != 0 && l.zero_stage != 1)
    return "zero_stage " + to_string(l.zero_stage) +
           ", outside what plan searches (0 or 1; traincast run simulates ZeRO-2 and ZeRO-3 as given)";
  const std::int64_t step = static_cast<std::int64_t>(l.dp) * l.micro_batch_size;
  if (base.training.global_batch_size % step != 0)
    return "global_batch_size " + to_string(base.training.global_batch_size) +
           " is not divisible by dp * mb = " + to_string(step);
  if (l.virtual_stages > 1) {
    if (l.pp < 2) return "interleaving needs pp >= 2";
    if (l.uneven_stages) return "interleaving needs even stages";
    if (m.num_layers % (l.pp * l.virtual_stages) != 0)
      return "pp * virtual_stages = " + to_string(l.pp * l.virtual_stages) + " does not divide num_layers " +
             to_string(m.num_layers);
    if ((base.training.global_batch_size / step) % l.pp != 0)
      return "micro-batches per pipeline " + to_string(base.training.global_batch_size / step) +
             " not a multiple of pp " + to_string(l.pp) + " (interleaved 1F1B)";
  }
  if (l.sequence_parallel && l.tp == 1) return "sequence parallelism needs tp > 1";
  // The loader's other layout rules (models/io: Checker::layout_error), so that every layout the
  // search keeps is one `traincast run` accepts. Megatron-Core mappings.py
  // _split_along_first_dim: the sequence splits over the TP ranks under sequence parallelism.
  if (l.sequence_parallel && m.seq_length % l.tp != 0)
    return "seq_length " + to_string(m.seq_length) + " is not divisible by tp " + to_string(l.tp) +
           " with sequence parallelism";
  if (m.num_experts > 0 && l.tp > 1 && !l.sequence_parallel)
    return "a MoE model with tp > 1 needs sequence parallelism (Megatron-Core)";
  const int moe_ffn = m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : m.ffn_hidden_size;
  if (m.num_experts > 0 && m.num_shared_experts > 0 && moe_ffn > 0 &&
      (static_cast<std::int64_t>(moe_ffn) * m.num_shared_experts) % l.tp != 0)
    return "tp " + to_string(l.tp) + " does not divide the shared experts' width";
  if (base.parallel.ep > 1 && l.dp % base.parallel.ep != 0)
    return "ep " + to_string(base.parallel.ep) + " does not divide dp " + to_string(l.dp);
  if (base.offload.optimizer && l.dp > 1 && l.zero_stage == 0)
    return "optimizer offload with dp " + to_string(l.dp) + " needs ZeRO (zero_stage >= 1)";
  return {};
}

MemoryBreakdown layout_memory(const Scenario& sc) {
  const NodeTemplate& node = cluster_node_template(sc.cluster);
  const GpuSpec& gpu = find_gpu(sc.cluster.gpu.empty() ? node.gpu : sc.cluster.gpu);
  const int p = sc.parallel.pp;
  const int v =
      sc.parallel.schedule == PipelineSchedule::interleaved_one_f_one_b ? std::max(1, sc.parallel.virtual_stages) : 1;
  const int m = sc.training.global_batch_size / (sc.parallel.dp * sc.training.micro_batch_size);
  const std::vector<int> stage_layers = stage_layer_counts(sc);
  MemoryBreakdown worst;
  for (int s = 0; s < p; ++s) {
    const int L = stage_layers[static_cast<std::size_t>(s)];
    double inflight = 0;
    if (v == 1) {
      // 1F1B: stage s runs min(p - s - 1, m) warm-up forwards, then one more before its first
      // backward, so min(p - s, m) micro-batches are alive at the peak (what pipeline_steps gives).
      inflight = static_cast<double>(std::min(p - s, m)) * L;
    } else {
      std::vector<int> chunk_layers;
      chunk_layers.reserve(static_cast<std::size_t>(v));
      for (int c = 0; c < v; ++c) chunk_layers.push_back(L / v + (c < L % v ? 1 : 0));
      inflight = peak_inflight_layers(pipeline_steps(s, p, m, v), chunk_layers);
    }
    MemoryBreakdown mb = stage_memory(sc, gpu, s, L, inflight);
    if (s == 0 || mb.peak_bytes_per_gpu > worst.peak_bytes_per_gpu) worst = std::move(mb);
  }
  return worst;
}

namespace {
/// The per-stage layer list apply_layout(base, l) keeps (empty when none applies).
std::vector<int> kept_stage_layers(const Layout& l, const Scenario& base) {
  const std::vector<int>& list = base.parallel.pipeline_stage_layers;
  if (l.pp != base.parallel.pp || l.virtual_stages > 1 || static_cast<int>(list.size()) != l.pp) return {};
  return list;
}

std::string label(const Layout& l, const std::vector<int>& stage_layers) {
  std::string s = "TP " + std::to_string(l.tp) + " x PP " + std::to_string(l.pp);
  if (l.virtual_stages > 1) s += " (" + std::to_string(l.virtual_stages) + " chunks)";
  if (!stage_layers.empty()) {
    s += " (stages ";
    for (std::size_t i = 0; i < stage_layers.size(); ++i) s += (i ? " + " : "") + std::to_string(stage_layers[i]);
    s += ")";
  } else if (l.uneven_stages) {
    s += " (uneven)";
  }
  s += " x DP " + std::to_string(l.dp) + ", mb " + std::to_string(l.micro_batch_size);
  if (l.sequence_parallel) s += ", SP";
  if (l.zero_stage > 0) s += ", ZeRO-" + std::to_string(l.zero_stage);
  s += ", recompute ";
  s += recompute_name(l.recompute);
  return s;
}
}  // namespace

std::string to_string(const Layout& l) { return label(l, {}); }

std::string to_string(const Layout& l, const Scenario& base) { return label(l, kept_stage_layers(l, base)); }

int max_stage_layers(const Layout& l, const Scenario& base) {
  const std::vector<int> counts = stage_layer_counts(apply_layout(base, l));
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

}  // namespace traincast::models::planner
