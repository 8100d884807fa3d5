// Field tables through protobuf reflection (field_reflection.h): path resolution with the table's
// checks, and scalar reads and writes by the field's C++ type.

#include "models/io/field_reflection.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace traincast::io::detail {

namespace pb = google::protobuf;
using F = pb::FieldDescriptor;

namespace {

[[noreturn]] void table_error(std::string_view path, const std::string& what) {
  throw std::logic_error("field table: " + std::string(path) + ": " + what);
}

/// Every field named by the dotted `path`, each step but the last a singular message.
FieldChain chain_of(const pb::Descriptor* root, std::string_view path) {
  FieldChain chain;
  const pb::Descriptor* type = root;
  std::size_t begin = 0;
  while (true) {
    if (type == nullptr) table_error(path, "steps into a field that is not a message");
    const std::size_t dot = path.find('.', begin);
    const std::string name(path.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    const F* field = type->FindFieldByName(name);
    if (field == nullptr) table_error(path, "no field \"" + name + "\" in " + type->full_name());
    if (field->is_repeated()) table_error(path, "\"" + name + "\" is repeated");
    chain.push_back(field);
    if (dot == std::string_view::npos) return chain;
    type = field->cpp_type() == F::CPPTYPE_MESSAGE ? field->message_type() : nullptr;
    begin = dot + 1;
  }
}

bool holds(const F* field, FieldKind kind, CopyDirection direction) {
  switch (field->cpp_type()) {
    case F::CPPTYPE_BOOL:
      return kind == FieldKind::boolean;
    case F::CPPTYPE_STRING:
      return kind == FieldKind::string;
    case F::CPPTYPE_ENUM:
      return kind == FieldKind::enumeration;
    case F::CPPTYPE_INT32:
    case F::CPPTYPE_INT64:
      return kind == FieldKind::integer;
    case F::CPPTYPE_UINT32:
    case F::CPPTYPE_UINT64:
      return kind == FieldKind::unsigned_integer;
    case F::CPPTYPE_DOUBLE:
    case F::CPPTYPE_FLOAT:
      return kind == FieldKind::floating ||
             (direction == CopyDirection::write && (kind == FieldKind::integer || kind == FieldKind::unsigned_integer));
    case F::CPPTYPE_MESSAGE:
      break;
  }
  return false;
}

}  // namespace

FieldChain scalar_chain(const pb::Descriptor* root, std::string_view path, FieldKind kind, CopyDirection direction) {
  FieldChain chain = chain_of(root, path);
  const F* field = chain.back();
  if (field->cpp_type() == F::CPPTYPE_MESSAGE) table_error(path, "is a message, not a scalar");
  if (!holds(field, kind, direction))
    table_error(path, std::string("is a ") + field->cpp_type_name() + " field, which the member's type does not match");
  if (field->cpp_type() == F::CPPTYPE_ENUM) {
    const pb::EnumDescriptor* type = field->enum_type();
    for (int i = 0; i < type->value_count(); ++i) {
      if (type->FindValueByNumber(i) == nullptr) table_error(path, type->full_name() + " is not numbered 0, 1, ...");
    }
  }
  return chain;
}

FieldChain message_chain(const pb::Descriptor* root, std::string_view path) {
  FieldChain chain = chain_of(root, path);
  if (chain.back()->cpp_type() != F::CPPTYPE_MESSAGE) table_error(path, "is not a message");
  return chain;
}

bool chain_present(const pb::Message& root, const FieldChain& chain) {
  const pb::Message* m = &root;
  for (const F* field : chain) {
    if (!m->GetReflection()->HasField(*m, field)) return false;
    if (field->cpp_type() == F::CPPTYPE_MESSAGE) m = &m->GetReflection()->GetMessage(*m, field);
  }
  return true;
}

const pb::Message& parent_of(const pb::Message& root, const FieldChain& chain) {
  const pb::Message* m = &root;
  for (std::size_t i = 0; i + 1 < chain.size(); ++i) m = &m->GetReflection()->GetMessage(*m, chain[i]);
  return *m;
}

pb::Message& mutable_parent_of(pb::Message& root, const FieldChain& chain) {
  pb::Message* m = &root;
  for (std::size_t i = 0; i + 1 < chain.size(); ++i) m = m->GetReflection()->MutableMessage(m, chain[i]);
  return *m;
}

pb::Message& mutable_message(pb::Message& root, const FieldChain& chain) {
  pb::Message& parent = mutable_parent_of(root, chain);
  return *parent.GetReflection()->MutableMessage(&parent, chain.back());
}

FieldValue get_field(const pb::Message& parent, const F* field) {
  const pb::Reflection* r = parent.GetReflection();
  switch (field->cpp_type()) {
    case F::CPPTYPE_BOOL:
      return r->GetBool(parent, field);
    case F::CPPTYPE_INT32:
      return static_cast<std::int64_t>(r->GetInt32(parent, field));
    case F::CPPTYPE_INT64:
      return static_cast<std::int64_t>(r->GetInt64(parent, field));
    case F::CPPTYPE_UINT32:
      return static_cast<std::uint64_t>(r->GetUInt32(parent, field));
    case F::CPPTYPE_UINT64:
      return static_cast<std::uint64_t>(r->GetUInt64(parent, field));
    case F::CPPTYPE_DOUBLE:
      return r->GetDouble(parent, field);
    case F::CPPTYPE_FLOAT:
      return static_cast<double>(r->GetFloat(parent, field));
    case F::CPPTYPE_STRING:
      return r->GetString(parent, field);
    case F::CPPTYPE_ENUM:
      return EnumNumber{r->GetEnumValue(parent, field)};
    case F::CPPTYPE_MESSAGE:
      break;
  }
  throw std::logic_error("get_field: " + field->full_name() + " is a message");
}

namespace {

/// An integer or floating value as T (static_cast), for numeric fields.
template <typename T>
T numeric_as(const FieldValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<T>(*i);
  if (const auto* u = std::get_if<std::uint64_t>(&value)) return static_cast<T>(*u);
  return static_cast<T>(std::get<double>(value));
}

}  // namespace

void set_field(pb::Message& parent, const F* field, const FieldValue& value) {
  const pb::Reflection* r = parent.GetReflection();
  switch (field->cpp_type()) {
    case F::CPPTYPE_BOOL:
      r->SetBool(&parent, field, std::get<bool>(value));
      return;
    case F::CPPTYPE_INT32:
      r->SetInt32(&parent, field, numeric_as<std::int32_t>(value));
      return;
    case F::CPPTYPE_INT64:
      r->SetInt64(&parent, field, numeric_as<std::int64_t>(value));
      return;
    case F::CPPTYPE_UINT32:
      r->SetUInt32(&parent, field, numeric_as<std::uint32_t>(value));
      return;
    case F::CPPTYPE_UINT64:
      r->SetUInt64(&parent, field, numeric_as<std::uint64_t>(value));
      return;
    case F::CPPTYPE_DOUBLE:
      r->SetDouble(&parent, field, numeric_as<double>(value));
      return;
    case F::CPPTYPE_FLOAT:
      r->SetFloat(&parent, field, numeric_as<float>(value));
      return;
    case F::CPPTYPE_STRING:
      r->SetString(&parent, field, std::get<std::string>(value));
      return;
    case F::CPPTYPE_ENUM:
      r->SetEnumValue(&parent, field, std::get<EnumNumber>(value).number);
      return;
    case F::CPPTYPE_MESSAGE:
      break;
  }
  throw std::logic_error("set_field: " + field->full_name() + " is a message");
}

bool names_enum_value(const F* field, int number) { return number >= 0 && number < field->enum_type()->value_count(); }

}  // namespace traincast::io::detail
