// Turns a finished run of a training graph into its Report, section by section: header and
// throughput, time breakdown with straggler wait, memory, busiest links, utilisation, trace spans.
#include "models/executor/training_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "models/compute/compute_model.h"
#include "models/executor/power_thermal_setup.h"
#include "models/executor/straggler.h"
#include "models/executor/wait_split.h"
#include "models/workload/cnn.h"
#include "models/workload/layer_program.h"
#include "models/workload/memory_model.h"
#include "models/workload/pipeline_schedule.h"
#include "models/workload/transformer.h"

namespace traincast::models {
namespace {

/// The last simulated iteration: its index and window [t0, t1] [ns], iter_s = t1 - t0 [s].
struct LastIteration {
  int last = 0;
  std::int64_t t0 = 0, t1 = 0;
  double iter_s = 0;
};

/// The job's shape and parallelism, the events and the run's throughput, FLOPs, MFU/HFU and
/// time to train (from the last iteration's window, which it returns).
LastIteration report_throughput(const Scenario& sc, const Cluster& cluster, std::uint64_t events,
                                const TrainingGraph& job, Report& r) {
  const GpuSpec& gpu = cluster.gpu_spec(0);
  r.scenario = sc.name;
  r.gpu = gpu.name;
  const ComputeParams cp = default_compute_params(gpu);
  if (cp.source.rfind("UNCALIBRATED", 0) == 0 && sc.cluster.profile == nullptr) {
    char gemm[16];
    std::snprintf(gemm, sizeof gemm, "%.2f", cp.gemm_efficiency);
    r.caveat = "no measured kernel efficiencies for " + gpu.name + ": generic defaults used (GEMM " + gemm +
               " of peak); treat with care";
  }
  r.compute_model = compute_model_name(sc.training.compute_model);
  // The fused attention kernel whose constants timed attention: cuDNN's only under the kernel model
  // on a GPU it was measured on (attention_model.h; elsewhere FlashAttention-2's apply, and
  // training_fit's attention efficiency is FA2-class), as compute_model.cc with_compute_model.
  if (sc.training.flash_attention) {
    const bool cudnn = sc.training.attention_kernel == AttentionKernel::cudnn &&
                       sc.training.compute_model == ComputeModel::kernel && cp.cudnn_attention.has_value();
    r.attention_kernel = attention_kernel_name(cudnn ? AttentionKernel::cudnn : AttentionKernel::flash2);
  }
  // The recomputation, as the summary's layout line names it (a ResNet has none); a torchtitan_op
  // policy that does not apply runs Megatron's set (memory_model.h torchtitan_op_applies).
  if (sc.model.family != ModelFamily::resnet) {
    r.recompute = recompute_name(sc.training.recompute);
    if (sc.training.recompute == Recompute::selective)
      r.selective_policy =
          selective_policy_name(torchtitan_op_applies(sc) ? SelectivePolicy::torchtitan_op : SelectivePolicy::megatron);
  }
  if (sc.cluster.profile != nullptr) {
    r.profile = sc.cluster.profile->origin;
    r.profile_gpu = sc.cluster.profile->gpu;
  }
  r.num_gpus = cluster.num_gpus();
  r.num_nodes = cluster.num_nodes();
  for (const Cluster::DrainedNode& d : cluster.drained_nodes())
    r.drained_nodes.push_back("node" + std::to_string(d.slot) + ": " + d.reason());
  r.tp = job.tp;
  r.pp = job.pp;
  r.dp = job.dp;
  r.cp = std::max(1, job.cp);
  r.ep = std::max(1, sc.parallel.ep);
  r.micro_batches = job.micro_batches;
  r.folded = job.folded;
  if (gpus_slowed(sc, cluster) || !cluster.scaled_resources().empty() || !cluster.failed_resources().empty()) {
    r.folding.replicas = job.dp_cp;
    r.folding.simulated_replicas = job.replicas;
    for (const ReplicaClass& c : job.folding.classes)
      r.folding.classes.push_back({c.units.front() * job.folding.unit,
                                   static_cast<int>(c.units.size()) * job.folding.unit,
                                   rank_ranges(c.units, job.folding.unit), c.reason});
  }
  r.iterations_simulated = job.iterations;
  r.events = events;

  // Iteration boundaries: last compute-stream op of each iteration over all workers.
  std::vector<std::int64_t> boundary(static_cast<std::size_t>(job.iterations) + 1, 0);
  for (const Op& op : job.graph.ops)
    if (op.stream == kCompute) boundary[op.iteration + 1u] = std::max(boundary[op.iteration + 1u], op.end_ns);
  LastIteration li;
  li.last = job.iterations - 1;
  li.t0 = boundary[static_cast<std::size_t>(li.last)];
  li.t1 = boundary[static_cast<std::size_t>(li.last) + 1];
  const double iter_s = static_cast<double>(li.t1 - li.t0) * 1e-9;
  li.iter_s = iter_s;
  r.iteration_time_s = iter_s;
  const double tokens = static_cast<double>(sc.training.global_batch_size) * tokens_per_sample(sc.model);
  r.tokens_per_s = tokens / iter_s;
  r.samples_per_s = static_cast<double>(sc.training.global_batch_size) / iter_s;
  r.model_flops_per_iteration = model_flops_per_iteration(sc);
  r.hardware_flops_per_iteration = hardware_flops_per_iteration(sc);
  r.peak_flops_per_gpu = peak_flops(gpu, sc.training.precision);
  if (cluster.mixed()) {
    // A mixed cluster's MFU is of the mean dense peak over its GPUs (the job's total peak / GPUs).
    double sum = 0;
    for (const Cluster::NodeGroup& g : cluster.node_groups())
      sum += g.num_nodes * cluster.gpus_per_node() * peak_flops(*g.gpu, sc.training.precision);
    r.peak_flops_per_gpu = sum / cluster.num_gpus();
    r.gpu.clear();
    for (const Cluster::NodeGroup& g : cluster.node_groups())
      if (r.gpu.find(g.gpu->name) == std::string::npos) r.gpu += (r.gpu.empty() ? "" : " + ") + g.gpu->name;
  }
  r.tflops_per_gpu = r.model_flops_per_iteration / iter_s / r.num_gpus / 1e12;
  r.hardware_tflops_per_gpu = r.hardware_flops_per_iteration / iter_s / r.num_gpus / 1e12;
  r.mfu = r.tflops_per_gpu * 1e12 / r.peak_flops_per_gpu;
  r.hfu = r.hardware_tflops_per_gpu * 1e12 / r.peak_flops_per_gpu;
  if (sc.training.train_tokens > 0) {
    r.train_tokens = sc.training.train_tokens;
    r.train_tokens_source = "scenario";
    // Whole iterations: an optimizer step trains a whole global batch, so a part of one still costs one.
    r.time_to_train_s = std::ceil(sc.training.train_tokens / tokens) * iter_s;
  }
  return li;
}

/// Breakdown on one worker in the last iteration: the busiest stage (compute-stream time) of the
/// fastest replica (least kernel time on that stage; the first on ties, so replica 0 in any
/// homogeneous job), so that time lost to a slower replica shows as straggler wait. Returns that
/// worker; `kernel` receives every worker's kernel time in the last iteration [ns].
int breakdown_worker(const TrainingGraph& job, int last, std::vector<double>& kernel) {
  const int workers = static_cast<int>(job.graph.workers);
  std::vector<double> busy(static_cast<std::size_t>(workers), 0.0);
  kernel.assign(static_cast<std::size_t>(workers), 0.0);
  for (const Op& op : job.graph.ops) {
    if (op.stream != kCompute || op.iteration != last) continue;
    busy[op.worker] += static_cast<double>(op.end_ns - op.start_ns);
    if (op.role == Role::compute || op.role == Role::optimizer)
      kernel[op.worker] += static_cast<double>(op.end_ns - op.start_ns);
  }
  auto busiest_stage = [&](int replica) {
    int w = replica * job.pp;
    for (int s = 1; s < job.pp; ++s) {
      const int stage_worker = replica * job.pp + s;
      if (busy[static_cast<std::size_t>(stage_worker)] > busy[static_cast<std::size_t>(w)]) w = stage_worker;
    }
    return w;
  };
  const int replicas = workers / std::max(1, job.pp);
  int ref = busiest_stage(0);
  for (int rep = 1; rep < replicas; ++rep) {
    const int w = busiest_stage(rep);
    if (kernel[static_cast<std::size_t>(w)] < kernel[static_cast<std::size_t>(ref)]) ref = w;
  }
  return ref;
}

/// Arrival skew along the critical path (models/executor/straggler.h): shared DP/EP/CP
/// collectives; a pipeline send's wait is a bubble, an input copy is the GPU's own.
StragglerWalk straggler_walk(const TrainingGraph& job, int ref) {
  return StragglerWalk(job.graph, static_cast<std::uint32_t>(ref),
                       [&ops = job.graph.ops, &tasks = job.graph.tasks](std::uint32_t d) {
                         const Op& o = ops[d];
                         return o.task != kNone && o.role != Role::input_copy && o.role != Role::pp_send &&
                                tasks[o.task].kind == TaskKind::collective && tasks[o.task].participant_count >= 2;
                       });
}

/// r.breakdown: worker ref's compute-stream time in the last iteration, each wait attributed to
/// what it waited for (bubble, exposed communication, straggler wait via `skew`). Returns the
/// straggler wait [ns].
std::int64_t report_breakdown(const TrainingGraph& job, int ref, const LastIteration& li, StragglerWalk& skew,
                              Report& r) {
  // The last iteration's barrier: appended after every worker's ops, one per iteration (graph_builder.cc).
  std::uint32_t barrier = job.op_base.back() + static_cast<std::uint32_t>(li.last);
  if (barrier >= job.graph.ops.size() || job.graph.ops[barrier].role != Role::barrier) barrier = kNone;
  WaitSplitter splitter(job.graph, static_cast<std::uint32_t>(ref), job.pp, barrier, skew);
  const std::vector<Op>& ops = job.graph.ops;
  const std::vector<std::uint32_t>& op_base = job.op_base;
  const int last = li.last;
  const std::int64_t t0 = li.t0, t1 = li.t1;
  TimeBreakdown& b = r.breakdown;
  std::int64_t cursor = t0, straggler_ns = 0;
  for (std::uint32_t i = op_base[static_cast<std::size_t>(ref)]; i < op_base[static_cast<std::size_t>(ref) + 1]; ++i) {
    const Op& op = ops[i];
    if (op.stream != kCompute || op.iteration != last) continue;
    const std::int64_t start = std::max(op.start_ns, cursor);
    if (start > cursor) {
      // Attribute the wait to what the op waited for last (wait_split.h): its own kind, bubble
      // (another stage's work), another stage's exposed DP/EP/CP traffic behind it, or straggler
      // wait for a slower replica (at a shared collective or at the iteration barrier).
      const WaitSplit w = splitter.split(op.last_dep, cursor, start);
      straggler_ns += w.straggler_ns;
      const double before = static_cast<double>(w.at(Role::compute)) * 1e-9;
      const double after = static_cast<double>(w.direct_ns) * 1e-9;
      switch (w.direct) {
        case Role::pp_send:
          b.pipeline_bubble_s += before, b.pp_comm_exposed_s += after;
          break;
        case Role::dp_grad:
        case Role::dp_param:
          b.pipeline_bubble_s += before, b.dp_comm_exposed_s += after;
          break;
        case Role::tp_comm:
          b.pipeline_bubble_s += before, b.tp_comm_exposed_s += after;
          break;
        case Role::ep_comm:
          b.pipeline_bubble_s += before, b.ep_comm_exposed_s += after;
          break;
        case Role::offload:
          b.pipeline_bubble_s += before, b.offload_s += after;
          break;
        case Role::cp_comm:
          b.pipeline_bubble_s += before, b.cp_comm_exposed_s += after;
          break;
        case Role::input_copy:
          b.pipeline_bubble_s += before, b.input_copy_exposed_s += after;
          break;
        default:
          b.pipeline_bubble_s += before + after;
          break;
      }
      // Another stage's data-, expert- or context-parallel transfers the wait ran into.
      const std::int64_t dp_ns = w.at(Role::dp_grad) + w.at(Role::dp_param);
      if (dp_ns > 0) b.dp_comm_exposed_s += static_cast<double>(dp_ns) * 1e-9;
      if (w.at(Role::ep_comm) > 0) b.ep_comm_exposed_s += static_cast<double>(w.at(Role::ep_comm)) * 1e-9;
      if (w.at(Role::cp_comm) > 0) b.cp_comm_exposed_s += static_cast<double>(w.at(Role::cp_comm)) * 1e-9;
    }
    // A shared collective on the compute stream (MoE all-to-all) waits there for its last peer.
    const std::int64_t skew_ns = skew.wait(i, start, op.end_ns);
    straggler_ns += skew_ns;
    const double dur = static_cast<double>(op.end_ns - start - skew_ns) * 1e-9;
    switch (op.role) {
      case Role::tp_comm:
        b.tp_comm_exposed_s += dur;
        break;
      case Role::ep_comm:
        b.ep_comm_exposed_s += dur;
        break;
      case Role::cp_comm:
        b.cp_comm_exposed_s += dur;
        break;
      case Role::input_copy:
        b.input_copy_exposed_s += dur;
        break;
      case Role::dp_grad:
      case Role::dp_param:
        b.dp_comm_exposed_s += dur;
        break;
      case Role::optimizer:
        b.optimizer_s += dur;
        break;
      case Role::offload:  // the CPU-Adam step and the host-to-device copy on the critical path
        b.offload_s += dur;
        break;
      case Role::storage_stall:
        b.storage_stall_s += dur;
        break;
      default:
        b.compute_s += dur;
        break;
    }
    cursor = std::max(cursor, op.end_ns);
  }
  b.pipeline_bubble_s += static_cast<double>(std::max<std::int64_t>(0, t1 - cursor)) * 1e-9;
  b.straggler_wait_s = static_cast<double>(straggler_ns) * 1e-9;
  return straggler_ns;
}

/// Within the replica of worker `late` (whom ref waited for; -1: none), the stage whose kernel time
/// exceeds that of the same stage in ref's replica the most; `late` itself on ties or when none
/// exceeds it. A pipeline replica arrives late at the barrier with its last stage to finish, which
/// need not be the slow one (stage 0 ends last under 1F1B, waiting for a slow later stage).
int slowest_stage(const TrainingGraph& job, int ref, int late, const std::vector<double>& kernel) {
  const int pp = std::max(1, job.pp);
  if (late < 0 || pp == 1) return late;
  const int rep = late / pp, ref_rep = ref / pp;
  auto excess = [&](int s) {
    const int w = rep * pp + s, w_ref = ref_rep * pp + s;
    return kernel[static_cast<std::size_t>(w)] - kernel[static_cast<std::size_t>(w_ref)];
  };
  int best = late;
  for (int s = 0; s < pp; ++s)
    if (excess(s) > excess(best % pp)) best = rep * pp + s;
  return best;
}

/// The slowest rank: the worker whose late arrivals ref waited for longest (the first on ties),
/// and whether its input copies were the cause (name_straggler completes it after the power model).
void report_slowest_rank(const TrainingGraph& job, const GpuSpec& gpu, int ref, const std::vector<double>& kernel,
                         const StragglerWalk& skew, std::int64_t straggler_ns, int last, Report& r) {
  const std::vector<Op>& ops = job.graph.ops;
  StragglerReport& st = r.straggler;
  auto data_rank = [&](int worker) {
    const int sim = worker / std::max(1, job.pp);
    return job.folding.replica_ids.empty() ? sim : job.folding.replica_ids[static_cast<std::size_t>(sim)];
  };
  st.breakdown_replica = data_rank(ref);
  st.breakdown_stage = ref % std::max(1, job.pp);
  st.breakdown_kernel_s = kernel[static_cast<std::size_t>(ref)] * 1e-9;
  const int slow = slowest_stage(job, ref, skew.slowest(), kernel);
  if (straggler_ns > 0 && slow >= 0) {
    st.found = true;
    st.slowest_stage = slow % std::max(1, job.pp);
    st.slowest_replica = data_rank(slow);
    st.slowest_kernel_s = kernel[static_cast<std::size_t>(slow)] * 1e-9;
    // Against the same stage of the breakdown's replica: stages differ in work (the first holds
    // the embedding, the last the LM head), so another stage's time says nothing of the slowdown.
    const int pp = std::max(1, job.pp);
    const int same_stage = (ref / pp) * pp + slow % pp;
    st.breakdown_kernel_s = kernel[static_cast<std::size_t>(same_stage)] * 1e-9;
    st.tp_group_gpus = job.worker_gpus[static_cast<std::size_t>(slow)];
    st.gpu = st.tp_group_gpus.front();  // name_straggler picks the TP rank from the clocks
    st.boost_clock_mhz = gpu.boost_clock_mhz;
    double copy_slow = 0, copy_ref = 0;
    for (const Op& op : ops)
      if (op.iteration == last && op.role == Role::input_copy) {
        if (op.worker == static_cast<std::uint32_t>(slow)) copy_slow += static_cast<double>(op.end_ns - op.start_ns);
        if (op.worker == static_cast<std::uint32_t>(ref)) copy_ref += static_cast<double>(op.end_ns - op.start_ns);
      }
    st.cause = copy_slow > copy_ref ? "input_copy" : "other";
  }
}

/// Memory: the stage with the highest peak.
/// Memory per stage on its own GPU (a mixed cluster's stages differ in GPU): the report's is the
/// fullest stage's, on a mixed cluster the one with the least headroom (an A100-40GB stage can run
/// out of memory where a larger H100 stage fits). Fills r.mixed.stages' memory when present.
void report_memory(const Scenario& sc, const Cluster& cluster, const TrainingGraph& job, Report& r) {
  for (int s = 0; s < job.pp; ++s) {
    const GpuSpec& gpu = cluster.gpu_spec(job.worker_gpus[static_cast<std::size_t>(s)].front());
    const auto steps = pipeline_steps(s, job.pp, job.micro_batches, job.virtual_stages);
    const double inflight = peak_inflight_layers(steps, job.chunk_layers[static_cast<std::size_t>(s)]);
    MemoryBreakdown mb = sc.model.family == ModelFamily::resnet
                             ? resnet_memory(sc, gpu)
                             : stage_memory(sc, gpu, s, job.stage_layers[static_cast<std::size_t>(s)], inflight);
    if (static_cast<std::size_t>(s) < r.mixed.stages.size()) {
      StageTimeReport& st = r.mixed.stages[static_cast<std::size_t>(s)];
      st.memory_peak_bytes = mb.peak_bytes_per_gpu;
      st.memory_capacity_bytes = mb.capacity_bytes;
      st.oom = mb.oom;
    }
    const bool worse = cluster.mixed() ? mb.peak_bytes_per_gpu - mb.capacity_bytes >
                                             r.memory.peak_bytes_per_gpu - r.memory.capacity_bytes
                                       : mb.peak_bytes_per_gpu > r.memory.peak_bytes_per_gpu;
    if (s == 0 || worse) r.memory = mb;
  }
}

/// A mixed cluster's groups, each stage's kernel time per micro-batch (last iteration, replica
/// 0's worker of the stage) and what the slow group costs (MixedClusterReport's formulas).
void report_mixed(const Cluster& cluster, const TrainingGraph& job, int last, Report& r) {
  if (!cluster.mixed()) return;
  MixedClusterReport& x = r.mixed;
  for (const Cluster::NodeGroup& g : cluster.node_groups())
    x.groups.push_back({g.node_template->name, g.gpu->name, g.first_node, g.num_nodes});
  const int m = std::max(1, job.micro_batches);
  std::vector<double> group_max(x.groups.size(), -1.0);
  double sum = 0;
  for (int s = 0; s < job.pp; ++s) {
    StageTimeReport st;
    st.stage = s;
    const int gpu = job.worker_gpus[static_cast<std::size_t>(s)].front();
    st.node_group = cluster.group_of_node(cluster.node_of(gpu));
    st.gpu = cluster.gpu_spec(gpu).name;
    st.layers = job.stage_layers[static_cast<std::size_t>(s)];
    std::int64_t ns = 0;
    for (std::uint32_t i = job.op_base[static_cast<std::size_t>(s)]; i < job.op_base[static_cast<std::size_t>(s) + 1];
         ++i) {
      const Op& op = job.graph.ops[i];
      if (op.role == Role::compute && op.iteration == last) ns += op.duration_ns;
    }
    st.compute_s_per_micro_batch = static_cast<double>(ns) * 1e-9 / m;
    double& gm = group_max[static_cast<std::size_t>(st.node_group)];
    gm = std::max(gm, st.compute_s_per_micro_batch);
    sum += st.compute_s_per_micro_batch;
    x.stages.push_back(std::move(st));
  }
  for (std::size_t g = 0; g < group_max.size(); ++g) {
    if (group_max[g] < 0) continue;  // a group no stage runs on
    if (x.slow_group < 0 || group_max[g] > x.slow_stage_s) {
      x.slow_group = static_cast<int>(g);
      x.slow_stage_s = group_max[g];
    }
    if (x.fast_group < 0 || group_max[g] < x.fast_stage_s) {
      x.fast_group = static_cast<int>(g);
      x.fast_stage_s = group_max[g];
    }
  }
  x.pipeline_s = (m - 1) * x.slow_stage_s + sum;
  x.all_fast_pipeline_s = (m - 1 + job.pp) * x.fast_stage_s;
  x.slow_group_cost_s = x.pipeline_s - x.all_fast_pipeline_s;
}

/// Busiest links over the whole simulated run ([0, t1_ns]): the top three by utilisation, bytes
/// per iteration.
void report_busiest_links(const sim::FlowNetwork& net, int iterations, std::int64_t t1_ns, Report& r) {
  const double total_s = static_cast<double>(t1_ns) * 1e-9;
  // Every carrying link's utilisation, named only once among the top three: the first three of
  // (utilisation descending, id ascending), i.e. of a stable sort by utilisation in id order.
  struct Used {
    double utilization;
    double bytes_carried;
    sim::ResourceId id;
  };
  std::vector<Used> used;
  for (sim::ResourceId id = 0; id < net.num_resources(); ++id) {
    const sim::ResourceStats st = net.stats(id);
    if (st.bytes_carried <= 0) continue;
    used.push_back({total_s > 0 ? st.bytes_carried / (net.capacity(id) * total_s) : 0.0, st.bytes_carried, id});
  }
  constexpr std::size_t kTop = 3;
  const auto top = static_cast<std::ptrdiff_t>(std::min(kTop, used.size()));
  std::partial_sort(used.begin(), used.begin() + top, used.end(), [](const Used& a, const Used& c) {
    return a.utilization > c.utilization || (a.utilization == c.utilization && a.id < c.id);
  });
  std::vector<LinkUsage> links;
  for (std::ptrdiff_t i = 0; i < top; ++i) {
    const Used& x = used[static_cast<std::size_t>(i)];
    LinkUsage u;
    u.name = net.resource_name(x.id);
    u.capacity_bytes_per_s = net.capacity(x.id);
    u.bytes = x.bytes_carried / iterations;
    u.utilization = x.utilization;
    links.push_back(std::move(u));
  }
  r.busiest_links = std::move(links);
}

/// Utilisation: compute-busy fraction per simulated GPU (its worker's kernels in the last
/// iteration, less the time it waited for a slower GPU of the worker: gpu_wait_s, see
/// training_report) and NVLink / NIC resources' average utilisation over the run.
void report_utilization(const Cluster& cluster, const sim::FlowNetwork& net, const TrainingGraph& job,
                        const LastIteration& li, const std::vector<double>* gpu_wait_s, Report& r) {
  const int workers = static_cast<int>(job.graph.workers);
  const int last = li.last;
  const double iter_s = li.iter_s;
  const double total_s = static_cast<double>(li.t1) * 1e-9;
  UtilizationReport& u = r.utilization;
  std::vector<double> kernel_ns(static_cast<std::size_t>(workers), 0.0);
  for (const Op& op : job.graph.ops)
    if (op.stream == kCompute && op.iteration == last && (op.role == Role::compute || op.role == Role::optimizer))
      kernel_ns[op.worker] += static_cast<double>(op.end_ns - op.start_ns);
  // Partially folded (classes of replicas), a simulated replica stands for its class: its workers
  // weigh as many data ranks as it stands for, so the mean is the cluster's, as unfolded (session
  // 39's fresh user: one slow node of 8 read 81.0 % folded against 78.7 % unfolded). Equal weights
  // (one class, or none folded) keep the plain mean, bit for bit.
  std::vector<double> replica_weight;
  if (job.folded && job.pp > 0) {
    replica_weight.assign(job.folding.replica_ids.size(), 0.0);
    for (const int i : job.folding.sim_index)
      if (i >= 0 && static_cast<std::size_t>(i) < replica_weight.size())
        replica_weight[static_cast<std::size_t>(i)] += 1;
    if (std::adjacent_find(replica_weight.begin(), replica_weight.end(), std::not_equal_to<>()) == replica_weight.end())
      replica_weight.clear();
  }
  double sum = 0, weights = 0;
  u.gpu_compute_busy_fraction_min = 1.0;
  std::size_t sim_gpu = 0;  // index into gpu_wait_s: job.worker_gpus flattened
  for (int w = 0; w < workers; ++w) {
    const double f = iter_s > 0 ? kernel_ns[static_cast<std::size_t>(w)] * 1e-9 / iter_s : 0.0;
    const std::size_t replica = static_cast<std::size_t>(w / job.pp);
    const double weight = replica < replica_weight.size() ? replica_weight[replica] : 1.0;
    // A worker's GPUs compute its kernels at the slowest one's pace; a faster one computes its
    // share in less and waits the rest (f - wait / iteration). With no wait, f for every GPU.
    double wait_sum_s = 0, wait_min_s = 0, wait_max_s = 0;
    const std::size_t n = static_cast<std::size_t>(w) < job.worker_gpus.size() ? job.worker_gpus[w].size() : 0;
    for (std::size_t k = 0; k < n; ++k, ++sim_gpu) {
      const double wait_s = gpu_wait_s != nullptr && sim_gpu < gpu_wait_s->size() ? (*gpu_wait_s)[sim_gpu] : 0.0;
      wait_sum_s += wait_s;
      wait_min_s = k == 0 ? wait_s : std::min(wait_min_s, wait_s);
      wait_max_s = std::max(wait_max_s, wait_s);
    }
    const bool waited = wait_sum_s > 0 && iter_s > 0;
    const double f_mean = waited ? std::max(0.0, f - wait_sum_s / (static_cast<double>(n) * iter_s)) : f;
    const double f_min = waited ? std::max(0.0, f - wait_max_s / iter_s) : f;
    const double f_max = waited ? std::max(0.0, f - wait_min_s / iter_s) : f;
    sum += f_mean * weight;
    weights += weight;
    u.gpu_compute_busy_fraction_min = std::min(u.gpu_compute_busy_fraction_min, f_min);
    u.gpu_compute_busy_fraction_max = std::max(u.gpu_compute_busy_fraction_max, f_max);
  }
  // Clamped: the rounded mean of equal fractions can land an ulp above their max.
  u.gpu_compute_busy_fraction_mean =
      weights > 0 ? std::clamp(sum / weights, u.gpu_compute_busy_fraction_min, u.gpu_compute_busy_fraction_max) : 0.0;
  // Folded, only the simulated replicas' links count (report.h): the links of the nodes holding a
  // simulated GPU. The data-parallel collectives that join the replicas also cross the other nodes'
  // NICs (and, through PXN, their NVLinks), which carry nothing else (session 39: llama3_70b on 8
  // nodes folded read "NIC 0.7 % mean over 128" against 0.8 % unfolded; deepseek_v3 NVLink 1.6 %
  // over 4,096 against 2.5 %).
  std::vector<char> node_simulated(static_cast<std::size_t>(cluster.num_nodes()), job.folded ? 0 : 1);
  for (const std::vector<int>& gpus : job.worker_gpus)
    for (const int g : gpus) node_simulated[static_cast<std::size_t>(cluster.node_of(g))] = 1;
  double nvl_sum = 0, nic_sum = 0;
  for (sim::ResourceId id = 0; id < net.num_resources(); ++id) {
    const LinkKind kind = cluster.link_kind(id);
    if (kind != LinkKind::nvlink && kind != LinkKind::nic) continue;
    const int node = cluster.node_of_resource(id);
    if (node < 0 || node_simulated[static_cast<std::size_t>(node)] == 0) continue;
    const sim::ResourceStats st = net.stats(id);
    if (st.bytes_carried <= 0 || total_s <= 0) continue;
    const double util = st.bytes_carried / (net.capacity(id) * total_s);
    if (kind == LinkKind::nvlink) {
      nvl_sum += util, ++u.nvlink_links_used;
      u.nvlink_utilization_max = std::max(u.nvlink_utilization_max, util);
    } else {
      nic_sum += util, ++u.nic_links_used;
      u.nic_utilization_max = std::max(u.nic_utilization_max, util);
    }
  }
  if (u.nvlink_links_used > 0) u.nvlink_utilization_mean = nvl_sum / u.nvlink_links_used;
  if (u.nic_links_used > 0) u.nic_utilization_mean = nic_sum / u.nic_links_used;
}

/// One trace span per executed op (per worker, per stream), and worker ref's straggler waits on
/// a track of their own.
void trace_spans(const TrainingGraph& job, int ref, const StragglerWalk& skew, sim::TraceRecorder* trace) {
  const int workers = static_cast<int>(job.graph.workers);
  // "stage S / replica R (GPU a-b)": the trace's process of worker w.
  auto trace_process = [&](int w) {
    const int g0 = job.worker_gpus[static_cast<std::size_t>(w)].front();
    const int g1 = job.worker_gpus[static_cast<std::size_t>(w)].back();
    const int sim = w / job.pp;
    const int rank = job.folding.replica_ids.empty() ? sim : job.folding.replica_ids[static_cast<std::size_t>(sim)];
    std::string proc = "stage " + std::to_string(w % job.pp) + " / replica " + std::to_string(rank) + " (GPU ";
    proc += std::to_string(g0);
    if (g1 != g0) {
      proc += '-';
      proc += std::to_string(g1);
    }
    proc += ")";
    return proc;
  };
  std::vector<std::array<std::uint32_t, kNumStreams>> track_ids(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    const std::string proc = trace_process(w);
    for (int s = kCompute; s <= kDp; ++s)  // the streams the generator uses
      track_ids[static_cast<std::size_t>(w)][static_cast<std::size_t>(s)] =
          trace->track(w, proc, s, kStreamNames[static_cast<std::size_t>(s)]);
    if (job.cp > 1) track_ids[static_cast<std::size_t>(w)][kCp] = trace->track(w, proc, kCp, kStreamNames[kCp]);
    if (job.input_copies)
      track_ids[static_cast<std::size_t>(w)][kH2d] = trace->track(w, proc, kH2d, kStreamNames[kH2d]);
    if (job.ep_stream) track_ids[static_cast<std::size_t>(w)][kEp] = trace->track(w, proc, kEp, kStreamNames[kEp]);
  }
  std::vector<std::uint32_t> name_ids;
  for (const std::string& l : job.labels) name_ids.push_back(trace->name(l));
  // Straggler waits of the breakdown's worker (last iteration), on a track of their own.
  if (!skew.waits().empty()) {
    const std::uint32_t tr = trace->track(ref, trace_process(ref), kNumStreams, "waiting for slower GPUs");
    for (const auto& [from, to, w] : skew.waits())
      trace->span(tr, trace->name("waiting for " + trace_process(static_cast<int>(w))), sim::Time::from_ns(from),
                  sim::Time::from_ns(to));
  }
  for (const Op& op : job.graph.ops) {
    if (op.stream == kNoStream) continue;
    trace->span(track_ids[op.worker][op.stream], name_ids[op.label], sim::Time::from_ns(op.start_ns),
                sim::Time::from_ns(op.end_ns), op.micro_batch);
  }
}

}  // namespace

Report training_report(const Scenario& sc, const Cluster& cluster, const sim::FlowNetwork& net, std::uint64_t events,
                       const TrainingGraph& job, sim::TraceRecorder* trace, const std::vector<double>* gpu_wait_s) {
  const GpuSpec& gpu = cluster.gpu_spec(0);
  Report r;
  const LastIteration li = report_throughput(sc, cluster, events, job, r);
  std::vector<double> kernel;
  const int ref = breakdown_worker(job, li.last, kernel);
  StragglerWalk skew = straggler_walk(job, ref);
  const std::int64_t straggler_ns = report_breakdown(job, ref, li, skew, r);
  report_slowest_rank(job, gpu, ref, kernel, skew, straggler_ns, li.last, r);
  report_mixed(cluster, job, li.last, r);
  report_memory(sc, cluster, job, r);
  // A run that does not fit in memory cannot happen: no time (energy, cost) to train it.
  if (r.memory.oom) r.time_to_train_s = 0;
  report_busiest_links(net, job.iterations, li.t1, r);
  report_utilization(cluster, net, job, li, gpu_wait_s, r);
  if (trace != nullptr) trace_spans(job, ref, skew, trace);
  return r;
}

/// Fills r.straggler's GPU (the slowest rank's TP-group GPU with the lowest mean SM clock while
/// computing; the first on ties), node, clock, temperature and cause from the power and thermal
/// reports (training_report found the rank and the input-copy cause).
void name_straggler(const Cluster& cluster, Report& r) {
  StragglerReport& st = r.straggler;
  if (!st.found) return;
  const GpuPower* slowest = nullptr;
  for (int g : st.tp_group_gpus)
    for (const GpuPower& gp : r.power.gpus)
      if (gp.gpu == g && (slowest == nullptr || gp.compute_clock_fraction_mean < slowest->compute_clock_fraction_mean))
        slowest = &gp;
  if (slowest != nullptr) {
    st.gpu = slowest->gpu;
    st.sm_clock_mhz = slowest->compute_clock_fraction_mean * st.boost_clock_mhz;
  } else {
    st.sm_clock_mhz = st.boost_clock_mhz;
  }
  st.node = cluster.node_of(st.gpu);
  st.local_gpu = st.gpu - st.node * cluster.gpus_per_node();
  st.node = cluster.fabric_slot(st.node);  // named as the scenario numbers nodes
  for (const GpuThermal& gt : r.thermal.gpus)
    if (gt.gpu == st.gpu) {
      st.temperature_c = gt.average_c;
      st.throttled_time_fraction = gt.throttled_time_fraction;
    }
  // Thermal slowdown first, then a clock_factor override, then a clock below boost (power cap);
  // else training_report's cause.
  if (st.throttled_time_fraction > 0)
    st.cause = "thermal";
  else if (cluster.clock_factor(st.gpu) < 1.0)
    st.cause = "clock_factor";
  else if (slowest != nullptr && slowest->compute_clock_fraction_mean < 1.0 - 1e-9)
    st.cause = "power_cap";
}

}  // namespace traincast::models
