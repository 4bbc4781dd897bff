#include "fracmfg/frac/fpde_problem.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/expression.hpp"

namespace fracmfg::frac {

namespace {

/// A compiled formula of some of x, y, t, u. Evaluating it copies the arguments it names into
/// its variables' order and calls Expression::evaluate, the per-point step of
/// Expression::evaluate_bulk: the values are bit for bit those of the bulk evaluation.
class Formula {
 public:
  Formula(const io::ExpressionSpec& spec, bool allow_u) : expr_(spec.compile()) {
    const auto& vars = expr_.variables();
    for (std::size_t k = 0; k < vars.size(); ++k) {
      const std::string& v = vars[k];
      if (v == "x") {
        slot_[k] = 0;
      } else if (v == "y") {
        slot_[k] = 1;
      } else if (v == "t") {
        slot_[k] = 2;
      } else if (v == "u" && allow_u) {
        slot_[k] = 3;
      } else if (v == "u") {
        throw Error("fpde: the expression \"" + expr_.text() + "\" uses u where u is not defined");
      } else {
        throw Error("fpde: the expression \"" + expr_.text() + "\" has the variable \"" + v +
                    "\"; expected x, y, t or u");
      }
    }
    arity_ = vars.size();
  }

  bool uses(const char* variable) const { return expr_.uses(variable); }

  double operator()(double x, double y, double t, double u) const {
    const double args[4] = {x, y, t, u};
    double values[4] = {0.0, 0.0, 0.0, 0.0};
    for (std::size_t k = 0; k < arity_; ++k) values[k] = args[slot_[k]];
    return expr_.evaluate(values);
  }

 private:
  core::Expression expr_;
  std::array<std::size_t, 4> slot_{};
  std::size_t arity_ = 0;
};

FpdeFunction function_of(Formula f) {
  return [f = std::move(f)](double x, double y, double t) { return f(x, y, t, 0.0); };
}

}  // namespace

FpdeProblem fpde_problem_from_config(const io::FpdeConfig& config) {
  FpdeProblem p;
  p.type = config.type;
  p.order = config.order;
  p.domain = config.domain;
  p.grid = config.grid;
  p.time = config.time;
  p.diffusivity = config.diffusivity;
  p.history = config.history;
  p.solver = config.solver;
  p.initial = function_of(Formula(config.initial, false));
  if (!config.diffusivity_profile.text.empty()) {
    p.diffusivity_profile = function_of(Formula(config.diffusivity_profile, false));
  }
  Formula source(config.source, true);
  p.source_depends_on_time = source.uses("t");
  if (source.uses("u")) {
    p.nonlinear_source = [f = std::move(source)](double x, double y, double t, double u) {
      return f(x, y, t, u);
    };
    if (!config.source_derivative.text.empty()) {
      p.nonlinear_source_derivative = [f = Formula(config.source_derivative, true)](
                                          double x, double y, double t, double u) {
        return f(x, y, t, u);
      };
    }
  } else {
    p.source = function_of(std::move(source));
  }
  p.boundary_value = function_of(Formula(config.boundary_value, false));
  return p;
}

}  // namespace fracmfg::frac
