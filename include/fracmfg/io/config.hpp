#pragma once
// Typed configurations, one per solver and one per shared deck section, filled by io::Deck
// from a validated deck. Members mirror the deck's keys (docs/deck_reference.md); the
// member initialisers are the deck's defaults (a unit test checks that they agree), and
// keys the deck requires get a plain placeholder so a config can also be built in code.
//
// Formulas are stored as ExpressionSpec: the text and the ordered variable names, not as a
// compiled core::Expression. Configs thus stay plain values (copy, compare, broadcast) and
// each user compiles its own parser (spec.compile()), one per thread if needed. Every
// ExpressionSpec coming from a Deck has been compiled once already, so compile() does not
// throw for them.

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "fracmfg/core/expression.hpp"
#include "fracmfg/core/logger.hpp"

namespace fracmfg::io {

enum class Problem { mfg, fode, fpde };

/// A formula of the deck and the variables it is a function of, in evaluation order.
struct ExpressionSpec {
  std::string text = "0";
  std::vector<std::string> variables;
  /// Compiles the formula (throws core::ExpressionError if it is not valid).
  core::Expression compile() const { return core::Expression(text, variables); }
};

/// execution: where node-local kernels run.
struct ExecutionConfig {
  enum class Backend { cpu, cuda, automatic };  ///< deck words cpu | cuda | auto
  Backend backend = Backend::automatic;
  bool learn = true;
  bool report = false;
  int max_ranks_per_gpu = 4;
  /// execution.balance: re-splitting a grid over the ranks by their measured speed
  /// (exec/balance_policy.hpp); the FPDE and MFG solvers' grids (core::BalanceOptions).
  struct Balance {
    bool grid = false;  ///< re-split the grid (off: PETSc's even split throughout)
    /// Observe (and possibly re-split) every this many steps (fpde) or outer iterations
    /// (mfg); 0 (not given): the solver's default, 10 steps or 1 iteration.
    int interval = 0;
    double threshold = 0.2;  ///< imbalance max t / mean t - 1 that counts as imbalanced
    int patience = 2;        ///< consecutive imbalanced observations before a re-split
  };
  Balance balance;
};

/// output: results and checkpoints.
struct OutputConfig {
  std::string file;             ///< deck default: results/<deck stem>.h5
  int every = 1;                ///< write every this many steps (MFG: outer iterations)
  int checkpoint_every = 0;     ///< 0: no checkpoints
  std::string checkpoint_file;  ///< deck default: `file` with .h5 replaced by .chk.h5
};

/// logging: level and which ranks write.
struct LoggingConfig {
  core::LogLevel level = core::LogLevel::info;
  bool all_ranks = false;
};

/// mfg: a mean field game on [0, Lx] (x [0, Ly] (x [0, Lz])) over [0, T]. Formulas are
/// functions of (x, y, z) or (x, y, z, t); they use only the domain's axes (the deck reader
/// checks it).
struct MfgConfig {
  struct Domain {
    /// periodic: paired with the opposite side of its axis; reflecting: a wall (no flux);
    /// exit: the HJB takes the exit cost there, agents that reach it leave the domain.
    enum class Boundary { periodic, reflecting, exit };
    /// Sides, indexed axis * 2 + end (end 0: the side at 0, 1: the side at L): x_min,
    /// x_max, y_min, y_max (z_min, z_max for a third axis).
    static constexpr int kMaxSides = 6;
    std::vector<double> length = {1.0};  ///< [Lx], [Lx, Ly] or [Lx, Ly, Lz]; its size: dimension
    Boundary boundary = Boundary::periodic;  ///< every side that `sides` does not set
    /// Per-side conditions (deck keys domain.sides.x_min, ...); unset: `boundary`.
    std::array<std::optional<Boundary>, kMaxSides> sides{};
    /// The HJB's exit cost g(x, y, z, t) at exit sides: u = g on the exit face.
    ExpressionSpec exit_cost{"0", {"x", "y", "z", "t"}};
    /// Obstacle O(x, y, z): grid points where O > 0 are walls inside the domain.
    ExpressionSpec obstacle{"0", {"x", "y", "z"}};

