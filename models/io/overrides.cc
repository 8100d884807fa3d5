#include "models/io/overrides.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "models/io/int_ranges.h"
#include "models/io/message_reader.h"
#include "models/io/suggest.h"

namespace traincast::io::detail {
namespace pb = google::protobuf;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <typename Int>
bool parse_int(std::string_view s, Int& out) {
  if (s.empty() || s[0] == '+') return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

/// A decimal number as the integers are parsed (std::from_chars): no hexadecimal ("0x1"), no
/// leading '+' or space; "inf" and "nan" parse and are refused by the field checks that follow.
bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out, std::chars_format::general);
  return ec == std::errc() && ptr == s.data() + s.size();
}

/// Appends the field's default value (0, false, "", its enum's default) to repeated scalar `field`.
void add_default(pb::Message& message, const pb::FieldDescriptor* field) {
  const pb::Reflection* r = message.GetReflection();
  using F = pb::FieldDescriptor;
  switch (field->cpp_type()) {
    case F::CPPTYPE_INT32:
      r->AddInt32(&message, field, 0);
      break;
    case F::CPPTYPE_INT64:
      r->AddInt64(&message, field, 0);
      break;
    case F::CPPTYPE_UINT32:
      r->AddUInt32(&message, field, 0);
      break;
    case F::CPPTYPE_UINT64:
      r->AddUInt64(&message, field, 0);
      break;
    case F::CPPTYPE_DOUBLE:
      r->AddDouble(&message, field, 0);
      break;
    case F::CPPTYPE_FLOAT:
      r->AddFloat(&message, field, 0);
      break;
    case F::CPPTYPE_BOOL:
      r->AddBool(&message, field, false);
      break;
    case F::CPPTYPE_STRING:
      r->AddString(&message, field, "");
      break;
    case F::CPPTYPE_ENUM:
      r->AddEnum(&message, field, field->default_value_enum());
      break;
    case F::CPPTYPE_MESSAGE:
      r->AddMessage(&message, field);
      break;
  }
}

/// Sets `field` of `message` from `text` (a repeated field: its entry `index`, which must exist or
/// be the next one, added; a singular one: index -1); returns false, leaving `message` as it was,
/// when the text is not a valid value.
bool set_scalar(pb::Message& message, const pb::FieldDescriptor* field, std::string_view raw, int index = -1) {
  const pb::Reflection* r = message.GetReflection();
  if (index >= 0 && index == r->FieldSize(message, field)) {
    // A new entry: added with the default value, then set; removed again if the text is no value.
    add_default(message, field);
    if (set_scalar(message, field, raw, index)) return true;
    r->RemoveLast(&message, field);
    return false;
  }
  const bool one = index < 0;
  const std::string_view text = trim(raw);
  using F = pb::FieldDescriptor;
  switch (field->cpp_type()) {
    case F::CPPTYPE_INT32: {
      std::int32_t v = 0;
      if (!parse_int(text, v)) return false;
      one ? r->SetInt32(&message, field, v) : r->SetRepeatedInt32(&message, field, index, v);
      return true;
    }
    case F::CPPTYPE_INT64: {
      std::int64_t v = 0;
      if (!parse_int(text, v)) return false;
      one ? r->SetInt64(&message, field, v) : r->SetRepeatedInt64(&message, field, index, v);
      return true;
    }
    case F::CPPTYPE_UINT32: {
      std::uint32_t v = 0;
      if (!parse_int(text, v)) return false;
      one ? r->SetUInt32(&message, field, v) : r->SetRepeatedUInt32(&message, field, index, v);
      return true;
    }
    case F::CPPTYPE_UINT64: {
      std::uint64_t v = 0;
      if (!parse_int(text, v)) return false;
      one ? r->SetUInt64(&message, field, v) : r->SetRepeatedUInt64(&message, field, index, v);
      return true;
    }
    case F::CPPTYPE_DOUBLE:
    case F::CPPTYPE_FLOAT: {
      double v = 0;
      if (!parse_double(text, v)) return false;
      if (field->cpp_type() == F::CPPTYPE_DOUBLE) {
        one ? r->SetDouble(&message, field, v) : r->SetRepeatedDouble(&message, field, index, v);
      } else {
        const auto f = static_cast<float>(v);
        one ? r->SetFloat(&message, field, f) : r->SetRepeatedFloat(&message, field, index, f);
      }
      return true;
    }
    case F::CPPTYPE_BOOL:
      // The spellings protobuf's text format takes for a bool (TextFormat::Parser: true, True, t,
      // 1 and false, False, f, 0), so a --set reads as the same value in a scenario file.
      if (text == "true" || text == "True" || text == "t" || text == "1" || text == "false" || text == "False" ||
          text == "f" || text == "0") {
        const bool v = text[0] == 't' || text[0] == 'T' || text[0] == '1';
        one ? r->SetBool(&message, field, v) : r->SetRepeatedBool(&message, field, index, v);
        return true;
      }
      return false;
    case F::CPPTYPE_STRING:
      // Verbatim: spaces are part of a string.
      one ? r->SetString(&message, field, std::string(raw))
          : r->SetRepeatedString(&message, field, index, std::string(raw));
      return true;
    case F::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* value = field->enum_type()->FindValueByName(std::string(text));
      if (value == nullptr) return false;
      one ? r->SetEnum(&message, field, value) : r->SetRepeatedEnum(&message, field, index, value);
      return true;
    }
    case F::CPPTYPE_MESSAGE:
      return false;
  }
  return false;
}

