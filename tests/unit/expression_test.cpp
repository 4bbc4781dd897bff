// core::Expression: values, constants, functions, declared variables, bulk evaluation,
// independent copies, and errors that name the problem and its position.
#include "fracmfg/core/expression.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using fracmfg::core::Expression;
using fracmfg::core::ExpressionError;

namespace {

constexpr double kPi = 3.14159265358979323846;

// The message of the ExpressionError thrown by compiling `text`, or "" if none is thrown.
std::string error_of(const std::string& text, std::vector<std::string> variables = {"x", "y"}) {
  try {
    Expression e(text, std::move(variables));
  } catch (const ExpressionError& e) {
    return e.what();
  }
  return "";
}

int position_of(const std::string& text, std::vector<std::string> variables = {"x", "y"}) {
  try {
    Expression e(text, std::move(variables));
  } catch (const ExpressionError& e) {
    return e.position();
  }
  return -1;
}

}  // namespace

TEST(Expression, EvaluatesArithmeticWithPrecedence) {
  EXPECT_DOUBLE_EQ(Expression("1 + 2*3 - 4/8", {})({}), 6.5);
  EXPECT_DOUBLE_EQ(Expression("(1 + 2)*3", {})({}), 9.0);
  EXPECT_DOUBLE_EQ(Expression("2^10", {})({}), 1024.0);
  EXPECT_DOUBLE_EQ(Expression("2^3^2", {})({}), 512.0);  // right-associative
  EXPECT_DOUBLE_EQ(Expression("1e-3*4", {})({}), 0.004);
}

TEST(Expression, KnowsPiAndE) {
  EXPECT_DOUBLE_EQ(Expression("pi", {})({}), kPi);
  EXPECT_DOUBLE_EQ(Expression("e", {})({}), std::exp(1.0));
  EXPECT_NEAR(Expression("cos(2*pi*x)", {"x"})({0.5}), -1.0, 1e-15);
  EXPECT_NEAR(Expression("log(e^3)", {})({}), 3.0, 1e-15);
}

TEST(Expression, EvaluatesTheUsualFunctions) {
  const double x = 0.37;
  const auto at = [x](const std::string& text) { return Expression(text, {"x"})({x}); };
  EXPECT_DOUBLE_EQ(at("sin(x)"), std::sin(x));
  EXPECT_DOUBLE_EQ(at("cos(x)"), std::cos(x));
  EXPECT_DOUBLE_EQ(at("tan(x)"), std::tan(x));
  EXPECT_DOUBLE_EQ(at("exp(-x)"), std::exp(-x));
  EXPECT_DOUBLE_EQ(at("log(x)"), std::log(x));  // natural logarithm
  EXPECT_DOUBLE_EQ(at("ln(x)"), std::log(x));
  EXPECT_DOUBLE_EQ(at("log10(x)"), std::log10(x));
  EXPECT_DOUBLE_EQ(at("sqrt(x)"), std::sqrt(x));
  EXPECT_DOUBLE_EQ(at("abs(-x)"), x);
  EXPECT_DOUBLE_EQ(at("tanh(x)"), std::tanh(x));
  EXPECT_DOUBLE_EQ(at("erf(x)"), std::erf(x));
  EXPECT_DOUBLE_EQ(at("erfc(x)"), std::erfc(x));
  EXPECT_DOUBLE_EQ(at("floor(10*x)"), 3.0);
  EXPECT_DOUBLE_EQ(at("ceil(10*x)"), 4.0);
  EXPECT_DOUBLE_EQ(at("fmod(10*x, 1)"), std::fmod(10 * x, 1.0));
  EXPECT_DOUBLE_EQ(at("pow(x, 2.5)"), std::pow(x, 2.5));
  EXPECT_DOUBLE_EQ(at("atan2(x, 1)"), std::atan2(x, 1.0));
  EXPECT_DOUBLE_EQ(at("min(x, 0.2, 3)"), 0.2);
  EXPECT_DOUBLE_EQ(at("max(x, 0.2, 3)"), 3.0);
  EXPECT_DOUBLE_EQ(at("x < 0.5 ? 1 : 0"), 1.0);
  EXPECT_DOUBLE_EQ(at("(x > 0.3) && (x < 0.4)"), 1.0);
}

TEST(Expression, VariablesTakeValuesInDeclaredOrder) {
  const Expression f("x - 2*y", {"y", "x"});
  EXPECT_DOUBLE_EQ(f({1.0, 5.0}), 3.0);  // y = 1, x = 5
  const double values[] = {2.0, 7.0};
  EXPECT_DOUBLE_EQ(f.evaluate(values), 3.0);
  EXPECT_EQ(f.arity(), 2u);
  EXPECT_EQ(f.text(), "x - 2*y");
  EXPECT_EQ(f.variables(), (std::vector<std::string>{"y", "x"}));
}

