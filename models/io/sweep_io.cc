#include "models/io/sweep_io.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_map>

#include <google/protobuf/text_format.h>

#include "models/executor/training_executor.h"
#include "models/hardware/catalog.h"
#include "models/io/file_kind.h"
#include "models/io/int_ranges.h"
#include "models/io/message_reader.h"
#include "models/io/overrides.h"
#include "traincast.pb.h"

namespace traincast::io {

namespace pb = google::protobuf;
namespace tp = traincast::proto;
using detail::clip;
using detail::PathStep;

// ================================================================================================
// Expressions
// ================================================================================================

namespace {

/// Nesting limit of parentheses and unary operators (far above any real constraint).
constexpr int kMaxExpressionDepth = 64;

/// `line` without its line end ("\n" or "\r\n"): quoted, the end would show as "?" (clip).
std::string_view without_eol(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

std::string in_quotes(std::string_view text) {
  std::string out(1, '"');
  out += text;
  out += '"';
  return out;
}

std::string_view type_name(ExprType t) {
  switch (t) {
    case ExprType::number:
      return "a number";
    case ExprType::boolean:
      return "a boolean";
    case ExprType::string:
      return "a string";
  }
  return "a value";
}

struct Token {
  enum class Kind { end, number, string, name, op, lparen, rparen };
  Kind kind = Kind::end;
  std::string text;  // as written (string: the contents)
  double number = 0.0;
  int column = 0;
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::end:
      return "end of expression";
    case Token::Kind::string:
      return "string " + in_quotes(clip(t.text));
    default:
      return in_quotes(clip(t.text));
  }
}

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const int column = static_cast<int>(i) + 1;
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) != 0 ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) != 0)) {
      std::size_t j = i;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) != 0) ++j;
      if (j < s.size() && s[j] == '.') {
        ++j;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) != 0) ++j;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        std::size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])) != 0) {
          while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])) != 0) ++k;
          j = k;
        }
      }
      if (j < s.size() && (is_name_char(s[j]) || s[j] == '.')) {
        throw ExpressionError(static_cast<int>(j) + 1, "unexpected " + in_quotes(std::string(1, s[j])) +
                                                           " after number " + in_quotes(s.substr(i, j - i)) +
                                                           " (expected an operator between a number and a name)");
      }
      Token t{Token::Kind::number, std::string(s.substr(i, j - i)), 0.0, column};
      t.number = std::strtod(t.text.c_str(), nullptr);
      if (!std::isfinite(t.number)) {
        throw ExpressionError(column,
                              "number " + in_quotes(clip(t.text)) + " is out of range (expected a finite number)");
      }
      out.push_back(std::move(t));
      i = j;
      continue;
    }
    if (is_name_start(c)) {
      std::size_t j = i;
      while (true) {
        while (j < s.size() && is_name_char(s[j])) ++j;
        if (j < s.size() && s[j] == '.') {
          if (j + 1 < s.size() && is_name_start(s[j + 1])) {
            ++j;
            continue;
          }
          throw ExpressionError(
              static_cast<int>(j) + 2,
              "unexpected " +
                  (j + 1 < s.size() ? in_quotes(std::string(1, s[j + 1])) : std::string("end of expression")) +
                  " after " + in_quotes(s.substr(i, j + 1 - i)) + " (expected a field name after the dot)");
        }
        break;
      }
      out.push_back({Token::Kind::name, std::string(s.substr(i, j - i)), 0.0, column});
      i = j;
      continue;
    }
    if (c == '"' || c == '\'') {
      const std::size_t close = s.find(c, i + 1);
      if (close == std::string_view::npos) {
        throw ExpressionError(column, "unterminated string (expected a closing " + std::string(1, c) + ")");
      }
      out.push_back({Token::Kind::string, std::string(s.substr(i + 1, close - i - 1)), 0.0, column});
      i = close + 1;
      continue;
    }
    if (c == '(' || c == ')') {
      out.push_back({c == '(' ? Token::Kind::lparen : Token::Kind::rparen, std::string(1, c), 0.0, column});
      ++i;
      continue;
    }
    const std::string_view two = s.substr(i, 2);
    if (two == "==" || two == "!=" || two == "<=" || two == ">=" || two == "&&" || two == "||") {
      out.push_back({Token::Kind::op, std::string(two), 0.0, column});
      i += 2;
      continue;
    }
    if (c == '=') throw ExpressionError(column, "unexpected \"=\" (expected \"==\" to compare)");
    if (c == '&') throw ExpressionError(column, "unexpected \"&\" (expected \"&&\")");
    if (c == '|') throw ExpressionError(column, "unexpected \"|\" (expected \"||\")");
    if (std::string_view("+-*/%<>!").find(c) != std::string_view::npos) {
      out.push_back({Token::Kind::op, std::string(1, c), 0.0, column});
      ++i;
      continue;
    }
    throw ExpressionError(column, "unexpected character " + in_quotes(clip(std::string_view(&s[i], 1))) +
                                      " (expected numbers, names, quoted strings, operators + - * / % == != < <= > "
                                      ">= && || ! and parentheses)");
  }
  out.push_back({Token::Kind::end, "", 0.0, static_cast<int>(s.size()) + 1});
  return out;
}

}  // namespace

/// Recursive descent over the token list (grammar in sweep_io.h).
class ExpressionParser {
 public:
  ExpressionParser(Expression& e, std::vector<Token> tokens) : e_(e), tokens_(std::move(tokens)) {}

  void parse() {
    parse_or();
    const Token& t = peek();
    if (t.kind == Token::Kind::rparen) {
      throw ExpressionError(t.column, "unexpected \")\" (expected an operator or the end: no \"(\" is open)");
    }
    if (t.kind != Token::Kind::end) {
      throw ExpressionError(t.column, "unexpected " + describe(t) + " (expected an operator or the end)");
    }
  }

 private:
  using Op = Expression::Node::Op;

  const Token& peek() const { return tokens_[pos_]; }
  const Token& take() { return tokens_[pos_++]; }
  bool at_op(std::string_view op) const { return peek().kind == Token::Kind::op && peek().text == op; }

  int add(Expression::Node n) {
    e_.nodes_.push_back(std::move(n));
    return static_cast<int>(e_.nodes_.size()) - 1;
  }
  int binary(Op op, const Token& t, int lhs, int rhs) {
    Expression::Node n;
    n.op = op;
    n.lhs = lhs;
    n.rhs = rhs;
    n.text = t.text;
    n.column = t.column;
    return add(std::move(n));
  }

  struct Depth {
    explicit Depth(ExpressionParser& p, int column) : p_(p) {
      if (++p_.depth_ > kMaxExpressionDepth) {
        throw ExpressionError(column, "nested too deeply (expected at most " + std::to_string(kMaxExpressionDepth) +
                                          " levels of parentheses and unary operators)");
      }
    }
    ~Depth() { --p_.depth_; }
    ExpressionParser& p_;
  };