/// What is wrong with how `value` (of scalar field `target`, path `walked`, from `origin`) is
/// written, before it is read; "" for nothing:
/// - on the command line a value is the value alone, as for every numeric option (`--threads " 2"`
///   is refused by the option parser): `--set "tp= 4"` is refused, not trimmed. A string keeps its
///   spaces (they are characters of it); a file's `set` entry or sweep value is trimmed (layout);
/// - "tp=010" would be 10 here and 8 in a scenario file (protobuf's octal): refused in both;
/// - "tp=+2": a scenario file refuses the '+', so here too.
std::string value_form_problem(const pb::FieldDescriptor* target, std::string_view value, const std::string& walked,
                               const std::string& origin) {
  using F = pb::FieldDescriptor;
  const bool command_line = origin.rfind("--", 0) == 0;
  if (command_line && target->cpp_type() != F::CPPTYPE_STRING && trim(value).size() != value.size()) {
    return "invalid value \"" + clip(value) + "\": " + origin + " takes the value without spaces around it (expected " +
           walked + "=" + clip(trim(value)) + ")";
  }
  if (target->cpp_type() == F::CPPTYPE_STRING || target->cpp_type() == F::CPPTYPE_BOOL ||
      target->cpp_type() == F::CPPTYPE_ENUM || target->cpp_type() == F::CPPTYPE_MESSAGE)
    return {};
  // "+2": a scenario file refuses it (protobuf's text format takes a '-' sign only), so --set and
  // the options do too (fresh user 43: `--set options.threads=+2` was refused without saying why).
  if (const std::string_view t = trim(value); t.size() > 1 && t.front() == '+')
    return "invalid value \"" + clip(t) + "\": a number takes no '+' sign, as in a scenario file (expected " + walked +
           "=" + clip(t.substr(1)) + ")";
  return octal_literal_problem(trim(value));
}

/// What is wrong with entry `index` (decimal digits) of a list of `size` entries named `segment`,
/// past the next one.
std::string index_past_end(const std::string& index, int size, const std::string& segment) {
  std::string what = "index " + index + " is out of range (the scenario has ";
  if (size == 0) return what.append("no ").append(segment).append(" entries: expected 0 to add one)");
  what.append(std::to_string(size)).append(" ").append(segment).append(size == 1 ? " entry" : " entries");
  what.append(": expected 0");
  if (size > 1) what.append(" to ").append(std::to_string(size - 1));
  return what.append(" to change one, or ").append(std::to_string(size)).append(" to add one)");
}

