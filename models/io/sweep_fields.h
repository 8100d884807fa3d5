#pragma once
// The scenario message's scalar fields as sweeps see them: every singular scalar reachable from
// the root, its type in constraints, its value in a message, and the default a field not written
// takes. Internal to models/io (protobuf reflection).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "models/io/sweep_expr.h"
#include "traincast.pb.h"

namespace traincast::io::detail {

/// A scalar field of the scenario reachable from the root through singular messages.
struct ScalarField {
  std::string path;                                             ///< "workload.parallel.tp"
  std::vector<const google::protobuf::FieldDescriptor*> chain;  ///< messages down to the field itself
  const google::protobuf::FieldDescriptor* field() const { return chain.back(); }
};

/// Every scalar field of proto::Scenario outside repeated fields, depth first in schema order.
const std::vector<ScalarField>& scenario_scalars();

/// The scalar field at `path` ("workload.parallel.tp"), or null when there is none.
const ScalarField* find_scalar(std::string_view path);

/// The type a field has in constraints: bool -> boolean; enum, string -> string; else number.
ExprType expr_type_of(const google::protobuf::FieldDescriptor* f);

/// True for a field that is a number in constraints (integer or floating point).
bool is_numeric(const google::protobuf::FieldDescriptor* f);

/// True for an integer field (int32, int64, uint32, uint64).
bool is_integer(const google::protobuf::FieldDescriptor* f);

/// The field's type for the constraint checker; for an enum field, its value names as the
/// allowed strings.
ExprNameInfo name_info_of(const google::protobuf::FieldDescriptor* f);

/// The value at `field` in `root` when written there (every message on the way present and the
/// scalar set); nullopt otherwise.
std::optional<ExprValue> written_value(const google::protobuf::Message& root, const ScalarField& field);

/// A point's value of a field that no axis sweeps: written in the base, else the default of
/// models/spec/scenario.h (the value a field not written takes); empty for a field that has no
/// value unless its section is used (e.g. workload.model.moe_top_k of a dense model, a field of
/// an absent storage section), which the caller refuses with a positioned message.
std::optional<ExprValue> base_value(const proto::Scenario& base, const ScalarField& field);

}  // namespace traincast::io::detail