  int parse_or() {
    int lhs = parse_and();
    while (at_op("||")) {
      const Token& t = take();
      lhs = binary(Op::logical_or, t, lhs, parse_and());
    }
    return lhs;
  }
  int parse_and() {
    int lhs = parse_cmp();
    while (at_op("&&")) {
      const Token& t = take();
      lhs = binary(Op::logical_and, t, lhs, parse_cmp());
    }
    return lhs;
  }
  static bool comparison(const Token& t, Op& op) {
    if (t.kind != Token::Kind::op) return false;
    static const std::pair<std::string_view, Op> ops[] = {{"==", Op::eq}, {"!=", Op::ne}, {"<", Op::lt},
                                                          {"<=", Op::le}, {">", Op::gt},  {">=", Op::ge}};
    for (const auto& [text, o] : ops) {
      if (t.text == text) {
        op = o;
        return true;
      }
    }
    return false;
  }
  int parse_cmp() {
    const int lhs = parse_sum();
    Op op{};
    if (!comparison(peek(), op)) return lhs;
    const Token& t = take();
    const int result = binary(op, t, lhs, parse_sum());
    Op again{};
    if (comparison(peek(), again)) {
      throw ExpressionError(peek().column, in_quotes(peek().text) + " cannot follow the comparison " +
                                               in_quotes(t.text) +
                                               " (expected && or || between comparisons: they do not chain)");
    }
    return result;
  }
  int parse_sum() {
    int lhs = parse_prod();
    while (at_op("+") || at_op("-")) {
      const Token& t = take();
      lhs = binary(t.text == "+" ? Op::add : Op::sub, t, lhs, parse_prod());
    }
    return lhs;
  }
  int parse_prod() {
    int lhs = parse_unary();
    while (at_op("*") || at_op("/") || at_op("%")) {
      const Token& t = take();
      const Op op = t.text == "*" ? Op::mul : t.text == "/" ? Op::div : Op::mod;
      lhs = binary(op, t, lhs, parse_unary());
    }
    return lhs;
  }
  int parse_unary() {
    if (at_op("-") || at_op("!")) {
      const Token& t = take();
      const Depth depth(*this, t.column);
      Expression::Node n;
      n.op = t.text == "-" ? Op::neg : Op::logical_not;
      n.text = t.text;
      n.column = t.column;
      n.lhs = parse_unary();
      return add(std::move(n));
    }
    return parse_atom();
  }
  int parse_atom() {
    const Token& t = take();
    Expression::Node n;
    n.column = t.column;
    n.text = t.text;
    switch (t.kind) {
      case Token::Kind::number:
        n.op = Op::number;
        n.number = t.number;
        return add(std::move(n));
      case Token::Kind::string:
        n.op = Op::string;
        return add(std::move(n));
      case Token::Kind::name: {
        if (t.text == "true" || t.text == "false") {
          n.op = Op::boolean;
          n.boolean = t.text == "true";
          return add(std::move(n));
        }
        n.op = Op::name;
        const auto it = std::find(e_.names_.begin(), e_.names_.end(), t.text);
        if (it == e_.names_.end()) {
          e_.names_.push_back(t.text);
          e_.name_columns_.push_back(t.column);
          n.slot = static_cast<int>(e_.names_.size()) - 1;
        } else {
          n.slot = static_cast<int>(it - e_.names_.begin());
        }
        return add(std::move(n));
      }
      case Token::Kind::lparen: {
        const Depth depth(*this, t.column);
        const int inner = parse_or();
        const Token& close = peek();
        if (close.kind != Token::Kind::rparen) {
          throw ExpressionError(close.column, "unexpected " + describe(close) +
                                                  " (expected \")\" to close the \"(\" at "
                                                  "column " +
                                                  std::to_string(t.column) + ")");
        }
        take();
        return inner;
      }
      default:
        throw ExpressionError(t.column,
                              "unexpected " + describe(t) + " (expected a number, a name, a quoted string or \"(\")");
    }
  }

