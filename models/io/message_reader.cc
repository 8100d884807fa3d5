#include "models/io/message_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include "models/io/enum_numbers.h"
#include "models/io/int_ranges.h"
#include "models/io/suggest.h"

namespace traincast::io::detail {
namespace pb = google::protobuf;

namespace {

/// Nesting limit for both parsers: far above the schema's depth (4), far below a stack overflow.
constexpr int kRecursionLimit = 100;

/// At most this many parse errors are reported per document (then one line saying how many more
/// there were), so that a hostile or wholly wrong file cannot make a huge message.
constexpr std::size_t kMaxErrors = 100;

std::string more_errors_line(std::string_view origin, std::size_t more) {
  return std::string(origin) + ": " + std::to_string(more) + " more error" + (more == 1 ? "" : "s") +
         " not shown (fix the ones above first)";
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string join_path(std::string_view parent, std::string_view name) {
  if (parent.empty()) return std::string(name);
  std::string out(parent);
  out += '.';
  out += name;
  return out;
}

/// `"text"`. Built piecewise: GCC 12 warns falsely (-Wrestrict) on "\"" + std::string.
std::string quote(std::string_view text) {
  std::string out(1, '"');
  out += text;
  out += '"';
  return out;
}

SourcePos from_zero_based(int line, int column) { return {line + 1, column + 1}; }

// ------------------------------------------------------------------------------------------------
// Text format
// ------------------------------------------------------------------------------------------------

/// The diagnostic add_number_diagnostics records for a number literal a double cannot hold.
constexpr std::string_view kOverflowMessage = "Number out of range as written";
/// The diagnostic add_number_diagnostics records for an integer literal with a leading zero.
constexpr std::string_view kOctalMessage = "Octal literal";
/// Our diagnostic for a number written with a ',' in it ("160,000"): protobuf's text
/// format reads ',' as a field separator, so the digits after it became a field named "000".
constexpr std::string_view kThousandsMessage = "Thousands separator";
/// How protobuf's tokenizer (io/tokenizer.cc) begins its error for a byte >= 0x80 outside a string.
constexpr std::string_view kNonAsciiMessage = "Interpreting non ascii codepoint";

struct RawDiagnostic {
  int line = 0;  // 0-based, as protobuf gives them
  int column = 0;
  std::string message;
};

/// Keeps protobuf's errors and warnings (warnings are the unknown fields it skipped for us).
class Collector final : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    items.push_back({line, column, message});
  }
  void AddWarning(int line, pb::io::ColumnNumber column, const std::string& message) override {
    items.push_back({line, column, message});
  }
  std::vector<RawDiagnostic> items;
};

class QuietCollector final : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

/// protobuf's tokenizer over `text`, set up as TextFormat's parser reads (# comments, 1.5f,
/// 1e3x without a space, multi-line strings), errors dropped: the one way this file re-reads text.
class TextTokens {
 public:
  explicit TextTokens(std::string_view text)
      : input_(text.data(), static_cast<int>(std::min<std::size_t>(text.size(), std::numeric_limits<int>::max()))),
        tokenizer_(&input_, &quiet_) {
    tokenizer_.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
    tokenizer_.set_allow_f_after_float(true);
    tokenizer_.set_require_space_after_number(false);
    tokenizer_.set_allow_multiline_strings(true);
  }
  pb::io::Tokenizer& tokenizer() { return tokenizer_; }

 private:
  QuietCollector quiet_;
  pb::io::ArrayInputStream input_;
  pb::io::Tokenizer tokenizer_;
};

/// What was being parsed at an error position: the enclosing message's path, and the field whose
/// name was read last in it, with the first token of its value.
struct TextContext {
  std::string frame_path;
  bool has_field = false;
  std::string field_name;
  const pb::FieldDescriptor* field = nullptr;
  SourcePos name_pos;
  bool value_started = false;
  bool at_value = false;  // the error token is (part of) this field's value
  SourcePos value_pos;
  std::string value_text;
};

/// Re-tokenises the text following the nesting of the root message, to give protobuf's
/// position-only errors a field path. Forward-only: one pass over the text for all diagnostics
/// (sorted by position), so many errors in a large file cost linear time.
class TextScanner {
 public:
  TextScanner(std::string_view text, const pb::Descriptor* root) : tokens_(text), tokenizer_(tokens_.tokenizer()) {
    stack_.resize(1);
    stack_[0].type = root;
  }

