#pragma once
// protobuf <-> models::Scenario: traincast.proto's Scenario message and the plain struct of
// models/spec/scenario.h, copied row by row through the field table (scenario_fields.h).
// Internal to models/io; the generated traincast.pb.h is needed only to call to_struct / to_proto.

#include <string>
#include <vector>

#include "models/spec/scenario.h"

namespace traincast::proto {
class Scenario;  // traincast.pb.h
}  // namespace traincast::proto

namespace traincast::io::detail {

/// Copies every present field of `m` over the defaults in `s`. Enum numbers that name no value
/// (proto3 accepts them) are reported into `bad_enums` as field paths, in the order of
/// scenario_fields().
void to_struct(const traincast::proto::Scenario& m, models::Scenario& s, std::vector<std::string>& bad_enums);

/// `s` as a message with every field it uses set (defaults included), for scenario_to_text,
/// scenario_to_json and the defaults of sweep fields. Fields that would be errors in `s`'s mode
/// (ResNet fields on a transformer, MoE fields on a dense model, encoder fields on a decoder, ...)
/// are left unset; a profile is written as its file's absolute path, and not at all when it was
/// built in memory.
traincast::proto::Scenario to_proto(const models::Scenario& s);

/// to_struct(to_proto(s)) onto a default scenario, for callers without the generated headers (the
/// tests that pin it to the identity). The profile is not read back (the loader resolves it):
/// the result's cluster.profile is null; the described node templates are read back from the
/// message's node_template blocks. bad_enums as to_struct's.
models::Scenario through_message(const models::Scenario& s, std::vector<std::string>& bad_enums);

}  // namespace traincast::io::detail
