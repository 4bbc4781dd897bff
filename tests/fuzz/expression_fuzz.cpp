// libFuzzer target: the formula engine (core::Expression, muparser underneath).
//
// The first byte picks the declared variables, the rest is the formula. A formula that
// compiles is evaluated at a few points (ordinary values, zero, huge values, NaN), in bulk,
// and through a copy; the value must not depend on the way it was evaluated. A formula that
// does not compile must be an ExpressionError, never another exception.
// Run by scripts/fuzz (seeds: tests/fuzz/expression_seeds.txt, dictionary expression.dict).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fracmfg/core/expression.hpp"

namespace {

const std::vector<std::vector<std::string>> kVariableSets = {
    {}, {"x"}, {"x", "y"}, {"x", "y", "t"}, {"t", "y1", "y2", "y3"}, {"t", "y"},
};

[[noreturn]] void broken(const char* what, const std::string& formula) {
  std::fprintf(stderr, "expression_fuzz: %s\nformula: %s\n", what, formula.c_str());
  std::abort();
}

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& variables = kVariableSets[data[0] % kVariableSets.size()];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const fracmfg::core::Expression f(text, variables);
    const fracmfg::core::Expression copy(f);
    const double points[] = {
        0.0, 0.5, -1.25, 3.0, 1e300, -1e-310, std::numeric_limits<double>::quiet_NaN()};
    constexpr std::size_t kPoints = sizeof points / sizeof points[0];
    const std::size_t arity = variables.size();
    // Point i sets variable k to points[(i + k) % kPoints].
    std::vector<double> columns(arity * kPoints);
    for (std::size_t k = 0; k < arity; ++k) {
      for (std::size_t i = 0; i < kPoints; ++i)
        columns[k * kPoints + i] = points[(i + k) % kPoints];
    }
    std::vector<fracmfg::core::Expression::Input> inputs;
    for (std::size_t k = 0; k < arity; ++k) {
      inputs.push_back(fracmfg::core::Expression::Input::array(columns.data() + k * kPoints));
    }
    std::vector<double> bulk(kPoints);
    f.evaluate_bulk(kPoints, inputs, bulk.data());
    for (std::size_t i = 0; i < kPoints; ++i) {
      std::vector<double> values(arity);
      for (std::size_t k = 0; k < arity; ++k) values[k] = columns[k * kPoints + i];
      const double one = f(values);
      if (!same_value(one, bulk[i])) broken("evaluate_bulk differs from one evaluation", text);
      if (!same_value(one, copy(values))) broken("a copy evaluates differently", text);
    }
    for (const auto& v : variables) (void)f.uses(v);
    if (f.is_constant() && arity > 0) {
      for (std::size_t i = 1; i < kPoints; ++i) {
        if (!same_value(bulk[i], bulk[0])) broken("a constant formula takes two values", text);
      }
    }
  } catch (const fracmfg::core::ExpressionError&) {
  }
  return 0;
}