  /// The context at (line0, col0), 0-based in protobuf's counting. Positions must not decrease
  /// from one call to the next.
  TextContext context_at(int line0, int col0) {
    while (true) {
      if (!has_token_) {
        if (!tokenizer_.Next()) break;  // end of input
        has_token_ = true;
      }
      const pb::io::Tokenizer::Token& token = tokenizer_.current();
      if (token.line > line0 || (token.line == line0 && token.column >= col0)) break;
      consume(token);
      has_token_ = false;
    }
    Frame f = stack_.back();  // a copy: the token at the error is looked at, not consumed
    bool at_value = false;
    if (has_token_ && (f.expecting_value || f.join_minus)) {
      const pb::io::Tokenizer::Token& token = tokenizer_.current();
      at_value = true;
      if (f.join_minus) {
        f.value_text += token.text;
      } else if (!f.value_started || f.in_list) {
        f.value_started = true;
        f.value_pos = from_zero_based(token.line, token.column);
        f.value_text = token.text;
      }
    }
    TextContext ctx;
    ctx.frame_path = f.path;
    ctx.has_field = f.has_field;
    ctx.field_name = f.field_name;
    ctx.field = f.field;
    ctx.name_pos = f.name_pos;
    ctx.value_started = f.value_started;
    ctx.at_value = at_value;
    ctx.value_pos = f.value_pos;
    ctx.value_text = f.value_text;
    return ctx;
  }

 private:
  struct Frame {
    const pb::Descriptor* type = nullptr;
    std::string path;
    std::map<const pb::FieldDescriptor*, int> counts;
    bool has_field = false;
    std::string field_name;
    const pb::FieldDescriptor* field = nullptr;
    SourcePos name_pos;
    bool expecting_value = false;
    bool in_list = false;
    bool in_bracket_name = false;
    bool value_started = false;
    bool join_minus = false;
    SourcePos value_pos;
    std::string value_text;
  };

  void consume(const pb::io::Tokenizer::Token& token) {
    Frame& f = stack_.back();
    const bool symbol = token.type == pb::io::Tokenizer::TYPE_SYMBOL;
    const std::string& t = token.text;
    if (f.join_minus) {
      f.value_text += t;
      f.join_minus = false;
      if (!f.in_list) f.expecting_value = false;
      return;
    }
    if (symbol && (t == "{" || t == "<")) {
      Frame child;
      if (f.has_field) {
        child.path = join_path(f.path, f.field_name);
        if (f.field != nullptr) {
          child.type = f.field->message_type();
          if (f.field->is_repeated()) child.path += "[" + std::to_string(f.counts[f.field]++) + "]";
        }
      } else {
        child.path = f.path;
      }
      if (!f.in_list) f.expecting_value = false;
      // Deeper than protobuf's own limit the parser has stopped anyway; do not grow further.
      if (stack_.size() <= static_cast<std::size_t>(kRecursionLimit) + 8) stack_.push_back(std::move(child));
      return;
    }
    if (symbol && (t == "}" || t == ">")) {
      if (stack_.size() > 1) stack_.pop_back();
      return;
    }
    if (symbol && t == "[") {
      if (f.expecting_value) {
        f.in_list = true;
      } else {
        f.in_bracket_name = true;  // [extension.name] or Any type URL
      }
      return;
    }
    if (symbol && t == "]") {
      if (f.in_list) {
        f.in_list = false;
        f.expecting_value = false;
      }
      f.in_bracket_name = false;
      return;
    }
    if (symbol && t == ":") {
      f.expecting_value = true;
      return;
    }
    if ((symbol && (t == "," || t == ";")) || f.in_bracket_name) return;
    if (f.expecting_value) {
      if (!f.value_started || f.in_list) {
        f.value_started = true;
        f.value_pos = from_zero_based(token.line, token.column);
        f.value_text = t;
      }
      if (symbol && t == "-") {
        f.join_minus = true;
      } else if (!f.in_list) {
        f.expecting_value = false;
      }
      return;
    }
    if (token.type == pb::io::Tokenizer::TYPE_IDENTIFIER) {
      f.has_field = true;
      f.field_name = t;
      f.field = f.type != nullptr ? f.type->FindFieldByName(t) : nullptr;
      f.name_pos = from_zero_based(token.line, token.column);
      f.value_started = false;
      f.value_text.clear();
      f.expecting_value = false;
      f.in_list = false;
    }
  }