TEST(Expression, ReportsWhichVariablesAreUsed) {
  const Expression f("sin(t) - y1", {"t", "y1", "y2"});
  EXPECT_TRUE(f.uses("t"));
  EXPECT_TRUE(f.uses("y1"));
  EXPECT_FALSE(f.uses("y2"));
  EXPECT_FALSE(f.uses("z"));
  EXPECT_FALSE(f.is_constant());
  const Expression c("2*pi", {"x", "y"});
  EXPECT_TRUE(c.is_constant());
  EXPECT_DOUBLE_EQ(c({0.1, 0.2}), 2 * kPi);
}

TEST(Expression, DefaultIsTheConstantZero) {
  const Expression zero;
  EXPECT_EQ(zero.arity(), 0u);
  EXPECT_DOUBLE_EQ(zero({}), 0.0);
}

TEST(Expression, BulkEvaluationMatchesPointwise) {
  const Expression f("exp(-(x-0.3)^2/0.005) + y*t", {"x", "y", "t"});
  const std::size_t n = 101;
  std::vector<double> xs(n), ys_interleaved(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    xs[i] = static_cast<double>(i) / (n - 1);
    ys_interleaved[2 * i] = 1.0 - xs[i];
    ys_interleaved[2 * i + 1] = -99.0;  // not read: stride 2
  }
  std::vector<double> out(n, -1.0);
  f.evaluate_bulk(
      n,
      {Expression::Input::array(xs.data()), Expression::Input::array(ys_interleaved.data(), 2),
       Expression::Input::constant(0.5)},
      out.data());
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_DOUBLE_EQ(out[i], f({xs[i], 1.0 - xs[i], 0.5})) << "point " << i;
  }
  // A constant formula fills the output.
  const Expression c("3", {"x"});
  c.evaluate_bulk(n, {Expression::Input::array(xs.data())}, out.data());
  for (double v : out) EXPECT_EQ(v, 3.0);
}

TEST(Expression, WrongNumberOfValuesIsAnError) {
  const Expression f("x + y", {"x", "y"});
  EXPECT_THROW(f({1.0}), std::invalid_argument);
  double out = 0;
  EXPECT_THROW(f.evaluate_bulk(1, {Expression::Input::constant(1.0)}, &out), std::invalid_argument);
}

TEST(Expression, CopiesAreIndependent) {
  Expression a("x^2", {"x"});
  Expression b = a;
  EXPECT_DOUBLE_EQ(a({3.0}), 9.0);
  EXPECT_DOUBLE_EQ(b({4.0}), 16.0);
  EXPECT_DOUBLE_EQ(a({3.0}), 9.0);
  b = Expression("x + 1", {"x"});
  EXPECT_DOUBLE_EQ(a({2.0}), 4.0);
  EXPECT_DOUBLE_EQ(b({2.0}), 3.0);
  Expression moved = std::move(b);
  EXPECT_DOUBLE_EQ(moved({2.0}), 3.0);
  b = a;  // a moved-from object may be assigned to
  EXPECT_DOUBLE_EQ(b({5.0}), 25.0);
}

TEST(Expression, EachThreadEvaluatesItsOwnCopy) {
  const Expression f("sin(x) * cos(x) + x", {"x"});
  const int threads = 4;
  const int points = 20000;
  std::vector<int> wrong(threads, 0);
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) {
    pool.emplace_back([&, k] {
      // Copying and compiling run concurrently too (muparser has process-wide state).
      for (int c = 0; c < 50; ++c) {
        const Expression other("x^2 + " + std::to_string(c), {"x"});
        if (other({2.0}) != 4.0 + c) ++wrong[k];
      }
      const Expression mine = f;
      for (int i = 0; i < points; ++i) {
        const double x = k + i * 1.0e-4;
        if (mine({x}) != std::sin(x) * std::cos(x) + x) ++wrong[k];
      }
    });
  }
  for (auto& t : pool) t.join();
  for (int k = 0; k < threads; ++k) EXPECT_EQ(wrong[k], 0) << "thread " << k;
}

TEST(Expression, SyntaxErrorGivesPositionAndReason) {
  EXPECT_EQ(error_of("exp(-(x-0.3)^^2)"),
            "syntax error at position 14 in \"exp(-(x-0.3)^^2)\": unexpected operator \"^\"");
  EXPECT_EQ(position_of("exp(-(x-0.3)^^2)"), 14);
  EXPECT_EQ(error_of("x +"), "syntax error at position 4 in \"x +\": unexpected end of expression");
  EXPECT_EQ(error_of("(x + 1"), "syntax error at position 7 in \"(x + 1\": missing parenthesis");
  EXPECT_EQ(error_of("x)"), "syntax error at position 2 in \"x)\": unexpected parenthesis \")\"");
}

TEST(Expression, UndeclaredVariableIsNamed) {
  EXPECT_EQ(
      error_of("exp(-(z-0.3)^2)"),
      "unknown variable \"z\" at position 7 in \"exp(-(z-0.3)^2)\": declared variables: x, y");
  EXPECT_EQ(position_of("exp(-(z-0.3)^2)"), 7);
  EXPECT_EQ(error_of("x*t", {"x"}),
            "unknown variable \"t\" at position 3 in \"x*t\": declared variables: x");
  EXPECT_EQ(error_of("y1 + y3", {"t", "y1", "y2"}),
            "unknown variable \"y3\" at position 6 in \"y1 + y3\": declared variables: t, y1, y2 "
            "(did you mean \"y1\"?)");
  EXPECT_EQ(error_of("2*x", {}),
            "unknown variable \"x\" at position 3 in \"2*x\": declared "
            "variables: none");
}

