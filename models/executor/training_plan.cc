// Plans a training job for the graph builders: layout and folding, layer programs, labels, input
// copies, collective groups, gradient buckets with the shared DP tasks, optimizer steps.
#include "models/executor/training_plan.h"

#include "models/executor/graph_size.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/executor/folding.h"
#include "models/executor/power_thermal_setup.h"
#include "models/workload/cnn.h"
#include "models/workload/offload.h"
#include "models/workload/pipeline_schedule.h"
#include "sim/simulator.h"

namespace traincast::models {
namespace {

/// The job's layout, micro-batches, iterations, layer programs and gradient/weight widths.
/// Throws std::invalid_argument as parallel_layout_of does, and for a ResNet with tp, pp or ep > 1.
void plan_shape(TrainingPlan& P, const Scenario& sc, const Cluster& cluster, const GpuSpec& gpu,
                const ComputeParams& params) {
  P.sc = &sc;
  static_cast<ParallelLayout&>(P) = parallel_layout_of(sc, cluster.num_gpus());
  P.v = sc.parallel.schedule == PipelineSchedule::interleaved_one_f_one_b ? std::max(1, sc.parallel.virtual_stages) : 1;
  P.m = sc.training.global_batch_size / (P.dp * sc.training.micro_batch_size);
  P.iterations = std::max(1, sc.options.iterations);
  if (sc.parallel.zero_stage >= 1 && sc.parallel.overlap_param_gather && P.dp_cp > 1)
    P.iterations = std::max(P.iterations, 2);
  const bool resnet = sc.model.family == ModelFamily::resnet;
  if (resnet && (P.tp != 1 || P.pp != 1 || P.ep != 1))
    throw std::invalid_argument("a ResNet is trained data-parallel only (DDP): tp, pp and ep must be 1");
  P.programs = resnet ? build_resnet_programs(sc, gpu, params) : build_transformer_programs(sc, gpu, params);
  const bool fp32 = sc.training.precision == Precision::fp32 || sc.training.precision == Precision::tf32;
  P.grad_bytes = (fp32 || sc.training.fp32_grad_accumulation) ? 4 : 2;
  P.weight_bytes = fp32 ? 4 : 2;
  P.gather_bytes = sc.parallel.param_gather_bytes > 0 ? sc.parallel.param_gather_bytes : P.weight_bytes;
  P.reshard_after_forward = sc.parallel.reshard_after_forward;
  P.reshard_after_backward = sc.parallel.reshard_after_backward;
}

/// Sets P.folding, P.folded, P.replicas and P.replica_ids (folding.h: partial folding).
void plan_folding(TrainingPlan& P, const Scenario& sc, const Cluster& cluster) {
  // Folding (DESIGN §3): symmetry units with the same hardware are simulated once when their place
  // in the network keeps their TP/PP traffic off each other's links (folding.h).
  // With expert parallelism the unit of symmetry is one EP group of ep replicas (they exchange
  // tokens), so ep replicas are simulated per class.
  // Context parallelism likewise: a CP group's cp replicas exchange K/V (ep and cp are not combined).
  FoldingPlan plan = plan_replica_folding(sc, P, cluster);
  // A GPU that stands for others must sit at the same place in its node when its temperature can
  // slow it down (airflow position, preheat); otherwise the replicas are not symmetric.
  if (plan.folded && clock_feedback_possible(sc)) {
    bool same_slots = true;
    for (int g = 0; g < cluster.num_gpus() && same_slots; ++g) {
      const int k = P.tp_rank_of(g), r = P.data_rank_of(g), st = P.stage_of(g);
      const int rep = plan.replica_ids[static_cast<std::size_t>(plan.sim_index[static_cast<std::size_t>(r)])];
      if (cluster.local_rank(P.gpu(k, rep, st)) != cluster.local_rank(g)) same_slots = false;
    }
    if (!same_slots) {
      const int unit = plan.unit;
      FoldingPlan alone;
      alone.unit = unit;
      for (int u = 0; u < P.dp_cp / unit; ++u)
        alone.classes.push_back({{u}, "thermal position: replicas sit at other places in their nodes"});
      for (int r = 0; r < P.dp_cp; ++r) {
        alone.replica_ids.push_back(r);
        alone.sim_index.push_back(r);
      }
      plan = std::move(alone);
    }
  }
  P.folded = plan.folded;
  P.replica_ids = plan.replica_ids;
  P.replicas = static_cast<int>(plan.replica_ids.size());
  P.folding = std::move(plan);
}

/// Every program a worker emits (each layer kind's forward, recompute, backward; embedding and head).
std::vector<const Program*> all_programs_of(const TrainingPlan& P) {
  std::vector<const Program*> all_programs;
  for (const LayerPrograms& lp : P.programs.layer_kinds)
    for (const Program* prog : {&lp.forward, &lp.recompute, &lp.backward}) all_programs.push_back(prog);
  for (const Program* prog : {&P.programs.embedding_forward, &P.programs.embedding_backward, &P.programs.head_forward,
                              &P.programs.head_backward})
    all_programs.push_back(prog);
  return all_programs;
}

/// Input copies (workload.data_loader): one host copy per GPU and micro-batch from the memory of
/// its loader's socket; every replica's first-stage GPUs load at once.
void plan_input_copies(TrainingPlan& P, const Scenario& sc, const Cluster& cluster) {
  const DataLoaderSpec& dl = *sc.data_loader;
  P.input_copies = true;
  // A prefetched copy hides under the previous iteration's compute: the report (of the last
  // iteration) shows that steady state only from the second iteration on.
  if (dl.prefetch) P.iterations = std::max(P.iterations, 2);
  P.input_prefetch = dl.prefetch;
  P.input_bytes = static_cast<double>(sc.training.micro_batch_size) * 3.0 * sc.model.image_size * sc.model.image_size *
                  dl.input_bytes_per_element;
  const int sockets = std::max(1, cluster.node_template().sockets);
  P.input_buffers.socket_of_gpu.assign(static_cast<std::size_t>(cluster.num_gpus()), -1);
  for (int r = 0; r < P.dp_cp; ++r)
    for (int k = 0; k < P.tp; ++k) {
      const int g = P.gpu(k, r, 0);
      const int home = cluster.socket_of_gpu(cluster.local_rank(g));
      const int socket = dl.numa_binding == NumaBinding::correct        ? home
                         : dl.numa_binding == NumaBinding::other_socket ? (home + 1) % sockets
                                                                        : 0;
      P.input_buffers.socket_of_gpu[static_cast<std::size_t>(g)] = socket;
    }
  P.labels.emplace_back("h2d_input");
}

/// Labels (trace names), interned once so builders only look them up, and the input copies and
/// storage stall that bring their own; then every program's label ids and durations.
void plan_labels(TrainingPlan& P, const Scenario& sc, const Cluster& cluster, double storage_stall_s) {
  const std::vector<const Program*> all_programs = all_programs_of(P);
  for (const Program* prog : all_programs)
    for (const Segment& seg : *prog)
      if (std::find(P.labels.begin(), P.labels.end(), seg.label) == P.labels.end()) P.labels.push_back(seg.label);
  if (sc.data_loader && sc.model.family == ModelFamily::resnet) plan_input_copies(P, sc, cluster);
  for (const char* l :
       {"pp_send_fwd", "pp_send_bwd", "pp_gather_fwd", "pp_gather_bwd", "dp_grad_sync", "dp_param_gather",
        "dp_param_gather_fwd", "dp_param_gather_bwd", "optimizer", "barrier", "offload_d2h", "cpu_adam", "offload_h2d"})
    P.labels.emplace_back(l);
  if (storage_stall_s > 0) {
    P.storage_stall_ns = sim::Time::from_seconds(storage_stall_s).ns();
    P.labels.emplace_back("storage_stall");
  }
  for (const Program* prog : all_programs) {
    TrainingPlan::ProgramInfo info{prog, {}, {}, {}};
    for (const Segment& seg : *prog) {
      info.label_ids.push_back(P.label(seg.label));
      info.duration_ns.push_back(seg.is_collective ? 0 : sim::Time::from_seconds(seg.seconds).ns());
      info.compute_fraction.push_back(seg.seconds > 0 ? seg.compute_bound_seconds / seg.seconds : 0.0);
    }
    P.program_info.push_back(std::move(info));
  }
}

/// Mixed clusters: the GPU type of every stage (all its GPUs' one), and each further type's
/// program durations, entry for entry as P.program_info. Throws std::invalid_argument for a stage
/// whose GPUs are of two types, or a GPU type the model's kernels cannot run on.
void plan_gpu_types(TrainingPlan& P, const Scenario& sc, const Cluster& cluster) {
  P.gpu_types = {&cluster.gpu_spec(0)};
  P.stage_gpu_type.assign(static_cast<std::size_t>(P.pp), 0);
  if (!cluster.mixed()) return;
  for (int s = 0; s < P.pp; ++s) {
    int type = -1;
    for (int r = 0; r < P.dp_cp; ++r)
      for (int k = 0; k < P.tp; ++k) {
        const GpuSpec* gpu = &cluster.gpu_spec(P.gpu(k, r, s));
        auto it = std::find(P.gpu_types.begin(), P.gpu_types.end(), gpu);
        if (it == P.gpu_types.end()) it = P.gpu_types.insert(P.gpu_types.end(), gpu);
        const int t = static_cast<int>(it - P.gpu_types.begin());
        if (type >= 0 && t != type) {
          throw std::invalid_argument(
              "cluster.node_group: pipeline stage " + std::to_string(s) + " spans two GPU types (" +
              P.gpu_types[static_cast<std::size_t>(type)]->name + " and " + gpu->name +
              "); tensor- and data-parallel groups across GPU types are not modelled (expected each stage's tp x dp x "
              "cp GPUs within node groups of one GPU: stage s takes GPUs s x tp x dp x cp onwards)");
        }
        type = t;
      }
    P.stage_gpu_type[static_cast<std::size_t>(s)] = type;
  }
  const std::vector<const Program*> base = all_programs_of(P);
  P.type_program_info.resize(P.gpu_types.size());
  for (std::size_t t = 1; t < P.gpu_types.size(); ++t) {
    const GpuSpec& gpu = *P.gpu_types[t];
    const ModelPrograms programs = build_transformer_programs(sc, gpu, compute_params(gpu, sc.cluster.profile));
    TrainingPlan other;
    other.programs = programs;
    const std::vector<const Program*> mine = all_programs_of(other);
    for (std::size_t i = 0; i < base.size(); ++i) {
      if (mine[i]->size() != base[i]->size())
        throw std::invalid_argument("cluster.node_group: the model's kernels on " + gpu.name +
                                    " differ from those on " + P.gpu_types.front()->name +
                                    " (expected GPUs that run the same kernels)");
      TrainingPlan::ProgramInfo info = P.program_info[i];
      info.duration_ns.clear();
      info.compute_fraction.clear();
      for (const Segment& seg : *mine[i]) {
        info.duration_ns.push_back(seg.is_collective ? 0 : sim::Time::from_seconds(seg.seconds).ns());
        info.compute_fraction.push_back(seg.seconds > 0 ? seg.compute_bound_seconds / seg.seconds : 0.0);
      }
      P.type_program_info[t].push_back(std::move(info));
    }
  }
}

/// Gradient buckets of one chunk in backward order (Megatron/DDP: filled as gradients become
/// ready; a bucket is launched once it holds dp_bucket_bytes; ZeRO-3 / FSDP: one per unit).
std::vector<GradBucket> plan_buckets(const TrainingPlan& P, int stage, int chunk) {
  const Scenario& sc = *P.sc;
  struct Item {
    double params, expert_params;
    int layer;  // chunk-local, or -1
  };
  std::vector<Item> items;
  const bool first = stage == 0 && chunk == 0, last = stage == P.pp - 1 && chunk == P.v - 1;
  // Parameters that get gradients: all, or the LoRA adapters only (frozen embedding and head).
  const bool frozen = P.programs.frozen_base;
  if (last) items.push_back({frozen ? 0.0 : P.programs.head_params_per_rank, 0.0, -1});
  const int layers = P.chunk_layers[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)];
  for (int l = layers - 1; l >= 0; --l) {
    const LayerPrograms& lp = P.layer(stage, chunk, l);
    if (frozen)
      items.push_back({P.programs.adapter_params_per_layer_per_rank, 0.0, l});
    else
      items.push_back({lp.params_per_rank, lp.expert_params_per_rank, l});
  }
  if (first && !frozen) items.push_back({P.programs.embedding_params_per_rank, 0.0, -1});
  // Megatron-Core: bucket_size = max(40M, 1M × dp) elements; here the first term is dp_bucket_bytes.
  // PyTorch DDP (the ResNet family): bucket_cap_mb as given, and the first bucket (the last
  // layers' gradients, ready first) capped at 1 MiB (torch.distributed _DEFAULT_FIRST_BUCKET_BYTES)
  // so communication starts early.
  const bool ddp = sc.model.family == ModelFamily::resnet;
  const double bucket_bytes =
      ddp ? sc.parallel.dp_bucket_bytes : std::max(sc.parallel.dp_bucket_bytes, 1e6 * P.dp_cp * P.grad_bytes);
  constexpr double kDdpFirstBucketBytes = 1048576.0;
  // ZeRO-3 / FSDP: each unit (embedding, every layer, head) reduce-scatters its own gradient in
  // its post-backward hook (FSDP wraps every transformer block: torchtitan's apply_fsdp,
  // llm-foundry's FSDP wrap policy on the block class), not in Megatron's large buckets.
  const bool per_unit = P.zero_stage == 3;
  std::vector<GradBucket> out;
  GradBucket cur;
  for (std::size_t i = 0; i < items.size(); ++i) {
    cur.params += items[i].params;
    cur.expert_params += items[i].expert_params;
    if (items[i].layer >= 0) cur.layers.push_back(items[i].layer);
    const double cap = (ddp && out.empty()) ? std::min(bucket_bytes, kDdpFirstBucketBytes) : bucket_bytes;
    const double held = cur.params + cur.expert_params;
    if ((per_unit ? held > 0 : held * P.grad_bytes >= cap) ||
        (i + 1 == items.size() && (cur.params + cur.expert_params > 0 || out.empty()))) {
      cur.after_item = static_cast<int>(i);
      out.push_back(std::move(cur));
      cur = GradBucket{};
    }
  }
  return out;
}

/// The shared DP tasks of one (stage s, chunk c) in one iteration, appended to `iter_tasks` in the
/// layout TrainingPlan::grad_task and below describe; adds the chunk's parameters to
/// P.stage_params and its expert parameters to stage_expert_params[s]. Returns the tasks added.
std::uint32_t plan_chunk_dp_tasks(TrainingPlan& P, int s, int c, const std::vector<GradBucket>& bks,
                                  std::vector<Task>& iter_tasks, std::vector<double>& stage_expert_params) {
  const bool zero = P.zero_stage >= 1;
  const bool moe = P.sc->model.num_experts > 0;
  const auto expert_replicas = static_cast<std::uint32_t>(P.replicas / P.ep);  // simulated per expert-DP group
  std::uint32_t added = 0;
  auto dp_task = [&](CollectiveOp op, double bytes) {
    Task t;
    t.op = op;
    t.bytes = bytes;
    t.group_begin = P.dp_group(s);
    t.group_count = static_cast<std::uint32_t>(P.tp);
    t.expected = static_cast<std::uint32_t>(P.replicas);
    iter_tasks.push_back(t);
    ++added;
  };
  for (const GradBucket& b : bks) P.stage_params[static_cast<std::size_t>(s)] += b.params;
  // Round 0 of the gradient reductions, then the post-step gathers of ZeRO-1/2 (MoE's layout).
  for (const GradBucket& b : bks)
    dp_task(zero ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce, b.params * P.grad_bytes);
  for (const GradBucket& b : bks) dp_task(CollectiveOp::all_gather, b.params * P.weight_bytes);
  // Expert gradients and (ZeRO-1) expert parameter gathers: per bucket, one task per EP rank.
  if (moe) {
    for (int pass = 0; pass < 2; ++pass)
      for (const GradBucket& b : bks)
        for (int j = 0; j < P.ep; ++j) {
          Task t;
          t.op =
              pass == 1 ? CollectiveOp::all_gather : (zero ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce);
          t.bytes = b.expert_params * (pass == 1 ? P.weight_bytes : P.grad_bytes);
          t.group_begin = P.edp_group(s, j);
          t.group_count = static_cast<std::uint32_t>(P.tp);
          t.expected = expert_replicas;
          iter_tasks.push_back(t);
          ++added;
          if (pass == 0 && j == 0) stage_expert_params[static_cast<std::size_t>(s)] += b.expert_params;
        }
  }
  // ZeRO-2/3 after MoE's tasks: gradient rounds 1..m-1, then ZeRO-3's per-item gathers.
  P.zero_extra_base[static_cast<std::size_t>(s)].push_back(added);
  for (int round = 1; round < P.grad_reductions; ++round)
    for (const GradBucket& b : bks)
      dp_task(zero ? CollectiveOp::reduce_scatter : CollectiveOp::all_reduce, b.params * P.grad_bytes);
  if (P.zero_stage == 3) {
    // Per-item parameters in forward order: embedding, layers, head (TrainingPlan::gather_task).
    std::vector<double> item_params;
    if (s == 0 && c == 0) item_params.push_back(P.programs.embedding_params_per_rank);
    for (int l = 0; l < P.chunk_layers[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)]; ++l)
      item_params.push_back(P.layer(s, c, l).params_per_rank);
    if (s == P.pp - 1 && c == P.v - 1) item_params.push_back(P.programs.head_params_per_rank);
    for (int dir = 0; dir < 2; ++dir)
      for (int mb = 0; mb < P.m; ++mb)
        for (double params_of_item : item_params) dp_task(CollectiveOp::all_gather, params_of_item * P.gather_bytes);
  }
  return added;
}