  Expression& e_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

Expression Expression::parse(std::string_view text) {
  Expression e;
  e.text_ = std::string(text);
  ExpressionParser parser(e, tokenize(text));
  parser.parse();
  return e;
}

ExprType Expression::check(const std::vector<ExprNameInfo>& infos) const {
  if (infos.size() != names_.size()) throw std::invalid_argument("Expression::check: one info per name needed");
  return check_node(static_cast<int>(nodes_.size()) - 1, infos);
}

ExprType Expression::check_node(int index, const std::vector<ExprNameInfo>& infos) const {
  const Node& n = nodes_[static_cast<std::size_t>(index)];
  auto both = [&](ExprType want, std::string_view what) {
    const ExprType a = check_node(n.lhs, infos);
    const ExprType b = check_node(n.rhs, infos);
    if (a != want || b != want) {
      throw ExpressionError(n.column, in_quotes(n.text) + " needs two " + std::string(what) + ", got " +
                                          std::string(type_name(a)) + " and " + std::string(type_name(b)));
    }
  };
  switch (n.op) {
    case Node::Op::number:
      return ExprType::number;
    case Node::Op::string:
      return ExprType::string;
    case Node::Op::boolean:
      return ExprType::boolean;
    case Node::Op::name:
      return infos[static_cast<std::size_t>(n.slot)].type;
    case Node::Op::neg:
    case Node::Op::logical_not: {
      const ExprType want = n.op == Node::Op::neg ? ExprType::number : ExprType::boolean;
      const ExprType got = check_node(n.lhs, infos);
      if (got != want) {
        throw ExpressionError(n.column, in_quotes(n.text) + " needs " + std::string(type_name(want)) + ", got " +
                                            std::string(type_name(got)));
      }
      return want;
    }
    case Node::Op::add:
    case Node::Op::sub:
    case Node::Op::mul:
    case Node::Op::div:
    case Node::Op::mod:
      both(ExprType::number, "numbers");
      return ExprType::number;
    case Node::Op::lt:
    case Node::Op::le:
    case Node::Op::gt:
    case Node::Op::ge:
      both(ExprType::number, "numbers");
      return ExprType::boolean;
    case Node::Op::logical_and:
    case Node::Op::logical_or:
      both(ExprType::boolean, "booleans (comparisons)");
      return ExprType::boolean;
    case Node::Op::eq:
    case Node::Op::ne: {
      const ExprType a = check_node(n.lhs, infos);
      const ExprType b = check_node(n.rhs, infos);
      if (a != b) {
        throw ExpressionError(n.column, in_quotes(n.text) + " compares values of one type, got " +
                                            std::string(type_name(a)) + " and " + std::string(type_name(b)));
      }
      // A string literal compared with an enum name must be one of its values.
      const Node& l = nodes_[static_cast<std::size_t>(n.lhs)];
      const Node& r = nodes_[static_cast<std::size_t>(n.rhs)];
      for (const auto& [name, literal] : {std::pair{&l, &r}, std::pair{&r, &l}}) {
        if (name->op != Node::Op::name || literal->op != Node::Op::string) continue;
        const std::vector<std::string>& allowed = infos[static_cast<std::size_t>(name->slot)].allowed;
        if (allowed.empty() || std::find(allowed.begin(), allowed.end(), literal->text) != allowed.end()) continue;
        std::string list;
        for (const std::string& v : allowed) list += (list.empty() ? "" : ", ") + v;
        throw ExpressionError(literal->column, in_quotes(clip(literal->text)) + " is not a value of " + name->text +
                                                   detail::did_you_mean(literal->text, allowed) +
                                                   " (expected one of: " + list + ")");
      }
      return ExprType::boolean;
    }
  }
  return ExprType::number;
}

ExprValue Expression::evaluate(const std::vector<ExprValue>& values) const {
  if (values.size() != names_.size()) throw std::invalid_argument("Expression::evaluate: one value per name needed");
  return eval_node(static_cast<int>(nodes_.size()) - 1, values);
}

ExprValue Expression::eval_node(int index, const std::vector<ExprValue>& values) const {
  const Node& n = nodes_[static_cast<std::size_t>(index)];
  auto num = [&](int child) { return eval_node(child, values).number; };
  switch (n.op) {
    case Node::Op::number:
      return ExprValue::of_number(n.number);
    case Node::Op::string:
      return ExprValue::of_string(n.text);
    case Node::Op::boolean:
      return ExprValue::of_bool(n.boolean);
    case Node::Op::name:
      return values[static_cast<std::size_t>(n.slot)];
    case Node::Op::neg:
      return ExprValue::of_number(-num(n.lhs));
    case Node::Op::logical_not:
      return ExprValue::of_bool(!eval_node(n.lhs, values).boolean);
    case Node::Op::add:
      return ExprValue::of_number(num(n.lhs) + num(n.rhs));
    case Node::Op::sub:
      return ExprValue::of_number(num(n.lhs) - num(n.rhs));
    case Node::Op::mul:
      return ExprValue::of_number(num(n.lhs) * num(n.rhs));
    case Node::Op::div: {
      const double a = num(n.lhs);
      const double b = num(n.rhs);
      if (b == 0.0) throw ExpressionError(n.column, "division by zero (expected a non-zero divisor)");
      return ExprValue::of_number(a / b);
    }
    case Node::Op::mod: {
      const double a = num(n.lhs);
      const double b = num(n.rhs);
      constexpr double kExact = 9007199254740992.0;  // 2^53: doubles hold every integer below it
      for (const double v : {a, b}) {
        if (v != std::trunc(v) || std::fabs(v) > kExact) {
          std::ostringstream s;
          s << v;
          throw ExpressionError(n.column, "\"%\" needs integers, got " + s.str() + " (expected whole numbers)");
        }
      }
      if (b == 0.0) throw ExpressionError(n.column, "remainder by zero (expected a non-zero divisor)");
      return ExprValue::of_number(std::fmod(a, b));
    }
    case Node::Op::lt:
      return ExprValue::of_bool(num(n.lhs) < num(n.rhs));
    case Node::Op::le:
      return ExprValue::of_bool(num(n.lhs) <= num(n.rhs));
    case Node::Op::gt:
      return ExprValue::of_bool(num(n.lhs) > num(n.rhs));
    case Node::Op::ge:
      return ExprValue::of_bool(num(n.lhs) >= num(n.rhs));
    case Node::Op::eq:
      return ExprValue::of_bool(eval_node(n.lhs, values) == eval_node(n.rhs, values));
    case Node::Op::ne:
      return ExprValue::of_bool(!(eval_node(n.lhs, values) == eval_node(n.rhs, values)));
    case Node::Op::logical_and:
      return ExprValue::of_bool(eval_node(n.lhs, values).boolean && eval_node(n.rhs, values).boolean);
    case Node::Op::logical_or:
      return ExprValue::of_bool(eval_node(n.lhs, values).boolean || eval_node(n.rhs, values).boolean);
  }
  return ExprValue::of_number(0.0);
}

// ================================================================================================
// Sweep files
// ================================================================================================

namespace {

/// Sweep files and their base scenarios are refused above this size (a sweep is a few kB).
constexpr std::size_t kMaxInputBytes = 64u << 20;
/// Points of the cartesian product, before constraints, at most (each costs a constraint check).
constexpr std::uint64_t kMaxProductPoints = 10'000'000;
/// Values one range may generate.
constexpr std::size_t kMaxRangeValues = 100'000;
/// Origin of the base scenario's own messages when a point is loaded (stripped from reasons).
constexpr std::string_view kPointOrigin = "<sweep point>";

/// Shortest decimal text that reads back as exactly `v` ("0.1", "1e+20", "3").
std::string shortest(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

/// Positions of fields in the sweep file.
class Where {
 public:
  Where(const pb::Message& message, const detail::SourceMap& map, std::string_view origin)
      : message_(message), map_(map), origin_(origin) {}
  /// "origin:line:col" of the field at `path` (or of its deepest written ancestor).
  std::string at(const std::string& path) const {
    std::vector<PathStep> steps;
    if (!detail::resolve_path(message_.GetDescriptor(), path, steps, nullptr)) {
      return detail::format_pos(origin_, {1, 1});
    }
    return detail::format_pos(origin_, map_.locate(steps));
  }

 private:
  const pb::Message& message_;
  const detail::SourceMap& map_;
  std::string_view origin_;
};

/// A scalar field of the scenario reachable from the root through singular messages.
struct ScalarField {
  std::string path;                               // "workload.parallel.tp"
  std::vector<const pb::FieldDescriptor*> chain;  // messages down to the field itself
  const pb::FieldDescriptor* field() const { return chain.back(); }
};

void collect_scalars(const pb::Descriptor* type, const std::string& prefix,
                     std::vector<const pb::FieldDescriptor*>& chain, std::vector<ScalarField>& out) {
  for (int i = 0; i < type->field_count(); ++i) {
    const pb::FieldDescriptor* f = type->field(i);
    if (f->is_repeated()) continue;
    chain.push_back(f);
    const std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      collect_scalars(f->message_type(), path, chain, out);
    } else {
      out.push_back({path, chain});
    }
    chain.pop_back();
  }
}

const std::vector<ScalarField>& scenario_scalars() {
  static const std::vector<ScalarField> fields = [] {
    std::vector<ScalarField> out;
    std::vector<const pb::FieldDescriptor*> chain;
    collect_scalars(tp::Scenario::descriptor(), "", chain, out);
    return out;
  }();
  return fields;
}

const ScalarField* find_scalar(std::string_view path) {
  for (const ScalarField& f : scenario_scalars()) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

ExprType expr_type_of(const pb::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return ExprType::boolean;
    case pb::FieldDescriptor::CPPTYPE_ENUM:
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return ExprType::string;
    default:
      return ExprType::number;
  }
}

bool is_numeric(const pb::FieldDescriptor* f) { return expr_type_of(f) == ExprType::number; }

bool is_integer(const pb::FieldDescriptor* f) {
  using F = pb::FieldDescriptor;
  const auto t = f->cpp_type();
  return t == F::CPPTYPE_INT32 || t == F::CPPTYPE_INT64 || t == F::CPPTYPE_UINT32 || t == F::CPPTYPE_UINT64;
}

ExprNameInfo name_info_of(const pb::FieldDescriptor* f) {
  ExprNameInfo info;
  info.type = expr_type_of(f);
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM) {
    for (int i = 0; i < f->enum_type()->value_count(); ++i) info.allowed.push_back(f->enum_type()->value(i)->name());
  }
  return info;
}

/// The value of scalar `f` in `m` (present or not).
ExprValue scalar_value(const pb::Message& m, const pb::FieldDescriptor* f) {
  const pb::Reflection* r = m.GetReflection();
  using F = pb::FieldDescriptor;
  switch (f->cpp_type()) {
    case F::CPPTYPE_INT32:
      return ExprValue::of_number(r->GetInt32(m, f));
    case F::CPPTYPE_INT64:
      return ExprValue::of_number(static_cast<double>(r->GetInt64(m, f)));
    case F::CPPTYPE_UINT32:
      return ExprValue::of_number(r->GetUInt32(m, f));
    case F::CPPTYPE_UINT64:
      return ExprValue::of_number(static_cast<double>(r->GetUInt64(m, f)));
    case F::CPPTYPE_DOUBLE:
      return ExprValue::of_number(r->GetDouble(m, f));
    case F::CPPTYPE_FLOAT:
      return ExprValue::of_number(r->GetFloat(m, f));
    case F::CPPTYPE_BOOL:
      return ExprValue::of_bool(r->GetBool(m, f));
    case F::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* v = f->enum_type()->FindValueByNumber(r->GetEnumValue(m, f));
      return ExprValue::of_string(v != nullptr ? v->name() : std::to_string(r->GetEnumValue(m, f)));
    }
    case F::CPPTYPE_STRING:
      return ExprValue::of_string(r->GetString(m, f));
    case F::CPPTYPE_MESSAGE:
      break;
  }
  return ExprValue::of_number(0.0);
}

/// The value at `field` in `root` when written there (every message on the way present and the
/// scalar set); nullopt otherwise.
std::optional<ExprValue> written_value(const pb::Message& root, const ScalarField& field) {
  const pb::Message* m = &root;
  for (std::size_t i = 0; i + 1 < field.chain.size(); ++i) {
    if (!m->GetReflection()->HasField(*m, field.chain[i])) return std::nullopt;
    m = &m->GetReflection()->GetMessage(*m, field.chain[i]);
  }
  if (!m->GetReflection()->HasField(*m, field.field())) return std::nullopt;
  return scalar_value(*m, field.field());
}

/// Every field of the scenario set to the default of models/scenario.h (the value a field
/// not written takes).
const tp::Scenario& scenario_defaults() {
  static const tp::Scenario defaults = [] {
    tp::Scenario m;
    pb::TextFormat::ParseFromString(scenario_to_text(models::Scenario{}), &m);
    return m;
  }();
  return defaults;
}

/// The point's value of a field: written in the base, else the default.
ExprValue base_value(const tp::Scenario& base, const ScalarField& field) {
  if (auto v = written_value(base, field)) return *v;
  return *written_value(scenario_defaults(), field);
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_name_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), is_name_char);
}

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

