#pragma once
// A plain struct's scalar member named by a chain of member pointers, read and written as a
// FieldValue: how the field tables (scenario_fields.h, report_fields.h) reach their members.
// std::optional sections on the way are skipped when absent (reads) and created (writes). No protobuf.

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>

namespace traincast::io::detail {

/// An enum member's value by number (the proto enum's number of the same value).
struct EnumNumber {
  int number = 0;
  bool operator==(const EnumNumber&) const = default;
};

/// One scalar between a struct member and a protobuf field (field_reflection.h): integers widened
/// to 64 bits (std::uint64_t and other unsigned members as std::uint64_t), float as double, enums
/// by number.
using FieldValue = std::variant<bool, std::int64_t, std::uint64_t, double, std::string, EnumNumber>;

/// What a member holds; decides which protobuf field types it may be copied to and from
/// (field_reflection.h, field_chain).
enum class FieldKind { boolean, integer, unsigned_integer, floating, string, enumeration };

namespace member_field {

template <typename T>
struct Optional {
  static constexpr bool is_optional = false;
  using value_type = T;
};
template <typename U>
struct Optional<std::optional<U>> {
  static constexpr bool is_optional = true;
  using value_type = U;
};

template <typename>
struct MemberPointer;
template <typename Object, typename Member>
struct MemberPointer<Member Object::*> {
  using object = Object;
  using member = Member;
};

/// The struct the chain starts from (the class of its first member pointer).
template <auto First>
using ObjectOf = typename MemberPointer<decltype(First)>::object;

/// The scalar type at the end of the chain (inside its std::optional, if any).
template <auto... Members>
using ValueOf = typename Optional<typename MemberPointer<
    std::tuple_element_t<sizeof...(Members) - 1, std::tuple<decltype(Members)...>>>::member>::value_type;

template <typename T>
constexpr FieldKind kind_of() {
  if constexpr (std::is_same_v<T, bool>) {
    return FieldKind::boolean;
  } else if constexpr (std::is_enum_v<T>) {
    return FieldKind::enumeration;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return FieldKind::string;
  } else if constexpr (std::is_floating_point_v<T>) {
    return FieldKind::floating;
  } else if constexpr (std::is_unsigned_v<T>) {
    return FieldKind::unsigned_integer;
  } else {
    static_assert(std::is_integral_v<T> && std::is_signed_v<T>, "a field table member must be a scalar");
    return FieldKind::integer;
  }
}

template <typename T>
FieldValue to_value(const T& v) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
    return v;  // held as is
  } else if constexpr (std::is_enum_v<T>) {
    return EnumNumber{static_cast<int>(v)};
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else if constexpr (std::is_unsigned_v<T>) {
    return static_cast<std::uint64_t>(v);
  } else {
    return static_cast<std::int64_t>(v);
  }
}

/// `v` into `out`; std::bad_variant_access when `v` holds another kind (field_chain prevents it).
template <typename T>
void from_value(const FieldValue& v, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    out = std::get<bool>(v);
  } else if constexpr (std::is_enum_v<T>) {
    out = static_cast<T>(std::get<EnumNumber>(v).number);
  } else if constexpr (std::is_same_v<T, std::string>) {
    out = std::get<std::string>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    out = static_cast<T>(std::get<double>(v));
  } else if constexpr (std::is_unsigned_v<T>) {
    out = static_cast<T>(std::get<std::uint64_t>(v));
  } else {
    out = static_cast<T>(std::get<std::int64_t>(v));
  }
}

/// The member at the end of the chain, or null when an optional section on the way is empty.
template <auto First, auto... Rest, typename Object>
const auto* find_leaf(const Object& object) {
  const auto& next = object.*First;
  if constexpr (sizeof...(Rest) == 0) {
    return &next;
  } else if constexpr (Optional<std::remove_cvref_t<decltype(next)>>::is_optional) {
    return next ? find_leaf<Rest...>(*next) : nullptr;
  } else {
    return find_leaf<Rest...>(next);
  }
}

/// The member at the end of the chain; empty optional sections on the way are created.
template <auto First, auto... Rest, typename Object>
auto& make_leaf(Object& object) {
  auto& next = object.*First;
  if constexpr (sizeof...(Rest) == 0) {
    return next;
  } else if constexpr (Optional<std::remove_cvref_t<decltype(next)>>::is_optional) {
    if (!next) next.emplace();
    return make_leaf<Rest...>(*next);
  } else {
    return make_leaf<Rest...>(next);
  }
}

}  // namespace member_field

/// The kind of the member the chain `Members` (member pointers, outermost first) ends at.
template <auto... Members>
constexpr FieldKind member_kind() {
  return member_field::kind_of<member_field::ValueOf<Members...>>();
}

/// The member's value; nullopt when it is an empty std::optional or lies in an absent section.
template <auto First, auto... Rest>
std::optional<FieldValue> get_member(const member_field::ObjectOf<First>& object) {
  const auto* leaf = member_field::find_leaf<First, Rest...>(object);
  if (leaf == nullptr) return std::nullopt;
  using Leaf = std::remove_cvref_t<decltype(*leaf)>;
  if constexpr (member_field::Optional<Leaf>::is_optional) {
    if (!leaf->has_value()) return std::nullopt;
    return member_field::to_value(**leaf);
  } else {
    return member_field::to_value(*leaf);
  }
}

/// Assigns `v` to the member (an std::optional member then holds it), creating absent sections.
template <auto First, auto... Rest>
void set_member(member_field::ObjectOf<First>& object, const FieldValue& v) {
  auto& leaf = member_field::make_leaf<First, Rest...>(object);
  using Leaf = std::remove_cvref_t<decltype(leaf)>;
  if constexpr (member_field::Optional<Leaf>::is_optional) {
    typename Leaf::value_type value{};
    member_field::from_value(v, value);
    leaf = value;
  } else {
    member_field::from_value(v, leaf);
  }
}

}  // namespace traincast::io::detail