/// Buckets and the shared DP tasks of every iteration (layout: TrainingPlan::grad_task and below).
/// Returns the expert parameters per stage (per GPU) for the optimizer's shard.
std::vector<double> plan_dp_tasks(TrainingPlan& P, const Scenario& sc) {
  P.zero_stage = sc.parallel.zero_stage;
  P.grad_reductions = sc.parallel.zero_stage >= 2 && sc.parallel.grad_sync_every_microbatch ? P.m : 1;
  P.buckets.resize(static_cast<std::size_t>(P.pp));
  P.dp_task_base.resize(static_cast<std::size_t>(P.pp));
  P.zero_extra_base.resize(static_cast<std::size_t>(P.pp));
  std::uint32_t per_iter = 0;
  std::vector<Task> iter_tasks;
  P.stage_params.assign(static_cast<std::size_t>(P.pp), 0.0);
  std::vector<double> stage_expert_params(static_cast<std::size_t>(P.pp), 0.0);
  for (int s = 0; s < P.pp; ++s)
    for (int c = 0; c < P.v; ++c) {
      auto bks = plan_buckets(P, s, c);
      P.dp_task_base[static_cast<std::size_t>(s)].push_back(per_iter);
      per_iter += plan_chunk_dp_tasks(P, s, c, bks, iter_tasks, stage_expert_params);
      P.buckets[static_cast<std::size_t>(s)].push_back(std::move(bks));
    }
  P.dp_tasks_per_iteration = per_iter;
  for (int it = 0; it < P.iterations; ++it) P.dp_tasks.insert(P.dp_tasks.end(), iter_tasks.begin(), iter_tasks.end());
  return stage_expert_params;
}