/// 64-bit FNV-1a (Fowler/Noll/Vo), as 16 hex digits: a stable content fingerprint, not a
/// cryptographic hash.
std::string fnv1a_hex(std::string_view data) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

/// One axis while loading.
struct AxisBuild {
  models::SweepAxis axis;
  const ScalarField* field = nullptr;
  std::vector<ExprValue> typed;  // the values as the field reads them
};

/// Where a constraint name's value comes from.
struct NameSource {
  enum class Kind { axis, constant, gpus, gpus_per_node } kind = Kind::constant;
  std::size_t axis = 0;
  ExprValue constant;
};

/// Why a constraint failed to evaluate at a point.
struct EvalFailure {
  std::size_t constraint = 0;
  std::string message;
};

class SweepLoader {
 public:
  SweepLoader(const tp::Sweep& message, const Where& where, std::string_view origin, std::string base_dir)
      : m_(message), where_(where), origin_(origin), base_dir_(std::move(base_dir)) {}

  models::Sweep load() {
    load_base();
    apply_sets();
    check_metrics();
    check_axes();
    if (!errors_.empty()) throw ScenarioError(std::move(errors_));
    check_constraints();
    if (!errors_.empty()) throw ScenarioError(std::move(errors_));
    expand();
    if (!errors_.empty()) throw ScenarioError(std::move(errors_));

    sweep_.name = m_.name();
    sweep_.description = m_.description();
    pb::TextFormat::PrintToString(base_, &sweep_.base_text);
    for (const AxisBuild& a : axes_) sweep_.axes.push_back(a.axis);
    for (int i = 0; i < m_.constraint_size(); ++i) sweep_.constraints.push_back(m_.constraint(i));
    // The fingerprint: everything that decides the points and the CSV columns.
    std::string canonical = "traincast sweep v1\n" + sweep_.base_text;
    for (const models::SweepAxis& a : sweep_.axes) {
      canonical += "axis " + a.name + " " + a.path + "\n";
      for (const std::string& v : a.values) canonical += "  " + v + "\n";
    }
    for (const std::string& c : sweep_.constraints) canonical += "constraint " + c + "\n";
    for (const std::string& metric : sweep_.metrics) canonical += "metric " + metric + "\n";
    canonical += "points " + std::to_string(sweep_.num_points()) + "\n";
    sweep_.hash = fnv1a_hex(canonical);
    return std::move(sweep_);
  }

 private:
  void error(const std::string& path, const std::string& what) {
    errors_.push_back(where_.at(path) + ": " + path + ": " + what);
  }

  void load_base() {
    const bool has_file = m_.has_scenario_file();
    if (has_file && m_.has_scenario()) {
      error("scenario",
            "given together with scenario_file (expected one base: scenario_file: \"path\" or "
            "scenario { ... })");
      return;
    }
    if (m_.has_scenario()) {
      base_ = m_.scenario();
      return;
    }
    if (!has_file) {
      error("scenario_file",
            "not set (expected a base scenario: scenario_file: \"path relative to the sweep "
            "file\" or scenario { ... })");
      return;
    }
    if (m_.scenario_file().empty()) {
      error("scenario_file", "is empty (expected a scenario file path relative to the sweep file)");
      return;
    }
    const std::string path = base_dir_.empty()
                                 ? m_.scenario_file()
                                 : (std::filesystem::path(base_dir_) / m_.scenario_file()).lexically_normal().string();
    std::string text;
    Format format = Format::text;
    try {
      format = format_for_path(path);
      text = read_input_file(path);
    } catch (const ScenarioError& e) {
      error("scenario_file", e.what());
      return;
    }
    if (text.size() > kMaxInputBytes) {
      error("scenario_file", path + ": input too large (" + std::to_string(text.size()) + " bytes; expected at most " +
                                 std::to_string(kMaxInputBytes) + ")");
      return;
    }
    detail::ReadOutcome read = detail::read_message(text, path, format, base_);
    errors_.insert(errors_.end(), read.errors.begin(), read.errors.end());
  }

  void apply_sets() {
    std::vector<detail::Override> overrides;
    for (int j = 0; j < m_.set_size(); ++j) {
      overrides.push_back({m_.set(j), where_.at("set[" + std::to_string(j) + "]")});
    }
    std::map<std::string, std::string> origins;
    detail::apply_overrides(base_, overrides, errors_, origins);
  }