  TextTokens tokens_;
  pb::io::Tokenizer& tokenizer_;
  bool has_token_ = false;
  std::vector<Frame> stack_;
};

/// The text between the first pair of double quotes at or after `from` in `message`.
std::string quoted(const std::string& message, std::size_t from) {
  const std::size_t open = message.find('"', from);
  if (open == std::string::npos) return {};
  const std::size_t close = message.find('"', open + 1);
  if (close == std::string::npos) return {};
  return message.substr(open + 1, close - open - 1);
}

/// "Expected X, found \"Y\"." / "Expected X, got: Y" -> "unexpected \"Y\" (expected X)".
std::string rewrite_generic(std::string message) {
  while (!message.empty() && (message.back() == '.' || message.back() == ' ')) message.pop_back();
  if (!starts_with(message, "Expected ")) {
    if (!message.empty()) message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
    return message;
  }
  std::size_t sep = message.find(", found ");
  std::size_t skip = 8;
  if (sep == std::string::npos) {
    sep = message.find(", got:");
    skip = 6;
  }
  if (sep == std::string::npos) {
    message[0] = 'e';
    return message;
  }
  const std::string expected = message.substr(9, sep - 9);
  std::string got = message.substr(sep + skip);
  while (!got.empty() && got.front() == ' ') got.erase(0, 1);
  if (got.size() >= 2 && got.front() == '"' && got.back() == '"') got = got.substr(1, got.size() - 2);
  const std::string shown = got.empty() ? std::string("end of file") : quote(clip(got));
  return "unexpected " + shown + " (expected " + expected + ")";
}

std::string map_text_diagnostic(const RawDiagnostic& d, TextScanner& scanner, const pb::Descriptor* root,
                                std::string_view origin) {
  const TextContext c = scanner.context_at(d.line, d.column);
  const SourcePos raw = from_zero_based(d.line, d.column);
  const std::string& m = d.message;
  const std::string field_path = join_path(c.frame_path, c.field_name);

  // Unknown field (reported as a warning because we let the parser skip it and go on).
  static constexpr std::string_view kNoField = "\" has no field named \"";
  if (starts_with(m, "Message type \"") && m.find(kNoField) != std::string::npos) {
    const std::size_t at = m.find(kNoField);
    const std::string type_name = m.substr(14, at - 14);
    const std::string name = quoted(m, at + kNoField.size() - 1);
    const pb::Descriptor* type = root->file()->pool()->FindMessageTypeByName(type_name);
    const SourcePos where = (c.has_field && c.field_name == name) ? c.name_pos : raw;
    const std::string like = did_you_mean(name, names_of(type));
    return format_pos(origin, where) + ": " + join_path(c.frame_path, name) + ": unknown field" + like +
           " (expected one of: " + field_list(type) + (like.empty() ? field_elsewhere(root, type, name) : "") + ")";
  }
  if (starts_with(m, "Non-repeated field \"") && c.has_field) {
    return format_pos(origin, c.name_pos) + ": " + field_path + ": specified more than once (expected a single value)";
  }
  if (starts_with(m, kNonAsciiMessage)) {
    return format_pos(origin, raw) + ": " + (c.frame_path.empty() ? "" : c.frame_path + ": ") +
           "non-ASCII character outside a quoted string (expected ASCII field names and values; other characters "
           "only inside \"...\" strings or # comments)";
  }
  if (m == kOverflowMessage) {
    // Only a real field reads such a literal silently; elsewhere protobuf's own error stands.
    if (!c.has_field || c.field == nullptr ||
        (c.field->cpp_type() != pb::FieldDescriptor::CPPTYPE_DOUBLE &&
         c.field->cpp_type() != pb::FieldDescriptor::CPPTYPE_FLOAT))
      return {};
    return format_pos(origin, raw) + ": " + field_path + ": " + clip(c.value_text) +
           " is out of range as written (expected " + std::string(kDoubleRangeExpected) + ")";
  }
  if (m == kThousandsMessage) {
    return format_pos(origin, raw) + ": " + (c.has_field ? field_path + ": " : std::string()) +
           "a ',' inside a number, as a thousands separator (expected the digits alone, e.g. 160000 or 1.6e5: in "
           "this format ',' separates fields)";
  }
  if (m == kOctalMessage) {
    // Only a numeric field reads such a literal silently; elsewhere protobuf's own error stands.
    if (!c.has_field || c.field == nullptr || c.field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE ||
        c.field->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING ||
        c.field->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL ||
        c.field->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM ||
        c.value_text.find_first_not_of('-') == std::string::npos)
      return {};
    return format_pos(origin, raw) + ": " + field_path + ": " + octal_literal_problem(c.value_text);
  }
  // Value errors: the field is known and scalar, and protobuf complains about its value.
  if (c.has_field && c.field != nullptr && c.field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE &&
      c.value_started) {
    bool value_error = false;
    if (starts_with(m, "Unknown enumeration value of \"") || starts_with(m, "Invalid value for boolean field \"")) {
      const std::size_t field_at = m.find("field \"");
      value_error = field_at != std::string::npos && quoted(m, field_at) == c.field_name;
    } else if (c.at_value || (raw.line == c.value_pos.line && raw.column == c.value_pos.column)) {
      for (std::string_view prefix : {"Expected integer", "Integer out of range", "Expected double", "Expected string",
                                      "Expected identifier", "Invalid float", "Couldn't parse"}) {
        value_error = value_error || starts_with(m, prefix);
      }
    }
    if (value_error) {
      std::string hint = value_suggestion(c.field, c.value_text);
      const std::string& v = c.value_text;
      if (c.field->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM && v.size() >= 2 && v.front() == '"' &&
          v.back() == '"') {
        const std::string bare = v.substr(1, v.size() - 2);  // enum names are identifiers, not strings
        hint = c.field->enum_type()->FindValueByName(bare) != nullptr ? ", did you mean " + bare + " (without quotes)?"
                                                                      : value_suggestion(c.field, bare);
      }
      return format_pos(origin, c.value_pos) + ": " + field_path + ": invalid value " + clip(v) + hint + " (expected " +
             expected_value(c.field, Format::text) + ")";
    }
  }
  std::string what = rewrite_generic(m);
  // The file ends inside a message: say which brace is missing, not which token protobuf wanted.
  if (what == "unexpected end of file (expected identifier)" && !c.frame_path.empty())
    what = "unexpected end of file (expected \"}\" to close " + c.frame_path + ")";
  // A string with no closing quote on its line (protobuf's tokenizer: "String literals cannot
  // cross line boundaries").
  if (starts_with(m, "String literals cannot cross line boundaries")) {
    return format_pos(origin, raw) + ": " +
           (c.has_field && c.name_pos.line == raw.line ? field_path + ": "
            : c.frame_path.empty()                     ? std::string()
                                                       : c.frame_path + ": ") +
           "string not closed on its line (expected a closing '\"' before the line end; \"\\n\" writes a line "
           "break inside a string)";
  }
  // A JSON document in a .textproto file: its first "{" is where protobuf's text parser stops.
  if (what == "unexpected \"{\" (expected identifier)" && c.frame_path.empty() && raw.line == 1 && raw.column == 1)
    what += "; the file looks like JSON: name it .json to read it as JSON";
  return format_pos(origin, raw) + ": " + (c.frame_path.empty() ? "" : c.frame_path + ": ") + what;
}

class TextSourceMap final : public SourceMap {
 public:
  TextSourceMap(std::unique_ptr<pb::TextFormat::ParseInfoTree> tree, std::string text)
      : tree_(std::move(tree)), text_(std::move(text)) {
    // Built here, not on first use: a sweep's threads locate in one base map at once.
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text_.size(); ++i)
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }

