// Tests of models/io/sweep_expr: the constraint expression language (precedence, names,
// short-circuit, and every syntax, type and evaluation error with its column).

#include "models/io/sweep_expr.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace traincast::io {
namespace {

/// Evaluates `text` with names bound in order of first use to `values` (numbers).
ExprValue eval(const std::string& text, const std::vector<ExprValue>& values = {}) {
  const Expression e = Expression::parse(text);
  std::vector<ExprNameInfo> infos;
  for (const ExprValue& v : values) infos.push_back({v.type, {}});
  e.check(infos);
  return e.evaluate(values);
}

double num(const std::string& text, const std::vector<ExprValue>& values = {}) {
  const ExprValue v = eval(text, values);
  EXPECT_EQ(v.type, ExprType::number) << text;
  return v.number;
}

bool truth(const std::string& text, const std::vector<ExprValue>& values = {}) {
  const ExprValue v = eval(text, values);
  EXPECT_EQ(v.type, ExprType::boolean) << text;
  return v.boolean;
}

ExprValue n(double v) { return ExprValue::of_number(v); }

/// "column: message" of the ExpressionError that parsing (and checking with `infos`) throws.
std::string expr_error(const std::string& text, const std::vector<ExprNameInfo>& infos = {}) {
  try {
    const Expression e = Expression::parse(text);
    std::vector<ExprNameInfo> all = infos;
    all.resize(e.names().size());
    e.check(all);
  } catch (const ExpressionError& x) {
    return std::to_string(x.column()) + ": " + x.what();
  }
  ADD_FAILURE() << "no ExpressionError for " << text;
  return {};
}

TEST(Expression, ArithmeticPrecedenceAndAssociativity) {
  EXPECT_EQ(num("1 + 2 * 3"), 7);      // * before +
  EXPECT_EQ(num("(1 + 2) * 3"), 9);    // parentheses
  EXPECT_EQ(num("10 - 4 - 3"), 3);     // left-associative: (10 - 4) - 3
  EXPECT_EQ(num("64 / 4 / 2"), 8);     // (64 / 4) / 2
  EXPECT_EQ(num("7 / 2"), 3.5);        // real division
  EXPECT_EQ(num("7 % 3"), 1);          // remainder
  EXPECT_EQ(num("-7 % 3"), -1);        // C remainder: sign of the dividend
  EXPECT_EQ(num("2 * -3"), -6);        // unary minus binds tighter than *
  EXPECT_EQ(num("1e3 + .5"), 1000.5);  // exponent and leading-dot numbers
}

TEST(Expression, ComparisonsAndLogic) {
  EXPECT_TRUE(truth("1 + 1 == 2"));
  EXPECT_TRUE(truth("3 != 4"));
  EXPECT_TRUE(truth("2 <= 2 && 2 >= 2 && 1 < 2 && 3 > 2"));
  EXPECT_TRUE(truth("false || true && true"));  // && before ||
  EXPECT_FALSE(truth("(false || true) && false"));
  EXPECT_TRUE(truth("!(1 > 2)"));
  EXPECT_TRUE(truth("'full' == \"full\""));  // both quote kinds
  EXPECT_TRUE(truth("true == !false"));
}

TEST(Expression, NamesTakeTheirValuesInOrderOfFirstUse) {
  const Expression e = Expression::parse("tp * pp * dp == gpus && tp <= 8");
  EXPECT_EQ(e.names(), (std::vector<std::string>{"tp", "pp", "dp", "gpus"}));
  EXPECT_EQ(e.name_column(2), 11);
  EXPECT_TRUE(truth("tp * pp * dp == gpus && tp <= 8", {n(2), n(4), n(8), n(64)}));   // 2*4*8 = 64
  EXPECT_FALSE(truth("tp * pp * dp == gpus && tp <= 8", {n(2), n(4), n(4), n(64)}));  // 32 != 64
  EXPECT_TRUE(truth("workload.model.num_layers % pp == 0", {n(96), n(8)}));           // dotted path
  EXPECT_TRUE(truth("recompute == 'full'", {ExprValue::of_string("full")}));
}

TEST(Expression, AndOrShortCircuitSoGuardsWork) {
  // tp = 0 would divide by zero, but the guard stops evaluation first.
  EXPECT_FALSE(truth("tp != 0 && 8 % tp == 0", {n(0)}));
  EXPECT_TRUE(truth("tp == 0 || 8 % tp == 0", {n(0)}));
}

TEST(Expression, SyntaxErrorsNameTheColumn) {
  EXPECT_EQ(expr_error("tp * * pp"), "6: unexpected \"*\" (expected a number, a name, a quoted string or \"(\")");
  EXPECT_EQ(expr_error("tp = 2"), "4: unexpected \"=\" (expected \"==\" to compare)");
  EXPECT_EQ(expr_error("tp & pp"), "4: unexpected \"&\" (expected \"&&\")");
  EXPECT_EQ(expr_error("(tp == 2"), "9: unexpected end of expression (expected \")\" to close the \"(\" at column 1)");
  EXPECT_EQ(expr_error("tp == 2)"), "8: unexpected \")\" (expected an operator or the end: no \"(\" is open)");
  EXPECT_EQ(expr_error("tp pp"), "4: unexpected \"pp\" (expected an operator or the end)");
  EXPECT_EQ(expr_error("1 < tp < 3"),
            "8: \"<\" cannot follow the comparison \"<\" (expected && or || between comparisons: they do not chain)");
  EXPECT_EQ(expr_error("2tp == 4"),
            "2: unexpected \"t\" after number \"2\" (expected an operator between a number "
            "and a name)");
  EXPECT_EQ(expr_error("workload. == 1"),
            "10: unexpected \" \" after \"workload.\" (expected a field name after the "
            "dot)");
  EXPECT_EQ(expr_error("recompute == 'full"), "14: unterminated string (expected a closing ')");
  EXPECT_EQ(expr_error("tp # 2"),
            "4: unexpected character \"#\" (expected numbers, names, quoted strings, operators "
            "+ - * / % == != < <= > >= && || ! and parentheses)");
  EXPECT_EQ(expr_error(""), "1: unexpected end of expression (expected a number, a name, a quoted string or \"(\")");
  EXPECT_EQ(expr_error(std::string(65, '(') + "1" + std::string(65, ')')),
            "65: nested too deeply (expected at most 64 levels of parentheses and unary operators)");
}

TEST(Expression, TypeErrors) {
  const ExprNameInfo number{ExprType::number, {}};
  const ExprNameInfo recompute{ExprType::string, {"none", "selective", "full"}};
  EXPECT_EQ(expr_error("tp + 'a' == 1", {number}), "4: \"+\" needs two numbers, got a number and a string");
  EXPECT_EQ(expr_error("tp && true", {number}),
            "4: \"&&\" needs two booleans (comparisons), got a number and a "
            "boolean");
  EXPECT_EQ(expr_error("!tp", {number}), "1: \"!\" needs a boolean, got a number");
  EXPECT_EQ(expr_error("tp == 'x'", {number}), "4: \"==\" compares values of one type, got a number and a string");
  EXPECT_EQ(expr_error("recompute == 'fulll'", {recompute}),
            "14: \"fulll\" is not a value of recompute, did you mean \"full\"? (expected one of: none, selective, "
            "full)");
  EXPECT_EQ(expr_error("recompute < 'full'", {recompute}), "11: \"<\" needs two numbers, got a string and a string");
}

TEST(Expression, EvaluationErrors) {
  auto eval_error = [](const std::string& text, const std::vector<ExprValue>& values) -> std::string {
    try {
      eval(text, values);
    } catch (const ExpressionError& x) {
      return std::to_string(x.column()) + ": " + x.what();
    }
    return "no error";
  };
  EXPECT_EQ(eval_error("8 % tp == 0", {n(0)}), "3: remainder by zero (expected a non-zero divisor)");
  EXPECT_EQ(eval_error("8 / tp == 0", {n(0)}), "3: division by zero (expected a non-zero divisor)");
  EXPECT_EQ(eval_error("x % 2 == 0", {n(1.5)}), "3: \"%\" needs integers, got 1.5 (expected whole numbers)");
}

}  // namespace
}  // namespace traincast::io