  void check_metrics() {
    const std::vector<std::string>& known = sweep_metric_names();
    if (m_.metric_size() == 0) {
      sweep_.metrics = default_sweep_metrics();
      return;
    }
    for (int i = 0; i < m_.metric_size(); ++i) {
      const std::string& name = m_.metric(i);
      const std::string at = "metric[" + std::to_string(i) + "]";
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        error(at, "unknown metric " + in_quotes(clip(name)) + detail::did_you_mean(name, known) +
                      " (expected one of: " + join(known) + ")");
      } else if (std::find(sweep_.metrics.begin(), sweep_.metrics.end(), name) != sweep_.metrics.end()) {
        error(at, in_quotes(name) + " is listed twice (expected each metric once)");
      } else {
        sweep_.metrics.push_back(name);
      }
    }
  }

  /// Resolves an axis path to a scalar field; reports why not.
  const ScalarField* resolve_axis_path(const std::string& at, const std::string& path) {
    const pb::Descriptor* type = tp::Scenario::descriptor();
    std::string walked;
    std::size_t start = 0;
    while (true) {
      const std::size_t dot = path.find('.', start);
      const std::string segment = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (type == nullptr) {
        error(at, walked + " is not a message, it has no field " + in_quotes(clip(segment)) +
                      " (expected a path to a scalar field of the scenario, e.g. workload.parallel.tp)");
        return nullptr;
      }
      const pb::FieldDescriptor* f = type->FindFieldByName(segment);
      std::vector<std::string> names;
      for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
      if (f == nullptr) {
        error(at, "unknown field " + in_quotes(clip(segment)) + (walked.empty() ? "" : " in " + walked) +
                      detail::did_you_mean(segment, names) + " (expected one of: " + detail::field_list(type) + ")");
        return nullptr;
      }
      walked = walked.empty() ? segment : walked + "." + segment;
      type = f->message_type();
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (type != nullptr) {
      error(at, walked + " is a message, not a scalar field (expected a path to one of its fields: " +
                    detail::field_list(type) + ")");
      return nullptr;
    }
    return find_scalar(walked);
  }

  /// Checks one value for the axis field: reports and returns false when the field cannot take it.
  bool typed_value(const std::string& at, const ScalarField& field, const std::string& value, ExprValue& out,
                   const std::string& what) {
    tp::Scenario scratch;
    std::vector<std::string> problems;
    std::map<std::string, std::string> origins;
    detail::apply_overrides(scratch, {{field.path + "=" + value, "x"}}, problems, origins);
    if (!problems.empty()) {
      error(at, what + " " + in_quotes(clip(value)) + " is not valid for " + field.path +
                    detail::value_suggestion(field.field(), value) + " (expected " +
                    detail::expected_value(field.field(), Format::text) + ")");
      return false;
    }
    out = *written_value(scratch, field);
    // An integer the type holds but the field does not take (tp 0): refused here, at the axis,
    // with the words the scenario check would use (int_ranges.h), rather than at every point.
    if (is_integer(field.field())) {
      const detail::IntRange r = detail::int_range(field.field());
      if (out.number < static_cast<double>(r.minimum) || out.number > static_cast<double>(r.maximum)) {
        error(at, what + " " + in_quotes(clip(value)) + " is not valid for " + field.path + " (expected " +
                      detail::expected_value(field.field(), Format::text) + ")");
        return false;
      }
    }
    return true;
  }

  /// Values of a range on a numeric field, formatted as --set reads them.
  bool range_values(const std::string& at, const tp::Sweep::Axis& a, const ScalarField& field,
                    std::vector<std::string>& out) {
    const bool log2 = a.has_log2_range();
    const std::string r = at + (log2 ? ".log2_range" : ".range");
    if (!is_numeric(field.field())) {
      const auto t = field.field()->cpp_type();
      const std::string kind = t == pb::FieldDescriptor::CPPTYPE_ENUM   ? "an enum"
                               : t == pb::FieldDescriptor::CPPTYPE_BOOL ? "a boolean"
                                                                        : "a string";
      error(r, field.path + " is " + kind + " field, not a number (expected values: \"...\" for it)");
      return false;
    }
    const bool has_from = log2 ? a.log2_range().has_from() : a.range().has_from();
    const bool has_to = log2 ? a.log2_range().has_to() : a.range().has_to();
    const double from = log2 ? a.log2_range().from() : a.range().from();
    const double to = log2 ? a.log2_range().to() : a.range().to();
    const double step = log2 ? 2.0 : (a.range().has_step() ? a.range().step() : 1.0);
    bool ok = true;
    if (!has_from || !std::isfinite(from) || (log2 && from <= 0)) {
      error(r + ".from", (has_from ? "got " + shortest(from) : std::string("not set")) +
                             (log2 ? " (expected a finite number > 0)" : " (expected a finite number)"));
      ok = false;
    }
    if (!has_to || !std::isfinite(to)) {
      error(r + ".to", (has_to ? "got " + shortest(to) : std::string("not set")) + " (expected a finite number)");
      ok = false;
    } else if (ok && to < from) {
      error(r + ".to", "got " + shortest(to) + ", below from = " + shortest(from) + " (expected a number >= from)");
      ok = false;
    }
    if (!log2 && !(std::isfinite(step) && step > 0)) {
      error(r + ".step", "got " + shortest(step) + " (expected a finite number > 0)");
      ok = false;
    }
    if (!ok) return false;
    const double count_d =
        log2 ? std::floor(std::log2(to / from) + 1e-9) + 1 : std::floor((to - from) / step + 1e-9) + 1;
    if (count_d > static_cast<double>(kMaxRangeValues)) {
      error(r, shortest(count_d) + " values (expected at most " + std::to_string(kMaxRangeValues) + ")");
      return false;
    }
    const auto count = static_cast<std::size_t>(count_d);
    for (std::size_t k = 0; k < count; ++k) {
      const double v = log2 ? from * std::ldexp(1.0, static_cast<int>(k)) : from + static_cast<double>(k) * step;
      if (is_integer(field.field())) {
        const double rounded = std::round(v);
        if (std::fabs(v - rounded) > 1e-9 * std::max(1.0, std::fabs(v))) {
          error(r, "value " + shortest(v) + " is not an integer, as " + field.path + " needs (expected " +
                       detail::expected_value(field.field(), Format::text) + ")");
          return false;
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", rounded);
        out.push_back(buf);
      } else {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.12g", v);  // drop the last bits of accumulated rounding
        out.push_back(buf);
      }
    }
    return true;
  }

  void check_axes() {
    if (m_.axis_size() == 0) {
      error("axis", "no axes (expected at least one axis { path: \"field.path\" values: \"...\" })");
      return;
    }
    static const std::set<std::string> reserved_columns = {"point", "status", "reason"};
    static const std::set<std::string> derived = {"gpus", "gpus_per_node", "true", "false"};
    std::uint64_t product = 1;
    bool product_ok = true;
    for (int i = 0; i < m_.axis_size(); ++i) {
      const tp::Sweep::Axis& a = m_.axis(i);
      const std::string at = "axis[" + std::to_string(i) + "]";
      AxisBuild build;
      build.axis.path = a.path();
      bool ok = true;
      if (!a.has_path() || a.path().empty()) {
        error(at + ".path", std::string(a.has_path() ? "is empty" : "not set") +
                                " (expected a scalar field path of the scenario, e.g. workload.parallel.tp)");
        ok = false;
      } else {
        build.field = resolve_axis_path(at + ".path", a.path());
        ok = build.field != nullptr;
        if (ok) {
          for (std::size_t j = 0; j < axes_.size(); ++j) {
            if (axes_[j].field == build.field) {
              error(at + ".path", a.path() + " is already swept by axis[" + std::to_string(j) +
                                      "] (expected each field in one axis)");
              ok = false;
            }
          }
        }
      }
      // Name.
      build.axis.name = a.has_name() ? a.name() : a.path().substr(a.path().rfind('.') + 1);
      const std::string name_at = at + (a.has_name() ? ".name" : ".path");
      if (a.has_name() && !is_identifier(a.name())) {
        error(at + ".name",
              in_quotes(clip(a.name())) + " is not a name (expected letters, digits and _, not starting with a digit)");
        ok = false;
      } else if (!build.axis.name.empty()) {
        const std::string& n = build.axis.name;
        const std::vector<std::string>& metrics = sweep_metric_names();
        if (reserved_columns.count(n) != 0 || std::find(metrics.begin(), metrics.end(), n) != metrics.end()) {
          error(name_at, "axis name " + in_quotes(n) +
                             " is also a CSV column of its own (expected another name: set "
                             "name: \"...\")");
          ok = false;
        } else if (derived.count(n) != 0) {
          error(name_at, "axis name " + in_quotes(n) +
                             " is reserved in constraints (expected another name: set "
                             "name: \"...\")");
          ok = false;
        } else {
          for (std::size_t j = 0; j < axes_.size(); ++j) {
            if (axes_[j].axis.name == n) {
              error(name_at, "axis name " + in_quotes(n) + " is used by axis[" + std::to_string(j) +
                                 "] (expected a unique name: set name: \"...\")");
              ok = false;
            }
          }
        }
      }
      // Values.
      const int kinds = (a.values_size() > 0 ? 1 : 0) + (a.has_range() ? 1 : 0) + (a.has_log2_range() ? 1 : 0);
      if (kinds == 0) {
        error(at,
              "no values (expected values: \"...\", range { from: ... to: ... step: ... } or "
              "log2_range { from: ... to: ... })");
        ok = false;
      } else if (kinds > 1) {
        const std::string second = a.has_range() && a.values_size() > 0 ? "range" : "log2_range";
        error(at + "." + second, "given together with " + std::string(a.values_size() > 0 ? "values" : "range") +
                                     " (expected exactly one of values, range, log2_range)");
        ok = false;
      } else if (build.field != nullptr) {
        std::vector<std::string> raw;
        std::vector<std::string> where;
        if (a.values_size() > 0) {
          for (int j = 0; j < a.values_size(); ++j) {
            raw.push_back(a.values(j));
            where.push_back(at + ".values[" + std::to_string(j) + "]");
          }
        } else {
          if (!range_values(at, a, *build.field, raw)) ok = false;
          where.assign(raw.size(), at + (a.has_range() ? ".range" : ".log2_range"));
        }
        for (std::size_t j = 0; j < raw.size() && ok; ++j) {
          ExprValue v;
          if (!typed_value(where[j], *build.field, raw[j], v, "value")) {
            ok = false;
            continue;
          }
          const auto dup = std::find(build.typed.begin(), build.typed.end(), v);
          if (dup != build.typed.end()) {
            const auto first = static_cast<std::size_t>(dup - build.typed.begin());
            error(where[j], "value " + in_quotes(clip(raw[j])) + " repeats " +
                                (a.values_size() > 0 ? "values[" + std::to_string(first) + "]"
                                                     : "the value " + in_quotes(raw[first])) +
                                " (expected distinct values)");
            ok = false;
            continue;
          }
          build.typed.push_back(std::move(v));
          build.axis.values.push_back(raw[j]);
        }
      }
      if (ok && product_ok) {
        product *= build.axis.values.size();
        if (product > kMaxProductPoints) {
          error("axis", "the axes make more than " + std::to_string(kMaxProductPoints) +
                            " points before constraints (expected fewer values, or several sweeps)");
          product_ok = false;
        }
      }
      axes_.push_back(std::move(build));
    }
    sweep_.product_size = product;
  }

  /// Resolves a constraint name; on failure reports and returns false.
  bool resolve_name(const std::string& at, const Expression& e, std::size_t i, NameSource& source, ExprNameInfo& info) {
    const std::string& name = e.names()[i];
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      if (axes_[a].axis.name == name) {
        source = {NameSource::Kind::axis, a, {}};
        info = name_info_of(axes_[a].field->field());
        return true;
      }
    }
    if (name == "gpus" || name == "gpus_per_node") {
      source.kind = name == "gpus" ? NameSource::Kind::gpus : NameSource::Kind::gpus_per_node;
      info = {ExprType::number, {}};
      return true;
    }
    const ScalarField* field = nullptr;
    if (name.find('.') != std::string::npos) {
      field = find_scalar(name);
    } else {
      std::vector<const ScalarField*> matches;
      for (const ScalarField& f : scenario_scalars()) {
        if (f.field()->name() == name) matches.push_back(&f);
      }
      if (matches.size() > 1) {
        std::vector<std::string> paths;
        for (const ScalarField* f : matches) paths.push_back(f->path);
        error(at, "at column " + std::to_string(e.name_column(i)) + " of " + in_quotes(clip(e.text())) + ": name " +
                      in_quotes(name) + " is ambiguous (expected the full path: " + join(paths, " or ") + ")");
        return false;
      }
      if (matches.size() == 1) field = matches[0];
    }
    if (field == nullptr) {
      std::vector<std::string> candidates = {"gpus", "gpus_per_node"};
      std::vector<std::string> axis_names;
      for (const AxisBuild& a : axes_) axis_names.push_back(a.axis.name);
      candidates.insert(candidates.end(), axis_names.begin(), axis_names.end());
      for (const ScalarField& f : scenario_scalars()) {
        candidates.push_back(name.find('.') != std::string::npos ? f.path : f.field()->name());
      }
      error(at, "at column " + std::to_string(e.name_column(i)) + " of " + in_quotes(clip(e.text())) +
                    ": unknown name " + in_quotes(clip(name)) + detail::did_you_mean(name, candidates) +
                    " (expected an axis name (" + join(axis_names) +
                    "), gpus, gpus_per_node, or a scenario field such as num_attention_heads or "
                    "workload.model.num_layers)");
      return false;
    }
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      if (axes_[a].field == field) {
        source = {NameSource::Kind::axis, a, {}};
        info = name_info_of(field->field());
        return true;
      }
    }
    source = {NameSource::Kind::constant, 0, base_value(base_, *field)};
    info = name_info_of(field->field());
    return true;
  }

  void check_constraints() {
    for (int i = 0; i < m_.constraint_size(); ++i) {
      const std::string at = "constraint[" + std::to_string(i) + "]";
      const std::string& text = m_.constraint(i);
      std::optional<Expression> e;
      try {
        e = Expression::parse(text);
      } catch (const ExpressionError& x) {
        error(at, "at column " + std::to_string(x.column()) + " of " + in_quotes(clip(text)) + ": " + x.what());
        continue;
      }
      std::vector<NameSource> sources(e->names().size());
      std::vector<ExprNameInfo> infos(e->names().size());
      bool ok = true;
      for (std::size_t n = 0; n < e->names().size(); ++n) ok = resolve_name(at, *e, n, sources[n], infos[n]) && ok;
      if (!ok) continue;
      try {
        const ExprType type = e->check(infos);
        if (type != ExprType::boolean) {
          error(at, in_quotes(clip(text)) + " is " + std::string(type_name(type)) +
                        ", not a condition (expected a comparison such as tp * pp == 8)");
          continue;
        }
      } catch (const ExpressionError& x) {
        error(at, "at column " + std::to_string(x.column()) + " of " + in_quotes(clip(text)) + ": " + x.what());
        continue;
      }
      constraints_.push_back(std::move(*e));
      sources_.push_back(std::move(sources));
    }
  }

  /// The point's value of a field: from its axis, else the base.
  struct FieldAt {
    int axis = -1;
    ExprValue constant;
  };
  FieldAt field_source(const std::string& path) const {
    const ScalarField* f = find_scalar(path);
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      if (axes_[a].field == f) return {static_cast<int>(a), {}};
    }
    return {-1, base_value(base_, *f)};
  }
  const ExprValue& value_at(const FieldAt& f, const std::vector<std::uint32_t>& idx) const {
    return f.axis < 0 ? f.constant
                      : axes_[static_cast<std::size_t>(f.axis)].typed[idx[static_cast<std::size_t>(f.axis)]];
  }

  double gpus_per_node_at(const std::vector<std::uint32_t>& idx, int column) {
    const std::string& name = value_at(template_, idx).text;
    if (const auto it = gpus_per_node_.find(name); it != gpus_per_node_.end()) return it->second;
    try {
      return gpus_per_node_[name] = models::find_node_template(name).gpus_per_node;
    } catch (const std::exception&) {
      throw ExpressionError(column, "node template " + in_quotes(clip(name)) +
                                        " is unknown (expected one of: " + join(models::node_template_names()) + ")");
    }
  }

  std::string describe_point(const std::vector<std::uint32_t>& idx) const {
    std::string out;
    for (std::size_t a = 0; a < axes_.size(); ++a) {
      out += (a == 0 ? "" : ", ") + axes_[a].axis.name + "=" + axes_[a].axis.values[idx[a]];
    }
    return out;
  }

  void expand() {
    nodes_ = field_source("cluster.num_nodes");
    template_ = field_source("cluster.node_template");
    const std::size_t n_axes = axes_.size();
    std::vector<std::uint32_t> idx(n_axes, 0);
    std::vector<std::uint64_t> passed(constraints_.size(), 0);
    std::vector<std::vector<ExprValue>> values(constraints_.size());
    for (std::size_t c = 0; c < constraints_.size(); ++c) values[c].resize(constraints_[c].names().size());
    for (std::uint64_t p = 0; p < sweep_.product_size; ++p) {
      bool keep = true;
      for (std::size_t c = 0; c < constraints_.size() && keep; ++c) {
        const Expression& e = constraints_[c];
        try {
          for (std::size_t n = 0; n < values[c].size(); ++n) {
            const NameSource& s = sources_[c][n];
            switch (s.kind) {
              case NameSource::Kind::axis:
                values[c][n] = axes_[s.axis].typed[idx[s.axis]];
                break;
              case NameSource::Kind::constant:
                values[c][n] = s.constant;
                break;
              case NameSource::Kind::gpus:
                values[c][n] =
                    ExprValue::of_number(value_at(nodes_, idx).number * gpus_per_node_at(idx, e.name_column(n)));
                break;
              case NameSource::Kind::gpus_per_node:
                values[c][n] = ExprValue::of_number(gpus_per_node_at(idx, e.name_column(n)));
                break;
            }
          }
          keep = e.evaluate(values[c]).boolean;
        } catch (const ExpressionError& x) {
          error("constraint[" + std::to_string(c) + "]", "at column " + std::to_string(x.column()) + " of " +
                                                             in_quotes(clip(e.text())) + ", for " +
                                                             describe_point(idx) + ": " + x.what());
          return;
        }
        if (keep) ++passed[c];
      }
      if (keep) sweep_.value_indices.insert(sweep_.value_indices.end(), idx.begin(), idx.end());
      // Next tuple: the last axis varies fastest.
      for (std::size_t a = n_axes; a-- > 0;) {
        if (++idx[a] < axes_[a].axis.values.size()) break;
        idx[a] = 0;
      }
    }
    if (!sweep_.value_indices.empty()) return;
    for (std::size_t c = 0; c < constraints_.size(); ++c) {
      if (passed[c] != 0) continue;
      const std::uint64_t before = c == 0 ? sweep_.product_size : passed[c - 1];
      error("constraint[" + std::to_string(c) + "]",
            "no point satisfies " + in_quotes(clip(constraints_[c].text())) + ": it rejects all " +
                std::to_string(before) + " points" +
                (c == 0 ? std::string(" of the axes") : " that pass the constraints before it") +
                " (expected a constraint that some point satisfies)");
      return;
    }
  }

  const tp::Sweep& m_;
  const Where& where_;
  std::string_view origin_;
  std::string base_dir_;
  std::vector<std::string> errors_;
  tp::Scenario base_;
  std::vector<AxisBuild> axes_;
  std::vector<Expression> constraints_;
  std::vector<std::vector<NameSource>> sources_;
  FieldAt nodes_;
  FieldAt template_;
  std::map<std::string, double> gpus_per_node_;
  models::Sweep sweep_;
};

}  // namespace

