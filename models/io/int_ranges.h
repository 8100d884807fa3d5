#pragma once
// The range each integer field of models/io/traincast.proto really takes: one table, read both by
// the parsers (an integer beyond the proto type, `tp: 99999999999` in text, JSON, --set or a sweep
// value: "(expected an integer from 1 to 2147483647)") and by the semantic checks (`tp: 0`: the
// same words), so that a message names the field's range whichever path catches the value.
// Cross-field limits (tp divides the heads, moe_top_k <= num_experts) are not in the table: the
// semantic checks test them after the field's own range. Internal to models/io.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>

namespace traincast::io::detail {

/// minimum <= value <= maximum. note: appended to the description as written (": why the bound",
/// or ", a further condition"); empty for none. open_above: the maximum is only the type's, and the
/// field's real bound depends on other fields (a GPU index, below gpus_per_node), so the
/// description reads "a whole number >= minimum" with the note naming that bound.
struct IntRange {
  std::int64_t minimum = 0;
  std::int64_t maximum = 0;
  std::string_view note;
  bool open_above = false;
};

/// The range of integer field `field`: its table entry, or, for a field without one, the range of
/// its proto type (int32: [-2^31, 2^31 - 1], ...). A uint64 field's maximum is clipped to
/// INT64_MAX. `field` must not be null; a field that is not an integer gets the int64 range.
IntRange int_range(const google::protobuf::FieldDescriptor* field);

/// The full proto names of the fields with a table entry (for a test that each names an integer
/// field of the schema).
std::vector<std::string> int_range_field_names();

/// "an integer from 1 to 2147483647", "an integer from 1 to 1000: the simulator's range": what one
/// value of integer field `field` may be, for "(expected ...)"; "a whole number >= 0: a GPU of the
/// node, below gpus_per_node" for an open_above entry; the type's range for a field without an
/// entry ("an integer in [-2147483648, 2147483647]").
std::string expected_integer(const google::protobuf::FieldDescriptor* field);

/// Whether `s` is a decimal integer literal: an optional '-' and one or more digits.
bool is_integer_literal(std::string_view s);

/// Whether `s` is a decimal integer literal that type Int holds.
template <typename Int>
bool integer_in_range(std::string_view s) {
  if (!is_integer_literal(s)) return false;
  Int value{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && ptr == s.data() + s.size();
}

/// For an integer literal with a leading zero ("010", "-07"): "010 has a leading zero (expected a
/// decimal number without leading zeros, e.g. 10; protobuf's text format reads 010 as octal 8)";
/// for a hexadecimal one ("0x1f"): "0x1f is hexadecimal (expected a decimal number, e.g. 31)"; the
/// same words for a scenario file and a --set value. ""
/// for any other text ("0", "10").
std::string octal_literal_problem(std::string_view literal);

/// What a double holds, for "(expected ...)" after a number refused as out of range as written:
/// IEEE 754 binary64's largest finite magnitude (1.8e308, DBL_MAX) and smallest normal one
/// (2.2e-308, DBL_MIN); below it a double is subnormal, with fewer digits, and 1 / x overflows.
inline constexpr std::string_view kDoubleRangeExpected =
    "0 or a finite number of magnitude 2.2e-308 to 1.8e308: a double holds no larger one, and "
    "smaller ones only subnormal, with digits lost";

/// Whether the decimal number `literal` (as strtod reads it: "1e-400", "1e400", "1.5f") is one a
/// double cannot hold in full: beyond 1.8e308 (read as inf), or a nonzero magnitude below
/// 2.2e-308 (read as 0: underflow, or subnormal: 1e-310, whose reciprocal is inf, and which gave
/// "MAPE inf %" and "MTBF inf days"). Every reader of a scenario, sweep or option refuses such a
/// value as written, rather than going on with inf, 0 or a subnormal. False for text that is not
/// a number.
bool double_out_of_range(std::string_view literal);

}  // namespace traincast::io::detail
