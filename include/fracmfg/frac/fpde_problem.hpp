#pragma once
// frac::FpdeProblem: the equation frac::FpdeSolver solves, as a plain C++ value: the settings
// (type, order, diffusivity, domain, grid, time mesh, history, linear solver) and the data as
// callables. A library user builds one in code; a deck's `fpde` section is one way to make
// it (fpde_problem_from_config compiles the deck's formulas into callables).
//
//   frac::FpdeProblem p;                                  // time_fractional, order 0.5
//   p.grid.points = {201};
//   p.initial = [](double x, double, double) { return std::sin(kPi * x); };
//   p.source = [](double x, double, double t) { return x * (1 - x) * std::cos(t); };
//   frac::FpdeSolver solver(comm, p);
//
// The equations, the boundary kinds and the linear solvers are described in
// fpde_solver.hpp. The settings are the deck's structures (io::FpdeConfig::Domain, Grid,
// Time, History, Solver), with the deck's defaults.
//
// Data: every function is called with the coordinates of a grid point (y = 0 in 1D) and a
// time; an empty function means 0.
//   initial          u(x, y, 0) (called with t = 0);
//   source           f(x, y, t); or
//   nonlinear_source f(x, y, t, u), a source that depends on u: each step (of either type) is
//                    then solved by Newton's method (set at most one of the two);
//   nonlinear_source_derivative  df/du(x, y, t, u) of nonlinear_source, for the Newton
//                    Jacobian; empty: forward differences (f(u + d) - f(u)) / d with
//                    d = 2^-26 max(1, |u|) (2^-26 ~ sqrt(machine epsilon));
//   boundary_value   the Dirichlet value or the Neumann outward flux at (x, y, t) (not used
//                    for periodic boundaries);
//   exact            an exact solution, if known (FpdeSolver::error_against()).
// source_depends_on_time = false promises f(x, y, t) = f(x, y, 0): the solver then evaluates
// the source once.
//
// Threads: the solver calls the functions from the thread that calls it, at the points of its
// rank, in the order of the points. The callables of fpde_problem_from_config each own a
// compiled formula (core::Expression, not thread-safe): a copy of the problem owns copies, so
// two copies may be used from two threads, one problem object from one thread at a time.

#include <functional>
#include <vector>

#include "fracmfg/io/config.hpp"

namespace fracmfg::frac {

/// g(x, y, t) at a grid point (y = 0 in 1D).
using FpdeFunction = std::function<double(double x, double y, double t)>;
/// f(x, y, t, u) at a grid point, u the solution's value there.
using FpdeSourceFunction = std::function<double(double x, double y, double t, double u)>;

struct FpdeProblem {
  using Type = io::FpdeConfig::Type;
  using Domain = io::FpdeConfig::Domain;
  using Boundary = io::FpdeConfig::Domain::Boundary;
  using Grid = io::FpdeConfig::Grid;
  using Time = io::FpdeConfig::Time;
  using History = io::FpdeConfig::History;
  using Solver = io::FpdeConfig::Solver;

  Type type = Type::time_fractional;
  double order = 0.5;  ///< (0, 1) time_fractional, (1, 2] space_fractional
  Domain domain;       ///< lengths (one per dimension) and the boundary kind
  Grid grid;           ///< points per direction
  Time time;           ///< horizon, steps, grading
  double diffusivity = 1.0;
  /// K(x, y) = diffusivity * diffusivity_profile(x, y, 0), > 0. time_fractional: taken at the
  /// half points of the 5-point operator, div(K grad u) (symmetric); space_fractional: at the
  /// grid points, multiplying the Riesz operator row by row, K(x) (-Laplace)^(s/2) u. Empty:
  /// K = diffusivity everywhere.
  FpdeFunction diffusivity_profile;
  History history;  ///< time_fractional only
  Solver solver;

  FpdeFunction initial;
  FpdeFunction source;
  FpdeSourceFunction nonlinear_source;
  FpdeSourceFunction nonlinear_source_derivative;
  bool source_depends_on_time = true;
  FpdeFunction boundary_value;
  FpdeFunction exact;

  int dimension() const { return static_cast<int>(domain.length.size()); }
  /// True when the source depends on u (nonlinear_source is set).
  bool nonlinear() const { return static_cast<bool>(nonlinear_source); }
};

/// The problem of a deck's `fpde` section: the settings copied, the formulas compiled into
/// callables (each evaluates exactly as core::Expression::evaluate_bulk does, so the solution
/// is bit for bit the one of the formulas). A source formula that uses the variable u becomes
/// nonlinear_source, and source_derivative (when its text is not empty)
/// nonlinear_source_derivative; source_depends_on_time is whether the source formula uses t;
/// exact stays empty (a deck has none). Throws
/// core::ExpressionError for a formula that does not compile and fracmfg::Error for a
/// variable other than x, y, t (and u in the source). Not collective.
FpdeProblem fpde_problem_from_config(const io::FpdeConfig& config);

}  // namespace fracmfg::frac
