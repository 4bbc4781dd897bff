#pragma once
// mfg::Problem: a mean field game as plain C++ data, the input of mfg::Model and mfg::Solver.
//
//   -u_t - nu Lap u + H(x, grad u, m) = F(x, m(t)) + f_u(x, t),    u(T) = G(x) + g m(T),
//    m_t - nu Lap m - div(m D_pH(x, grad u, m)) = f_m(x, t),       m(0) = m0 / mass(m0),
//
// with H = |p|^2 / (2 c(x)) by default (Problem::Hamiltonian for the other forms), on
// [0, Lx] (x [0, Ly] (x [0, Lz])) x [0, T], F(x, m) = strength f(m) + V(x) (mfg/coupling.hpp); the
// equations and their discretisation are described in mfg/model.hpp and mfg/solver.hpp.
//
// The data c, V, G, m0, f_u and f_m are mfg::Fields: a C++ callable of (x, y) or (x, y, t)
// (in 3D of (x, y, z, t): Field::bulk), values sampled on a uniform grid of the domain (e.g.
// arrays of a host code), or a constant.
// A deck's `mfg` section is one way to make a Problem: problem_from_config() turns its
// formulas into Fields named after their deck keys, so that the model's messages name the
// key. A library user builds one directly:
//
//   mfg::Problem p;
//   p.domain.length = {1.0};
//   p.grid.points = {101};
//   p.time = {1.0, 50};                                   // horizon, steps
//   p.diffusion = 0.05;
//   p.coupling.potential = mfg::Field::function([](double x, double) { return cos(x); });
//   p.initial_density = mfg::Field::samples({n}, host_density);   // n values, x fastest
//   mfg::Solver solver(comm, p, nullptr, env.log());
//
// The numerical settings (iteration, fokker_planck) are the plain structs of the deck's
// schema (io/config.hpp; their defaults are the deck's). A new datum of the game goes here
// as a Field member, into problem_from_config() (from its deck key) and into mfg::Model,
// which samples and checks it.
//
// Collectivity: none of this is collective; a Field is evaluated by every rank at its own
// points, so its callables run on every rank (not collectively) and must give every rank the
// same value at the same point; sampled values must be the same on every rank.

#include <petscsys.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fracmfg/io/config.hpp"
#include "fracmfg/mfg/grid.hpp"

namespace fracmfg::mfg {

/// A datum of the game as a function of the position (x, y, z) and, for the sources, of the
/// time t (y = 0 in 1D, z = 0 below 3D). Copies share the callable or the samples. The
/// callables of function() and time_function() do not see z: a field of a 3D game that
/// depends on z is a bulk() function or samples.
class Field {
 public:
  using Function = std::function<double(double x, double y)>;
  using TimeFunction = std::function<double(double x, double y, double t)>;
  /// values[k] = f(x[k], y[k], z[k], t) for k < count.
  using BulkFunction = std::function<void(std::size_t count, const double* x, const double* y,
                                          const double* z, double t, double* values)>;

  /// The constant 0.
  Field();
  static Field constant(double value);
  /// f(x, y), independent of time.
  static Field function(Function f);
  /// f(x, y, t) (sources).
  static Field time_function(TimeFunction f);
  /// Values on a uniform grid of the domain with `points` points per axis (one entry per
  /// axis of the domain, each >= 1), placed like mfg::Grid's (periodic: x_i = i L / N,
  /// reflecting: cell centres), `values` of size prod(points), x fastest. Independent of
  /// time. The field is exact at its own points and (bi/tri)linear in between: periodic axes
  /// wrap, reflecting axes hold the value beyond the outermost points. So the samples need
  /// not be on the model's grid (grid sequencing evaluates them on coarser grids). Throws
  /// Error for a wrong size.
  static Field samples(std::vector<PetscInt> points, std::vector<double> values);
  /// A function evaluated for many points at once (problem_from_config: a compiled formula).
  static Field bulk(BulkFunction f, bool time_dependent);

