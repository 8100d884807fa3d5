#pragma once
// What every libFuzzer target here shares: the fuzz input as text, and the rule that picks JSON or
// text format from its first byte (so one corpus reaches both readers).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/io/scenario_io.h"

namespace traincast::fuzz {

/// The input bytes as text (not NUL-terminated; may hold NUL and any byte).
inline std::string_view input_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Format by the first byte: odd -> JSON, even -> protobuf text format, except '#' (odd, but a
/// text-format comment, as every shipped file starts) -> text. So '{' reads as JSON, and arbitrary
/// bytes alternate between the two readers. Empty input -> text.
inline io::Format input_format(std::string_view text) {
  if (text.empty()) return io::Format::text;
  const auto first = static_cast<unsigned char>(text.front());
  return (first & 1) != 0 && first != '#' ? io::Format::json : io::Format::text;
}

}  // namespace traincast::fuzz
