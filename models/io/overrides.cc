#include "models/io/overrides.h"

#include <charconv>
#include <cstdint>
#include <memory>
#include <string_view>

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

/// Sets `field` of `message` from `text`; returns false when the text is not a valid value.
bool set_scalar(pb::Message& message, const pb::FieldDescriptor* field, std::string_view raw) {
  const pb::Reflection* r = message.GetReflection();
  const std::string_view text = trim(raw);
  using F = pb::FieldDescriptor;
  switch (field->cpp_type()) {
    case F::CPPTYPE_INT32: {
      std::int32_t v = 0;
      if (!parse_int(text, v)) return false;
      r->SetInt32(&message, field, v);
      return true;
    }
    case F::CPPTYPE_INT64: {
      std::int64_t v = 0;
      if (!parse_int(text, v)) return false;
      r->SetInt64(&message, field, v);
      return true;
    }
    case F::CPPTYPE_UINT32: {
      std::uint32_t v = 0;
      if (!parse_int(text, v)) return false;
      r->SetUInt32(&message, field, v);
      return true;
    }
    case F::CPPTYPE_UINT64: {
      std::uint64_t v = 0;
      if (!parse_int(text, v)) return false;
      r->SetUInt64(&message, field, v);
      return true;
    }
    case F::CPPTYPE_DOUBLE:
    case F::CPPTYPE_FLOAT: {
      double v = 0;
      if (!parse_double(text, v)) return false;
      if (field->cpp_type() == F::CPPTYPE_DOUBLE) {
        r->SetDouble(&message, field, v);
      } else {
        r->SetFloat(&message, field, static_cast<float>(v));
      }
      return true;
    }
    case F::CPPTYPE_BOOL:
      // The spellings protobuf's text format takes for a bool (TextFormat::Parser: true, True, t,
      // 1 and false, False, f, 0), so a --set reads as the same value in a scenario file.
      if (text == "true" || text == "True" || text == "t" || text == "1") {
        r->SetBool(&message, field, true);
        return true;
      }
      if (text == "false" || text == "False" || text == "f" || text == "0") {
        r->SetBool(&message, field, false);
        return true;
      }
      return false;
    case F::CPPTYPE_STRING:
      r->SetString(&message, field, std::string(raw));  // verbatim: spaces are part of a string
      return true;
    case F::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* value = field->enum_type()->FindValueByName(std::string(text));
      if (value == nullptr) return false;
      r->SetEnum(&message, field, value);
      return true;
    }
    case F::CPPTYPE_MESSAGE:
      return false;
  }
  return false;
}

std::vector<std::string> field_names(const pb::Descriptor* type) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(type->field_count()));
  for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
  return names;
}

void apply_one(pb::Message& root, const Override& o, std::vector<std::string>& errors,
               std::map<std::string, std::string>& origins) {
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

  // Resolve the whole path on descriptors first, so a bad override leaves the message untouched.
  std::vector<const pb::FieldDescriptor*> fields;
  const pb::Descriptor* type = root.GetDescriptor();
  std::string walked;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string segment = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    std::string here = walked;
    if (!here.empty()) here += ".";
    here += segment;
    if (type == nullptr) {
      fail(walked, "is not a message, it has no field \"" + clip(segment) + "\" (expected " + walked + "=value)");
      return;
    }
    const pb::FieldDescriptor* field = type->FindFieldByName(segment);
    if (field == nullptr) {
      fail(walked + (walked.empty() ? "" : ".") + clip(segment),
           "unknown field" + did_you_mean(segment, field_names(type)) + " (expected one of: " + field_list(type) + ")");
      return;
    }
    if (field->is_repeated()) {
      fail(here, "is a repeated field (expected a path to a singular scalar field)");
      return;
    }
    fields.push_back(field);
    walked = here;
    type = field->message_type();
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  const pb::FieldDescriptor* target = fields.back();
  if (target->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    fail(path, "is a message, not a scalar field (expected a path to one of its fields: " +
                   field_list(target->message_type()) + ")");
    return;
  }
  // Check the value on a scratch message of the innermost type before touching the root.
  const pb::Message* prototype = root.GetReflection()->GetMessageFactory()->GetPrototype(target->containing_type());
  std::unique_ptr<pb::Message> scratch(prototype->New());
  // "tp=010" would be 10 here and 8 in a scenario file (protobuf's octal): refused in both.
  using F = pb::FieldDescriptor;
  if (target->cpp_type() != F::CPPTYPE_STRING && target->cpp_type() != F::CPPTYPE_BOOL &&
      target->cpp_type() != F::CPPTYPE_ENUM && target->cpp_type() != F::CPPTYPE_MESSAGE) {
    if (const std::string octal = octal_literal_problem(trim(value)); !octal.empty()) {
      fail(path, octal);
      return;
    }
  }
  if (!set_scalar(*scratch, target, value)) {
    // A value in quotes (a shell passed them through, or they were typed as in a scenario file):
    // --set takes the bare value; say so when the unquoted text would be accepted.
    const std::string_view bare = trim(value);
    const bool quoted =
        bare.size() >= 2 && (bare.front() == '"' || bare.front() == '\'') && bare.back() == bare.front();
    if (quoted && set_scalar(*scratch, target, bare.substr(1, bare.size() - 2))) {
      // The option as typed (--set, compare's --vary); a case file's `set` entry reads as --set does.
      const std::string option = o.origin.rfind("--", 0) == 0 ? o.origin : "--set";
      fail(path, "invalid value " + clip(bare) + ": " + option + " takes the value without quotes (expected " + path +
                     "=" + clip(bare.substr(1, bare.size() - 2)) + ")");
      return;
    }
    // The value as given, in quotes unless it carries its own.
    fail(path, "invalid value " + (quoted ? clip(bare) : "\"" + clip(value) + "\"") + value_suggestion(target, bare) +
                   " (expected " + expected_value(target, Format::text) + ")");
    return;
  }
  pb::Message* message = &root;
  for (std::size_t i = 0; i + 1 < fields.size(); ++i) {
    message = message->GetReflection()->MutableMessage(message, fields[i]);
  }
  set_scalar(*message, target, value);
  origins[path] = o.origin;
}

}  // namespace

void apply_overrides(pb::Message& root, const std::vector<Override>& overrides, std::vector<std::string>& errors,
                     std::map<std::string, std::string>& origins) {
  for (const Override& o : overrides) apply_one(root, o, errors, origins);
}

}  // namespace traincast::io::detail
