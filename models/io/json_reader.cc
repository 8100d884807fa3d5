#include "models/io/json_reader.h"

#include <cstdint>

namespace traincast::io::detail {
namespace {

class Reader {
 public:
  Reader(std::string_view text, int max_depth) : text_(text), max_depth_(max_depth) {}

  JsonReadResult run() {
    JsonReadResult result;
    skip_space();
    JsonValue value;
    if (!parse_value(value, 0)) {
      result.error = error_;
      result.error_pos = error_pos_;
      return result;
    }
    skip_space();
    if (i_ < text_.size()) {
      result.error = "unexpected " + describe_here() + " after the end of the document (expected end of file)";
      result.error_pos = pos();
      return result;
    }
    result.value = std::move(value);
    return result;
  }

 private:
  SourcePos pos() const { return {line_, column_ + 1}; }

  void advance() {
    const char c = text_[i_++];
    if (c == '\n') {
      ++line_;
      column_ = 0;
    } else if (c == '\t') {
      column_ += 8 - column_ % 8;
    } else {
      ++column_;
    }
  }

  void skip_space() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      advance();
    }
  }

  std::string describe_here() const {
    if (i_ >= text_.size()) return "end of file";
    const auto c = static_cast<unsigned char>(text_[i_]);
    if (c >= 0x20 && c < 0x7f) return std::string("character '") + static_cast<char>(c) + "'";
    static const char* hex = "0123456789abcdef";
    return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
  }

  bool fail(std::string message) {
    if (error_.empty()) {
      error_ = std::move(message);
      error_pos_ = pos();
    }
    return false;
  }