    /// The condition of side axis * 2 + end.
    Boundary side(int index) const {
      const auto& s = sides[static_cast<std::size_t>(index)];
      return s ? *s : boundary;
    }
  };
  struct Grid {
    std::vector<int> points = {101};  ///< one per domain length, each >= 3
  };
  struct Time {
    double horizon = 1.0;
    int steps = 100;
  };
  /// quadratic: H(x, p) = |p|^2 / (2 c(x)); power: |p|^q / (q c(x)), q = exponent > 1;
  /// congestion: |p|^2 / (2 c(x) (epsilon + m)^alpha), epsilon > 0, alpha in [0, 2).
  struct Hamiltonian {
    enum class Type { quadratic, power, congestion };
    Type type = Type::quadratic;
    ExpressionSpec control_cost{"1", {"x", "y", "z"}};  ///< c(x, y, z) > 0
    double exponent = 2.0;                              ///< power: q
    double epsilon = 1.0;                               ///< congestion: epsilon
    double alpha = 1.0;                                 ///< congestion: alpha
  };
  /// F(x, m) = strength f(m) + potential(x).
  struct Coupling {
    enum class Type { log, power, nonlocal };
    Type type = Type::log;
    double exponent = 1.0;  ///< power: f(m) = m^exponent
    double width = 0.1;     ///< nonlocal: standard deviation of the Gaussian kernel
    double strength = 1.0;
    ExpressionSpec potential{"0", {"x", "y", "z", "t"}};  ///< V(x, y, z, t)
  };
  struct Sources {
    ExpressionSpec hjb{"0", {"x", "y", "z", "t"}};
    ExpressionSpec fp{"0", {"x", "y", "z", "t"}};
  };
  struct FokkerPlanck {
    enum class Method { fdm, particles };
    Method method = Method::fdm;
    std::int64_t particles = 100000;  ///< over all ranks
    double bandwidth = 0.0;           ///< 0: Silverman's rule
    std::int64_t seed = 1;
  };
  struct Iteration {
    enum class Schedule { fixed, fictitious_play };
    /// fixed_point: the damped fixed point; newton: Newton's method on the coupled system
    /// (GMRES preconditioned by the backward and forward sweeps); two_grid: the undamped
    /// iteration with a coarse-grid correction of its slow modes (mfg/two_grid.hpp);
    /// automatic ("auto"): two_grid where it applies and the fixed point's own settings are
    /// at their defaults, else fixed_point (mfg::resolved_method), with a fall-back to the
    /// fixed point where the two-grid iteration fails.
    enum class Method { automatic, fixed_point, newton, two_grid };
    Method method = Method::automatic;
    static constexpr double kDefaultDamping = 0.5;
    double damping = kDefaultDamping;  ///< in (0, 1]
    Schedule schedule = Schedule::fixed;
    int anderson = 0;  ///< 0: off
    double tolerance = 1.0e-8;
    int max_iterations = 200;
    /// Grid sequencing: the game is first solved on this many coarser grids (each halving
    /// the points per axis and the time steps) and the fine iteration starts from the
    /// interpolated solution; 0: start from u = 0, m(t) = m0; -1: the method's default
    /// (mfg::coarse_levels: 0, or for two_grid the levels down to its coarse grid). In [-1, 8].
    int coarse_levels = -1;
    /// Grid sequencing: each coarse level is solved to max(tolerance, coarse_tolerance); 0:
    /// the method's default, 1e-3 (fixed_point, newton) or 1e-2 (two_grid, which removes
    /// the levels' remaining difference in a few fine iterations). In [0, 0.5].
    double coarse_tolerance = 0.0;
    /// two_grid: points per axis of the coarse grid (min(points, coarse_points)), >= 4; 0:
    /// automatic (mfg::coarse_points: 128, or points / 20 when larger under grid sequencing).
    int coarse_points = 0;
  };

  Domain domain;
  Grid grid;
  Time time;
  double diffusion_order = 2.0;  ///< s in nu (-Laplace)^(s/2), (1, 2]; 2: the Laplacian
  double diffusion = 0.0;
  Hamiltonian hamiltonian;
  Coupling coupling;
  ExpressionSpec initial_density{"1", {"x", "y", "z"}};
  ExpressionSpec terminal_cost{"0", {"x", "y", "z"}};
  double terminal_coupling = 0.0;  ///< g in u(T) = G + g m(T)
  Sources sources;
  FokkerPlanck fokker_planck;
  Iteration iteration;

  int dimension() const { return static_cast<int>(domain.length.size()); }
};

/// fode: D^a y_i = f_i(t, y1..yd) (Caputo), i = 1..d, on [0, T].
struct FodeConfig {
  enum class Method { abm, trapezoidal };
  enum class History { automatic, direct, fft };  ///< deck words auto | direct | fft
  struct Newton {
    enum class Jacobian { finite_difference };
    double tolerance = 1.0e-12;
    int max_iterations = 20;
    Jacobian jacobian = Jacobian::finite_difference;
  };

  /// A multi-term equation sum_k coefficient_k D^{order_k} y = f(t, y) (frac/multi_term_solver.hpp)
  /// for one unknown; empty: a system of `order`.
  struct Terms {
    std::vector<double> order;
    std::vector<double> coefficient;
  };

  std::vector<double> order = {0.5};  ///< one for all components, or one per component
  Terms terms;  ///< given: one multi-term equation (rhs has one formula; `order` is unused)
  double horizon = 1.0;
  int steps = 100;
  double grading = 1.0;  ///< t_n = T (n / steps)^grading; 1: uniform
  Method method = Method::abm;
  int corrector_iterations = 1;
  History history = History::automatic;
  Newton newton;
  /// f_i of t, y1..yd; from a deck each declares t and the y_k its text names (in order).
  std::vector<ExpressionSpec> rhs;
  std::vector<double> initial;  ///< y(0), d values; with terms y(0) (and y'(0), order > 1)
  std::vector<double> initial_derivative;  ///< y'(0), d values when some order > 1, else empty

