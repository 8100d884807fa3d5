#pragma once
// Runs one training job on the engine: builds every simulated GPU group's op graph (compute
// stream + TP/PP/DP communication streams with their dependencies) and executes it, so overlap,
// pipeline bubbles and exposed communication come out of the simulation (DESIGN.md §1, §3).
// Three pieces, so front ends can stop in between (e.g. export the graph as a Chakra trace):
// build_training_graph -> run_op_graph (op_graph.h) -> training_report; simulate_training does all.

#include <cstdint>
#include <string>
#include <vector>

#include "models/executor/op_graph.h"
#include "models/hardware/cluster.h"
#include "models/power/power_thermal.h"
#include "models/report.h"
#include "models/scenario.h"
#include "sim/flow_network.h"
#include "sim/trace.h"

namespace traincast::models {

/// The transformer job of a scenario as a ready-to-run op graph, with what its report needs.
/// A worker is the TP group of one pipeline stage of one simulated replica (its GPUs act in
/// lockstep); worker w = replica * pp + stage. After the workers' ops come `iterations` barrier
/// ops (Role::barrier, no stream): the global sync before each optimizer step.
struct TrainingGraph {
  OpGraph graph;
  std::vector<std::string> labels;            ///< op.label -> name (trace span names)
  std::vector<std::vector<int>> worker_gpus;  ///< [worker] global GPU ids in TP-rank order, size tp each
  std::vector<std::uint32_t> op_base;         ///< first op of each worker, size workers + 1
  int tp = 1, pp = 1, dp = 1;                 ///< dp: the data-parallel replicas of the graph = dp x cp of the scenario
  int cp = 1;                                 ///< context parallel size (replicas dp * cp + j, j < cp, share a ring)
  int virtual_stages = 1;                     ///< model chunks per stage (interleaved 1F1B), else 1
  int micro_batches = 1;                      ///< per iteration per replica
  int replicas = 1;                           ///< simulated DP replicas: 1 when folded, else dp
  int iterations = 1;                         ///< simulated iterations (the report uses the last)
  bool folded = false;
  bool input_copies = false;                   ///< host-to-device input copies (workload.data_loader)
  std::vector<int> stage_layers;               ///< [stage] transformer layers
  std::vector<std::vector<int>> chunk_layers;  ///< [stage][chunk] layers
};

/// Builds the op graph of `scenario`'s training job on `cluster` (built from scenario.cluster).
/// Replicas are folded when scenario.options.fold_symmetric allows it (DESIGN §3). Throws
/// std::invalid_argument for scenarios the models cannot run (tp*pp*dp != GPUs, a precision the
/// GPU lacks, a graph too large to hold).
/// storage_stall_s > 0: every worker's compute stream starts each iteration with an idle op of
/// that length (Role::storage_stall: the data loader and checkpoint stall per iteration, from
/// storage_stall_per_iteration_s), so power, temperature, utilisation and the iteration time see it.
TrainingGraph build_training_graph(const Scenario& scenario, const Cluster& cluster, double storage_stall_s = 0.0);

/// The report of a graph that run_op_graph has executed on `net` (the network `cluster` was built
/// on); `events` = the simulator's processed events. `trace`, when given, receives one span per
/// executed op (per worker, per stream). Storage, reliability and cost (apply_job_effects) are
/// left to the caller, which knows the power model's facility draw.
Report training_report(const Scenario& scenario, const Cluster& cluster, const sim::FlowNetwork& net,
                       std::uint64_t events, const TrainingGraph& job, sim::TraceRecorder* trace = nullptr);

/// Whether power or temperature can ever lower a clock in `scenario` (a cap below TDP, a finite
/// rack cooling capacity, or a GPU position whose steady state at TDP, with every upstream GPU at
/// TDP, reaches the slowdown temperature; or a profile's fitted u(compute_bound) > 1, which the
/// TDP caps). Without it temperature feeds nothing back. The thermal R is the scenario's
/// thermal.r_k_per_w, else the calibration profile's power_thermal.r_k_per_w, else the default.
/// Throws std::invalid_argument when the profile's power_thermal was fitted on another GPU.
bool clock_feedback_possible(const Scenario& scenario, const GpuSpec& gpu, const NodeTemplate& node);

/// Thermal starting point of one simulation pass and what the pass leaves for the next.
struct ThermalStartState {
  std::vector<double> start_c;       ///< per simulated GPU (TrainingGraph worker order) [C]; empty = idle steady state
  std::vector<double> rack_rise_c;   ///< per rack, recirculation rise [K]; empty = 0
  bool periodic_correction = false;  ///< report the periodic steady state (no clock feedback only)
  std::vector<double> periodic_c;    ///< out: periodic steady-state start per simulated GPU
  std::vector<double> rack_rise_out_c;  ///< out: rack rises at the end
  bool asymmetric = false;              ///< out: folding saw different inlets for represented GPUs
  bool folded = false;                  ///< out: the pass was folded
  bool no_thermal_slowdown = false;     ///< in: no GPU slows down with temperature (attribution run)
};

/// The power/thermal model's setup for `job` on `cluster` (models/power/power_thermal.h):
/// simulated GPUs in worker order, their representatives, airflow lanes (preheat), node kinds,
/// racks, start temperatures. Defaults and sources: models/power/power_model.h; a calibration
/// profile's power_thermal (idle_w, compute_bound_fraction, r_k_per_w, c_j_per_k) replaces them,
/// a scenario's own thermal.r_k_per_w / c_j_per_k win over both.
PowerThermalSetup power_thermal_setup(const Scenario& scenario, const Cluster& cluster, const TrainingGraph& job,
                                      const ThermalStartState& start);

/// Simulates `scenario` and returns its report: build_training_graph, run_op_graph with the
/// power/thermal model (models/power/), training_report, then the power and thermal reports.
/// When a clock can drop (clock_feedback_possible) and thermal.start is steady_state, a first
/// pass from idle gives each GPU's periodic steady-state temperature and a second pass starts
/// there; if racks break the symmetry folding assumed, the job is re-run unfolded. When a GPU
/// throttled, the job is simulated again without thermal slowdown to fill
/// thermal.throttle_iteration_increase_s. Storage, reliability and cost come last
/// (apply_job_effects, with power.facility_average_w for the energy cost). Deterministic: same scenario, same
/// report, whatever options.threads. Throws std::invalid_argument for scenarios the models cannot run (e.g. a precision
/// the GPU lacks, interleaving with micro-batches not divisible by PP).
Report simulate_training(const Scenario& scenario, sim::TraceRecorder* trace = nullptr);

}  // namespace traincast::models
