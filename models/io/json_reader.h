#pragma once
// A strict RFC 8259 JSON reader that keeps the line:column of every key and value. It exists only
// so that JSON scenario errors can name `file:line:col` (protobuf's JSON parser reports field paths
// but no positions) and so that every error can be collected, not only the first. The message is
// still built by protobuf's own JSON parser; this reader never sees a schema.
// Internal to models/io.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace traincast::io::detail {

/// 1-based line and column. Columns count bytes, a tab advancing to the next multiple of 8 (the
/// convention of protobuf's tokenizer, so JSON and text positions read alike). 0 = unknown.
struct SourcePos {
  int line = 0;
  int column = 0;
};

struct JsonMember;

/// One JSON value. Numbers keep their literal text (so 64-bit integers are not rounded).
struct JsonValue {
  enum class Kind { object, array, string, number, boolean, null };
  Kind kind = Kind::null;
  SourcePos pos;                    ///< first character of the value
  std::string text;                 ///< string: decoded UTF-8; number: literal; boolean: true/false
  std::vector<JsonMember> members;  ///< object members in order of appearance (duplicates kept)
  std::vector<JsonValue> items;     ///< array items
};

struct JsonMember {
  std::string key;    ///< decoded key
  SourcePos key_pos;  ///< position of the key's opening quote
  JsonValue value;
};

/// Result of read_json: a value, or the first syntax error (JSON syntax errors cannot be
/// recovered from meaningfully, so only one is reported).
struct JsonReadResult {
  std::optional<JsonValue> value;
  SourcePos error_pos;
  std::string error;  ///< e.g. `unexpected character '}' (expected a value)`; empty on success
};

/// Parses one JSON document (RFC 8259: no comments, no trailing commas, no single quotes).
/// Nesting deeper than max_depth arrays/objects is an error (no recursion blow-up on hostile
/// input). Never throws for bad input.
JsonReadResult read_json(std::string_view text, int max_depth = 100);

/// Human-readable name of a kind ("an object", "a string", ...), for messages.
std::string_view describe(JsonValue::Kind kind);

}  // namespace traincast::io::detail
