#pragma once
// The constraint language of sweep files: parsing, type-checking and evaluating expressions such
// as "tp * pp * dp == gpus && num_attention_heads % tp == 0". No protobuf here.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace traincast::io {

/// A problem in an expression: where (1-based byte column in the expression text) and what.
class ExpressionError : public std::runtime_error {
 public:
  /// column: 1-based column of the offending token (0 = the expression as a whole).
  ExpressionError(int column, const std::string& message) : std::runtime_error(message), column_(column) {}
  int column() const noexcept { return column_; }

 private:
  int column_;
};

/// The type of an expression value.
enum class ExprType { number, boolean, string };

/// A value while evaluating: a number (double; integers are exact up to 2^53), a boolean or a
/// string (enum and string fields).
struct ExprValue {
  ExprType type = ExprType::number;
  double number = 0.0;
  bool boolean = false;
  std::string text;

  static ExprValue of_number(double v) { return {ExprType::number, v, false, {}}; }
  static ExprValue of_bool(bool v) { return {ExprType::boolean, 0.0, v, {}}; }
  static ExprValue of_string(std::string v) { return {ExprType::string, 0.0, false, std::move(v)}; }
  friend bool operator==(const ExprValue&, const ExprValue&) = default;
};

/// What the type checker knows about a name: its type and, for enum fields, the allowed values
/// (a string literal compared with the name must be one of them; empty = any string).
struct ExprNameInfo {
  ExprType type = ExprType::number;
  std::vector<std::string> allowed;
};

/// A parsed constraint expression. Grammar (lowest precedence first):
///   or    := and { "||" and }          and  := cmp { "&&" cmp }
///   cmp   := sum [ ("=="|"!="|"<"|"<="|">"|">=") sum ]
///   sum   := prod { ("+"|"-") prod }     prod := unary { ("*"|"/"|"%") unary }
///   unary := ("-"|"!") unary | atom       atom := number | 'string' | "string" | true | false
///                                                  | name | "(" or ")"
/// Numbers: 12, 0.5, 1e9. Names: identifiers joined by dots (tp, workload.parallel.tp).
/// Semantics: + - * / on numbers (/ is real division); % on integers (C remainder: the sign of
/// the dividend); < <= > >= on numbers; == != on two values of the same type; && || (short
/// circuit) and ! on booleans. Nesting depth is limited to 64, binary operators to 1000.
class Expression {
 public:
  /// Parses `text`. Throws ExpressionError for a syntax error, e.g. column 6 of "tp * * pp":
  /// `unexpected "*" (expected a number, a name, a quoted string or "(")`.
  static Expression parse(std::string_view text);

  /// The text parsed.
  const std::string& text() const { return text_; }
  /// The distinct names used, in order of first use; evaluate() takes their values in this order.
  const std::vector<std::string>& names() const { return names_; }
  /// 1-based column of the first use of names()[i].
  int name_column(std::size_t i) const { return name_columns_[i]; }

  /// Type-checks with names()[i] of type infos[i] (infos.size() == names().size()) and returns
  /// the type of the whole expression. Throws ExpressionError, e.g. `"+" needs two numbers, got
  /// a number and a string`, or for a string literal outside a name's allowed values.
  ExprType check(const std::vector<ExprNameInfo>& infos) const;

  /// Evaluates with names()[i] = values[i] (of the types given to check()). Throws
  /// ExpressionError for division or remainder by zero and for % of a non-integer.
  ExprValue evaluate(const std::vector<ExprValue>& values) const;

  /// One node of the syntax tree (internal; public only so the parser in sweep_expr.cc can build it).
  struct Node {
    enum class Op {
      number,
      string,
      boolean,
      name,
      neg,
      logical_not,
      add,
      sub,
      mul,
      div,
      mod,
      eq,
      ne,
      lt,
      le,
      gt,
      ge,
      logical_and,
      logical_or
    };
    Op op = Op::number;
    int lhs = -1;  ///< index in nodes_ (unary operand, or left operand)
    int rhs = -1;  ///< index in nodes_ (right operand)
    double number = 0.0;
    bool boolean = false;
    std::string text;  ///< string literal, or the operator as written
    int slot = -1;     ///< names() index of a name
    int column = 0;    ///< 1-based column of the token
  };

 private:
  std::string text_;
  std::vector<std::string> names_;
  std::vector<int> name_columns_;
  std::vector<Node> nodes_;  // nodes_.back() is the root
  friend class ExpressionParser;
  ExprType check_node(int node, const std::vector<ExprNameInfo>& infos) const;
  ExprValue eval_node(int node, const std::vector<ExprValue>& values) const;
};

/// How messages name a type: "a number", "a boolean", "a string".
std::string_view type_name(ExprType type);

/// True when `text` is one name of the language without dots: letters, digits and _, not
/// starting with a digit (what an axis name must be to be usable in constraints).
bool is_identifier(std::string_view text);

namespace detail {
/// `text` between double quotes, as messages quote input (no escaping: quote clip()ped text).
std::string in_quotes(std::string_view text);
}  // namespace detail

}  // namespace traincast::io
