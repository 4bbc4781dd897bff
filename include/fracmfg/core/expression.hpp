#pragma once
// core::Expression: a scalar formula read from an input deck, such as
// "exp(-(x-0.3)^2/0.005)", compiled once with a declared, ordered list of variable names
// and then evaluated at many points.
//
//   core::Expression rho0("exp(-(x-0.3)^2/0.005)", {"x", "y"});
//   double v = rho0({0.25, 0.0});                       // variables in declared order
//   rho0.evaluate_bulk(n, {Expression::Input::array(xs), Expression::Input::constant(0.0)},
//                      out);                            // out[i] = rho0(xs[i], 0)
//
// Syntax (muparser 2.3): + - * / ^ (power, right-associative, -2^2 = -4), comparisons
// (< <= > >= == !=), logical && ||, the conditional c ? a : b; constants pi and e; functions
// sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp log (natural) ln log2
// log10 sqrt abs sign rint floor ceil erf erfc gamma (Euler's Gamma function) fmod, and the
// variadic min max sum avg.
// Assignments (=) and comma-separated lists of results are rejected.
//
// Errors: construction throws core::ExpressionError, whose what() reads e.g.
//   syntax error at position 14 in "exp(-(x-0.3)^^2)": unexpected operator "^"
//   unknown variable "z" at position 5 in "sin(z)"; declared variables: x, y
// Positions count characters of the expression from 1.
//
// Threads: evaluation writes the variable values into storage owned by the object, so one
// object must not be evaluated by several threads at once; give each thread its own copy
// (a copy recompiles the formula and owns an independent parser).

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fracmfg/core/error.hpp"

namespace fracmfg::core {

/// A formula that does not compile, uses an undeclared name or has declared variables that
/// are not valid names. what() is the full message (which quotes the formula); the deck
/// reader prefixes it with file, line, column and key.
class ExpressionError : public Error {
 public:
  ExpressionError(std::string expression, int position, const std::string& message);
  /// The formula as given.
  const std::string& expression() const noexcept { return expression_; }
  /// 1-based character position of the problem in expression(), 0 when there is none.
  int position() const noexcept { return position_; }
  ExitCode exit_code() const noexcept override { return ExitCode::usage; }

 private:
  std::string expression_;
  int position_;
};

class Expression {
 public:
  /// One argument column of evaluate_bulk(): either an array read with a stride, or one
  /// value broadcast to every point.
  struct Input {
    const double* data = nullptr;  ///< nullptr: use `value` at every point
    std::size_t stride = 1;        ///< distance between consecutive points in `data`
    double value = 0.0;
    static Input array(const double* data, std::size_t stride = 1) { return {data, stride, 0.0}; }
    static Input constant(double value) { return {nullptr, 0, value}; }
  };

  /// The constant 0 of no variables.
  Expression();
  /// Compiles `text` with `variables` (ordered; each a name [A-Za-z_][A-Za-z0-9_]*, distinct,
  /// not pi, e or a function name). Throws ExpressionError.
  Expression(std::string text, std::vector<std::string> variables);
  Expression(const Expression& other);
  Expression& operator=(const Expression& other);
  /// A moved-from Expression may only be assigned to or destroyed.
  Expression(Expression&& other) noexcept;
  Expression& operator=(Expression&& other) noexcept;
  ~Expression();

  const std::string& text() const;
  const std::vector<std::string>& variables() const;
  std::size_t arity() const { return variables().size(); }

  /// True when the formula refers to `variable` (a declared name).
  bool uses(std::string_view variable) const;
  /// True when the formula uses none of its variables (its value is then cached).
  bool is_constant() const;

  /// Value at one point; `values[k]` is the value of variables()[k] (arity() values).
  double evaluate(const double* values) const;
  /// Value at one point; throws std::invalid_argument unless values.size() == arity().
  double operator()(std::initializer_list<double> values) const;
  double operator()(const std::vector<double>& values) const;
  /// out[i] = f(inputs[0] at i, ..., inputs[arity-1] at i) for i < n; inputs.size() must be
  /// arity() (std::invalid_argument otherwise).
  void evaluate_bulk(std::size_t n, const std::vector<Input>& inputs, double* out) const;

  /// The names usable in formulas besides the variables: constants and functions.
  static std::vector<std::string> constant_names();
  static std::vector<std::string> function_names();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::core