  /// This field, named `name` (e.g. the deck key "mfg.initial_density") in messages.
  Field named(std::string name) const;
  const std::string& name() const { return name_; }
  /// name(), or `fallback` when the field has no name.
  std::string name_or(const std::string& fallback) const;

  /// The constant 0 (a source that is zero is not stored).
  bool is_zero() const;
  /// Depends on t (a source sampled at every time level).
  bool time_dependent() const;

  /// values[k] = f(x[k], y[k], z[k], t) for k < count; `domain` gives the lengths, boundary
  /// and dimension that place sampled values (its points are not used). z may be nullptr
  /// below 3D (then z = 0). Throws UsageError, naming the field, when samples do not fit the
  /// domain's dimension. Not collective.
  void evaluate(const Grid& domain, std::size_t count, const double* x, const double* y,
                const double* z, double t, double* values) const;
  /// The same with z = 0 (1D and 2D domains).
  void evaluate(const Grid& domain, std::size_t count, const double* x, const double* y, double t,
                double* values) const {
    evaluate(domain, count, x, y, nullptr, t, values);
  }

 private:
  struct Data;
  explicit Field(std::shared_ptr<const Data> data);
  std::shared_ptr<const Data> data_;
  std::string name_;
};

/// A mean field game (see the header comment). Defaults are the deck's.
struct Problem {
  /// Lengths [Lx], [Lx, Ly] or [Lx, Ly, Lz] (the dimension), boundary and sides; its
  /// exit_cost and obstacle formulas are not read (the Fields exit_cost and obstacle below
  /// are). Per-side conditions, exits and obstacles in 1D, 2D and 3D.
  io::MfgConfig::Domain domain;
  io::MfgConfig::Grid grid;  ///< points per axis, each >= 3
  io::MfgConfig::Time time;  ///< horizon T > 0, steps N_t >= 1
  double diffusion = 0.0;    ///< nu >= 0
  /// quadratic: H(x, p) = |p|^2 / (2 c(x)); power: |p|^q / (q c(x)), q = exponent > 1;
  /// congestion: H(x, p, m) = |p|^2 / (2 c(x) (epsilon + m)^alpha), epsilon > 0,
  /// 0 <= alpha < 2 (mfg/hamiltonian.hpp).
  struct Hamiltonian {
    using Type = io::MfgConfig::Hamiltonian::Type;
    Type type = Type::quadratic;
    Field control_cost = Field::constant(1.0);  ///< c(x, y, z) > 0
    double exponent = 2.0;                      ///< power: q
    double epsilon = 1.0;                       ///< congestion: epsilon
    double alpha = 1.0;                         ///< congestion: alpha
  };
  /// F(x, m) = strength f(m) + potential(x).
  struct Coupling {
    using Type = io::MfgConfig::Coupling::Type;
    Type type = Type::log;
    double exponent = 1.0;  ///< power: f(m) = m^exponent
    double width = 0.1;     ///< nonlocal: standard deviation of the Gaussian kernel
    double strength = 1.0;
    Field potential;  ///< V(x, y, z) or V(x, y, z, t)
  };
  struct Sources {
    Field hjb;  ///< f_u(x, y, z, t)
    Field fp;   ///< f_m(x, y, z, t)
  };

  Hamiltonian hamiltonian;
  Coupling coupling;
  Field initial_density = Field::constant(1.0);  ///< m0(x, y, z) >= 0 with positive mass
  Field terminal_cost;                           ///< G(x, y, z)
  double terminal_coupling = 0.0;                ///< g in u(T) = G + g m(T)
  Sources sources;
  /// g(x, y, z, t) on the exit sides (domain.sides): the HJB's value u = g at the exit faces.
  Field exit_cost;
  /// O(x, y, z): grid points where O > 0 are walls inside the domain (m = 0 there, no flux
  /// into them; the HJB is decoupled there: u = 0). Zero: no obstacle.
  Field obstacle;
  io::MfgConfig::FokkerPlanck fokker_planck;
  io::MfgConfig::Iteration iteration;
  /// s of nu (-Lap)^(s/2) in both equations, in (1, 2]; below 2 (fractional diffusion, Levy
  /// flights): periodic domains and the fdm Fokker-Planck method only (src/mfg/
  /// fractional_diffusion.hpp).
  double diffusion_order = 2.0;

