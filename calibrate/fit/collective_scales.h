#pragma once
// Fitting one collective operation's scales on top of a profile: the common latency and
// bandwidth scales (alpha-beta), and the per-protocol scales of NCCL's protocol envelope.

#include "calibrate/fit/collective_points.h"
#include "models/calibration/calibration_profile.h"
#include "models/collectives/collective_engine.h"

namespace traincast::calibrate {

/// Fits entry's (latency_scale, bandwidth_scale) to d's fit points through engine e (whose
/// profile holds `entry`). Returns what the engine runs at the largest fit size (its bottleneck
/// link and loads; LinkKind::other when there are no fit points).
models::CollectiveChoice fit_scales(const models::CollectiveEngine& e, models::CollectiveFit& entry, const OpData& d);

/// Per-protocol scales (fit_protocol_scales_raw) when they predict better than the common scales
/// alone in both halves of an inner two-fold hold-out of the fit points (inner_holdout_error):
/// six more parameters are kept only where the data show protocol regimes that the neighbours
/// predict. Needs at least 8 fit points.
void fit_protocol_scales(const models::CollectiveEngine& e, models::CollectiveFit& entry, const OpData& d);

}  // namespace traincast::calibrate
