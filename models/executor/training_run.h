#pragma once
// Runs a scenario's training job on the engine: graph, power/thermal model and report, in as many
// passes as the thermal steady state, folding asymmetry and throttle attribution need.

#include <vector>

#include "models/spec/report.h"
#include "models/spec/scenario.h"
#include "sim/trace.h"

namespace traincast::models {
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
/// Where ECMP hashing can change a route (Cluster::hashing_matters), the job runs once per seed
/// cluster.fabric.ecmp_seed + 0 .. kEcmpSeeds-1 (at most options.threads at once,
/// models/reliability/worker_threads.h; each draw deterministic):
/// iteration_time_s, its breakdown and the rates derived from it (tokens/samples per s, TFLOP/s,
/// MFU, HFU, time to train) are the mean over the draws, Report::routing gives min, max and
/// standard deviation; the other sections and the trace are the first draw's.
Report simulate_training(const Scenario& scenario, sim::TraceRecorder* trace = nullptr);

/// As simulate_training, for callers that read only the timing: iteration_time_s, its breakdown,
/// the rates derived from it (tokens/samples per s, MFU, time to train), routing and memory, each
/// the same bits as simulate_training gives. Where no clock can change (clock_feedback_possible
/// false: no power cap below TDP, no rack recirculation, no GPU that can reach its slowdown
/// temperature at TDP; and no GPU with an override clock_factor below 1), every clock stays 1, so
/// the power/thermal model, which then only reports, is not run: the report's power, thermal and
/// straggler sections are empty and the energy cost is 0. Elsewhere it is simulate_training.
/// (traincast cluster: each job's iteration time, about a third faster on the Alibaba trace.)
Report simulate_training_timing(const Scenario& scenario);

/// Co-running jobs' traffic on one leaf group's up-links (traincast cluster's interference,
/// models/scheduler/cluster_run.h): `flows` persistent flows each way, each capped at 1/flows of
/// the rate, from the start of the run to its last op, spread round-robin over the group's
/// up-links (Cluster::group_up_links); max-min sharing decides what the job's own flows get.
struct LeafBackground {
  int group = 0;                  ///< leaf group of the scenario's cluster
  double up_bytes_per_s = 0.0;    ///< leaf -> spine (or aggregation), > 0
  double down_bytes_per_s = 0.0;  ///< spine -> leaf, > 0
  int flows = 1;                  ///< >= 1
};

/// A job's own traffic over the leaf up-links of every leaf group, mean over the simulated run
/// (bytes carried / the last op's end), and the rate it moves up at while it crosses them (bytes
/// carried / the time the up-links carried a flow, summed over the up-links), and the mean number
/// of its flows on one leaf's up-links while they carry any (FlowNetwork ResourceStats::flow_ns /
/// busy_ns, times the up-links per leaf).
struct UpLinkTraffic {
  double up_bytes_per_s = 0.0;
  double down_bytes_per_s = 0.0;
  double up_busy_bytes_per_s = 0.0;
  double up_flows_per_leaf = 0.0;
};

/// simulate_training_timing with `background` flows on the scenario's leaf up-links (none: the
/// same report as simulate_training_timing). `own` (may be null) receives the job's up-link
/// traffic measured without background (the mean over ECMP draws); with background it is left
/// as is. Throws std::invalid_argument as simulate_training_timing, and for a background group
/// without up-links.
Report simulate_training_timing(const Scenario& scenario, const std::vector<LeafBackground>& background,
                                UpLinkTraffic* own);

/// ECMP hash draws a run averages where hashing matters.
inline constexpr int kEcmpSeeds = 16;

}  // namespace traincast::models