TEST(Expression, UnknownFunctionSuggestsTheClosest) {
  EXPECT_EQ(error_of("sine(x)"),
            "unknown function \"sine\" at position 1 in \"sine(x)\" (did you mean \"sin\"?)");
  EXPECT_EQ(error_of("frobnicate(x)"),
            "unknown function \"frobnicate\" at position 1 in \"frobnicate(x)\"");
}

TEST(Expression, RejectsEmptyAssignmentsAndSeveralResults) {
  EXPECT_EQ(error_of(""), "expression is empty");
  EXPECT_EQ(error_of("x = 1"),
            "syntax error at position 3 in \"x = 1\": assignment \"=\" is "
            "not allowed (use == to compare)");
  EXPECT_EQ(error_of("x, y"), "expression \"x, y\" gives 2 comma-separated values; expected one");
  // Comparisons that contain '=' are fine.
  EXPECT_DOUBLE_EQ(Expression("(x <= 1) + (x >= 1) + (x == 1) + (x != 2)", {"x"})({1.0}), 4.0);
}

TEST(Expression, RejectsBadVariableNames) {
  EXPECT_EQ(error_of("1", {"2x"}),
            "invalid variable name \"2x\" for \"1\": names are letters, digits and _, starting "
            "with a letter or _");
  EXPECT_EQ(error_of("1", {"pi"}), "invalid variable name \"pi\" for \"1\": it is a constant");
  EXPECT_EQ(error_of("1", {"sin"}), "invalid variable name \"sin\" for \"1\": it is a function");
  EXPECT_EQ(error_of("1", {"x", "x"}), "invalid variable name \"x\" for \"1\": declared twice");
}

TEST(Expression, ErrorCarriesTheFormula) {
  try {
    Expression e("x +* 2", {"x"});
    FAIL() << "no error";
  } catch (const ExpressionError& e) {
    EXPECT_EQ(e.expression(), "x +* 2");
    EXPECT_GT(e.position(), 0);
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::usage);
  }
}

TEST(Expression, ListsItsFunctionsAndConstants) {
  const auto functions = Expression::function_names();
  for (const char* name :
       {"sin", "cos", "exp", "log", "sqrt", "abs", "tanh", "min", "max", "erf", "gamma"}) {
    EXPECT_NE(std::find(functions.begin(), functions.end(), name), functions.end()) << name;
  }
  EXPECT_EQ(Expression::constant_names(), (std::vector<std::string>{"pi", "e"}));
}

TEST(Expression, GammaIsEulersGammaFunction) {
  const Expression g("gamma(x)", {"x"});
  EXPECT_DOUBLE_EQ(g({5.0}), 24.0);
  EXPECT_NEAR(g({0.5}), std::sqrt(std::acos(-1.0)), 1e-15);
  EXPECT_NEAR(Expression("gamma(2 - x) / gamma(1 - x)", {"x"})({0.25}), 0.75, 1e-15);
}

TEST(Expression, BadTokenBeforeManyBlanksIsReportedPromptly) {
  // The reason used to be cut from muparser's message by a backtracking regex: 2 s for
  // 10,000 blanks (muparser's longest formula).
  const std::string blanks(9900, ' ');
  const std::string message = error_of("sin(x) $" + blanks);
  EXPECT_EQ(message.rfind("syntax error at position 8 in \"sin(x) $", 0), 0u)
      << message.substr(0, 80);
  EXPECT_EQ(message.substr(message.size() - 20), std::string(19, ' ') + "\"");
  EXPECT_EQ(message.find("at position", 20), std::string::npos);
}

TEST(Expression, DeclaringManyVariablesCostsLinearTime) {
  // Each name used to be checked against every earlier one.
  std::vector<std::string> names;
  for (int i = 1; i <= 50000; ++i) names.push_back("y" + std::to_string(i));
  const Expression f("y1 + y50000", names);
  std::vector<double> values(names.size(), 0.0);
  values.front() = 1.0;
  values.back() = 2.0;
  EXPECT_DOUBLE_EQ(f.evaluate(values.data()), 3.0);
  // An unknown name: a short message, and no quadratic comparison with every name.
  const std::string long_name(5000, 'z');
  EXPECT_EQ(error_of(long_name + " + y1", names),
            "unknown variable \"" + long_name + "\" at position 1 in \"" + long_name +
                " + y1\": declared variables: y1, y2, y3, y4, y5, ..., y50000 (50000 variables)");
  EXPECT_EQ(error_of("y2000001", names)
                .rfind("unknown variable \"y2000001\" at position 1 in \"y2000001\": declared "
                       "variables: y1, y2, y3, y4, y5, ..., y50000 (50000 variables)",
                       0),
            0u);
  names.push_back("y7");
  EXPECT_EQ(
      error_of("y1", names).rfind("invalid variable name \"y7\" for \"y1\": declared twice", 0),
      0u);
}
