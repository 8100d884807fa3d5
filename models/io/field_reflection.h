#pragma once
// Field tables through protobuf reflection: a dotted path resolved once to its chain of field
// descriptors, and one scalar read from or written to a message as a FieldValue (member_field.h).
// Internal to models/io.

#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "models/io/member_field.h"

namespace traincast::io::detail {

/// The fields from a root message down to one field, outermost first.
using FieldChain = std::vector<const google::protobuf::FieldDescriptor*>;

/// Which way a table copies a scalar: reading (message -> struct) needs the field's own type to
/// match the member's kind; writing also allows an integer member into a double field (a report's
/// uint64 counters, exact up to 2^53).
enum class CopyDirection { read, write };

/// The chain to the singular scalar at `path` ("workload.model.seq_length") under `root`, every
/// step a singular field. Throws std::logic_error (a field table out of step with
/// traincast.proto) when a step names no field, the scalar is repeated or a message, its type does
/// not hold a `kind` value, or an enum's values are not numbered 0, 1, ... without gaps.
FieldChain scalar_chain(const google::protobuf::Descriptor* root, std::string_view path, FieldKind kind,
                        CopyDirection direction);

/// The chain to the singular message field at `path` ("storage"). Throws std::logic_error when
/// there is none.
FieldChain message_chain(const google::protobuf::Descriptor* root, std::string_view path);

/// Whether every field of `chain` is set in `root` (the messages on the way and the last field).
bool chain_present(const google::protobuf::Message& root, const FieldChain& chain);

/// The message that holds chain.back(); default instances stand for messages not set.
const google::protobuf::Message& parent_of(const google::protobuf::Message& root, const FieldChain& chain);

/// The same for writing: the messages on the way are set (created) in `root`.
google::protobuf::Message& mutable_parent_of(google::protobuf::Message& root, const FieldChain& chain);

/// The message at the end of `chain` (message_chain), set in `root` with the messages on the way.
google::protobuf::Message& mutable_message(google::protobuf::Message& root, const FieldChain& chain);

/// The scalar `field` of `parent` (set or not): bool; std::int64_t for int32/int64; std::uint64_t for
/// uint32/uint64; double for double/float; std::string; EnumNumber for an enum.
FieldValue get_field(const google::protobuf::Message& parent, const google::protobuf::FieldDescriptor* field);

/// Sets the scalar `field` of `parent` to `value` (converted to the field's type with static_cast;
/// an enum by number). Throws std::bad_variant_access when `value` is of a kind the field cannot
/// hold (scalar_chain prevents it).
void set_field(google::protobuf::Message& parent, const google::protobuf::FieldDescriptor* field,
               const FieldValue& value);

/// Whether `number` names a value of enum `field` (its values are 0 to count - 1, scalar_chain).
bool names_enum_value(const google::protobuf::FieldDescriptor* field, int number);

}  // namespace traincast::io::detail
