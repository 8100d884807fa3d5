#pragma once
// A parameter sweep as data: a base scenario message, axes over scenario fields, the points that
// pass the constraints, and the metrics to record per point. Produced by io::load_sweep_file
// (models/io/sweep_loader.h) from a sweep file (message Sweep in models/io/traincast.proto; format
// in scenarios/README.md) and run by `traincast sweep`. The base is held as the generated message
// type, forward-declared: this header needs no protobuf headers.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace traincast::proto {
class Scenario;  // models/io/traincast.proto; complete in models/io's .cc files only
}  // namespace traincast::proto

namespace traincast::io::detail {
class SourceMap;  // models/io/message_reader.h: where a parsed document's fields were written
}  // namespace traincast::io::detail

namespace traincast::models {

/// One swept field and the values it takes, in file order.
struct SweepAxis {
  std::string name;                 ///< CSV column and name in constraints (an identifier, unique)
  std::string path;                 ///< scenario field path, e.g. "workload.parallel.tp"
  std::vector<std::string> values;  ///< at least one, each valid for the field as --set reads it
  /// "file:line:col" in the sweep file of each value (a range's values: the range's), the origin
  /// of a point's messages about the field it sets (an invalid point's CSV reason names it).
  std::vector<std::string> value_origins;
};

/// Where a sweep point's messages about its base scenario point (io::sweep_point_scenario): the
/// base's own fields in the file that wrote them, the sweep's `set` entries in the sweep file.
struct SweepBaseSource {
  /// The base file, or the sweep file for an inline base (scenario { ... }).
  std::string origin;
  /// Its positions, for the base message (an inline base's mapped under `scenario`).
  std::shared_ptr<const io::detail::SourceMap> map;
  std::string text;   ///< the text `map` positions, for numbers as written
  bool json = false;  ///< that text is JSON
  /// The sweep file's `set` overrides ("field.path=value", already in the base) and their
  /// "file:line:col": applied again at each point so that their fields' messages name them.
  std::vector<std::string> sets, set_origins;
};

/// A sweep after expansion: which points exist and how each one is built.
/// Point p (0 <= p < num_points()) is the base scenario with, for every axis a, the assignment
/// axes[a].path = axes[a].values[value_index(p, a)]. Points are in the order of the cartesian
/// product (the last axis varies fastest) with the points that fail a constraint left out, so
/// the numbering is dense and the same for every run of the same file.
struct Sweep {
  std::string path;         ///< the sweep file as given (for messages)
  std::string name;         ///< from the file; may be empty
  std::string description;  ///< from the file; may be empty
  /// The base scenario with the file's `set` overrides applied, only the fields written (what
  /// each point starts from: io::sweep_point_scenario copies it, applies the point's axis values
  /// and validates the result). Shared and never changed: copies of a Sweep share it. Null only
  /// in a default-constructed Sweep (which has no points).
  std::shared_ptr<const proto::Scenario> base;
  /// The base scenario's file, resolved against the sweep file's directory; "" when the base is
  /// written inline (scenario { ... }). An output must not overwrite it.
  std::string base_path;
  /// The base's positions for point messages; null in a default-constructed Sweep (or one made in
  /// code), whose point messages about the base then read "<sweep point>:1:1:".
  std::shared_ptr<const SweepBaseSource> base_source;
  std::vector<SweepAxis> axes;           ///< at least one
  std::vector<std::string> constraints;  ///< expressions as written (all already applied)
  std::vector<std::string> metrics;      ///< CSV metric columns, in order (names: io::sweep_metric_names())
  std::uint64_t product_size = 0;        ///< points of the cartesian product, before constraints
  /// Value index per axis for every point: point p's index on axis a is at [p * axes.size() + a].
  std::vector<std::uint32_t> value_indices;
  /// 16 lower-case hex digits identifying the expanded sweep (base scenario content, axes,
  /// constraints, metrics, points): CSVs of equal hash come from the same sweep and can be
  /// resumed and merged.
  std::string hash;

  /// Number of points (after constraints).
  std::size_t num_points() const { return axes.empty() ? 0 : value_indices.size() / axes.size(); }
  /// Index into axes[axis].values of point `point`'s value. No bounds check.
  std::uint32_t value_index(std::size_t point, std::size_t axis) const {
    return value_indices[point * axes.size() + axis];
  }
  /// The value string of point `point` on axis `axis`. No bounds check.
  const std::string& value(std::size_t point, std::size_t axis) const {
    return axes[axis].values[value_index(point, axis)];
  }
};

/// Most points a sweep may have: io::load_sweep_file refuses axes whose cartesian product (before
/// constraints) is larger (each point costs a constraint check), so no sweep CSV names more.
inline constexpr std::uint64_t kMaxSweepPoints = 10'000'000;

/// A slice of a sweep for one job of a job array: the points p with p % count == index.
struct SweepShard {
  std::size_t index = 0;  ///< 0 <= index < count
  std::size_t count = 1;  ///< >= 1; 1 = the whole sweep
};

}  // namespace traincast::models
