#pragma once
// Failures and goodput (DESIGN §4.5): failure rates per GPU-hour and per node-hour by cause, the
// Young/Daly checkpoint interval, and a seeded Monte-Carlo over failure draws giving interruptions,
// lost work, restart time, wall-clock time and goodput with their spread.
//
// Failures are a Poisson process per cause (exponential inter-arrival times, rate = per-GPU-hour
// rate x GPUs + per-node-hour rate x nodes), the assumption behind Young's and Daly's formulas.

#include <cstdint>
#include <string>
#include <vector>

#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// One row of Llama 3 Table 5 (Grattafiori et al., "The Llama 3 Herd of Models",
/// arXiv:2407.21783): unexpected interruptions during a 54-day snapshot of 405B pre-training on
/// 16,384 H100 GPUs (2,048 Grand Teton servers of 8 GPUs).
struct Table5Row {
  const char* component;
  const char* category;
  int interruptions;
};
/// The 18 rows as published (419 in total); tests compare them with the shared CSV.
const std::vector<Table5Row>& llama3_table5();
inline constexpr double kLlama3Gpus = 16384, kLlama3Nodes = 2048, kLlama3Hours = 54.0 * 24.0;

/// Default failure rates derived from Table 5: causes of category "GPU" scale with GPUs
/// (count / (16,384 GPUs x 1,296 h) per GPU-hour); all other causes (host parts, network
/// switches/cables, maintenance, software, unknown) with servers (count / (2,048 x 1,296) per
/// node-hour).
std::vector<FailureRate> llama3_failure_rates();

/// Failures per hour of the whole job on `gpus` GPUs in `nodes` nodes, summed over causes.
double job_failure_rate_per_hour(const std::vector<FailureRate>& rates, int gpus, int nodes);

/// Young's optimum work between checkpoints, sqrt(2 delta M) (J. W. Young, "A first order
/// approximation to the optimum checkpoint interval", CACM 17(9), 1974) [s].
double young_interval_s(double checkpoint_s, double mtbf_s);
/// Daly's higher-order optimum (J. T. Daly, "A higher order estimate of the optimum checkpoint
/// interval for restart dumps", FGCS 22(3), 2006, eq. 37): for delta < 2M,
/// sqrt(2 delta M) [1 + sqrt(delta/(2M))/3 + (delta/(2M))/9] - delta; else M [s].
double daly_interval_s(double checkpoint_s, double mtbf_s);

/// Longest window the failure draws simulate [s]: 3.2e8 s, about 10 years (reliability.horizon_s,
/// or the failure-free time train_tokens need when horizon_s is 0). Every failure in it is drawn,
/// so the run time grows with the window (about 14 s for 48 years on one 8-GPU node in a release
/// build, linear in the window).
inline constexpr double kMaxFailureWindowS = 3.2e8;

struct FailureSimInputs {
  std::vector<std::string> causes;
  std::vector<double> rate_per_s;  ///< per cause, whole job [1/s]
  double work_s = 0;               ///< failure-free training time to do; 0 = unbounded (horizon only)
  double horizon_s = 0;            ///< wall-clock window; 0 = until the work is done
  double interval_s = 0;           ///< work between checkpoints, > 0
  double checkpoint_stall_s = 0;   ///< training stopped per checkpoint
  double durable_lag_s = 0;        ///< asynchronous: a checkpoint is restorable this long after its stall
  double restart_s = 0;            ///< from an interruption to training again
  int draws = 1000;
  std::uint64_t seed = 1;
  int threads = 1;  ///< draws in parallel (worker_threads.h: 0 = the caller's arena); the result does not depend on it
};

/// Monte-Carlo over failure draws: each draw walks work segments, checkpoint stalls and restarts;
/// a failure (during work, a checkpoint or a restart) loses the work since the last restorable
/// checkpoint and costs a restart. Draw i uses its own generator seeded from (seed, i), and the
/// statistics are taken in draw order, so the report is the same for any thread count. Percentiles
/// are nearest-rank. Throws std::invalid_argument when neither work nor horizon bounds a draw, and
/// std::overflow_error when a draw exceeds 100,000 interruptions (a job that never finishes; the
/// limit is kMaxInterruptions in reliability_model.cc), and Interrupted
/// (models/spec/run_control.h) when an interrupt is requested while drawing.
/// Reports "Monte-Carlo draws" progress (report_progress) every 4,096 draws.
ReliabilityReport simulate_failures(const FailureSimInputs& in);

}  // namespace traincast::models
