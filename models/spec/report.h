#pragma once
// The result of one simulation, as plain data. The io layer writes it as text, JSON and trace;
// JSON keys are these field names (see models/io/traincast.proto, message Report).

#include <cstdint>
#include <string>
#include <vector>

namespace traincast::models {

/// Where the iteration's wall time went, seen from one GPU: the busiest pipeline stage of the
/// fastest DP replica (least compute-kernel time on that stage; replica 0 on ties, e.g. in any
/// homogeneous job), so that time lost to a slower replica shows as straggler_wait_s. Every field
/// is seconds within one iteration; they add up to iteration_time_s.
struct TimeBreakdown {
  double compute_s = 0.0;          ///< GPU busy with compute kernels (incl. recomputation)
  double tp_comm_exposed_s = 0.0;  ///< tensor-parallel collectives not hidden under compute
  double dp_comm_exposed_s = 0.0;  ///< gradient all-reduce/reduce-scatter + param all-gather not hidden
  double pp_comm_exposed_s = 0.0;  ///< pipeline send/recv the GPU waited on
  double pipeline_bubble_s = 0.0;  ///< idle waiting for other stages (fill/drain)
  double optimizer_s = 0.0;        ///< optimizer step (part of compute, reported apart)
  /// Storage stall: data loader behind the GPUs plus the checkpoint stall averaged over the
  /// iterations between checkpoints (0 without a storage section).
  double storage_stall_s = 0.0;
  /// Expert-parallel all-to-all (MoE token dispatch and combine, forward and backward) the GPU
  /// waited on: the blocking all-to-alls' duration after the last EP peer arrived (the wait for a
  /// later peer is straggler_wait_s).
  double ep_comm_exposed_s = 0.0;
  /// CPU offload (workload.offload): the CPU-Adam step, the copy of the updated parameters back to
  /// the GPU, and gradient copies to the host the step waited on (0 without offload).
  double offload_s = 0.0;
  /// Context-parallel ring send/recv of K/V blocks (forward) and K/V + dK/dV (backward) the GPU
  /// waited on: the part not hidden under the attention of the block in hand, plus the final
  /// dK/dV hop home after the last backward block.
  double cp_comm_exposed_s = 0.0;
  /// Host-to-device input copies (workload.data_loader) the GPU waited on: the whole copy when it
  /// runs on the compute stream (no prefetch), else the part the previous micro-batch did not hide.
  double input_copy_exposed_s = 0.0;
  /// Waiting for slower peers (straggler): the part of the waits above, on a collective shared
  /// with other DP/EP/CP replicas (gradient reduction, parameter gather, MoE all-to-all, CP ring),
  /// between this GPU's own arrival at the collective and the last participant's arrival (the
  /// collective cannot start before it). What remains in dp/ep/cp_comm_exposed_s is transfer
  /// time (and queueing behind earlier transfers) not hidden under compute. ~0 in a homogeneous
  /// job; a throttled GPU's extra compute time shows here on the healthy GPUs.
  double straggler_wait_s = 0.0;
  bool operator==(const TimeBreakdown&) const = default;
};

/// Whose late arrival the breakdown's GPU waited for (Report::straggler; JSON `straggler.*`).
/// The slowest rank is the replica that arrived last at the collectives the breakdown's GPU waited
/// on, weighted by the wait; within its TP group, the GPU with the lowest mean SM clock.
struct StragglerReport {
  /// true when breakdown.straggler_wait_s > 0 and a slowest rank was found.
  bool found = false;
  int gpu = 0;        ///< global GPU index
  int node = 0;       ///< node of that GPU
  int local_gpu = 0;  ///< GPU index within its node
  /// Why it is slower, one of: "thermal" (spent part of the last iteration in thermal slowdown),
  /// "clock_factor" (a cluster.overrides clock_factor below 1 on it, without thermal slowdown),
  /// "power_cap" (clock below boost without thermal slowdown), "input_copy" (its host-to-device
  /// input copies took longer than the breakdown GPU's), "other" (none of these).
  std::string cause;
  double sm_clock_mhz = 0.0;             ///< mean SM clock while computing, last iteration [MHz]
  double boost_clock_mhz = 0.0;          ///< the GPU's maximum boost clock (datasheet) [MHz]
  double temperature_c = 0.0;            ///< its mean temperature over the last iteration [C]
  double throttled_time_fraction = 0.0;  ///< of the last iteration in thermal slowdown, 0..1
  /// Compute-stream kernel time (compute + optimizer ops) in the last iteration [s]: of the
  /// slowest rank and of the breakdown's replica at the slowest rank's pipeline stage (the
  /// breakdown's GPU itself when pp = 1, or when no straggler is found); their difference bounds
  /// the wait from above, unless the communication of the slower rank is also slower.
  double slowest_kernel_s = 0.0;
  double breakdown_kernel_s = 0.0;
  int slowest_replica = 0;    ///< DP replica (executor index) of the slowest rank
  int breakdown_replica = 0;  ///< DP replica the breakdown describes
  /// Pipeline stage (0..pp-1) of the slowest rank: within its replica, the stage whose kernels run
  /// longest against the breakdown replica's same stage (the rank the wait was credited to on
  /// ties); and of the breakdown's GPU. In JSON only when pp > 1.
  int slowest_stage = 0;
  int breakdown_stage = 0;
  std::vector<int> tp_group_gpus;  ///< global GPUs of the slowest rank's TP group (not in JSON)
  bool operator==(const StragglerReport&) const = default;
};

/// Per-GPU memory for the GPU with the highest peak (pipeline stage 0 under 1F1B).
struct MemoryBreakdown {
  double weights_bytes = 0.0;
  double grads_bytes = 0.0;
  double optimizer_bytes = 0.0;
  double activations_bytes = 0.0;  ///< peak activations held (in-flight micro-batches)
  double workspace_bytes = 0.0;    ///< framework/cuBLAS/NCCL buffers and fragmentation allowance
  /// Host (CPU DRAM) bytes per GPU with CPU offload: fp32 master weights, Adam m and v (12 B) and
  /// the fp32 gradient buffer (4 B) per parameter of the GPU's shard; not part of the peak.
  double host_bytes = 0.0;
  double peak_bytes_per_gpu = 0.0;
  double capacity_bytes = 0.0;  ///< HBM capacity of that GPU
  bool oom = false;
  std::string advice;  ///< what would make it fit (empty when it fits)
  int worst_stage = 0;
  bool operator==(const MemoryBreakdown&) const = default;
};

struct LinkUsage {
  std::string name;
  double utilization = 0.0;  ///< bytes carried / (capacity × iteration time), 0..1
  double bytes = 0.0;        ///< bytes carried in the last iteration
  double capacity_bytes_per_s = 0.0;
  bool operator==(const LinkUsage&) const = default;
};

/// Storage demand and stalls (scenario `storage`; JSON `storage.*`).
struct StorageReport {
  bool modelled = false;
  double data_bytes_per_iteration = 0.0;      ///< read by all data loaders per iteration [bytes]
  double data_read_gb_per_s_needed = 0.0;     ///< at the compute-bound iteration rate [GB/s]
  double data_read_gb_per_s_available = 0.0;  ///< what the source gives all readers [GB/s]
  double data_read_s_per_iteration = 0.0;     ///< time to read one iteration's samples [s]
  double data_stall_s_per_iteration = 0.0;    ///< read time beyond the compute iteration [s]
  double checkpoint_bytes = 0.0;              ///< weights + optimizer state, whole job [bytes]
  double checkpoint_bytes_per_writer_node = 0.0;
  int checkpoint_writer_nodes = 0;
  double checkpoint_write_gb_per_s = 0.0;  ///< aggregate, all writer nodes [GB/s]
  double checkpoint_write_s = 0.0;         ///< writing one checkpoint [s]
  double checkpoint_snapshot_s = 0.0;      ///< device-to-host copy (asynchronous mode) [s]
  double checkpoint_stall_s = 0.0;         ///< training stopped per checkpoint [s]
  double checkpoint_read_s = 0.0;          ///< reading it back on restart [s]
  double checkpoint_interval_s = 0.0;      ///< training time between checkpoints [s]
  double checkpoint_interval_iterations = 0.0;
  double checkpoint_stall_s_per_iteration = 0.0;  ///< checkpoint_stall_s / interval iterations
  std::string bottleneck;                         ///< what limits the checkpoint write, in words
  bool operator==(const StorageReport&) const = default;
};

/// One failure cause in the reliability report.
struct CauseReport {
  std::string cause;
  double rate_per_hour = 0.0;       ///< for the whole job [1/h]
  double mean_interruptions = 0.0;  ///< Monte-Carlo mean
  bool operator==(const CauseReport&) const = default;
};

/// The checkpoint interval [s] of a job that never fails (every failure rate 0), where Daly's
/// optimum is infinite and none was given: 1e15 s, 32 million years, practically never. The run
/// summary says "no checkpoint needed" rather than print it.
inline constexpr double kNoFailureCheckpointIntervalS = 1e15;

/// Failures and goodput (scenario `reliability`; JSON `reliability.*`). Means and spreads over
/// the Monte-Carlo draws.
struct ReliabilityReport {
  bool modelled = false;
  double failure_rate_per_hour = 0.0;  ///< whole job [1/h]
  double job_mtbf_h = 0.0;             ///< 1 / rate [h]; 0 = no failure rates (never fails)
  double checkpoint_interval_s = 0.0;  ///< used (Daly's optimum unless given) [s]
  double checkpoint_stall_s = 0.0;     ///< per checkpoint [s]
  double restart_s = 0.0;              ///< overhead + checkpoint read [s]
  double useful_work_s = 0.0;          ///< failure-free training time done (mean over draws) [s]
  double work_requested_s = 0.0;       ///< failure-free training time asked for (train_tokens); 0 = none [s]
  int draws = 0;
  std::uint64_t seed = 0;
  double interruptions_mean = 0.0, interruptions_stddev = 0.0, interruptions_p5 = 0.0, interruptions_p95 = 0.0;
  double wall_clock_s_mean = 0.0, wall_clock_s_p5 = 0.0, wall_clock_s_p95 = 0.0;
  double lost_work_s_mean = 0.0;                                   ///< recomputed work after failures [s]
  double restart_time_s_mean = 0.0;                                ///< total spent restarting [s]
  double checkpoint_time_s_mean = 0.0;                             ///< total training stalled on checkpoints [s]
  double goodput_mean = 0.0, goodput_p5 = 0.0, goodput_p95 = 0.0;  ///< useful / wall, in (0, 1]
  double expected_interruptions_analytic = 0.0;                    ///< rate x mean wall clock
  std::vector<CauseReport> causes;
  bool operator==(const ReliabilityReport&) const = default;
};

/// Money (scenario `cost`; JSON `cost.*`). USD.
struct CostReport {
  bool modelled = false;
  int nodes = 0, switches = 0, cables = 0;
  double capex_usd = 0.0;
  double capex_per_year_usd = 0.0;  ///< amortised
  double upkeep_per_year_usd = 0.0;
  bool energy_modelled = false;            ///< false: no power model result, energy cost left out
  double facility_power_w = 0.0;           ///< while training, from the power model [W]
  double energy_per_year_usd = 0.0;        ///< at the given utilisation
  double own_cost_per_gpu_hour_usd = 0.0;  ///< per GPU-hour of useful use at that utilisation
  double cloud_price_per_gpu_hour_usd = 0.0;
  double train_gpu_hours = 0.0;  ///< GPUs x wall clock to train (goodput included when modelled)
  double own_cost_to_train_usd = 0.0;
  double cloud_cost_to_train_usd = 0.0;
  double payback_years = 0.0;  ///< capex / (rent avoided - running cost) per year; 0 with payback_never
  double breakeven_utilization =
      0.0;           ///< utilisation at which owning costs as much as renting over the amortisation period
  std::string note;  ///< what is left out, in words
  double amortization_years = 0.0;  ///< the depreciation period the capex is spread over
  /// true when the rent avoided per year does not exceed upkeep + energy: owning never pays back
  /// (payback_years is then 0, and left out of the JSON report).
  bool payback_never = false;
  /// false when the GPU has no public purchase price and the scenario gives none (rent-only): capex,
  /// own cost, payback and break-even are then 0.
  bool own_modelled = false;
  /// false when the GPU has no public rent and the scenario gives none (own-only): rent figures,
  /// payback and break-even are then 0.
  bool rent_modelled = false;
  /// The purchase price used [USD] per physical server or rack (node_price_unit); 0 when !own_modelled
  double node_price_usd = 0.0;
  /// What node_price_usd buys: "node of 8 GPUs", or for "base/N" partitions the base's whole server
  /// or rack ("gb200_nvl72 rack of 72 GPUs, 2 gb200_nvl72/36 nodes each").
  std::string node_price_unit;
  /// Servers or racks bought: ceil(nodes / nodes per unit) (capex_usd counts whole ones).
  int units_bought = 0;
  std::string node_price_source;   ///< "scenario" or the default's provenance (models/cost/prices.h)
  std::string cloud_price_source;  ///< "scenario" or the default's provenance (models/cost/prices.h)
  bool operator==(const CostReport&) const = default;
};

/// How busy the hardware is (JSON `utilization.*`): the answer to "how idle is it", beside MFU.
/// GPU figures are from the last simulated iteration; link figures average over the whole run, as
/// busiest_links. In a folded run (folded: true) only the simulated replicas' GPUs and links count.
struct UtilizationReport {
  /// Compute-stream busy time (kernels incl. recomputation and optimizer; not collectives on the
  /// compute stream) / iteration time, over the simulated GPUs: mean, min, max (0..1).
  double gpu_compute_busy_fraction_mean = 0.0;
  double gpu_compute_busy_fraction_min = 0.0;
  double gpu_compute_busy_fraction_max = 0.0;
  /// bytes / (capacity x run time) over the NVLink/NVSwitch resources (one per GPU and direction)
  /// of the simulated GPUs' nodes: mean over those that carried traffic, and the max (0..1).
  double nvlink_utilization_mean = 0.0;
  double nvlink_utilization_max = 0.0;
  int nvlink_links_used = 0;  ///< directed NVLink resources that carried traffic
  /// The same over the NIC resources (GPU/PCIe side to the network, per NIC and direction).
  double nic_utilization_mean = 0.0;
  double nic_utilization_max = 0.0;
  int nic_links_used = 0;
  bool operator==(const UtilizationReport&) const = default;
};

/// One node's power supplies exceeded (models/power/): when it first happened and the worst case.
struct PsuOverload {
  int node = 0;
  double first_time_s = 0.0;            ///< simulated time of the first overload [s]
  double peak_w = 0.0;                  ///< the node's peak AC power [W]
  double capacity_w = 0.0;              ///< what the supplies deliver with psu_redundant failed [W]
  double excess_w = 0.0;                ///< peak_w - capacity_w [W]
  double overload_time_fraction = 0.0;  ///< of the simulated time, 0..1
  bool operator==(const PsuOverload&) const = default;
};

/// Power of one simulated GPU over the last iteration.
struct GpuPower {
  int gpu = 0;  ///< global GPU index
  double average_w = 0.0;
  double peak_w = 0.0;
  double energy_j = 0.0;            ///< over the last iteration [J]
  double clock_fraction_min = 1.0;  ///< lowest SM clock / max boost clock seen (cap or thermal)
  /// Mean SM clock / max boost clock over the time its worker's compute stream was busy in the
  /// last iteration (1 when it never computed there). Not in the JSON report.
  double compute_clock_fraction_mean = 1.0;
  /// Time [s] of the last iteration its worker computed while it waited for a slower GPU of the
  /// worker (its TP group runs at the slowest GPU's pace); 0 for the GPU that sets the pace.
  /// Not in the JSON report (the utilisation's per-GPU busy fractions include it).
  double compute_wait_s = 0.0;
  /// Its cluster.overrides clock_factor, the highest clock it may run at, (0, 1]; 1 = none. Not in
  /// the JSON report (the scenario states it).
  double clock_factor = 1.0;
  /// Its cluster.overrides power_cap_w [W]; 0 = none (the cluster's limit alone). Its clock is held
  /// by the lower of this and PowerReport::gpu_power_limit_w. Not in the JSON report (the scenario
  /// states it).
  double power_cap_w = 0.0;
  bool operator==(const GpuPower&) const = default;
};

/// Power of the job (models/power/). Averages and energies are over the last simulated
/// iteration; peaks over the whole simulated run. Node and rack figures are AC (wall) power
/// including PSU losses; facility = IT x PUE. With folding (Report::folded) the figures cover
/// every GPU, the per-GPU list only the simulated replica.
/// Cost models use energy_per_iteration_j (facility, incl. PUE) and energy_to_train_kwh.
struct PowerReport {
  double gpu_average_w = 0.0;   ///< mean over all GPUs
  double gpu_peak_w = 0.0;      ///< highest instantaneous power of any GPU
  double node_average_w = 0.0;  ///< mean over nodes
  double node_peak_w = 0.0;     ///< highest instantaneous node power
  double rack_average_w = 0.0;  ///< mean over racks (thermal.nodes_per_rack)
  double rack_peak_w = 0.0;
  double it_average_w = 0.0;        ///< all nodes [W]
  double facility_average_w = 0.0;  ///< it_average_w x PUE
  double facility_peak_w = 0.0;
  double pue = 1.0;
  double it_energy_per_iteration_j = 0.0;  ///< all nodes, one iteration [J]
  double energy_per_iteration_j = 0.0;     ///< facility (IT x PUE), one iteration [J]
  double energy_to_train_kwh = 0.0;        ///< facility; 0 when no token budget
  /// The cap in force (TDP when none); a mixed cluster: the highest over its node groups.
  double gpu_power_limit_w = 0.0;
  /// Per node, with psu_redundant supplies failed; a mixed cluster: the node at node_peak_w's.
  double node_psu_capacity_w = 0.0;
  std::vector<PsuOverload> psu_overloads;  ///< nodes whose peak exceeded their own PSU capacity
  std::vector<GpuPower> gpus;
  bool operator==(const PowerReport&) const = default;
};

/// Temperature of one simulated GPU.
struct GpuThermal {
  int gpu = 0;
  double peak_c = 0.0;
  double average_c = 0.0;                ///< over the last iteration
  double inlet_c = 0.0;                  ///< inlet at the end of the run (supply + preheat + recirculation)
  double throttled_time_fraction = 0.0;  ///< of the last iteration spent in thermal slowdown, 0..1
  double start_c = 0.0;                  ///< at the start of the last iteration
  double end_c = 0.0;                    ///< at its end
  bool operator==(const GpuThermal&) const = default;
};

/// Thermal state (models/power/).
struct ThermalReport {
  double peak_c = 0.0;  ///< hottest GPU
  int hottest_gpu = 0;
  double slowdown_c = 0.0;               ///< the GPUs' slowdown temperature
  double throttled_time_fraction = 0.0;  ///< max over GPUs, last iteration
  /// Real GPUs that spent any of the last iteration throttled (with folding, each simulated GPU
  /// counts for the real ones it stands for; `gpus` lists the simulated ones).
  int throttled_gpus = 0;
  /// true when steady_state_offset_c <= 0.5 K: every GPU starts the last iteration within 0.5 K
  /// of its periodic steady state (the temperature the iteration's power pattern, repeated,
  /// settles to), so the next iterations run as this one did.
  bool steady_state = false;
  double max_drift_c = 0.0;  ///< largest |end - start| over GPUs in the last iteration [K]
  /// Largest distance of a GPU from its periodic steady state at the start of the last iteration
  /// [K]. The lumped RC is linear, so an offset d from the periodic orbit decays as
  /// d exp(-t / tau) and one iteration of length w drifts by d (1 - exp(-w / tau)):
  /// d = |end - start| / (1 - exp(-w / tau)). A drift alone says nothing for a millisecond
  /// iteration: 1 ms drifts 0.0008 K at 40 K from the steady state with tau = 50 s. Estimated
  /// (exact without throttling, which is not linear).
  double steady_state_offset_c = 0.0;
  /// Hottest air a real GPU takes in before its upstream GPUs' preheat [C]: its node's supply
  /// (cluster.overrides supply_c included) plus its rack's recirculation rise; liquid: the coolant.
  double rack_inlet_max_c = 0.0;
  std::vector<GpuThermal> gpus;
  /// What the thermal slowdown costs the job: this run's iteration time (storage stalls left out)
  /// minus that of the same run simulated again with no thermal slowdown (a power cap still
  /// applies) [s]; 0 when no GPU throttled in the last iteration (the second run is then skipped).
  double throttle_iteration_increase_s = 0.0;
  double throttle_iteration_increase_fraction = 0.0;  ///< of the unthrottled iteration time
  bool operator==(const ThermalReport&) const = default;
};

/// Routing of the inter-node fabric (JSON `routing.*`): which routing ran and, where an ECMP hash
/// draw decides which flows share a spine link, the spread of the iteration time over the draws.
struct RoutingReport {
  /// d_mod_k, adaptive or ecmp_hash (the routing in effect); empty without a switched fabric.
  std::string routing;
  /// ECMP hash seeds simulated (16 where hashing can change a route, else 1); the report's
  /// iteration time, its breakdown and the rates derived from it are the mean over them.
  int seeds = 1;
  double iteration_time_s_min = 0.0;     ///< fastest draw [s] (= iteration_time_s with 1 seed)
  double iteration_time_s_max = 0.0;     ///< slowest draw [s]
  double iteration_time_s_stddev = 0.0;  ///< population standard deviation over the draws [s]
  bool operator==(const RoutingReport&) const = default;
};

/// One class of partial folding (Report::folding; models/executor/folding.h): the data ranks one
/// simulated symmetry unit stands for, and why they are together (or alone).
struct FoldingClassReport {
  int representative = 0;  ///< first data rank of the simulated unit
  int replicas = 0;        ///< data ranks in the class (its own included)
  std::string members;     ///< those data ranks as ranges, "0-5, 7-127"
  std::string reason;      ///< "nominal", "clock_factor 0.9 on node17/gpu3", ...
  bool operator==(const FoldingClassReport&) const = default;
};

/// How the replicas were folded, filled when the cluster has overrides (cluster.overrides): the
/// only runs whose replicas can differ in hardware. Empty otherwise (`folded` says it all there).
struct FoldingReport {
  int replicas = 0;            ///< data ranks (dp x cp)
  int simulated_replicas = 0;  ///< data ranks simulated
  std::vector<FoldingClassReport> classes;
  bool operator==(const FoldingReport&) const = default;
};

/// What one cluster.overrides entry did in the run (Report::overrides; override_effects.h): the
/// element it names, as the run saw it. GPU entries (clock_factor, power_cap_w): the slowest GPU
/// it names; node entries (supply_c): the hottest GPU on its nodes; NIC and link entries
/// (bandwidth_factor, failed): the traffic its resources carried and what the same element
/// carried on the nodes that have no override of it (a NIC NCCL's search leaves carries nothing).
/// A missing GPU's entry is the `drained` line's; it is listed with no figures.
struct OverrideEffectReport {
  int index = 0;       ///< cluster.overrides[index]
  std::string select;  ///< as written, "node3/nic0"
  std::string
      setting;  ///< override_setting: "bandwidth_factor 0.5", "failed: true", "clock_factor 0.8", "missing: true"
  /// GPU entries: the lowest mean SM clock while computing among its GPUs [MHz] (0 where the power
  /// model did not run); whether the report's straggler is one of them.
  double sm_clock_mhz = 0.0;
  double boost_clock_mhz = 0.0;
  bool straggler = false;
  /// Node entries: the hottest average GPU temperature on its nodes [C] and the largest fraction of
  /// the run a GPU there spent throttled.
  double hottest_gpu_c = 0.0;
  double throttled_time_fraction = 0.0;
  /// NIC and link entries: bytes per iteration over its directed resources (tx + rx for a NIC) and
  /// the highest utilisation of one of them over the run (0..1, of its overridden capacity).
  double bytes_per_iteration = 0.0;
  double utilization = 0.0;
  /// The same element on the other nodes, those without an override of it: the most one of them
  /// carried [bytes per iteration] and its name ("node0/nic0"); empty for a switch link, or where
  /// no other node has it.
  std::string peer;
  double peer_bytes_per_iteration = 0.0;
  /// False when later entries set the same field on every element it names (the loader warns):
  /// it has no effect left, and its figures are those of the entries that act.
  bool acts = true;
  /// Its elements belong only to replicas folded into another's class (not simulated): a GPU
  /// entry then has no effect of its own (its GPUs run as the nominal ones), and a NIC or link's
  /// bytes count the collectives over every replica but not its replica's own traffic.
  bool folded = false;
  /// A switch link's bandwidth_factor entry, under `traincast run`: what the overrides would cost
  /// were this link failed instead (the others unchanged) [s], against OverridesReport::cost_s:
  /// static routing keeps flows on a slow cable, where a failed one's flows move to the others.
  bool failed_instead_known = false;
  double failed_instead_cost_s = 0.0;
  /// GPU entries whose GPU sets its TP group's pace: how many other GPUs of its simulated TP
  /// groups waited for it while the group computed (GpuPower::compute_wait_s > 0), and the longest
  /// of those waits in the last iteration [s]. 0 where it is not the slowest of its group.
  int peers_waiting = 0;
  double peers_wait_s = 0.0;
  bool operator==(const OverrideEffectReport&) const = default;
};

/// cluster.overrides in the run (Report::overrides), filled only when the cluster has overrides.
/// `cost_s`: the iteration time less the same job's without them (`missing` GPUs' drained nodes
/// stay drained), filled by add_override_cost (training_executor.h; `traincast run` asks for it);
/// `cost_known` false where it was not asked for.
struct OverridesReport {
  std::vector<OverrideEffectReport> entries;
  bool cost_known = false;
  double cost_s = 0.0;
  double cost_fraction = 0.0;  ///< of the iteration without the overrides
  bool operator==(const OverridesReport&) const = default;
};

/// One node group of a mixed cluster (MixedClusterReport).
struct NodeGroupReport {
  std::string node_template;
  std::string gpu;
  int first_node = 0;
  int num_nodes = 0;
  bool operator==(const NodeGroupReport&) const = default;
};

/// One pipeline stage of a job on a mixed cluster: where it runs, its layers, its kernels' time
/// and its memory on its own GPU.
struct StageTimeReport {
  int stage = 0;
  int node_group = 0;  ///< the group its GPUs are in
  std::string gpu;
  int layers = 0;
  /// Forward + backward (recompute included) kernel time of one micro-batch [s]: the stage's
  /// compute ops of the last iteration divided by the micro-batches (embedding and head included).
  double compute_s_per_micro_batch = 0.0;
  double memory_peak_bytes = 0.0;      ///< per GPU
  double memory_capacity_bytes = 0.0;  ///< of its GPU
  bool oom = false;
  bool operator==(const StageTimeReport&) const = default;
};

/// What the slow node group of a mixed cluster costs (issue 20), filled only on a mixed cluster.
/// With t_s the stage times (StageTimeReport::compute_s_per_micro_batch) and m micro-batches, a
/// 1F1B pipeline's compute takes pipeline_s = (m - 1) x max t_s + sum t_s (the slowest stage
/// paces the steady state; the fill and drain pass every stage once). all_fast_pipeline_s is the
/// same with every stage at fast_stage_s, the fast group's slowest stage: (m - 1 + pp) x
/// fast_stage_s. slow_group_cost_s = pipeline_s - all_fast_pipeline_s.
struct MixedClusterReport {
  std::vector<NodeGroupReport> groups;
  std::vector<StageTimeReport> stages;
  int slow_group = -1;        ///< the group holding the slowest stage
  int fast_group = -1;        ///< the group whose slowest stage is fastest
  double slow_stage_s = 0.0;  ///< max t_s
  double fast_stage_s = 0.0;  ///< the fast group's max t_s
  double pipeline_s = 0.0;    ///< (m - 1) x max t_s + sum t_s
  double all_fast_pipeline_s = 0.0;
  double slow_group_cost_s = 0.0;
  bool operator==(const MixedClusterReport&) const = default;
};

struct Report {
  std::string scenario;
  std::string gpu;
  int num_gpus = 0;
  int num_nodes = 0;
  int tp = 1, pp = 1, dp = 1;
  int ep = 1;             ///< expert parallel size (1 for dense models)
  int cp = 1;             ///< context parallel size; num_gpus = tp x cp x pp x dp
  int micro_batches = 0;  ///< per pipeline per iteration
  double iteration_time_s = 0.0;
  double tokens_per_s = 0.0;
  /// Samples (sequences; images for a ResNet) per second over the whole job = global_batch_size /
  /// iteration_time_s.
  double samples_per_s = 0.0;
  double model_flops_per_iteration = 0.0;     ///< SC21 eq. 3 minus recomputation (MFU basis)
  double hardware_flops_per_iteration = 0.0;  ///< includes recomputed FLOPs (HFU basis)
  double tflops_per_gpu = 0.0;                ///< model FLOP/s per GPU / 1e12
  double hardware_tflops_per_gpu = 0.0;
  double mfu = 0.0;  ///< fraction 0..1 of dense peak for the precision
  double hfu = 0.0;
  double peak_flops_per_gpu = 0.0;  ///< the dense peak used for MFU [FLOP/s]
  TimeBreakdown breakdown;
  StragglerReport straggler;
  MemoryBreakdown memory;
  std::vector<LinkUsage> busiest_links;  ///< top 3 by utilisation
  double train_tokens = 0.0;             ///< the token budget (0: none; see train_tokens_source)
  /// Where train_tokens came from: "scenario" (workload.training.train_tokens), "none" (0), or,
  /// filled by `traincast run` for its JSON only, the default budget's rule (kDefaultTokensPerParameter).
  std::string train_tokens_source = "none";
  double time_to_train_s = 0.0;  ///< 0 when no token budget was given
  std::uint64_t events = 0;      ///< engine events processed
  bool folded = false;           ///< one DP replica simulated for all (symmetry)
  FoldingReport folding;         ///< partial folding's classes (with cluster.overrides only)
  OverridesReport overrides;     ///< each override's effect (with cluster.overrides only)
  MixedClusterReport mixed;      ///< node groups and the slow group's cost (mixed clusters only)
  /// Nodes drained for a missing GPU (cluster.overrides missing), each "node3: its GPU node3/gpu5 is
  /// missing (cluster.overrides[0])"; the job ran on the others (num_nodes of them).
  std::vector<std::string> drained_nodes;
  int iterations_simulated = 1;
  StorageReport storage;
  ReliabilityReport reliability;
  CostReport cost;
  UtilizationReport utilization;
  PowerReport power;
  ThermalReport thermal;
  RoutingReport routing;
  /// What a reader must know about the figures, in words (JSON `caveat`); empty when nothing. Today:
  /// "no measured kernel efficiencies for GPU: generic defaults used (GEMM 0.65 of peak); treat with
  /// care" when the GPU's compute parameters are the uncalibrated defaults and no profile is given.
  std::string caveat;
  /// How compute was timed (JSON `compute`): workload.training.compute_model ("training_fit" |
  /// "kernel"); the fused attention kernel ("flash2" | "cudnn"; empty without flash_attention); the
  /// calibration profile in effect as given (file path; empty: none) and the GPU it was fitted on.
  std::string compute_model;
  std::string attention_kernel;
  std::string profile;
  std::string profile_gpu;
  /// The recomputation run (JSON `compute.recompute`, the summary's "recompute full"): "none" |
  /// "selective" | "full", empty for a ResNet; and with selective the set kept
  /// (`compute.selective_policy`): "torchtitan_op" where it applies (torchtitan_op_applies), else
  /// "megatron"; empty without selective recomputation.
  std::string recompute;
  std::string selective_policy;
  bool operator==(const Report&) const = default;
};

}  // namespace traincast::models
