#include "fracmfg/io/config.hpp"

#include <array>
#include <ostream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "io/config_fill.hpp"
#include "io/deck_validate.hpp"

namespace fracmfg::io {

namespace {

// Each enumeration's deck words, in one table used both ways.
template <class E, std::size_t N>
using Words = std::array<std::pair<E, const char*>, N>;

template <class E, std::size_t N>
const char* word_of(const Words<E, N>& words, E v) {
  for (const auto& w : words) {
    if (w.first == v) return w.second;
  }
  return "?";
}

template <class E, std::size_t N>
E value_of(const Words<E, N>& words, const std::string& word) {
  for (const auto& w : words) {
    if (word == w.second) return w.first;
  }
  throw std::logic_error("deck: word '" + word + "' has no enumerator");
}

using Mfg = MfgConfig;
using Fode = FodeConfig;
using Fpde = FpdeConfig;

const Words<Problem, 3> kProblem{
    {{Problem::mfg, "mfg"}, {Problem::fode, "fode"}, {Problem::fpde, "fpde"}}};
const Words<ExecutionConfig::Backend, 3> kBackend{{{ExecutionConfig::Backend::cpu, "cpu"},
                                                   {ExecutionConfig::Backend::cuda, "cuda"},
                                                   {ExecutionConfig::Backend::automatic, "auto"}}};
const Words<Mfg::Domain::Boundary, 3> kMfgBoundary{
    {{Mfg::Domain::Boundary::periodic, "periodic"},
     {Mfg::Domain::Boundary::reflecting, "reflecting"},
     {Mfg::Domain::Boundary::exit, "exit"}}};
const Words<Mfg::Hamiltonian::Type, 3> kHamiltonian{
    {{Mfg::Hamiltonian::Type::quadratic, "quadratic"},
     {Mfg::Hamiltonian::Type::power, "power"},
     {Mfg::Hamiltonian::Type::congestion, "congestion"}}};
const Words<Mfg::Coupling::Type, 3> kCoupling{{{Mfg::Coupling::Type::log, "log"},
                                               {Mfg::Coupling::Type::power, "power"},
                                               {Mfg::Coupling::Type::nonlocal, "nonlocal"}}};
const Words<Mfg::FokkerPlanck::Method, 2> kFpMethod{
    {{Mfg::FokkerPlanck::Method::fdm, "fdm"}, {Mfg::FokkerPlanck::Method::particles, "particles"}}};
const Words<Mfg::Iteration::Method, 4> kIterationMethod{
    {{Mfg::Iteration::Method::automatic, "auto"},
     {Mfg::Iteration::Method::fixed_point, "fixed_point"},
     {Mfg::Iteration::Method::newton, "newton"},
     {Mfg::Iteration::Method::two_grid, "two_grid"}}};
const Words<Mfg::Iteration::Schedule, 2> kSchedule{
    {{Mfg::Iteration::Schedule::fixed, "fixed"},
     {Mfg::Iteration::Schedule::fictitious_play, "fictitious_play"}}};
const Words<Fode::Method, 2> kFodeMethod{
    {{Fode::Method::abm, "abm"}, {Fode::Method::trapezoidal, "trapezoidal"}}};
const Words<Fode::History, 3> kFodeHistory{{{Fode::History::automatic, "auto"},
                                            {Fode::History::direct, "direct"},
                                            {Fode::History::fft, "fft"}}};
const Words<Fode::Newton::Jacobian, 1> kJacobian{
    {{Fode::Newton::Jacobian::finite_difference, "finite_difference"}}};
const Words<Fpde::Type, 2> kFpdeType{{{Fpde::Type::time_fractional, "time_fractional"},
                                      {Fpde::Type::space_fractional, "space_fractional"}}};
const Words<Fpde::Domain::Boundary, 3> kFpdeBoundary{
    {{Fpde::Domain::Boundary::dirichlet, "dirichlet"},
     {Fpde::Domain::Boundary::neumann, "neumann"},
     {Fpde::Domain::Boundary::periodic, "periodic"}}};
const Words<Fpde::History::Method, 2> kFpdeHistory{
    {{Fpde::History::Method::direct, "direct"}, {Fpde::History::Method::soe, "soe"}}};
const Words<Fpde::Solver::Preconditioner, 3> kPreconditioner{
    {{Fpde::Solver::Preconditioner::automatic, "auto"},
     {Fpde::Solver::Preconditioner::circulant, "circulant"},
     {Fpde::Solver::Preconditioner::none, "none"}}};

auto tie(const ExpressionSpec& e) {
  return std::tie(e.text, e.variables);
}

}  // namespace

const char* to_string(Problem v) {
  return word_of(kProblem, v);
}
std::ostream& operator<<(std::ostream& os, Problem v) {
  return os << to_string(v);
}
const char* to_string(ExecutionConfig::Backend v) {
  return word_of(kBackend, v);
}
const char* to_string(Mfg::Domain::Boundary v) {
  return word_of(kMfgBoundary, v);
}
const char* to_string(Mfg::Hamiltonian::Type v) {
  return word_of(kHamiltonian, v);
}
const char* to_string(Mfg::Coupling::Type v) {
  return word_of(kCoupling, v);
}
const char* to_string(Mfg::FokkerPlanck::Method v) {
  return word_of(kFpMethod, v);
}
const char* to_string(Mfg::Iteration::Method v) {
  return word_of(kIterationMethod, v);
}
const char* to_string(Mfg::Iteration::Schedule v) {
  return word_of(kSchedule, v);
}
const char* to_string(Fode::Method v) {
  return word_of(kFodeMethod, v);
}
const char* to_string(Fode::History v) {
  return word_of(kFodeHistory, v);
}
const char* to_string(Fode::Newton::Jacobian v) {
  return word_of(kJacobian, v);
}
const char* to_string(Fpde::Type v) {
  return word_of(kFpdeType, v);
}
const char* to_string(Fpde::Domain::Boundary v) {
  return word_of(kFpdeBoundary, v);
}
const char* to_string(Fpde::History::Method v) {
  return word_of(kFpdeHistory, v);
}
const char* to_string(Fpde::Solver::Preconditioner v) {
  return word_of(kPreconditioner, v);
}

bool operator==(const ExpressionSpec& a, const ExpressionSpec& b) {
  return tie(a) == tie(b);
}

bool operator==(const ExecutionConfig& a, const ExecutionConfig& b) {
  const auto key = [](const ExecutionConfig& c) {
    return std::tie(c.backend, c.learn, c.report, c.max_ranks_per_gpu, c.balance.grid,
                    c.balance.interval, c.balance.threshold, c.balance.patience);
  };
  return key(a) == key(b);
}

bool operator==(const OutputConfig& a, const OutputConfig& b) {
  return std::tie(a.file, a.every, a.checkpoint_every, a.checkpoint_file) ==
         std::tie(b.file, b.every, b.checkpoint_every, b.checkpoint_file);
}

bool operator==(const LoggingConfig& a, const LoggingConfig& b) {
  return std::tie(a.level, a.all_ranks) == std::tie(b.level, b.all_ranks);
}

bool operator==(const MfgConfig& a, const MfgConfig& b) {
  const auto key = [](const MfgConfig& c) {
    return std::tie(c.domain.length, c.domain.boundary, c.domain.sides, c.domain.exit_cost,
                    c.domain.obstacle, c.grid.points, c.time.horizon, c.time.steps, c.diffusion,
                    c.hamiltonian.type, c.hamiltonian.control_cost, c.hamiltonian.exponent,
                    c.hamiltonian.epsilon, c.hamiltonian.alpha, c.coupling.type,
                    c.coupling.exponent, c.coupling.width, c.coupling.strength,
                    c.coupling.potential, c.initial_density, c.terminal_cost, c.terminal_coupling,
                    c.sources.hjb, c.sources.fp, c.fokker_planck.method, c.fokker_planck.particles,
                    c.fokker_planck.bandwidth, c.fokker_planck.seed, c.iteration.method,
                    c.iteration.damping, c.iteration.schedule, c.iteration.anderson,
                    c.iteration.tolerance, c.iteration.max_iterations, c.iteration.coarse_levels,
                    c.iteration.coarse_tolerance, c.iteration.coarse_points);
  };
  return key(a) == key(b) && a.diffusion_order == b.diffusion_order;
}

bool operator==(const FodeConfig& a, const FodeConfig& b) {
  const auto key = [](const FodeConfig& c) {
    return std::tie(c.order, c.terms.order, c.terms.coefficient, c.horizon, c.steps, c.grading,
                    c.method, c.corrector_iterations, c.history, c.newton.tolerance,
                    c.newton.max_iterations, c.newton.jacobian, c.rhs, c.initial,
                    c.initial_derivative);
  };
  return key(a) == key(b);
}

bool operator==(const FpdeConfig& a, const FpdeConfig& b) {
  const auto key = [](const FpdeConfig& c) {
    return std::tie(c.type, c.order, c.domain.length, c.domain.boundary, c.grid.points,
                    c.time.horizon, c.time.steps, c.time.grading, c.diffusivity,
                    c.diffusivity_profile, c.initial, c.source, c.source_derivative,
                    c.boundary_value, c.history.method, c.history.tolerance,
                    c.solver.preconditioner);
  };
  return key(a) == key(b);
}

// --- filling from a validated deck -----------------------------------------------------

namespace detail {

namespace {

// Readers of a validated tree: a value that is absent here was not applicable (an
// only_when key) or is optional, so the struct keeps its own default.
struct Reader {
  const Value& section;