  std::size_t dimension() const { return rhs.size(); }
  bool multi_term() const { return !terms.order.empty(); }
  /// The order of component i (0-based).
  double order_of(std::size_t i) const { return order.size() == 1 ? order[0] : order.at(i); }
};

/// fpde: time- or space-fractional diffusion on [0, Lx] (x [0, Ly]) over [0, T].
struct FpdeConfig {
  enum class Type { time_fractional, space_fractional };
  struct Domain {
    enum class Boundary { dirichlet, neumann, periodic };
    std::vector<double> length = {1.0};
    Boundary boundary = Boundary::dirichlet;
  };
  struct Grid {
    std::vector<int> points = {101};
  };
  struct Time {
    double horizon = 1.0;
    int steps = 100;
    double grading = 1.0;  ///< t_n = T (n / steps)^grading; 1: uniform
  };
  struct History {
    enum class Method { direct, soe };
    Method method = Method::soe;
    double tolerance = 1.0e-10;
  };
  struct Solver {
    enum class Preconditioner { automatic, circulant, none };  ///< deck words auto | ...
    Preconditioner preconditioner = Preconditioner::automatic;
  };

  Type type = Type::time_fractional;
  double order = 0.5;  ///< (0, 1) time_fractional, (1, 2] space_fractional
  Domain domain;
  Grid grid;
  Time time;
  double diffusivity = 1.0;
  /// K(x, y) = diffusivity * profile (time_fractional); empty text: none (K constant)
  ExpressionSpec diffusivity_profile{"", {"x", "y"}};
  ExpressionSpec initial{"0", {"x", "y"}};
  ExpressionSpec source{"0", {"x", "y", "t", "u"}};  ///< f(x, y, t) or f(x, y, t, u)
  /// df/du of a source of u; empty text: none given (forward differences)
  ExpressionSpec source_derivative{"", {"x", "y", "t", "u"}};
  ExpressionSpec boundary_value{"0", {"x", "y", "t"}};  ///< value (dirichlet) or flux (neumann)
  History history;                                      ///< time_fractional only
  Solver solver;

  int dimension() const { return static_cast<int>(domain.length.size()); }
};

// Field-by-field equality (formulas compare by text and variables).
bool operator==(const ExpressionSpec& a, const ExpressionSpec& b);
bool operator==(const ExecutionConfig& a, const ExecutionConfig& b);
bool operator==(const OutputConfig& a, const OutputConfig& b);
bool operator==(const LoggingConfig& a, const LoggingConfig& b);
bool operator==(const MfgConfig& a, const MfgConfig& b);
bool operator==(const FodeConfig& a, const FodeConfig& b);
bool operator==(const FpdeConfig& a, const FpdeConfig& b);
inline bool operator!=(const ExpressionSpec& a, const ExpressionSpec& b) {
  return !(a == b);
}
inline bool operator!=(const ExecutionConfig& a, const ExecutionConfig& b) {
  return !(a == b);
}
inline bool operator!=(const OutputConfig& a, const OutputConfig& b) {
  return !(a == b);
}
inline bool operator!=(const LoggingConfig& a, const LoggingConfig& b) {
  return !(a == b);
}
inline bool operator!=(const MfgConfig& a, const MfgConfig& b) {
  return !(a == b);
}
inline bool operator!=(const FodeConfig& a, const FodeConfig& b) {
  return !(a == b);
}
inline bool operator!=(const FpdeConfig& a, const FpdeConfig& b) {
  return !(a == b);
}

// The deck word of each enumerator ("auto" for Backend::automatic, ...).
const char* to_string(Problem v);
const char* to_string(ExecutionConfig::Backend v);
const char* to_string(MfgConfig::Domain::Boundary v);
const char* to_string(MfgConfig::Hamiltonian::Type v);
const char* to_string(MfgConfig::Coupling::Type v);
const char* to_string(MfgConfig::FokkerPlanck::Method v);
const char* to_string(MfgConfig::Iteration::Schedule v);
const char* to_string(MfgConfig::Iteration::Method v);
const char* to_string(FodeConfig::Method v);
const char* to_string(FodeConfig::History v);
const char* to_string(FodeConfig::Newton::Jacobian v);
const char* to_string(FpdeConfig::Type v);
const char* to_string(FpdeConfig::Domain::Boundary v);
const char* to_string(FpdeConfig::History::Method v);
const char* to_string(FpdeConfig::Solver::Preconditioner v);
/// Writes to_string(v), e.g. for log lines.
std::ostream& operator<<(std::ostream& os, Problem v);

}  // namespace fracmfg::io
