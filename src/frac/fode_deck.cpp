#include "fracmfg/frac/fode_deck.hpp"

#include <memory>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/expression.hpp"

namespace fracmfg::frac {

namespace {

/// The compiled formulas and the argument buffer (variables in each formula's order).
struct DeckRhs {
  std::vector<core::Expression> formulas;
  /// For formula i and its variable v: -1 for t, else the component index.
  std::vector<std::vector<int>> slots;
  std::vector<double> args;

  void operator()(double t, const double* y, double* f) {
    for (std::size_t i = 0; i < formulas.size(); ++i) {
      const std::vector<int>& slot = slots[i];
      args.resize(slot.size());
      for (std::size_t v = 0; v < slot.size(); ++v) args[v] = slot[v] < 0 ? t : y[slot[v]];
      f[i] = formulas[i].evaluate(args.data());
    }
  }
};

int slot_of(const std::string& name, std::size_t d, const std::string& formula) {
  if (name == "t") return -1;
  if (name == "y" && d == 1) return 0;  // one unknown: y is y1
  if (name.size() > 1 && name[0] == 'y') {
    const std::string digits = name.substr(1);
    if (digits.find_first_not_of("0123456789") == std::string::npos && digits[0] != '0') {
      const unsigned long k = std::stoul(digits);
      if (k >= 1 && k <= d) return static_cast<int>(k - 1);
    }
  }
  throw Error("fode: the formula \"" + formula + "\" declares the variable \"" + name +
              "\"; expected t or y1..y" + std::to_string(d) + (d == 1 ? " (or y)" : ""));
}

}  // namespace

FodeMethod to_method(io::FodeConfig::Method method) {
  return method == io::FodeConfig::Method::abm ? FodeMethod::abm : FodeMethod::trapezoidal;
}

FodeHistory to_history(io::FodeConfig::History history) {
  switch (history) {
    case io::FodeConfig::History::direct: return FodeHistory::direct;
    case io::FodeConfig::History::fft: return FodeHistory::fft;
    case io::FodeConfig::History::automatic: break;
  }
  return FodeHistory::automatic;
}

namespace {

FodeOptions options_of(const io::FodeConfig& config) {
  FodeOptions o;
  o.method = to_method(config.method);
  o.corrector_iterations = config.corrector_iterations;
  o.history = to_history(config.history);
  o.newton_tolerance = config.newton.tolerance;
  o.newton_max_iterations = config.newton.max_iterations;
  return o;
}

}  // namespace

MultiTermSetup multi_term_setup(const io::FodeConfig& config) {
  if (config.dimension() != 1) {
    throw Error("fode: a multi-term equation needs one formula f(t, y), got " +
                std::to_string(config.dimension()));
  }
  MultiTermSetup s;
  s.problem.orders = config.terms.order;
  s.problem.coefficients = config.terms.coefficient;
  s.problem.initial = config.initial;
  s.problem.horizon = config.horizon;
  s.problem.steps = config.steps;
  s.problem.grading = config.grading;
  auto rhs = std::make_shared<DeckRhs>();
  const io::ExpressionSpec& spec = config.rhs.front();
  rhs->formulas.push_back(spec.compile());
  std::vector<int> slot;
  for (const std::string& v : spec.variables) slot.push_back(slot_of(v, 1, spec.text));
  rhs->slots.push_back(std::move(slot));
  s.problem.rhs = [rhs](double t, double y) {
    double f = 0.0;
    (*rhs)(t, &y, &f);
    return f;
  };
  s.options = options_of(config);
  return s;
}

FodeSetup fode_setup(MPI_Comm comm, const io::FodeConfig& config) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::size_t d = config.dimension();
  if (d == 0) throw Error("fode: the deck gives no right-hand side");
  FodeSetup s;
  s.problem.global_size = static_cast<PetscInt>(d);
  s.problem.local_size = rank == 0 ? static_cast<PetscInt>(d) : 0;
  s.problem.horizon = config.horizon;
  s.problem.steps = config.steps;
  s.problem.grading = config.grading;
  if (rank == 0) {
    s.problem.order = config.order;
    s.problem.initial = config.initial;
    s.problem.initial_derivative = config.initial_derivative;
  } else {
    // No components here: the per-component lists are empty, a single order keeps the
    // checks of the global inputs alike on every rank.
    s.problem.order = {config.order.front()};
    s.problem.initial = {0.0};
    if (!config.initial_derivative.empty()) s.problem.initial_derivative = {0.0};
  }

  auto rhs = std::make_shared<DeckRhs>();
  for (const io::ExpressionSpec& spec : config.rhs) {
    rhs->formulas.push_back(spec.compile());
    std::vector<int> slot;
    for (const std::string& v : spec.variables) slot.push_back(slot_of(v, d, spec.text));
    rhs->slots.push_back(std::move(slot));
  }
  if (rank == 0) {
    s.rhs.function = [rhs](double t, const double* y, double* f) { (*rhs)(t, y, f); };
  } else {
    s.rhs.function = [](double, const double*, double*) {};  // no components on this rank
  }

  s.options = options_of(config);
  return s;
}

}  // namespace fracmfg::frac
