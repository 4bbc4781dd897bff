#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/expression.hpp"
#include "fracmfg/io/config.hpp"
#include "fracmfg/mfg/problem.hpp"

// The deck -> problem translation: the one place where a deck's `mfg` section becomes an
// mfg::Problem.

namespace fracmfg::mfg {

namespace {

// A deck formula of (x, y, z) or (x, y, z, t), evaluated in bulk by a parser compiled per call
// (muparser objects are not thread-safe; a model samples each field a few times only).
Field formula(const io::ExpressionSpec& spec, const std::string& key) {
  const core::Expression compiled = spec.compile();
  auto bulk = [spec](std::size_t count, const double* x, const double* y, const double* z, double t,
                     double* values) {
    const core::Expression f = spec.compile();
    std::vector<core::Expression::Input> inputs;
    for (const auto& v : f.variables()) {
      if (v == "x") {
        inputs.push_back(core::Expression::Input::array(x));
      } else if (v == "y") {
        inputs.push_back(core::Expression::Input::array(y));
      } else if (v == "z") {
        inputs.push_back(core::Expression::Input::array(z));
      } else if (v == "t") {
        inputs.push_back(core::Expression::Input::constant(t));
      } else {
        throw Error("mfg: formula \"" + spec.text + "\" has an unexpected variable " + v);
      }
    }
    f.evaluate_bulk(count, inputs, values);
  };
  return Field::bulk(bulk, compiled.uses("t")).named(key);
}

// A source: the constant 0 when the formula is (then it is not stored), else a formula.
Field source(const io::ExpressionSpec& spec, const std::string& key) {
  const core::Expression f = spec.compile();
  if (f.is_constant() && f.evaluate(std::vector<double>(f.arity(), 0.0).data()) == 0.0) {
    return Field::constant(0.0).named(key);
  }
  return formula(spec, key);
}

}  // namespace

Problem problem_from_config(const io::MfgConfig& config) {
  Problem p;
  p.domain = config.domain;
  p.grid = config.grid;
  p.time = config.time;
  p.diffusion = config.diffusion;
  p.diffusion_order = config.diffusion_order;
  p.hamiltonian.type = config.hamiltonian.type;
  p.hamiltonian.control_cost =
      formula(config.hamiltonian.control_cost, "mfg.hamiltonian.control_cost");
  p.hamiltonian.exponent = config.hamiltonian.exponent;
  p.hamiltonian.epsilon = config.hamiltonian.epsilon;
  p.hamiltonian.alpha = config.hamiltonian.alpha;
  p.coupling.type = config.coupling.type;
  p.coupling.exponent = config.coupling.exponent;
  p.coupling.width = config.coupling.width;
  p.coupling.strength = config.coupling.strength;
  p.coupling.potential = formula(config.coupling.potential, "mfg.coupling.potential");
  p.initial_density = formula(config.initial_density, "mfg.initial_density");
  p.terminal_cost = formula(config.terminal_cost, "mfg.terminal_cost");
  p.terminal_coupling = config.terminal_coupling;
  p.sources.hjb = source(config.sources.hjb, "mfg.sources.hjb");
  p.sources.fp = source(config.sources.fp, "mfg.sources.fp");
  p.exit_cost = formula(config.domain.exit_cost, "mfg.domain.exit_cost");
  p.obstacle = source(config.domain.obstacle, "mfg.domain.obstacle");
  p.fokker_planck = config.fokker_planck;
  p.iteration = config.iteration;
  return p;
}

}  // namespace fracmfg::mfg