/// What is wrong with `index_text`, the index of an entry of list `here` (its field `segment`, of
/// `size` entries), as {where, what}; {"", ""} for nothing (then `index` holds it). Decimal digits,
/// without a leading zero ("[00]" would name entry 0 by another spelling, as a selector's "node01"
/// would node1), at most `size` (the next entry, added). An index past the count, however large
/// (2147483648 does not fit an int), says the count, at the entry as written.
std::pair<std::string, std::string> index_problem(const std::string& index_text, int size, const std::string& here,
                                                  const std::string& segment, int& index) {
  if (index_text.empty() || index_text.find_first_not_of("0123456789") != std::string::npos)
    return {here, "invalid index \"" + clip(index_text) + "\" (expected an entry's index in decimal, from 0)"};
  if (index_text.size() > 1 && index_text[0] == '0') {
    const std::string decimal = index_text.substr(std::min(index_text.find_first_not_of('0'), index_text.size() - 1));
    return {here, "invalid index \"" + clip(index_text) + "\": has a leading zero (expected an entry's index in " +
                      "decimal without leading zeros, e.g. [" + clip(decimal) + "])"};
  }
  if (!parse_int(index_text, index) || index > size)
    return {here + "[" + clip(index_text) + "]", index_past_end(clip(index_text), size, segment)};
  return {};
}

/// For a segment "name[i" without its "]" (or "name[i]x", text after it) of `path` (which starts at
/// `start` there and ends before `dot`; `walked`, the fields before it), as given in `assignment`:
/// what is wrong, with the 1-based character in the assignment where the "]" belongs or the text
/// after it starts, and the path with the "]" in place; "" for a segment without "[" or ending in
/// "]". Read as a field name, "overrides[0" was an unknown field, did you mean "overrides" (session 44).
std::string bracket_problem(const std::string& assignment, const std::string& path, const std::string& walked,
                            std::size_t start, std::size_t dot, const std::string& segment) {
  const std::size_t open = segment.find('[');
  if (open == std::string::npos || segment.back() == ']') return {};
  const std::size_t close = segment.find(']', open);
  const std::size_t at = assignment.find(path) + start + (close == std::string::npos ? segment.size() : close + 1);
  std::string what;
  if (close != std::string::npos) {
    what.append("\"").append(clip(segment.substr(close + 1)));
    what.append("\" after \"]\" (expected \".\" and a field, or \"=\", at character ").append(std::to_string(at + 1));
    return what.append(")");
  }
  what.append("\"[\" is not closed (expected \"]\" after the index, at character ").append(std::to_string(at + 1));
  what.append(": ").append(walked).append(walked.empty() ? "" : ".").append(clip(segment)).append("]");
  if (dot != std::string::npos) what.append(".").append(clip(path.substr(dot + 1)));
  return what.append(")");
}

/// Message field `field` of `message` for writing: entry `index` of a list (added when it is the
/// next one), or the singular field (index -1).
pb::Message* mutable_child(pb::Message* message, const pb::FieldDescriptor* field, int index) {
  const pb::Reflection* r = message->GetReflection();
  if (index < 0) return r->MutableMessage(message, field);
  if (index == r->FieldSize(*message, field)) return r->AddMessage(message, field);
  return r->MutableRepeatedMessage(message, field, index);
}