/// Optimizer step duration and (offload) parameter copy-back per stage.
void plan_optimizer_steps(TrainingPlan& P, const Scenario& sc, const Cluster& cluster, const GpuSpec& gpu,
                          const ComputeParams& params, const std::vector<double>& stage_expert_params) {
  const bool zero = sc.parallel.zero_stage >= 1;
  const bool moe = sc.model.num_experts > 0;
  // Optimizer step per stage: Adam over the local shard, memory bound: read fp32 grad (4),
  // read+write master, m, v (24), write 16-bit weight (2), grad-norm read (4) = 34 B/param.
  // ResNet: SGD with momentum on fp32 weights (torchvision reference recipe): read the grad (4),
  // read+write the weight (8) and the momentum (8) = 20 B/param.
  // CPU offload: CPU-Adam over the shard in host memory (models/workload/offload.h), every GPU of
  // a socket stepping at once on its share of the socket's DRAM bandwidth.
  const double optimizer_bytes_per_param = sc.model.family == ModelFamily::resnet ? 20.0 : 34.0;
  P.offload = sc.offload.optimizer;
  const double host_bw = P.offload ? offload_host_memory_bytes_per_s(sc, cluster.node_template()) : 0.0;
  if (P.offload && !(host_bw > 0))
    throw std::invalid_argument("offload: no host-memory bandwidth for CPU '" + cluster.node_template().cpu +
                                "' (set workload.offload.host_memory_bytes_per_s)");
  const int sockets = std::max(1, cluster.node_template().sockets);
  const int gpus_per_socket = (cluster.gpus_per_node() + sockets - 1) / sockets;
  for (int s = 0; s < P.pp; ++s) {
    double shard = P.stage_params[static_cast<std::size_t>(s)] / (zero ? P.dp_cp : 1);
    if (moe) shard += stage_expert_params[static_cast<std::size_t>(s)] / (zero ? P.dp_cp / P.ep : 1);
    const Kernel k{KernelKind::optimizer, 0, optimizer_bytes_per_param * shard};
    // Each stage's optimizer on its own GPU (mixed clusters: plan_gpu_types).
    const GpuSpec& stage_gpu = *P.gpu_types[static_cast<std::size_t>(P.stage_gpu_type[static_cast<std::size_t>(s)])];
    const ComputeParams stage_params = &stage_gpu == &gpu ? params : compute_params(stage_gpu, sc.cluster.profile);
    const double seconds = P.offload ? cpu_adam_seconds(shard, host_bw, sc.offload.cpu_adam_efficiency, gpus_per_socket)
                                     : kernel_seconds(k, stage_gpu, stage_params, sc.training.precision);
    P.optimizer_ns.push_back(sim::Time::from_seconds(seconds).ns());
    P.offload_h2d_bytes.push_back(shard * P.weight_bytes);
  }
}