  SourcePos locate(const std::vector<PathStep>& path) const override {
    SourcePos best{1, 1};
    const pb::TextFormat::ParseInfoTree* tree = tree_.get();
    for (const PathStep& step : path) {
      if (tree == nullptr || step.field == nullptr) break;
      const bool is_message = step.field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE;
      if (step.field->is_repeated() && !is_message && step.index >= 0) {
        // An element of a repeated scalar: the parser records one location per written occurrence
        // ("f: 1 f: 2") but one for a whole list ("f: [1, 2]"); find the element's own token.
        // Without an index the path names the whole field: its first occurrence, below.
        const std::optional<SourcePos> element = scalar_element(*tree, step.field, step.index);
        if (element) best = *element;
        break;
      }
      // ParseInfoTree wants -1 for singular fields and an index for repeated ones.
      const int index = step.field->is_repeated() ? std::max(step.index, 0) : -1;
      const pb::TextFormat::ParseLocation loc = tree->GetLocation(step.field, index);
      if (loc.line < 0) break;
      best = from_zero_based(loc.line, loc.column);
      tree = is_message ? tree->GetTreeForNested(step.field, index) : nullptr;
    }
    return best;
  }

 private:
  /// Position of element `index` of the repeated scalar `field` written under `tree`: each
  /// recorded occurrence holds one value or a [list]; the list's elements are found by tokenizing
  /// from the field's name. nullopt when the field or the element was not written.
  std::optional<SourcePos> scalar_element(const pb::TextFormat::ParseInfoTree& tree, const pb::FieldDescriptor* field,
                                          int index) const {
    int seen = 0;
    for (int k = 0;; ++k) {
      const pb::TextFormat::ParseLocation loc = tree.GetLocation(field, k);
      if (loc.line < 0) return std::nullopt;
      const std::vector<SourcePos> elements = list_elements(loc.line, loc.column);
      if (elements.empty()) {  // "f: value": the occurrence is the element
        if (seen == index) return from_zero_based(loc.line, loc.column);
        ++seen;
        continue;
      }
      if (index < seen + static_cast<int>(elements.size())) return elements[static_cast<std::size_t>(index - seen)];
      seen += static_cast<int>(elements.size());
    }
  }

