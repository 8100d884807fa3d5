#pragma once
// The scenario of one sweep point: the sweep's base scenario with the point's axis values,
// validated as a scenario file is. No protobuf here.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "models/io/sweep.h"
#include "models/spec/scenario.h"

namespace traincast::io {

/// Origin of a point's messages about its base scenario in a Sweep without base_source (one not
/// loaded from a file): "<sweep point>:1:1: field.path: what"; those about axis values then read
/// "--set: ...". A loaded sweep's messages are positioned instead (sweep_point_scenario).
inline constexpr std::string_view kSweepPointOrigin = "<sweep point>";

/// The scenario of point `point` (< sweep.num_points()): the base with the point's axis values,
/// validated as a scenario file is, with options.threads = 1 (one thread per simulation).
/// Throws std::out_of_range for a point beyond the sweep; ScenarioError with the scenario
/// checks' messages, each "FILE:LINE:COL: field.path: what" at the place that wrote the field:
/// the axis value of this point in the sweep file (a range's values: the range), a `set` entry
/// of the sweep file, or the base scenario's field in its file (an inline base's in the sweep
/// file). Without sweep.base_source, kSweepPointOrigin and "--set" as said above.
models::Scenario sweep_point_scenario(const models::Sweep& sweep, std::size_t point);

/// A point's messages (ScenarioError::errors of sweep_point_scenario) in an order that does not
/// depend on which checks fired, for its invalid row: first those positioned in `sweep_file` (the
/// point's axis values and `set` entries), then each other file's (the base file; by name), each
/// file's by line:column; messages at one position keep the checks' order, and those without a
/// position follow, as found. ScenarioError keeps each file's messages in the places they were
/// found in, so a third message could move one file's past another's (fresh user 43: two points
/// failing the same two checks listed them in different orders).
std::vector<std::string> by_file_and_position(std::vector<std::string> errors, std::string_view sweep_file);

}  // namespace traincast::io
