// Enum fields written as a number (enum_numbers.h).

#include "models/io/enum_numbers.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "models/io/message_reader.h"

namespace traincast::io::detail {
namespace pb = google::protobuf;

namespace {

class Quiet final : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

/// The byte offset of each line of `text`.
std::vector<std::size_t> line_starts(std::string_view text) {
  std::vector<std::size_t> out{0};
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') out.push_back(i + 1);
  return out;
}

/// The value of "name: value" whose name starts at (line0, col0), 0-based as the parser counts,
/// when it is a number ("9", "-1", "0x1f"): its 1-based position and text; nullopt otherwise.
std::optional<std::pair<SourcePos, std::string>> numeric_value(std::string_view text,
                                                               const std::vector<std::size_t>& starts, int line0,
                                                               int col0) {
  const std::size_t start = static_cast<std::size_t>(line0) < starts.size() ? starts[line0] : 0;
  const std::string_view rest = text.substr(start);
  pb::io::ArrayInputStream input(rest.data(),
                                 static_cast<int>(std::min<std::size_t>(rest.size(), std::numeric_limits<int>::max())));
  Quiet quiet;
  pb::io::Tokenizer tok(&input, &quiet);  // set up as TextFormat's parser reads (message_reader.cc)
  tok.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
  tok.set_allow_f_after_float(true);
  tok.set_require_space_after_number(false);
  tok.set_allow_multiline_strings(true);
  // Its lines count from line0: the name is on its line 0 at col0.
  while (tok.Next()) {
    const pb::io::Tokenizer::Token& t = tok.current();
    if (t.line != 0 || t.column > col0) return std::nullopt;
    if (t.column == col0) break;
  }
  if (tok.current().line != 0 || tok.current().column != col0) return std::nullopt;
  if (!tok.Next() || tok.current().text != ":" || !tok.Next()) return std::nullopt;  // past the name and ':'
  const SourcePos at{tok.current().line + line0 + 1, tok.current().column + 1};
  std::string value = tok.current().text;
  if (value == "-") {
    if (!tok.Next()) return std::nullopt;
    value += tok.current().text;
  }
  const pb::io::Tokenizer::TokenType type = tok.current().type;
  if (type != pb::io::Tokenizer::TYPE_INTEGER && type != pb::io::Tokenizer::TYPE_FLOAT) return std::nullopt;
  return std::make_pair(at, value);
}

void under(const pb::Message& m, const pb::TextFormat::ParseInfoTree* tree, const std::string& path,
           std::string_view text, const std::vector<std::size_t>& starts, std::string_view origin,
           std::vector<std::string>& errors) {
  if (tree == nullptr) return;
  const pb::Reflection* r = m.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const pb::FieldDescriptor* field : fields) {
    const std::string here = path.empty() ? field->name() : path + "." + field->name();
    if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!field->is_repeated()) {
        under(r->GetMessage(m, field), tree->GetTreeForNested(field, -1), here, text, starts, origin, errors);
        continue;
      }
      for (int i = 0; i < r->FieldSize(m, field); ++i) {
        under(r->GetRepeatedMessage(m, field, i), tree->GetTreeForNested(field, i),
              here + "[" + std::to_string(i) + "]", text, starts, origin, errors);
      }
      continue;
    }
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_ENUM || field->is_repeated()) continue;
    const pb::TextFormat::ParseLocation loc = tree->GetLocation(field, -1);
    if (loc.line < 0) continue;  // set by no text of its own
    const auto number = numeric_value(text, starts, loc.line, loc.column);
    if (!number) continue;
    errors.push_back(format_pos(origin, number->first) + ": " + here + ": invalid value " + clip(number->second) +
                     " (expected " + expected_value(field, Format::text) + ")");
  }
}

}  // namespace

void enum_number_errors(const pb::Message& message, const pb::TextFormat::ParseInfoTree& tree, std::string_view text,
                        std::string_view origin, std::vector<std::string>& errors) {
  under(message, &tree, "", text, line_starts(text), origin, errors);
}

}  // namespace traincast::io::detail