  /// The element positions of "name: [a, b, ...]" whose name starts at (line0, col0), 0-based;
  /// empty when the value is not a list (or line0 starts inside a multi-line string: the caller
  /// then names the field). Tokenizes from line0's start: from the top, a file of many `set`
  /// lists was quadratic (9.4 s for 216 cases).
  std::vector<SourcePos> list_elements(int line0, int col0) const {
    const std::size_t start = static_cast<std::size_t>(line0) < line_starts_.size() ? line_starts_[line0] : 0;
    TextTokens tokens(std::string_view(text_).substr(start));
    pb::io::Tokenizer& tok = tokens.tokenizer();  // its lines count from line0
    if (!tok.Next() || tok.current().line != 0 || tok.current().column > col0) return {};
    while (tok.current().column < col0 && tok.current().line == 0)
      if (!tok.Next()) return {};
    if (tok.current().line != 0 || tok.current().column != col0) return {};
    std::vector<SourcePos> out;
    if (!tok.Next()) return out;  // past the name
    if (tok.current().text == ":" && !tok.Next()) return out;
    if (tok.current().text != "[") return out;
    bool expect_element = true;
    while (tok.Next()) {
      const pb::io::Tokenizer::Token& t = tok.current();
      if (t.text == "]") break;
      if (t.text == ",") {
        expect_element = true;
      } else if (expect_element) {
        out.push_back(from_zero_based(t.line + line0, t.column));
        expect_element = false;
      }
    }
    return out;
  }

  std::unique_ptr<pb::TextFormat::ParseInfoTree> tree_;
  std::string text_;
  std::vector<std::size_t> line_starts_;  ///< byte offset of each line
};

/// Number literals protobuf's text parser reads as something other than what a reader sees:
/// - beyond a double's range (|x| > 1.8e308, e.g. 1e400, read as inf, or a nonzero magnitude below
///   2.2e-308, e.g. 1e-400 read as 0 or 1e-310 read as a subnormal), read without a word: one
///   kOverflowMessage diagnostic at
///   each (double_out_of_range), so that the value is refused as written rather than reported
///   later as "got inf", or taken as 0 where 0 is a valid value;
/// - an integer with a leading zero (`tp: 010`), read as octal (8) by protobuf's tokenizer
///   (C's rule; io/tokenizer.h ParseInteger): one kOctalMessage diagnostic at each. A literal with
///   an 8 or 9 is not octal and protobuf refuses it itself. A hexadecimal one (`num_nodes: 0x2`,
///   read as 2) gets the same diagnostic (octal_literal_problem words both).
void add_number_diagnostics(std::string_view text, std::vector<RawDiagnostic>& items) {
  TextTokens tokens(text);
  pb::io::Tokenizer& tok = tokens.tokenizer();
  // A number, ',' and digits with nothing between them, outside a [list] ("160,000", "1,28"): no
  // field name starts with a digit, so the text cannot mean two fields.
  int list_depth = 0;
  std::vector<pb::io::Tokenizer::Token> last;  // the last two tokens
  while (tok.Next()) {
    const pb::io::Tokenizer::Token& t = tok.current();
    if (t.text == "[") ++list_depth;
    if (t.text == "]") list_depth = std::max(0, list_depth - 1);
    if (list_depth == 0 && last.size() == 2 && t.type == pb::io::Tokenizer::TYPE_INTEGER && last[1].text == "," &&
        last[0].type == pb::io::Tokenizer::TYPE_INTEGER && last[0].line == t.line && last[1].line == t.line &&
        last[1].column == last[0].column + static_cast<int>(last[0].text.size()) && t.column == last[1].column + 1)
      items.push_back({last[0].line, last[0].column, std::string(kThousandsMessage)});
    last.push_back(t);
    if (last.size() > 2) last.erase(last.begin());
    if (t.type != pb::io::Tokenizer::TYPE_FLOAT && t.type != pb::io::Tokenizer::TYPE_INTEGER) continue;
    if (double_out_of_range(t.text)) items.push_back({t.line, t.column, std::string(kOverflowMessage)});
    if (t.type == pb::io::Tokenizer::TYPE_INTEGER && t.text.size() > 1 && t.text[0] == '0' &&
        (t.text.find_first_not_of("01234567") == std::string::npos || t.text[1] == 'x' || t.text[1] == 'X'))
      items.push_back({t.line, t.column, std::string(kOctalMessage)});
  }
}

