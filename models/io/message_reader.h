#pragma once
// Reading one protobuf message from text format or JSON with every error collected and positioned,
// and finding where a field was written. Shared by scenario and validation-case loading.
// Internal to models/io (includes protobuf headers).

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "models/io/json_reader.h"
#include "models/io/scenario_io.h"

namespace traincast::io::detail {

/// One step of a field path: a field and, for repeated fields, the element index (-1 otherwise).
struct PathStep {
  const google::protobuf::FieldDescriptor* field = nullptr;
  int index = -1;
};

/// Where the fields of one parsed document were written.
class SourceMap {
 public:
  virtual ~SourceMap() = default;
  /// Position of the field's name (text) or key (JSON) at `path`, except a JSON scalar's: its
  /// value (scalars_at_value), where a JSON type error points too; when that field was not
  /// written, the position of its deepest written ancestor; {1, 1} when none was written. A list
  /// element is located at its value in both.
  virtual SourcePos locate(const std::vector<PathStep>& path) const = 0;
  /// Whether locate() gives a written singular scalar's value rather than its name (JSON).
  virtual bool scalars_at_value() const { return false; }
};

/// Outcome of read_message: errors (empty when the document parsed cleanly) and the source map.
struct ReadOutcome {
  std::vector<std::string> errors;
  std::unique_ptr<SourceMap> source_map;  ///< never null
};

/// Parses `text` into `message` (which should be empty). Collects, with positions and field paths:
/// syntax errors, every unknown field, wrong value types and unknown enum names, repeated
/// singular fields. Text: protobuf's TextFormat parser (unknown fields are skipped and reported so
/// parsing can go on; the first hard error stops it). JSON: a strict RFC 8259 reader finds every
/// schema error with its position, then protobuf's JSON parser builds the message.
/// A leading UTF-8 byte-order mark is skipped. Never throws for bad input.
ReadOutcome read_message(std::string_view text, std::string_view origin, Format format,
                         google::protobuf::Message& message);

/// Parses "a.b[2].c" against `root`. Returns false (and leaves a reason in *why, naming the
/// failing segment) for an unknown field, a bad index syntax or a step into a non-message.
bool resolve_path(const google::protobuf::Descriptor* root, std::string_view path, std::vector<PathStep>& steps,
                  std::string* why);

/// "origin:line:col".
std::string format_pos(std::string_view origin, SourcePos pos);

/// The field names of `type` (empty for null) / the value names of `type`, in declaration order.
std::vector<std::string> names_of(const google::protobuf::Descriptor* type);
std::vector<std::string> names_of(const google::protobuf::EnumDescriptor* type);

/// Comma-separated field names of `type`, in declaration order.
std::string field_list(const google::protobuf::Descriptor* type);

/// Comma-separated value names of `type`, in declaration order.
std::string enum_list(const google::protobuf::EnumDescriptor* type);

/// Where else under `root` (a scenario, sweep or cases file's message) a field named `name` is
/// declared, for an unknown field written in the wrong message `here`: "; overrides is a field
/// of cluster" (at most two places named, else empty); empty when `here` has it or nothing does.
std::string field_elsewhere(const google::protobuf::Descriptor* root, const google::protobuf::Descriptor* here,
                            std::string_view name);

/// For an enum field, did_you_mean(value, its value names); empty for other fields.
std::string value_suggestion(const google::protobuf::FieldDescriptor* field, std::string_view value);

/// What one value of `field`'s type looks like in `format`, for "(expected ...)": for an integer
/// field its own range (int_ranges.h: "an integer from 1 to 2147483647"), "a number", "true or false", "a quoted
/// string", "one of: a, b", "a { ... } block" (text) / "an object" (JSON).
std::string expected_value(const google::protobuf::FieldDescriptor* field, Format format);

/// `text` cut to at most 40 bytes ("..." appended when cut), control bytes and bytes that are not
/// UTF-8 shown as ?, for quoting input in messages.
std::string clip(std::string_view text);

/// Whether `s` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool valid_utf8(std::string_view s);

}  // namespace traincast::io::detail
