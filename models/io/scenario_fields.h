#pragma once
// The scenario schema's scalar fields, one row each: the field's dotted path in traincast.proto's
// Scenario message and the member of models::Scenario that holds it; and the optional sections.
// scenario_convert.cc copies every row both ways through protobuf reflection. No protobuf here.

#include <optional>
#include <span>
#include <string_view>

#include "models/io/member_field.h"
#include "models/spec/scenario.h"

namespace traincast::io::detail {

/// When to_proto writes a row that has a value.
enum class Written {
  always,      ///< every time (an std::optional member: when it holds a value)
  if_changed,  ///< only when it differs from models::Scenario{}'s value (fields added later that
               ///< printed scenarios leave out at their default, so older readers never see them)
};

/// One scalar field of the scenario schema.
struct ScenarioField {
  std::string_view path;  ///< in proto::Scenario, e.g. "workload.model.seq_length"
  FieldKind kind;         ///< of the member (checked against the field's type when first used)
  /// The member's value; nullopt when it has none (an empty std::optional, or a member of an
  /// absent optional section).
  std::optional<FieldValue> (*get)(const models::Scenario&);
  /// Assigns the member (an optional section it lies in is created). An enum's number is known to
  /// name a value of the proto enum when this is called.
  void (*set)(models::Scenario&, const FieldValue&);
  Written written = Written::always;
  /// to_proto writes the field only where this holds (null: everywhere): the loader refuses some
  /// fields outside their mode (ResNet fields on a transformer, MoE fields on a dense model, ...).
  bool (*when)(const models::Scenario&) = nullptr;

  /// What to_proto writes for `s`: get(s), unless `when` or `written` leaves the field out.
  std::optional<FieldValue> written_value(const models::Scenario& s) const;
};

/// An optional section of the scenario (an std::optional member): present in the struct exactly
/// when its message is present in proto::Scenario, even with no field written in it.
struct ScenarioSection {
  std::string_view path;  ///< the message field in proto::Scenario, e.g. "storage"
  bool (*present)(const models::Scenario&);
  void (*create)(models::Scenario&);  ///< emplaces the section with its defaults
};

/// Every scalar of proto::Scenario outside repeated fields, except `profile` (a file path the
/// loader resolves). Order: the order to_struct reads them in, which is the order of its
/// bad_enums (scenario_convert.h).
std::span<const ScenarioField> scenario_fields();

/// storage, reliability, cost and workload.data_loader.
std::span<const ScenarioSection> scenario_sections();

}  // namespace traincast::io::detail
