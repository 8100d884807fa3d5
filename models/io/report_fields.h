#pragma once
// The report's scalar fields, one row each: the field's dotted path in traincast.proto's Report
// message (its JSON key path too) and the member of models::Report that holds it. The JSON writer
// (report_io.cc) and the sweep CSV's metrics (sweep_csv.cc) read reports through it. No protobuf.

#include <optional>
#include <span>
#include <string_view>

#include "models/io/member_field.h"
#include "models/spec/report.h"

namespace traincast::io::detail {

/// One scalar field of the report.
struct ReportField {
  std::string_view path;  ///< in proto::Report, e.g. "breakdown.compute_s"
  FieldKind kind;         ///< of the member (checked against the field's type when first used)
  std::optional<FieldValue> (*get)(const models::Report&);
  /// The field is written only where this holds (null: always); elsewhere it is left out of the
  /// JSON and its sweep metric is an empty cell.
  bool (*when)(const models::Report&) = nullptr;

  /// The value written for `r`, or nullopt where `when` leaves the field out.
  std::optional<FieldValue> value(const models::Report& r) const;
};

/// Every scalar of proto::Report outside repeated fields (the lists are written by hand).
std::span<const ReportField> report_fields();

/// The row at `path`. Throws std::logic_error when there is none (a table that names a report
/// field that does not exist).
const ReportField& report_field(std::string_view path);

}  // namespace traincast::io::detail
