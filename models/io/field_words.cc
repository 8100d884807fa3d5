// How messages name fields and values: lists of names, "(expected ...)" words, quoted input
// (message_reader.h). Split from message_reader.cc, which parses.

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "models/io/int_ranges.h"
#include "models/io/message_reader.h"
#include "models/io/suggest.h"

namespace traincast::io::detail {
namespace pb = google::protobuf;

std::vector<std::string> names_of(const pb::Descriptor* type) {
  std::vector<std::string> names;
  if (type == nullptr) return names;
  for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
  return names;
}

std::vector<std::string> names_of(const pb::EnumDescriptor* type) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(type->value_count()));
  for (int i = 0; i < type->value_count(); ++i) names.push_back(type->value(i)->name());
  return names;
}

std::string field_list(const pb::Descriptor* type) {
  std::string out;
  for (const std::string& name : names_of(type)) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string enum_list(const pb::EnumDescriptor* type) {
  std::string out;
  for (const std::string& name : names_of(type)) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string value_suggestion(const pb::FieldDescriptor* field, std::string_view value) {
  if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_ENUM) return {};
  return did_you_mean(value, names_of(field->enum_type()));
}

std::string expected_value(const pb::FieldDescriptor* field, Format format) {
  using Fd = pb::FieldDescriptor;
  switch (field->cpp_type()) {
    case Fd::CPPTYPE_INT32:
    case Fd::CPPTYPE_INT64:
    case Fd::CPPTYPE_UINT32:
    case Fd::CPPTYPE_UINT64:
      return expected_integer(field);  // the field's own range (int_ranges.h), else its type's
    case Fd::CPPTYPE_DOUBLE:
    case Fd::CPPTYPE_FLOAT:
      return "a number";
    case Fd::CPPTYPE_BOOL:
      return "true or false";
    case Fd::CPPTYPE_STRING:
      return format == Format::json ? "a string" : "a quoted string";
    case Fd::CPPTYPE_ENUM:
      return "one of: " + enum_list(field->enum_type());
    case Fd::CPPTYPE_MESSAGE:
      return format == Format::json ? "an object" : "a { ... } block";
  }
  return "a value";
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<std::size_t>(n) >= s.size()) return false;  // truncated sequence
    for (int j = 1; j <= n; ++j) {
      const auto d = static_cast<unsigned char>(s[i + static_cast<std::size_t>(j)]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    const std::uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += static_cast<std::size_t>(n) + 1;
  }
  return true;
}

std::string clip(std::string_view text) {
  std::size_t cut = std::min<std::size_t>(text.size(), 40);
  // Never cut inside a UTF-8 sequence (continuation bytes are 10xxxxxx): a half character prints as "?".
  while (cut < text.size() && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out;
  // Bytes that are not UTF-8 print as "?" too: echoed raw they garble the terminal (session 36:
  // enum names, overrides.select, JSON keys and sweep values did).
  for (std::size_t i = 0; i < cut;) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n > 1 && i + n <= cut && valid_utf8(text.substr(i, n))) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    out += n == 1 && c >= 0x20 && c != 0x7f ? static_cast<char>(c) : '?';  // one line, terminal-safe
    ++i;
  }
  if (text.size() > 40) out += "...";
  return out;
}

std::string field_elsewhere(const pb::Descriptor* root, const pb::Descriptor* here, std::string_view name) {
  if (root == nullptr || name.empty() || (here != nullptr && here->FindFieldByName(std::string(name)) != nullptr))
    return {};
  // Breadth first over the message fields, each message type once, 4 levels down (deep enough for
  // every scenario field a user writes: cluster.fabric.*, workload.parallel.*, ...).
  std::vector<std::pair<const pb::Descriptor*, std::string>> level{{root, ""}}, next;
  std::set<const pb::Descriptor*> seen{root};
  std::vector<std::string> found;
  for (int depth = 0; depth < 4 && !level.empty(); ++depth, level.swap(next), next.clear()) {
    for (const auto& [type, path] : level) {
      if (type != here && type->FindFieldByName(std::string(name)) != nullptr && !path.empty()) found.push_back(path);
      for (int i = 0; i < type->field_count(); ++i) {
        const pb::FieldDescriptor* f = type->field(i);
        if (f->message_type() == nullptr || !seen.insert(f->message_type()).second) continue;
        next.emplace_back(f->message_type(), path.empty() ? f->name() : path + "." + f->name());
      }
    }
  }
  if (found.empty() || found.size() > 2) return {};
  return "; " + std::string(name) + " is a field of " + found[0] + (found.size() > 1 ? " and of " + found[1] : "");
}

}  // namespace traincast::io::detail
