#pragma once
// The scenario as its protobuf message, for io code that builds scenarios from messages instead
// of text (sweep points and their defaults). Internal to models/io (includes generated headers).
// Both functions belong to scenario_io.cc's conversion and loading (to_proto; load_impl after
// parsing); scenario_message.cc defines them through scenario_io.h's public API until then.

#include <string>
#include <string_view>
#include <vector>

#include "models/spec/scenario.h"
#include "traincast.pb.h"

namespace traincast::io::detail {

/// `scenario` as a message with every field written, defaults included (the message that
/// scenario_to_text prints). A calibration profile is written as its file's absolute path.
proto::Scenario scenario_message(const models::Scenario& scenario);

/// As load_scenario_text(text of `message`, origin, Format::text, overrides): a copy of `message`
/// with the "field.path=value" overrides applied in order (their errors name "--set"), converted
/// and checked as a scenario file is. Messages about the message's own fields name `origin`.
/// Throws ScenarioError with every problem found.
models::Scenario load_scenario_message(const proto::Scenario& message, std::string_view origin,
                                       const std::vector<std::string>& overrides);

}  // namespace traincast::io::detail