ReadOutcome read_text(std::string_view text, std::string_view origin, pb::Message& message) {
  ReadOutcome out;
  Collector collector;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.AllowUnknownField(true);  // report every unknown field, not only the first
  parser.SetRecursionLimit(kRecursionLimit);
  auto tree = std::make_unique<pb::TextFormat::ParseInfoTree>();
  parser.WriteLocationsTo(tree.get());
  const bool ok = parser.ParseFromString(std::string(text), &message);
  add_number_diagnostics(text, collector.items);
  std::stable_sort(collector.items.begin(), collector.items.end(), [](const RawDiagnostic& a, const RawDiagnostic& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  // From a non-ASCII byte's line on, the token stream is broken: what protobuf says there but that
  // byte (the word it cut short, the stray byte) is its echo.
  const auto non_ascii = std::find_if(collector.items.begin(), collector.items.end(),
                                      [](const RawDiagnostic& d) { return starts_with(d.message, kNonAsciiMessage); });
  if (non_ascii != collector.items.end()) {
    const RawDiagnostic first = *non_ascii;
    collector.items.erase(std::remove_if(collector.items.begin(), collector.items.end(),
                                         [&](const RawDiagnostic& d) { return d.line >= first.line; }),
                          collector.items.end());
    collector.items.push_back(first);
  }
  // After a thousands separator the fields are misread ("000" a field name): its own line stands.
  const auto thousands = std::find_if(collector.items.begin(), collector.items.end(),
                                      [](const RawDiagnostic& d) { return d.message == kThousandsMessage; });
  if (thousands != collector.items.end()) {
    const int line = thousands->line;
    collector.items.erase(
        std::remove_if(collector.items.begin(), collector.items.end(),
                       [&](const RawDiagnostic& d) { return d.line >= line && d.message != kThousandsMessage; }),
        collector.items.end());
  }
  // A hexadecimal number in a floating-point field (`pue: 0x1`): protobuf refuses it itself
  // ("Expect a decimal number, got: 0x1"); our kOctalMessage at the same place says it better.
  std::set<std::pair<int, int>> non_decimal;  // (line, column) of each kOctalMessage
  for (const RawDiagnostic& d : collector.items)
    if (d.message == kOctalMessage) non_decimal.emplace(d.line, d.column);
  std::erase_if(collector.items, [&](const RawDiagnostic& d) {
    return starts_with(d.message, "Expect a decimal number") && non_decimal.count({d.line, d.column}) > 0;
  });
  TextScanner scanner(text, message.GetDescriptor());
  std::set<std::string> seen;
  std::size_t more = 0;
  for (const RawDiagnostic& d : collector.items) {
    if (out.errors.size() >= kMaxErrors) {
      ++more;
      continue;
    }
    std::string e = map_text_diagnostic(d, scanner, message.GetDescriptor(), origin);
    if (e.empty()) continue;
    if (seen.insert(e).second) out.errors.push_back(std::move(e));
  }
  if (more > 0) out.errors.push_back(more_errors_line(origin, more));
  if (!ok && out.errors.empty()) out.errors.push_back(format_pos(origin, {1, 1}) + ": could not parse the text");
  if (ok) enum_number_errors(message, *tree, text, origin, out.errors);
  out.source_map = std::make_unique<TextSourceMap>(std::move(tree), std::string(text));
  return out;
}

// ------------------------------------------------------------------------------------------------
// JSON
// ------------------------------------------------------------------------------------------------

const JsonMember* find_member(const JsonValue& object, const pb::FieldDescriptor* field) {
  const JsonMember* found = nullptr;
  for (const JsonMember& m : object.members) {
    if (m.key == field->name() || m.key == field->json_name()) found = &m;  // the last one wins
  }
  return found;
}

class JsonSourceMap final : public SourceMap {
 public:
  explicit JsonSourceMap(std::optional<JsonValue> root) : root_(std::move(root)) {}

  bool scalars_at_value() const override { return true; }

  SourcePos locate(const std::vector<PathStep>& path) const override {
    SourcePos best{1, 1};
    if (!root_) return best;
    const JsonValue* v = &*root_;
    for (std::size_t i = 0; i < path.size(); ++i) {
      const PathStep& step = path[i];
      if (v->kind != JsonValue::Kind::object || step.field == nullptr) break;
      const JsonMember* m = find_member(*v, step.field);
      if (m == nullptr) break;
      // A scalar field written is located at its value, where a type error is too (fresh user 42:
      // a range error pointed at the key, a type error at the value); a message at its key.
      const bool scalar = step.field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE;
      best = i + 1 == path.size() && scalar && !step.field->is_repeated() ? m->value.pos : m->key_pos;
      v = &m->value;
      if (step.field->is_repeated()) {
        const auto index = static_cast<std::size_t>(std::max(step.index, 0));
        if (v->kind != JsonValue::Kind::array || index >= v->items.size()) break;
        v = &v->items[index];
        best = v->pos;
      }
    }
    return best;
  }

 private:
  std::optional<JsonValue> root_;
};

/// Checks a parsed JSON document against a message type, collecting every error with its position.
class JsonChecker {
 public:
  JsonChecker(std::string_view origin, std::vector<std::string>& errors, const pb::Descriptor* root)
      : origin_(origin), errors_(errors), root_(root) {}

  void check_message(const JsonValue& object, const pb::Descriptor* type, const std::string& path) {
    std::set<int> seen;
    for (const JsonMember& m : object.members) {
      const pb::FieldDescriptor* field = type->FindFieldByName(m.key);
      for (int i = 0; field == nullptr && i < type->field_count(); ++i) {
        if (type->field(i)->json_name() == m.key) field = type->field(i);  // lowerCamel, as protobuf accepts
      }
      if (field == nullptr) {
        const std::string like = did_you_mean(m.key, names_of(type));
        error(m.key_pos, join_path(path, clip(m.key)),  // a key that is not UTF-8 not echoed raw
              "unknown field" + like + " (expected one of: " + field_list(type) +
                  (like.empty() ? field_elsewhere(root_, type, m.key) : "") + ")");
        continue;
      }
      const std::string field_path = join_path(path, field->name());
      if (!seen.insert(field->number()).second) {
        error(m.key_pos, field_path, "specified more than once (expected a single value)");
        continue;
      }
      if (m.value.kind == JsonValue::Kind::null) {
        // proto3 JSON reads null as "not set", which would take the default without a word (and a
        // later check could then blame another field): refused here, at the null itself.
        const std::string want = field->is_repeated() ? "an array of " + expected_value(field, Format::json)
                                                      : expected_value(field, Format::json);
        error(m.value.pos, field_path,
              "null is not accepted (expected " + want + "; leave the field out to take its default)");
        continue;
      }
      if (field->is_repeated()) {
        if (m.value.kind != JsonValue::Kind::array) {
          error(
              m.value.pos, field_path,
              "invalid value " + show(m.value) + " (expected an array of " + expected_value(field, Format::json) + ")");
          continue;
        }
        for (std::size_t i = 0; i < m.value.items.size(); ++i) {
          check_value(m.value.items[i], field, field_path + "[" + std::to_string(i) + "]");
        }
      } else {
        check_value(m.value, field, field_path);
      }
    }
  }

 private:
  void check_value(const JsonValue& v, const pb::FieldDescriptor* field, const std::string& path) {
    using K = JsonValue::Kind;
    using F = pb::FieldDescriptor;
    bool ok = false;
    switch (field->cpp_type()) {
      case F::CPPTYPE_MESSAGE:
        if (v.kind == K::object) {
          check_message(v, field->message_type(), path);
          return;
        }
        break;
      // A 32-bit integer is a number, as in text format (`tp: "2"` is refused there); a 64-bit one
      // may be a string too, the form proto3 JSON writes it in (`--print-scenario --json` does).
      case F::CPPTYPE_INT32:
        ok = v.kind == K::number && integer_in_range<std::int32_t>(v.text);
        break;
      case F::CPPTYPE_INT64:
        ok = (v.kind == K::number || v.kind == K::string) && integer_in_range<std::int64_t>(v.text);
        break;
      case F::CPPTYPE_UINT32:
        ok = v.kind == K::number && v.text[0] != '-' && integer_in_range<std::uint32_t>(v.text);
        break;
      case F::CPPTYPE_UINT64:
        ok =
            (v.kind == K::number || v.kind == K::string) && v.text[0] != '-' && integer_in_range<std::uint64_t>(v.text);
        break;
      case F::CPPTYPE_DOUBLE:
      case F::CPPTYPE_FLOAT:
        if (v.kind == K::number) {
          ok = !double_out_of_range(v.text);
        } else if (v.kind == K::string) {
          ok = v.text == "NaN" || v.text == "Infinity" || v.text == "-Infinity";
        }
        break;
      case F::CPPTYPE_BOOL:
        ok = v.kind == K::boolean;
        break;
      case F::CPPTYPE_STRING:
        ok = v.kind == K::string;
        // As the text format's string checks say it (scenario_checks.cc), and without echoing
        // the bytes to the terminal; protobuf's own parser says "Encountered non UTF-8 code
        // points" at 1:1 with no field.
        if (ok && !valid_utf8(v.text)) {
          error(v.pos, path, "is not valid UTF-8 (expected UTF-8 text)");
          return;
        }
        break;
      case F::CPPTYPE_ENUM:
        // Names only (README: enums are strings): the numbers are the schema's internals, and a
        // number read silently would pick whatever value happens to carry it.
        ok = v.kind == K::string && field->enum_type()->FindValueByName(v.text) != nullptr;
        break;
    }
    if (!ok) {
      std::string hint = v.kind == K::string ? value_suggestion(field, v.text) : std::string();
      if (field->cpp_type() == F::CPPTYPE_ENUM && v.kind == K::number) hint = ": a number is not accepted for a name";
      if ((field->cpp_type() == F::CPPTYPE_DOUBLE || field->cpp_type() == F::CPPTYPE_FLOAT) && v.kind == K::number &&
          double_out_of_range(v.text)) {
        error(v.pos, path,
              clip(v.text) + " is out of range as written (expected " + std::string(kDoubleRangeExpected) + ")");
        return;
      }
      error(v.pos, path, "invalid value " + show(v) + hint + " (expected " + expected_value(field, Format::json) + ")");
    }
  }

  static std::string show(const JsonValue& v) {
    switch (v.kind) {
      case JsonValue::Kind::object:
        return "{...}";
      case JsonValue::Kind::array:
        return "[...]";
      case JsonValue::Kind::string:
        return quote(clip(v.text));
      case JsonValue::Kind::null:
        return "null";
      default:
        return clip(v.text);
    }
  }

  void error(SourcePos pos, const std::string& path, const std::string& what) {
    if (errors_.size() >= kMaxErrors) {
      ++suppressed_;
      return;
    }
    errors_.push_back(format_pos(origin_, pos) + ": " + path + ": " + what);
  }

 public:
  /// Errors found beyond kMaxErrors (not recorded).
  std::size_t suppressed() const { return suppressed_; }

 private:
  std::size_t suppressed_ = 0;

  std::string_view origin_;
  std::vector<std::string>& errors_;
  const pb::Descriptor* root_;
};

ReadOutcome read_json_message(std::string_view text, std::string_view origin, pb::Message& message) {
  ReadOutcome out;
  JsonReadResult parsed = read_json(text, kRecursionLimit);
  if (!parsed.value) {
    out.errors.push_back(format_pos(origin, parsed.error_pos) + ": " + parsed.error);
    out.source_map = std::make_unique<JsonSourceMap>(std::nullopt);
    return out;
  }
  if (parsed.value->kind != JsonValue::Kind::object) {
    out.errors.push_back(format_pos(origin, parsed.value->pos) + ": invalid document " +
                         std::string(describe(parsed.value->kind)) + " (expected an object { ... })");
    out.source_map = std::make_unique<JsonSourceMap>(std::nullopt);
    return out;
  }
  JsonChecker checker(origin, out.errors, message.GetDescriptor());
  checker.check_message(*parsed.value, message.GetDescriptor(), "");
  if (checker.suppressed() > 0) out.errors.push_back(more_errors_line(origin, checker.suppressed()));
  out.source_map = std::make_unique<JsonSourceMap>(std::move(parsed.value));
  if (!out.errors.empty()) return out;

  // The checker found nothing wrong, so protobuf's parser should agree; if it does not, report its
  // message at the field it names.
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = pb::util::JsonStringToMessage(pb::StringPiece(text.data(), text.size()), &message, options);
  if (!status.ok()) {
    std::string what(status.message());
    std::string path;
    if (starts_with(what, "(")) {
      const std::size_t close = what.find(')');
      if (close != std::string::npos) {
        path = what.substr(1, close - 1);
        what = what.substr(close + 1);
        while (!what.empty() && (what[0] == ':' || what[0] == ' ')) what.erase(0, 1);
      }
    }
    std::vector<PathStep> steps;
    SourcePos pos{1, 1};
    if (!path.empty() && resolve_path(message.GetDescriptor(), path, steps, nullptr))
      pos = out.source_map->locate(steps);
    out.errors.push_back(format_pos(origin, pos) + ": " + (path.empty() ? "" : path + ": ") + what);
  }
  return out;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Public helpers
// ------------------------------------------------------------------------------------------------

ReadOutcome read_message(std::string_view text, std::string_view origin, Format format, pb::Message& message) {
  // A UTF-8 byte-order mark (as some Windows editors write) is not part of the document, and
  // editors do not count it as a column.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return format == Format::json ? read_json_message(text, origin, message) : read_text(text, origin, message);
}

bool resolve_path(const pb::Descriptor* root, std::string_view path, std::vector<PathStep>& steps, std::string* why) {
  steps.clear();
  const pb::Descriptor* type = root;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    std::string_view segment = path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    int index = -1;
    if (const std::size_t open = segment.find('['); open != std::string_view::npos) {
      const std::string_view digits = segment.substr(open + 1, segment.size() - open - 2);
      if (segment.back() != ']' || digits.empty() || !integer_in_range<int>(digits) || digits[0] == '-') {
        if (why) *why = "bad index in \"" + std::string(segment) + "\"";
        return false;
      }
      index = std::stoi(std::string(digits));
      segment = segment.substr(0, open);
    }
    if (type == nullptr) {
      if (why) *why = "\"" + std::string(segment) + "\" is inside a field that is not a message";
      return false;
    }
    const pb::FieldDescriptor* field = type->FindFieldByName(std::string(segment));
    if (field == nullptr) {
      if (why) *why = "unknown field \"" + std::string(segment) + "\"";
      return false;
    }
    if (index >= 0 && !field->is_repeated()) {
      if (why) *why = "\"" + std::string(segment) + "\" is not repeated";
      return false;
    }
    steps.push_back({field, index});
    type = field->message_type();
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string format_pos(std::string_view origin, SourcePos pos) {
  return std::string(origin) + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column);
}

}  // namespace traincast::io::detail
