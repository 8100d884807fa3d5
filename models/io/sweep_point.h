#pragma once
// The scenario of one sweep point: the sweep's base scenario with the point's axis values,
// validated as a scenario file is. No protobuf here.

#include <cstddef>
#include <string_view>

#include "models/io/sweep.h"
#include "models/spec/scenario.h"

namespace traincast::io {

/// Origin of the base scenario's own messages when a point is loaded: errors about fields of the
/// base read "<sweep point>:1:1: field.path: what" (the base is a message, never text, so it has
/// no positions; those about axis values read "--set: ..."). Running a point strips both prefixes
/// from its reason (tools/cli/sweep_run.cc).
inline constexpr std::string_view kSweepPointOrigin = "<sweep point>";

/// The scenario of point `point` (< sweep.num_points()): the base with the point's axis values,
/// validated as a scenario file is, with options.threads = 1 (one thread per simulation).
/// Throws std::out_of_range for a point beyond the sweep; ScenarioError with the scenario
/// checks' messages (their origin is kSweepPointOrigin for fields of the base and "--set" for
/// axis values).
models::Scenario sweep_point_scenario(const models::Sweep& sweep, std::size_t point);

}  // namespace traincast::io
