#pragma once
// Small MFG games shared by the mfg tests, the config built from a deck text, and the
// solver's fields gathered level by level (natural order, on rank 0) for comparisons
// between runs and rank counts.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/mpi_support.hpp"
#include "fracmfg/io/config.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"

namespace fracmfg::test {

/// A 1D periodic game that converges in a few dozen iterations: 41 points, 16 time steps to
/// T = 0.5, diffusion 0.05, log coupling with the potential 0.5 cos(2 pi x), a crowd at
/// x = 0.3. `iteration` is the deck's iteration mapping, e.g.
/// "{damping: 0.6, anderson: 2, tolerance: 1.0e-8, max_iterations: MAXIT}".
inline std::string periodic_1d_game(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
         "  grid: {points: [41]}\n  time: {horizon: 0.5, steps: 16}\n  diffusion: 0.05\n"
         "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
         "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
         "  iteration: " +
         iteration + "\n";
}

/// A 2D reflecting game on a 12 x 11 grid, 6 time steps to T = 0.5, diffusion 0.03, power
/// coupling with the potential (x-0.5)^2, a crowd at (0.3, 0.6), terminal cost (y-0.2)^2.
/// `iteration` as for periodic_1d_game.
inline std::string reflecting_2d_game(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: reflecting}\n"
         "  grid: {points: [12, 11]}\n  time: {horizon: 0.5, steps: 6}\n  diffusion: 0.03\n"
         "  coupling: {type: power, exponent: 2, potential: \"(x-0.5)^2\"}\n"
         "  initial_density: \"exp(-((x-0.3)^2+(y-0.6)^2)/0.03)\"\n"
         "  terminal_cost: \"(y-0.2)^2\"\n"
         "  iteration: " +
         iteration + "\n";
}

/// A 1D corridor of 160 points with a wall on the left and an exit on the right whose cost
/// grows in time (0.2 t), 32 time steps to T = 0.5, diffusion 0.05, power Hamiltonian
/// (q = 2.5) and power coupling (strength 0.5), terminal coupling 0.2. `iteration` as for
/// periodic_1d_game.
inline std::string exit_power_1d_game(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain:\n    length: [1.0]\n    boundary: reflecting\n"
         "    sides: {x_max: exit}\n    exit_cost: \"0.2*t\"\n"
         "  grid: {points: [160]}\n  time: {horizon: 0.5, steps: 32}\n  diffusion: 0.05\n"
         "  hamiltonian: {type: power, exponent: 2.5}\n"
         "  coupling: {type: power, exponent: 1, strength: 0.5}\n"
         "  initial_density: \"exp(-(x-0.4)^2/0.01)\"\n"
         "  terminal_cost: \"0.3*cos(2*pi*x)\"\n  terminal_coupling: 0.2\n"
         "  iteration: " +
         iteration + "\n";
}

/// The mfg section of a deck text, with the word MAXIT (if present) replaced by
/// `max_iterations`; `file` names the deck in error messages.
inline io::MfgConfig mfg_config(std::string deck, int max_iterations = 0,
                                const std::string& file = "test.yaml") {
  if (const std::size_t at = deck.find("MAXIT"); at != std::string::npos) {
    deck.replace(at, 5, std::to_string(max_iterations));
  }
  return io::Deck::from_string(deck, file).mfg();
}

/// Every U^n and M^n of a solver, level by level, in natural order on rank 0 of its
/// communicator (empty vectors elsewhere). Collective on the solver's communicator.
struct MfgLevels {
  std::vector<std::vector<double>> u, m;
};

inline MfgLevels levels_of(const mfg::Solver& solver) {
  MfgLevels l;
  for (int n = 0; n <= solver.steps(); ++n) {
    l.u.push_back(natural_on_zero(solver.model().dm(), solver.u(n)));
    l.m.push_back(natural_on_zero(solver.model().dm(), solver.m(n)));
  }
  return l;
}

/// A game solved to the end: its fields on rank 0 (levels_of) and the outer iterations.
struct SolvedGame {
  MfgLevels levels;
  int iterations = 0;
  bool converged = false;
};

/// Solves the game of a deck text (MAXIT: max_iterations) on comm, quietly. Collective.
inline SolvedGame solve_game(MPI_Comm comm, const std::string& deck, int max_iterations = 400) {
  const auto cfg = mfg_config(deck, max_iterations);
  mfg::Solver solver(comm, mfg::problem_from_config(cfg), nullptr, quiet_logger(comm));
  const auto r = solver.solve();
  SolvedGame s;
  s.iterations = r.iterations;
  s.converged = r.converged;
  s.levels = levels_of(solver);
  return s;
}

/// The game of cfg interrupted after `iterations` outer iterations, checkpointed to `file`,
/// restarted in a new solver on MPI_COMM_WORLD and solved to the end there (its result in
/// `result`). Collective.
inline std::unique_ptr<mfg::Solver> restarted_after(const io::MfgConfig& cfg, int iterations,
                                                    const std::string& file,
                                                    mfg::SolveResult& result) {
  {
    mfg::Solver first(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet_logger());
    for (int i = 0; i < iterations; ++i) first.iterate();
    first.write_checkpoint(file);
  }
  auto second = std::make_unique<mfg::Solver>(MPI_COMM_WORLD, mfg::problem_from_config(cfg),
                                              nullptr, quiet_logger());
  second->restart(file);
  result = second->solve();
  return second;
}

/// The levels one after the other.
inline std::vector<double> flatten(const std::vector<std::vector<double>>& levels) {
  std::vector<double> out;
  for (const auto& level : levels) out.insert(out.end(), level.begin(), level.end());
  return out;
}

}  // namespace fracmfg::test
