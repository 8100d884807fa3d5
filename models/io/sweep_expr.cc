// The constraint language of sweep files (grammar and semantics in sweep_expr.h): tokenizer,
// recursive-descent parser, type checker and evaluator.

#include "models/io/sweep_expr.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "models/io/int_ranges.h"
#include "models/io/message_reader.h"
#include "models/io/suggest.h"

namespace traincast::io {

using detail::clip;
using detail::in_quotes;

namespace {

/// Nesting limit of parentheses and unary operators (far above any real constraint).
constexpr int kMaxExpressionDepth = 64;
/// Binary operators in one expression at most (far above any real constraint). A chain such as
/// "tp+tp+...+tp" builds a tree as deep as it is long, and checking and evaluating it recurse that
/// deep: 100,000 of them overflowed the stack.
constexpr int kMaxExpressionOperators = 1000;

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
      if (!std::isfinite(t.number) || detail::double_out_of_range(t.text)) {
        throw ExpressionError(column, "number " + in_quotes(clip(t.text)) + " is out of range as written (expected " +
                                          std::string(detail::kDoubleRangeExpected) + ")");
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

std::string detail::in_quotes(std::string_view text) {
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

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_name_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), is_name_char);
}

/// Recursive descent over the token list (grammar in sweep_expr.h).
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
    if (++operators_ > kMaxExpressionOperators) {
      throw ExpressionError(t.column, "more than " + std::to_string(kMaxExpressionOperators) +
                                          " binary operators (expected at most " +
                                          std::to_string(kMaxExpressionOperators) + " in one expression)");
    }
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
  int operators_ = 0;  ///< binary operators so far (kMaxExpressionOperators)
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

}  // namespace traincast::io
