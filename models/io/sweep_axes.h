#pragma once
// Reading the axes of a sweep file: each axis's field path, name and values (listed, range or
// log2_range), checked against the scenario schema, and the size of their cartesian product.
// Also the positioned error list the whole sweep loader writes to. Internal to models/io.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/message.h>

#include "models/io/message_reader.h"
#include "models/io/sweep.h"
#include "models/io/sweep_expr.h"
#include "models/io/sweep_fields.h"
#include "traincast.pb.h"

namespace traincast::io::detail {

/// Points of the cartesian product, before constraints, at most (models/io/sweep.h).
inline constexpr std::uint64_t kMaxProductPoints = models::kMaxSweepPoints;

/// The problems found in one sweep file, each "origin:line:col: field.path: what".
class SweepErrors {
 public:
  /// sweep: the parsed sweep file; map: where its fields were written; origin: its name in messages.
  SweepErrors(const google::protobuf::Message& sweep, const SourceMap& map, std::string_view origin)
      : sweep_(sweep), map_(map), origin_(origin) {}
  /// "origin:line:col" of the field at `path` (or of its deepest written ancestor).
  std::string at(const std::string& path) const;
  /// Appends "<at(path)>: path: what".
  void add(const std::string& path, const std::string& what);
  /// The messages so far, in the order found (other readers append theirs here too).
  std::vector<std::string>& list() { return messages_; }
  /// Throws ScenarioError with every message so far, when there is one.
  void throw_if_any();

 private:
  const google::protobuf::Message& sweep_;
  const SourceMap& map_;
  std::string_view origin_;
  std::vector<std::string> messages_;
};

/// One axis as read.
struct AxisBuild {
  models::SweepAxis axis;
  const ScalarField* field = nullptr;  ///< null when the path is bad
  std::vector<ExprValue> typed;        ///< axis.values as the field reads them
};

/// The axes of `sweep`, one per axis in file order (also the bad ones), with every problem
/// added to `errors`: path not set, unknown or not a scalar, a field swept twice; a name that is
/// not an identifier, a CSV column (point, status, reason, a metric), reserved in constraints
/// (gpus, gpus_per_node, true, false) or used twice; no values, or more than one of values,
/// range and log2_range; a bad range; a value the field cannot take or given twice; more than
/// kMaxProductPoints points. product: the number of points of the cartesian product (counted
/// over the good axes, up to the first excess).
std::vector<AxisBuild> read_axes(const proto::Sweep& sweep, SweepErrors& errors, std::uint64_t& product);

}  // namespace traincast::io::detail
