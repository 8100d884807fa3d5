#pragma once
// protobuf <-> models::Scenario: the field-by-field copies between traincast.proto's Scenario
// message and the plain struct of models/spec/scenario.h. Internal to models/io (includes traincast.pb.h).

#include <string>
#include <vector>

#include "models/spec/scenario.h"
#include "traincast.pb.h"

namespace traincast::io::detail {

/// Copies every present field of `m` over the defaults in `s`. Enum numbers that name no value
/// (proto3 accepts them) are reported into `bad_enums` as field paths.
void to_struct(const traincast::proto::Scenario& m, models::Scenario& s, std::vector<std::string>& bad_enums);

/// `s` as a message with every field it uses set (defaults included), for scenario_to_text and
/// scenario_to_json. Fields that would be errors in `s`'s mode (ResNet fields on a transformer,
/// MoE fields on a dense model, encoder fields on a decoder, ...) are left unset; a profile is
/// written as its file's absolute path, and not at all when it was built in memory.
traincast::proto::Scenario to_proto(const models::Scenario& s);

}  // namespace traincast::io::detail
