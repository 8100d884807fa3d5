#pragma once
// What a training job meets beyond one iteration (DESIGN §4.5), applied to the simulated report:
// storage stalls (data loader and checkpoints) added to the iteration time and its breakdown,
// failures and goodput (Monte-Carlo), and cost. Each part only when the scenario has its section.

#include <stdexcept>
#include <string>

#include "models/hardware/cluster.h"
#include "models/spec/report.h"
#include "models/spec/scenario.h"

namespace traincast::models {

/// Thrown by apply_job_effects when the scenario's token budget takes longer, failure-free, than
/// the failure draws' range (3.2e8 s) and no reliability.horizon_s bounds the draws: the message
/// says so; `days` is that failure-free time in days.
class FailureWindowExceeded : public std::invalid_argument {
 public:
  FailureWindowExceeded(const std::string& what, double days) : std::invalid_argument(what), days_(days) {}
  double days() const { return days_; }

 private:
  double days_;
};

/// The storage stall of one iteration [s]: the data loader's read time beyond
/// `compute_iteration_s` (the iteration without storage) plus the checkpoint stall averaged over
/// the iterations between checkpoints. 0 without a storage section. The executor puts it in the
/// simulated timeline (build_training_graph), where the GPUs wait idle. Throws
/// std::overflow_error when it makes an iteration longer than the simulator's range.
double storage_stall_per_iteration_s(const Scenario& sc, const Cluster& cluster, double compute_iteration_s);

/// Fills r.storage, r.reliability and r.cost from the scenario's storage, reliability and cost
/// sections. `r` is the simulated job with the storage stall already in its timeline (its
/// iteration time, rates, breakdown.storage_stall_s, power and utilisation include it);
/// `compute_iteration_s` is the iteration without storage that the stall was derived from.
/// `facility_power_w` is the power model's facility draw while training (0 = not modelled: cost
/// leaves energy out).
void apply_job_effects(const Scenario& sc, const Cluster& cluster, Report& r, double facility_power_w,
                       double compute_iteration_s);

/// The wall clock to train r's token budget [s]: with failures where r.reliability modelled them
/// for that budget (the draws' mean wall clock when every draw trained the whole budget; when a
/// horizon ended the draws first, the failure-free time over the mean goodput), else the
/// failure-free r.time_to_train_s. The hours the cost model charges and the energy to train is of.
double wall_clock_to_train_s(const Report& r);

}  // namespace traincast::models