  bool parse_value(JsonValue& out, int depth) {
    out.pos = pos();
    if (i_ >= text_.size()) return fail("unexpected end of file (expected a value)");
    const char c = text_[i_];
    if (c == '{' || c == '[') {
      if (depth >= max_depth_) {
        return fail("nesting deeper than " + std::to_string(max_depth_) + " levels (expected a flatter document)");
      }
      return c == '{' ? parse_object(out, depth + 1) : parse_array(out, depth + 1);
    }
    if (c == '"') {
      out.kind = JsonValue::Kind::string;
      return parse_string(out.text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      out.kind = JsonValue::Kind::number;
      return parse_number(out.text);
    }
    if (literal("true")) {
      out.kind = JsonValue::Kind::boolean;
      out.text = "true";
      return true;
    }
    if (literal("false")) {
      out.kind = JsonValue::Kind::boolean;
      out.text = "false";
      return true;
    }
    if (literal("null")) {
      out.kind = JsonValue::Kind::null;
      return true;
    }
    return fail("unexpected " + describe_here() +
                " (expected a value: object, array, string, number, true, false or null)");
  }

  bool literal(std::string_view word) {
    if (text_.substr(i_, word.size()) != word) return false;
    for (std::size_t k = 0; k < word.size(); ++k) advance();
    return true;
  }

  bool parse_object(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::object;
    advance();  // {
    skip_space();
    if (i_ < text_.size() && text_[i_] == '}') {
      advance();
      return true;
    }
    while (true) {
      skip_space();
      if (i_ >= text_.size() || text_[i_] != '"') {
        return fail("unexpected " + describe_here() + " (expected a quoted key)");
      }
      JsonMember member;
      member.key_pos = pos();
      if (!parse_string(member.key)) return false;
      skip_space();
      if (i_ >= text_.size() || text_[i_] != ':') {
        return fail("unexpected " + describe_here() + " (expected ':' after the key)");
      }
      advance();
      skip_space();
      if (!parse_value(member.value, depth)) return false;
      out.members.push_back(std::move(member));
      skip_space();
      if (i_ < text_.size() && text_[i_] == ',') {
        advance();
        skip_space();
        if (i_ < text_.size() && text_[i_] == '}') {
          return fail("trailing comma before '}' (expected another key)");
        }
        continue;
      }
      if (i_ < text_.size() && text_[i_] == '}') {
        advance();
        return true;
      }
      return fail("unexpected " + describe_here() + " (expected ',' or '}')");
    }
  }

  bool parse_array(JsonValue& out, int depth) {
    out.kind = JsonValue::Kind::array;
    advance();  // [
    skip_space();
    if (i_ < text_.size() && text_[i_] == ']') {
      advance();
      return true;
    }
    while (true) {
      skip_space();
      JsonValue item;
      if (!parse_value(item, depth)) return false;
      out.items.push_back(std::move(item));
      skip_space();
      if (i_ < text_.size() && text_[i_] == ',') {
        advance();
        skip_space();
        if (i_ < text_.size() && text_[i_] == ']') {
          return fail("trailing comma before ']' (expected another value)");
        }
        continue;
      }
      if (i_ < text_.size() && text_[i_] == ']') {
        advance();
        return true;
      }
      return fail("unexpected " + describe_here() + " (expected ',' or ']')");
    }
  }

  static void append_utf8(std::string& s, std::uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(std::uint32_t& cp) {
    cp = 0;
    for (int k = 0; k < 4; ++k) {
      if (i_ >= text_.size()) return fail("unexpected end of file in a \\u escape (expected 4 hex digits)");
      const char c = text_[i_];
      int v = -1;
      if (c >= '0' && c <= '9') v = c - '0';
      if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
      if (v < 0) return fail("unexpected " + describe_here() + " in a \\u escape (expected 4 hex digits)");
      cp = cp * 16 + static_cast<std::uint32_t>(v);
      advance();
    }
    return true;
  }

  bool parse_string(std::string& out) {
    advance();  // opening quote
    while (true) {
      if (i_ >= text_.size()) return fail("unexpected end of file in a string (expected a closing '\"')");
      const char c = text_[i_];
      if (c == '"') {
        advance();
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return fail("unexpected " + describe_here() + " in a string (expected an escape such as \\n)");
      }
      if (c != '\\') {
        out += c;
        advance();
        continue;
      }
      advance();  // backslash
      if (i_ >= text_.size()) return fail("unexpected end of file in a string (expected an escape character)");
      const char e = text_[i_];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          advance();
          std::uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(i_, 2) != "\\u") return fail("lone UTF-16 high surrogate (expected a \\u low surrogate)");
            advance();
            advance();
            std::uint32_t low = 0;
            if (!hex4(low)) return false;
            if (low < 0xDC00 || low > 0xDFFF) return fail("invalid UTF-16 low surrogate (expected \\uDC00-\\uDFFF)");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return fail("lone UTF-16 low surrogate (expected a high surrogate first)");
          }
          append_utf8(out, cp);
          continue;  // hex4 already advanced past the digits
        }
        default:
          return fail("invalid escape " + describe_here() + " (expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
      }
      advance();
    }
  }

  bool digits() {
    const std::size_t start = i_;
    while (i_ < text_.size() && text_[i_] >= '0' && text_[i_] <= '9') advance();
    return i_ > start;
  }

  bool parse_number(std::string& out) {
    const std::size_t start = i_;
    if (text_[i_] == '-') advance();
    if (i_ < text_.size() && text_[i_] == '0') {
      advance();
    } else if (!digits()) {
      return fail("unexpected " + describe_here() + " in a number (expected a digit)");
    }
    if (i_ < text_.size() && text_[i_] == '.') {
      advance();
      if (!digits()) return fail("unexpected " + describe_here() + " in a number (expected a digit after '.')");
    }
    if (i_ < text_.size() && (text_[i_] == 'e' || text_[i_] == 'E')) {
      advance();
      if (i_ < text_.size() && (text_[i_] == '+' || text_[i_] == '-')) advance();
      if (!digits()) return fail("unexpected " + describe_here() + " in a number (expected an exponent)");
    }
    out.assign(text_.substr(start, i_ - start));
    return true;
  }

  std::string_view text_;
  int max_depth_;
  std::size_t i_ = 0;
  int line_ = 1;
  int column_ = 0;  // 0-based while reading
  std::string error_;
  SourcePos error_pos_;
};

}  // namespace

JsonReadResult read_json(std::string_view text, int max_depth) { return Reader(text, max_depth).run(); }

std::string_view describe(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::object:
      return "an object";
    case JsonValue::Kind::array:
      return "an array";
    case JsonValue::Kind::string:
      return "a string";
    case JsonValue::Kind::number:
      return "a number";
    case JsonValue::Kind::boolean:
      return "a boolean";
    case JsonValue::Kind::null:
      return "null";
  }
  return "a value";
}

}  // namespace traincast::io::detail
