#pragma once
// "field.path=value" overrides (the CLI's --set, a validation case's `set`) applied to a parsed
// protobuf message through reflection. Internal to models/io.

#include <map>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

namespace traincast::io::detail {

/// One assignment and where it came from ("--set", or "cases.textproto:12:5").
struct Override {
  std::string assignment;  ///< "field.path=value"
  std::string origin;
};

/// Applies the overrides to `root` in order. A path names proto fields from the root, separated by
/// dots; the target must be a scalar (integer, double, bool, string or enum by value name). A
/// repeated field's segment names one entry by its index, "name[i]": an entry that exists, or the
/// next one (i = the number of entries), which the override adds (a message entry with its fields
/// unset but the one the path names); an index past that is refused with the count.
/// Values: integers in decimal within the field's range; doubles as strtod reads them (finite or
/// not: range checks come later); bools true/false/1/0; strings taken verbatim after the first '=';
/// enums by value name. Each failing override appends one message
///   "origin: field.path: what is wrong (expected ...)"
/// to `errors` and leaves `root` unchanged for that override. Each applied one records
/// path -> origin in `origins` (a later override of the same path replaces the entry), and so for
/// each message entry it added ("cluster.overrides[0]" -> "--set"), and, when
/// `values` is not null, path -> the value as typed (the text after the first '=') in `values`,
/// so that a message can quote it ("got 0x1p3", not the 8 read from it).
void apply_overrides(google::protobuf::Message& root, const std::vector<Override>& overrides,
                     std::vector<std::string>& errors, std::map<std::string, std::string>& origins,
                     std::map<std::string, std::string>* values = nullptr);

}  // namespace traincast::io::detail