models::Sweep load_sweep_text(std::string_view text, std::string_view origin, Format format,
                              const std::string& base_dir) {
  if (text.size() > kMaxInputBytes) {
    throw ScenarioError({std::string(origin) + ": input too large (" + std::to_string(text.size()) +
                         " bytes; expected at most " + std::to_string(kMaxInputBytes) + ")"});
  }
  tp::Sweep message;
  detail::ReadOutcome read = detail::read_message(text, origin, format, message);
  if (!read.errors.empty()) {
    if (auto other = detail::wrong_kind_message(text, origin, format, message.GetDescriptor()))
      throw ScenarioError({*other});
    throw ScenarioError(std::move(read.errors));
  }
  const Where where(message, *read.source_map, origin);
  models::Sweep sweep = SweepLoader(message, where, origin, base_dir).load();
  sweep.path = std::string(origin);
  return sweep;
}

models::Sweep load_sweep_file(const std::string& path) {
  const Format format = format_for_path(path);
  const std::string text = read_input_file(path);
  return load_sweep_text(text, path, format, std::filesystem::path(path).parent_path().string());
}

// ================================================================================================
// Metrics, points
// ================================================================================================

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct MetricDef {
  std::string_view name;
  std::string (*format)(const models::Report&);
};

// Order: documentation order (sweep_io.h).
const MetricDef kMetrics[] = {
    {"iteration_time_s", [](const models::Report& r) { return shortest(r.iteration_time_s); }},
    {"tokens_per_s", [](const models::Report& r) { return shortest(r.tokens_per_s); }},
    {"tflops_per_gpu", [](const models::Report& r) { return shortest(r.tflops_per_gpu); }},
    {"hardware_tflops_per_gpu", [](const models::Report& r) { return shortest(r.hardware_tflops_per_gpu); }},
    {"mfu", [](const models::Report& r) { return shortest(r.mfu); }},
    {"hfu", [](const models::Report& r) { return shortest(r.hfu); }},
    {"time_to_train_s", [](const models::Report& r) { return shortest(r.time_to_train_s); }},
    {"compute_s", [](const models::Report& r) { return shortest(r.breakdown.compute_s); }},
    {"tp_comm_exposed_s", [](const models::Report& r) { return shortest(r.breakdown.tp_comm_exposed_s); }},
    {"dp_comm_exposed_s", [](const models::Report& r) { return shortest(r.breakdown.dp_comm_exposed_s); }},
    {"pp_comm_exposed_s", [](const models::Report& r) { return shortest(r.breakdown.pp_comm_exposed_s); }},
    {"pipeline_bubble_s", [](const models::Report& r) { return shortest(r.breakdown.pipeline_bubble_s); }},
    {"optimizer_s", [](const models::Report& r) { return shortest(r.breakdown.optimizer_s); }},
    {"ep_comm_exposed_s", [](const models::Report& r) { return shortest(r.breakdown.ep_comm_exposed_s); }},
    {"cp_comm_exposed_s", [](const models::Report& r) { return shortest(r.breakdown.cp_comm_exposed_s); }},
    {"input_copy_exposed_s", [](const models::Report& r) { return shortest(r.breakdown.input_copy_exposed_s); }},
    {"straggler_wait_s", [](const models::Report& r) { return shortest(r.breakdown.straggler_wait_s); }},
    {"peak_memory_gib", [](const models::Report& r) { return shortest(r.memory.peak_bytes_per_gpu / kGiB); }},
    {"activation_memory_gib", [](const models::Report& r) { return shortest(r.memory.activations_bytes / kGiB); }},
    {"weights_memory_gib", [](const models::Report& r) { return shortest(r.memory.weights_bytes / kGiB); }},
    {"grads_memory_gib", [](const models::Report& r) { return shortest(r.memory.grads_bytes / kGiB); }},
    {"optimizer_memory_gib", [](const models::Report& r) { return shortest(r.memory.optimizer_bytes / kGiB); }},
    {"capacity_memory_gib", [](const models::Report& r) { return shortest(r.memory.capacity_bytes / kGiB); }},
    {"num_gpus", [](const models::Report& r) { return std::to_string(r.num_gpus); }},
    {"micro_batches", [](const models::Report& r) { return std::to_string(r.micro_batches); }},
    {"events", [](const models::Report& r) { return std::to_string(r.events); }},
    {"busiest_link",
     [](const models::Report& r) { return r.busiest_links.empty() ? std::string() : r.busiest_links[0].name; }},
    {"busiest_link_utilization",
     [](const models::Report& r) {
       return r.busiest_links.empty() ? std::string("0") : shortest(r.busiest_links[0].utilization);
     }},
    // Storage, failures, cost (0 when the scenario has no such section).
    {"storage_stall_s", [](const models::Report& r) { return shortest(r.breakdown.storage_stall_s); }},
    {"data_stall_s", [](const models::Report& r) { return shortest(r.storage.data_stall_s_per_iteration); }},
    {"checkpoint_write_s", [](const models::Report& r) { return shortest(r.storage.checkpoint_write_s); }},
    {"interruptions", [](const models::Report& r) { return shortest(r.reliability.interruptions_mean); }},
    {"goodput", [](const models::Report& r) { return shortest(r.reliability.goodput_mean); }},
    {"wall_clock_s", [](const models::Report& r) { return shortest(r.reliability.wall_clock_s_mean); }},
    {"own_cost_to_train_usd", [](const models::Report& r) { return shortest(r.cost.own_cost_to_train_usd); }},
    {"cloud_cost_to_train_usd", [](const models::Report& r) { return shortest(r.cost.cloud_cost_to_train_usd); }},
    // Never paying back is an empty cell (0 would read as "at once") and payback_never true.
    {"payback_years",
     [](const models::Report& r) { return r.cost.payback_never ? std::string() : shortest(r.cost.payback_years); }},
    {"payback_never", [](const models::Report& r) { return std::string(r.cost.payback_never ? "true" : "false"); }},
    {"breakeven_utilization", [](const models::Report& r) { return shortest(r.cost.breakeven_utilization); }},
};

