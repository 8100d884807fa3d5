#pragma once
// The collective samples of a measurement set grouped per nccl-tests operation (OpData), and the
// model's times at their sizes: closed form (the engine's choice) and simulated (nccl-tests path).

#include <string>
#include <vector>

#include "calibrate/fit/fit_options.h"
#include "models/calibration/measurements.h"
#include "models/collectives/collective_engine.h"
#include "models/collectives/nccl_tests.h"
#include "models/spec/scenario.h"

namespace traincast::calibrate {

/// One operation's points.
struct OpData {
  models::NcclTestsOp op{};
  models::CollectiveOp cop{};
  std::string name;
  std::vector<int> ranks;
  /// The ranks of the engine call that stands for the op: every rank, or for sendrecv the one
  /// pair (rank k -> k + 1 mod n) of sendrecv_perf's ring whose links bound the run (set by
  /// fit_profile before anything is fitted; {ranks[0], ranks[1]} until then).
  std::vector<int> call_ranks;
  int key_ranks = 0;  // CollectiveFit::num_ranks (sendrecv: 2)
  int word_bytes = 4;
  std::vector<double> bytes, time_s;
  std::vector<std::string> where;
  std::vector<bool> fit;
};

/// d.call_ranks, or until they are set: d.ranks (sendrecv: {ranks[0], ranks[1]}).
std::vector<int> call_ranks(const OpData& d);

/// Groups the collective samples per op, sorted by size, marked by the holdout.
/// Throws std::invalid_argument for collective points without o.cluster, or a sample measured
/// on another rank count than the GPUs o selects.
std::vector<OpData> op_groups(const models::MeasurementSet& m, const FitOptions& o);

/// Closed-form model time of `d` at its sizes, with the engine's current profile [s].
std::vector<double> choose_times(const models::CollectiveEngine& e, const OpData& d);

/// Simulated times (the nccl-tests path, as validate uses) of d at its sizes on cs [s].
std::vector<double> simulated_times(const models::ClusterSpec& cs, const OpData& d);

}  // namespace traincast::calibrate
