#pragma once
// Writing reports: models::Report (models/spec/report.h) as JSON through the protobuf schema's Report
// message (models/io/traincast.proto), which stays behind this header.

#include <string>

#include "models/spec/report.h"

namespace traincast::io {

/// The report as pretty-printed JSON (protobuf's printer: one-space indent, proto field names,
/// every field printed, trailing newline). Byte-identical for identical input. Keys are those of
/// models/spec/report.h, nested objects "breakdown" and "memory", array "busiest_links".
/// Non-finite doubles print as the strings "NaN", "Infinity", "-Infinity" (proto3 JSON).
std::string report_to_json(const models::Report& report);

/// The `overrides` object of report_to_json for `ov` (its keys, values and number formats, every
/// field printed), on one line without whitespace: for `compare --json`'s rows, so that both
/// commands write an entry alike.
std::string overrides_to_json(const models::OverridesReport& ov);

}  // namespace traincast::io