std::string metric_text(const models::Report& r, std::string_view name) {
  for (const MetricDef& m : kMetrics) {
    if (m.name == name) return m.format(r);
  }
  throw std::invalid_argument("unknown sweep metric \"" + std::string(name) + "\"");
}

/// A scenario error line without its origin: "<sweep point>:3:5: a.b: what" and
/// "--set: a.b: what" both become "a.b: what".
std::string without_origin(const std::string& line) {
  if (line.rfind("--set: ", 0) == 0) return line.substr(7);
  if (line.rfind(kPointOrigin, 0) == 0) {
    // Skip "<origin>:line:col: ".
    std::size_t i = kPointOrigin.size();
    for (int colons = 0; colons < 2 && i < line.size(); ++i) {
      if (line[i] == ':') ++colons;
    }
    const std::size_t sep = line.find(": ", i);
    if (sep != std::string::npos) return line.substr(sep + 2);
  }
  return line;
}

std::string gib_text(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / kGiB);
  return buf;
}

}  // namespace

const std::vector<std::string>& sweep_metric_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const MetricDef& m : kMetrics) out.emplace_back(m.name);
    return out;
  }();
  return names;
}

const std::vector<std::string>& default_sweep_metrics() {
  static const std::vector<std::string> names = {
      "iteration_time_s",  "tokens_per_s",     "tflops_per_gpu",    "mfu",
      "peak_memory_gib",   "compute_s",        "tp_comm_exposed_s", "dp_comm_exposed_s",
      "pp_comm_exposed_s", "pipeline_bubble_s"};
  return names;
}