  const Value* get(const char* key) const { return section.find(key); }
  void real(const char* key, double& out) const {
    if (const Value* v = get(key)) out = v->real;
  }
  void integer(const char* key, int& out) const {
    if (const Value* v = get(key)) out = static_cast<int>(v->integer);
  }
  void integer(const char* key, std::int64_t& out) const {
    if (const Value* v = get(key)) out = static_cast<std::int64_t>(v->integer);
  }
  void boolean(const char* key, bool& out) const {
    if (const Value* v = get(key)) out = v->boolean;
  }
  void text(const char* key, std::string& out) const {
    if (const Value* v = get(key)) out = v->text;
  }
  template <class E, std::size_t N>
  void word(const char* key, const Words<E, N>& words, E& out) const {
    if (const Value* v = get(key)) out = value_of(words, v->text);
  }
  void expression(const char* key, ExpressionSpec& out) const {
    if (const Value* v = get(key)) out = ExpressionSpec{v->text, v->field->variables()};
  }
  void reals(const char* key, std::vector<double>& out) const {
    if (const Value* v = get(key)) out = v->reals;
  }
  void integers(const char* key, std::vector<int>& out) const {
    if (const Value* v = get(key)) out.assign(v->integers.begin(), v->integers.end());
  }
};

}  // namespace

Problem problem_of(const Value& root) {
  return value_of(kProblem, root.at("problem").text);
}

ExecutionConfig execution_config(const Value& root) {
  ExecutionConfig c;
  const Reader r{root.at("execution")};
  r.word("backend", kBackend, c.backend);
  r.boolean("learn", c.learn);
  r.boolean("report", c.report);
  r.integer("max_ranks_per_gpu", c.max_ranks_per_gpu);
  r.boolean("balance.grid", c.balance.grid);
  r.integer("balance.interval", c.balance.interval);
  r.real("balance.threshold", c.balance.threshold);
  r.integer("balance.patience", c.balance.patience);
  return c;
}

OutputConfig output_config(const Value& root) {
  OutputConfig c;
  const Reader r{root.at("output")};
  r.text("file", c.file);
  r.integer("every", c.every);
  r.integer("checkpoint_every", c.checkpoint_every);
  r.text("checkpoint_file", c.checkpoint_file);
  return c;
}

LoggingConfig logging_config(const Value& root) {
  LoggingConfig c;
  const Reader r{root.at("logging")};
  if (const Value* v = r.get("level")) {
    const auto level = core::parse_log_level(v->text);
    if (!level) throw std::logic_error("deck: log level '" + v->text + "' unknown");
    c.level = *level;
  }
  r.boolean("all_ranks", c.all_ranks);
  return c;
}

std::string petsc_options(const Value& root) {
  return root.at("petsc.options").text;
}

MfgConfig mfg_config(const Value& root) {
  MfgConfig c;
  const Reader r{root.at("mfg")};
  r.reals("domain.length", c.domain.length);
  r.word("domain.boundary", kMfgBoundary, c.domain.boundary);
  {
    static const char* const kSides[] = {"domain.sides.x_min", "domain.sides.x_max",
                                         "domain.sides.y_min", "domain.sides.y_max",
                                         "domain.sides.z_min", "domain.sides.z_max"};
    for (std::size_t i = 0; i < std::size(kSides); ++i) {
      if (const Value* v = r.get(kSides[i])) c.domain.sides[i] = value_of(kMfgBoundary, v->text);
    }
  }
  r.expression("domain.exit_cost", c.domain.exit_cost);
  r.expression("domain.obstacle", c.domain.obstacle);
  r.integers("grid.points", c.grid.points);
  r.real("time.horizon", c.time.horizon);
  r.integer("time.steps", c.time.steps);
  r.real("diffusion_order", c.diffusion_order);
  r.real("diffusion", c.diffusion);
  r.word("hamiltonian.type", kHamiltonian, c.hamiltonian.type);
  r.expression("hamiltonian.control_cost", c.hamiltonian.control_cost);
  r.real("hamiltonian.exponent", c.hamiltonian.exponent);
  r.real("hamiltonian.epsilon", c.hamiltonian.epsilon);
  r.real("hamiltonian.alpha", c.hamiltonian.alpha);
  r.word("coupling.type", kCoupling, c.coupling.type);
  r.real("coupling.exponent", c.coupling.exponent);
  r.real("coupling.width", c.coupling.width);
  r.real("coupling.strength", c.coupling.strength);
  r.expression("coupling.potential", c.coupling.potential);
  r.expression("initial_density", c.initial_density);
  r.expression("terminal_cost", c.terminal_cost);
  r.real("terminal_coupling", c.terminal_coupling);
  r.expression("sources.hjb", c.sources.hjb);
  r.expression("sources.fp", c.sources.fp);
  r.word("fokker_planck.method", kFpMethod, c.fokker_planck.method);
  r.integer("fokker_planck.particles", c.fokker_planck.particles);
  r.real("fokker_planck.bandwidth", c.fokker_planck.bandwidth);
  r.integer("fokker_planck.seed", c.fokker_planck.seed);
  r.word("iteration.method", kIterationMethod, c.iteration.method);
  r.real("iteration.damping", c.iteration.damping);
  r.word("iteration.schedule", kSchedule, c.iteration.schedule);
  r.integer("iteration.anderson", c.iteration.anderson);
  r.real("iteration.tolerance", c.iteration.tolerance);
  r.integer("iteration.max_iterations", c.iteration.max_iterations);
  r.integer("iteration.coarse_levels", c.iteration.coarse_levels);
  r.real("iteration.coarse_tolerance", c.iteration.coarse_tolerance);
  r.integer("iteration.coarse_points", c.iteration.coarse_points);
  return c;
}

FodeConfig fode_config(const Value& root) {
  FodeConfig c;
  const Value& fode = root.at("fode");
  const Reader r{fode};
  r.reals("order", c.order);
  r.reals("terms.order", c.terms.order);
  r.reals("terms.coefficient", c.terms.coefficient);
  r.real("horizon", c.horizon);
  r.integer("steps", c.steps);
  r.real("grading", c.grading);
  r.word("method", kFodeMethod, c.method);
  r.integer("corrector_iterations", c.corrector_iterations);
  r.word("history", kFodeHistory, c.history);
  r.real("newton.tolerance", c.newton.tolerance);
  r.integer("newton.max_iterations", c.newton.max_iterations);
  r.word("newton.jacobian", kJacobian, c.newton.jacobian);
  const Value& rhs = fode.at("rhs");
  c.rhs.clear();
  for (const auto& text : rhs.texts) {
    c.rhs.push_back(ExpressionSpec{text, item_variables(*rhs.field, text, rhs.texts.size())});
  }
  r.reals("initial", c.initial);
  r.reals("initial_derivative", c.initial_derivative);
  return c;
}

FpdeConfig fpde_config(const Value& root) {
  FpdeConfig c;
  const Reader r{root.at("fpde")};
  r.word("type", kFpdeType, c.type);
  r.real("order", c.order);
  r.reals("domain.length", c.domain.length);
  r.word("domain.boundary", kFpdeBoundary, c.domain.boundary);
  r.integers("grid.points", c.grid.points);
  r.real("time.horizon", c.time.horizon);
  r.integer("time.steps", c.time.steps);
  r.real("time.grading", c.time.grading);
  r.real("diffusivity", c.diffusivity);
  r.expression("diffusivity_profile", c.diffusivity_profile);
  r.expression("initial", c.initial);
  r.expression("source", c.source);
  r.expression("source_derivative", c.source_derivative);
  r.expression("boundary_value", c.boundary_value);
  r.word("history.method", kFpdeHistory, c.history.method);
  r.real("history.tolerance", c.history.tolerance);
  r.word("solver.preconditioner", kPreconditioner, c.solver.preconditioner);
  return c;
}

}  // namespace detail

}  // namespace fracmfg::io
