#pragma once
// The FodeSolver inputs that a deck's `fode` section (io::FodeConfig) describes.
//
//   const frac::FodeSetup s = frac::fode_setup(comm, deck.fode());
//   frac::FodeSolver solver(comm, s.problem, s.rhs, s.options, &selector, log);
//
// A deck system is small (its right-hand sides are formulas f_i(t, y1..yd), each of which may
// use every component), so all d components live on rank 0 of comm; the other ranks hold
// none and only take part in the collective calls. The formulas are compiled once; the
// right-hand side evaluates them with the variables t, y1..yd. The implicit method uses
// forward-difference Jacobians (the deck's newton.jacobian: finite_difference).
//
// A deck with fode.terms describes one multi-term equation instead (multi_term_setup(): a
// frac::MultiTermProblem whose f(t, y) is the one formula of fode.rhs, its unknown written y
// or y1).

#include <mpi.h>

#include "fracmfg/frac/fode_solver.hpp"
#include "fracmfg/frac/multi_term_solver.hpp"
#include "fracmfg/io/config.hpp"

namespace fracmfg::frac {

struct FodeSetup {
  FodeProblem problem;
  FodeRhs rhs;
  FodeOptions options;
};

/// Not collective (reads the rank with MPI_Comm_rank). Throws core::ExpressionError only for a
/// config built in code with an invalid formula (deck formulas are checked when read).
FodeSetup fode_setup(MPI_Comm comm, const io::FodeConfig& config);

struct MultiTermSetup {
  MultiTermProblem problem;
  FodeOptions options;
};

/// For a config with terms (config.multi_term()); the same on every rank. Not collective.
/// Throws core::ExpressionError only for a config built in code with an invalid formula.
MultiTermSetup multi_term_setup(const io::FodeConfig& config);

/// FodeMethod / FodeHistory of the deck words.
FodeMethod to_method(io::FodeConfig::Method method);
FodeHistory to_history(io::FodeConfig::History history);

}  // namespace fracmfg::frac