models::Scenario sweep_point_scenario(const models::Sweep& sweep, std::size_t point) {
  if (point >= sweep.num_points()) {
    throw std::out_of_range("sweep_point_scenario: point " + std::to_string(point) + " of " +
                            std::to_string(sweep.num_points()));
  }
  std::vector<std::string> overrides;
  overrides.reserve(sweep.axes.size() + 1);
  for (std::size_t a = 0; a < sweep.axes.size(); ++a)
    overrides.push_back(sweep.axes[a].path + "=" + sweep.value(point, a));
  overrides.push_back("options.threads=1");
  return load_scenario_text(sweep.base_text, kPointOrigin, Format::text, overrides);
}

std::string_view to_string(SweepStatus status) {
  switch (status) {
    case SweepStatus::ok:
      return "ok";
    case SweepStatus::oom:
      return "oom";
    case SweepStatus::invalid:
      return "invalid";
    case SweepStatus::error:
      return "error";
  }
  return "error";
}

SweepOutcome run_sweep_point(const models::Sweep& sweep, std::size_t point) {
  SweepOutcome out;
  try {
    const models::Scenario scenario = sweep_point_scenario(sweep, point);
    out.report = models::simulate_training(scenario);
    const models::MemoryBreakdown& m = out.report.memory;
    if (m.oom) {
      out.status = SweepStatus::oom;
      out.reason = "peak " + gib_text(m.peak_bytes_per_gpu) + " GiB per GPU exceeds " + gib_text(m.capacity_bytes) +
                   " GiB of HBM (pipeline stage " + std::to_string(m.worst_stage) + ")";
      if (!m.advice.empty()) out.reason += "; " + m.advice;
    }
  } catch (const ScenarioError& e) {
    out.status = SweepStatus::invalid;
    for (const std::string& line : e.errors()) out.reason += (out.reason.empty() ? "" : "; ") + without_origin(line);
  } catch (const std::invalid_argument& e) {
    out.status = SweepStatus::invalid;
    out.reason = e.what();
  } catch (const std::overflow_error& e) {
    out.status = SweepStatus::invalid;
    out.reason = std::string("beyond the simulator's range: ") + e.what();
  } catch (const std::exception& e) {
    out.status = SweepStatus::error;
    out.reason = std::string("internal error: ") + e.what();
  }
  return out;
}

// ================================================================================================
// CSV
// ================================================================================================

std::string csv_field(std::string_view text) {
  std::string one_line;
  one_line.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      one_line += "; ";
    } else {
      one_line += c;
    }
  }
  if (one_line.find_first_of(",\"") == std::string::npos) return one_line;
  std::string out = "\"";
  for (const char c : one_line) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string sweep_csv_comment(const models::Sweep& sweep, models::SweepShard shard) {
  std::string out = "# traincast sweep " + sweep.hash + " points " + std::to_string(sweep.num_points());
  if (shard.count > 1) out += " shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count);
  return out + "\n";
}

std::string sweep_csv_header(const models::Sweep& sweep) {
  std::string out = "point";
  for (const models::SweepAxis& a : sweep.axes) {
    out += ',';
    out += csv_field(a.name);
  }
  out += ",status";
  for (const std::string& m : sweep.metrics) {
    out += ',';
    out += csv_field(m);
  }
  return out + ",reason\n";
}

std::string sweep_csv_row(const models::Sweep& sweep, std::size_t point, const SweepOutcome& outcome) {
  std::string out = std::to_string(point);
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    out += ',';
    out += csv_field(sweep.value(point, a));
  }
  out += ",";
  out += to_string(outcome.status);
  const bool simulated = outcome.status == SweepStatus::ok || outcome.status == SweepStatus::oom;
  for (const std::string& m : sweep.metrics) {
    out += ",";
    if (simulated) out += csv_field(metric_text(outcome.report, m));
  }
  out += ',';
  out += csv_field(outcome.reason);
  out += '\n';
  return out;
}

namespace {

/// Fields in one CSV line (quote-aware); -1 when a quote is left open.
int csv_field_count(std::string_view line) {
  int fields = 1;
  bool quoted_field = false;
  for (const char c : line) {
    if (c == '"') {
      quoted_field = !quoted_field;
    } else if (c == ',' && !quoted_field) {
      ++fields;
    }
  }
  return quoted_field ? -1 : fields;
}

bool parse_size(std::string_view s, std::size_t& out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

SweepCsv read_sweep_csv(const std::string& path) {
  const std::string text = read_input_file(path);
  SweepCsv csv;
  auto fail = [&](int line, const std::string& what) {
    throw ScenarioError({path + ":" + std::to_string(line) + ": " + what});
  };
  std::size_t pos = 0;
  int line_number = 0;
  auto next_line = [&](std::string& line) -> bool {  // false at the end or for a partial line
    if (pos >= text.size()) return false;
    const std::size_t nl = text.find('\n', pos);
    ++line_number;
    if (nl == std::string::npos) {
      csv.partial_last_line = true;
      return false;
    }
    line = text.substr(pos, nl + 1 - pos);
    pos = nl + 1;
    return true;
  };
  const std::string expected_first =
      "(expected a first line \"# traincast sweep <hash> points <count>\", as "
      "traincast sweep writes)";
  if (!next_line(csv.comment)) fail(1, "not a traincast sweep CSV: no complete first line " + expected_first);
  {
    std::istringstream words(csv.comment.substr(0, csv.comment.size() - 1));
    std::string hash_mark, tool, kind, hash, points_word, points, shard_word, shard;
    words >> hash_mark >> tool >> kind >> hash >> points_word >> points;
    const bool has_shard = static_cast<bool>(words >> shard_word >> shard);
    std::string rest;
    words >> rest;
    bool ok = hash_mark == "#" && tool == "traincast" && kind == "sweep" && hash.size() == 16 &&
              points_word == "points" && parse_size(points, csv.points) && rest.empty();
    if (ok && has_shard) {
      const std::size_t slash = shard.find('/');
      ok = shard_word == "shard" && slash != std::string::npos &&
           parse_size(std::string_view(shard).substr(0, slash), csv.shard.index) &&
           parse_size(std::string_view(shard).substr(slash + 1), csv.shard.count) && csv.shard.count >= 1 &&
           csv.shard.index < csv.shard.count;
    }
    if (!ok) fail(1, "not a traincast sweep CSV: " + in_quotes(clip(without_eol(csv.comment))) + " " + expected_first);
    csv.hash = hash;
  }
  if (!next_line(csv.header)) {
    fail(2, "no complete header line (the file was cut while it was created: start over with --force)");
  }
  if (csv.header.rfind("point,", 0) != 0) {
    fail(2, "header " + in_quotes(clip(without_eol(csv.header))) +
                " does not start with \"point,\" (expected the header traincast "
                "sweep writes)");
  }
  const int columns = csv_field_count(csv.header.substr(0, csv.header.size() - 1));
  csv.complete_bytes = pos;
  std::unordered_map<std::size_t, int> seen;
  std::string line;
  while (next_line(line)) {
    const std::string_view body(line.data(), line.size() - 1);
    const int fields = csv_field_count(body);
    if (fields != columns) {
      fail(line_number, (fields < 0 ? std::string("unclosed quote") : std::to_string(fields) + " fields") +
                            " (expected " + std::to_string(columns) + " fields, as in the header)");
    }
    std::size_t point = 0;
    const std::string_view first = body.substr(0, body.find(','));
    if (!parse_size(first, point) || point >= csv.points) {
      fail(line_number, "point " + in_quotes(clip(first)) + " is not a point index (expected an integer in [0, " +
                            std::to_string(csv.points) + "))");
    }
    if (point % csv.shard.count != csv.shard.index) {
      fail(line_number, "point " + std::to_string(point) + " is not in shard " + std::to_string(csv.shard.index) + "/" +
                            std::to_string(csv.shard.count) + " (expected point % " + std::to_string(csv.shard.count) +
                            " == " + std::to_string(csv.shard.index) + ")");
    }
    if (const auto [it, inserted] = seen.emplace(point, line_number); !inserted) {
      fail(line_number, "point " + std::to_string(point) + " appears again (first on line " +
                            std::to_string(it->second) + "; expected each point once)");
    }
    csv.rows.push_back({point, line, line_number});
    csv.complete_bytes = pos;
  }
  return csv;
}

}  // namespace traincast::io