void apply_one(pb::Message& root, const Override& o, std::vector<std::string>& errors,
               std::map<std::string, std::string>& origins, std::map<std::string, std::string>* values) {
  const std::size_t eq = o.assignment.find('=');
  if (eq == std::string::npos) {
    errors.push_back(o.origin + ": " + clip(o.assignment) + ": missing \"=\" (expected field.path=value)");
    return;
  }
  const std::string path(trim(std::string_view(o.assignment).substr(0, eq)));
  const std::string_view value = std::string_view(o.assignment).substr(eq + 1);
  if (path.empty()) {
    errors.push_back(o.origin + ": " + clip(o.assignment) + ": empty field path (expected field.path=value)");
    return;
  }
  auto fail = [&](const std::string& at, const std::string& what) {
    errors.push_back(o.origin + ": " + at + ": " + what);  // `at`: field names, a user's segment clipped
  };

  // Resolve the whole path first (fields, and the entries an index names in `root`), so a bad
  // override leaves the message untouched. A segment "name[i]" names entry i of a repeated field;
  // i equal to the number of entries names a new one, added (with its fields' defaults) when the
  // override applies; the entries added, by path ("cluster.overrides[0]"), for `origins`.
  std::vector<std::string> added;
  std::vector<const pb::FieldDescriptor*> fields;
  std::vector<int> indices;               // per field: the entry of a repeated field, else -1
  const pb::Message* containing = &root;  // the message holding the last field resolved
  const pb::Descriptor* type = root.GetDescriptor();
  std::string walked;  // canonical: indices written in decimal without leading zeros
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    std::string segment = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::string index_text;
    bool indexed = false;
    if (std::string problem = bracket_problem(o.assignment, path, walked, start, dot, segment); !problem.empty()) {
      fail(walked + (walked.empty() ? "" : ".") + clip(segment), problem);
      return;
    }
    if (const std::size_t open = segment.find('['); open != std::string::npos && segment.back() == ']') {
      index_text = segment.substr(open + 1, segment.size() - open - 2);
      segment.resize(open);
      indexed = true;
    }
    const std::string prefix = walked + (walked.empty() ? "" : ".");
    if (type == nullptr) {
      fail(walked, "is not a message, it has no field \"" + clip(segment) + "\" (expected " + walked + "=value)");
      return;
    }
    const pb::FieldDescriptor* field = type->FindFieldByName(segment);
    if (field == nullptr) {
      fail(prefix + clip(segment),
           "unknown field" + did_you_mean(segment, names_of(type)) + " (expected one of: " + field_list(type) + ")");
      return;
    }
    std::string here = prefix + segment;
    int index = -1;
    const pb::Reflection* reflection = containing->GetReflection();
    if (indexed) {
      if (!field->is_repeated()) {
        fail(here,
             "is not a repeated field, it takes no index (expected " + here + " without [" + clip(index_text) + "])");
        return;
      }
      const int size = reflection->FieldSize(*containing, field);
      if (const auto [at, problem] = index_problem(index_text, size, here, segment, index); !problem.empty()) {
        fail(at, problem);
        return;
      }
      std::string entry = here;
      entry.append("[").append(std::to_string(index)).append("]");
      if (index == size) added.push_back(entry);
      here = entry;
    } else if (field->is_repeated()) {
      fail(here, "is a repeated field (expected one entry by its index, e.g. " + here + "[0]" +
                     (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE ? ".FIELD=value" : "=value") + ")");
      return;
    }
    fields.push_back(field);
    indices.push_back(index);
    walked = here;
    type = field->message_type();
    if (dot == std::string::npos) break;
    if (type != nullptr) {
      // An entry to be added reads as a default one (its message type's prototype).
      const bool adding = index >= 0 && index == reflection->FieldSize(*containing, field);
      containing = adding       ? reflection->GetMessageFactory()->GetPrototype(type)
                   : index >= 0 ? &reflection->GetRepeatedMessage(*containing, field, index)
                                : &reflection->GetMessage(*containing, field);
    }
    start = dot + 1;
  }
  const pb::FieldDescriptor* target = fields.back();
  const int target_index = indices.back();
  if (target->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    fail(walked, "is a message, not a scalar field (expected a path to one of its fields: " +
                     field_list(target->message_type()) + ")");
    return;
  }
  // Check the value on a scratch message of the innermost type before touching the root; an
  // entry of a list needs the list's entries (a copy), a singular field an empty message.
  std::unique_ptr<pb::Message> scratch(containing->New());
  if (target_index >= 0) scratch->CopyFrom(*containing);
  using F = pb::FieldDescriptor;
  if (const std::string problem = value_form_problem(target, value, walked, o.origin); !problem.empty()) {
    fail(walked, problem);
    return;
  }
  // A value in quotes (a shell passed them through, or they were typed as in a scenario file):
  // --set takes the bare value; say so when the unquoted text would be accepted. A string field
  // would take the quotes as characters (`node_template="dgx_a100"` naming a template with quotes
  // in its name), so a quoted string is refused the same way.
  const std::string_view bare = trim(value);
  const bool quoted = bare.size() >= 2 && (bare.front() == '"' || bare.front() == '\'') && bare.back() == bare.front();
  const bool accepted = set_scalar(*scratch, target, value, target_index);
  if (quoted && (target->cpp_type() == F::CPPTYPE_STRING ||
                 (!accepted && set_scalar(*scratch, target, bare.substr(1, bare.size() - 2), target_index)))) {
    // The option as typed (--set, compare's --vary); a case file's `set` entry reads as --set does.
    const std::string option = o.origin.rfind("--", 0) == 0 ? o.origin : "--set";
    fail(walked, "invalid value " + clip(bare) + ": " + option + " takes the value without quotes (expected " + walked +
                     "=" + clip(bare.substr(1, bare.size() - 2)) + ")");
    return;
  }
  if (target->cpp_type() == F::CPPTYPE_DOUBLE || target->cpp_type() == F::CPPTYPE_FLOAT) {
    // A decimal number past a double's range (1e400, 1e-400), or below its full precision
    // (1e-310, which protobuf accepts): say so, not "expected a number", nor go on with it.
    double v = 0;
    const std::string_view t = trim(value);
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::general);
    if (ptr == t.data() + t.size() && (ec == std::errc::result_out_of_range || double_out_of_range(t))) {
      fail(walked, "invalid value \"" + clip(t) + "\": out of range as written (expected " +
                       std::string(kDoubleRangeExpected) + ")");
      return;
    }
  }
  if (!accepted) {
    // The value as given, in quotes unless it carries its own.
    fail(walked, "invalid value " + (quoted ? clip(bare) : "\"" + clip(value) + "\"") + value_suggestion(target, bare) +
                     " (expected " + expected_value(target, Format::text) + ")");
    return;
  }
  pb::Message* message = &root;
  for (std::size_t i = 0; i + 1 < fields.size(); ++i) {
    message = mutable_child(message, fields[i], indices[i]);
  }
  set_scalar(*message, target, value, target_index);
  // An entry this override added is its origin as a whole: a check on a field of it that no
  // override wrote (a required select) names the override that made the entry (Checker::where).
  for (const std::string& entry : added) origins[entry] = o.origin;
  origins[walked] = o.origin;
  if (values != nullptr) (*values)[walked] = std::string(value);
}

}  // namespace

void apply_overrides(pb::Message& root, const std::vector<Override>& overrides, std::vector<std::string>& errors,
                     std::map<std::string, std::string>& origins, std::map<std::string, std::string>* values) {
  // One message per problem: two overrides of one entry past the count ("cluster.overrides[1].select"
  // and "[1].clock_factor" on a scenario without overrides) would each say "index 1 is out of range".
  for (const Override& o : overrides) {
    std::vector<std::string> found;
    apply_one(root, o, found, origins, values);
    for (std::string& m : found)
      if (std::find(errors.begin(), errors.end(), m) == errors.end()) errors.push_back(std::move(m));
  }
}

}  // namespace traincast::io::detail