/// Refuse graphs that would not fit in memory (about 100 bytes per op with its edges) before
/// building them, with what to change. Throws std::invalid_argument.
void check_graph_size(const TrainingPlan& P, const Scenario& sc) {
  refuse_graph_ops_over_limit(
      graph_ops_terms(P.programs, P.stage_layers, P.zero_stage, P.m, P.iterations, P.replicas, P.pp), sc, P.dp);
}

}  // namespace

TrainingPlan plan_training(const Scenario& sc, const Cluster& cluster, double storage_stall_s) {
  const GpuSpec& gpu = cluster.gpu_spec(0);
  const ComputeParams params = compute_params(gpu, sc.cluster.profile);
  TrainingPlan P;
  plan_shape(P, sc, cluster, gpu, params);
  plan_folding(P, sc, cluster);
  // Layers per stage and chunk, as the generator lays them out (transformer layers, or ResNet
  // bottleneck blocks).
  const int num_layers = static_cast<int>(P.programs.layer_kind.size());
  if (static_cast<int>(sc.parallel.pipeline_stage_layers.size()) != P.pp || P.v != 1) {
    P.stage_layers = layers_per_stage(num_layers, P.pp);
    P.chunk_layers = chunk_layer_counts(num_layers, P.pp, P.v);
  } else {
    // An uneven split as given (1F1B only: the loader refuses the list with interleaving).
    P.stage_layers = sc.parallel.pipeline_stage_layers;
    int sum = 0;
    for (int l : P.stage_layers) sum += l < 1 ? num_layers + 1 : l;
    if (sum != num_layers)
      throw std::invalid_argument("workload.parallel.pipeline_stage_layers: entries >= 1 summing to " +
                                  std::to_string(num_layers) + " layers expected");
    P.chunk_layers.clear();
    for (int l : P.stage_layers) P.chunk_layers.push_back({l});
  }
  P.chunk_first_layer = chunk_first_layers(P.chunk_layers);
  plan_labels(P, sc, cluster, storage_stall_s);
  plan_gpu_types(P, sc, cluster);
  P.build_groups(sc.model.num_experts > 0, sc.parallel.tp_comm_overlap);
  const std::vector<double> stage_expert_params = plan_dp_tasks(P, sc);
  plan_optimizer_steps(P, sc, cluster, gpu, params, stage_expert_params);
  check_graph_size(P, sc);
  return P;
}

}  // namespace traincast::models