  int dimension() const { return static_cast<int>(domain.length.size()); }
};

/// Checks the numbers of a problem against the ranges the deck allows (docs/deck_reference.md:
/// diffusion >= 0, damping in (0, 1], tolerance > 0, ...; a deck's problem always passes);
/// the fields are checked by mfg::Model on the grid points. Throws core::CollectiveError
/// (exit code usage) naming the first member out of range ("problem.iteration.damping: ...").
/// Not collective (every rank holding the same problem throws the same error).
void check_problem(const Problem& problem);

/// The outer iteration a solve of `problem` uses: iteration.method, or for `auto` (the
/// default) the two-grid iteration where it applies and the fixed point's own settings are
/// at their defaults (a 1D game with diffusion_order 2, no obstacle, the quadratic or power
/// Hamiltonian, the finite-difference Fokker-Planck step, damping 0.5, schedule fixed,
/// anderson 0), else the fixed point. On the 1D crowd game the two-grid iteration takes far
/// fewer iterations than the fixed point, and less time (docs/performance.md, "The two-grid
/// iteration"); mfg::Solver falls back to the fixed point where it fails under `auto`. Never
/// returns automatic.
io::MfgConfig::Iteration::Method resolved_method(const Problem& problem);

/// Whether the fixed point's own settings are at their defaults (damping 0.5, schedule
/// fixed, anderson 0): where they are, `auto` may choose the two-grid iteration and its fixed
/// point adapts the damping (mfg::Solver).
bool fixed_point_settings_at_defaults(const io::MfgConfig::Iteration& iteration);

/// Grid sequencing (iteration.coarse_levels): the tolerance each coarse level is solved to,
/// max(tolerance, coarse_tolerance), where coarse_tolerance 0 stands for the method's
/// default: 1e-3 for the fixed point and Newton, 1e-2 for the two-grid iteration (each finer
/// level's first two-grid iteration starts from a change well above 1e-2 whatever the
/// coarser one was solved to; docs/performance.md, "The two-grid iteration").
double coarse_level_tolerance(const Problem& problem);

/// Grid sequencing: the coarse levels a solve starts from. iteration.coarse_levels when it is
/// 0 or more; -1 (the default) stands for the method's default: 0 for the fixed point and
/// Newton, and for the two-grid iteration every halving that keeps at least its coarse grid's
/// points (coarse_points(problem)) on every axis, at most 8 (the 10^4-point 1D game: 4, down
/// to 625 points; games of fewer than 256 points per axis: 0). Under `auto` in 2D and 3D,
/// where the fixed point runs at its default settings (and adapts its damping) and there is
/// no obstacle: every halving that keeps at least 16 points per axis, at most 8 (a stall
/// that halves the damping is then paid on the coarsest grid, and the 2D crowd game is solved
/// in a fraction of the cold start's time: docs/performance.md, "The iteration method
/// `auto`"). Levels with fewer than 4 points per axis are skipped when the solve starts
/// (mfg/solver.hpp).
int coarse_levels(const Problem& problem);

/// The two-grid iteration's coarse grid, in points per axis (the grid has min(points, this)):
/// iteration.coarse_points when it is 4 or more; 0 (the default) stands for 128, or with
/// grid sequencing (iteration.coarse_levels not 0) the larger of 128 and points / 20 on the
/// finest axis: on the 1D crowd game a coarse grid of that size takes fewer fine iterations
/// than 128 points when the solve starts from coarse levels, and more from the cold start
/// (docs/performance.md, "The two-grid iteration").
int coarse_points(const Problem& problem);

/// The game of a deck's `mfg` section: the formulas become Fields named after their deck
/// keys ("mfg.coupling.potential", ...), evaluated in bulk at the same points as the
/// formulas, so results equal those of the deck. Throws core::ExpressionError for a formula
/// that does not compile (never for a config read from a deck). Not collective.
Problem problem_from_config(const io::MfgConfig& config);

}  // namespace fracmfg::mfg
