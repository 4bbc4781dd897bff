// Failures of an MFG run are reported as errors every rank agrees on (core::CollectiveError)
// with the documented exit code and a message that names what went wrong and where:
// data that is inadmissible on the grid points (the deck reader only samples the domain),
// an overflow during the iteration (numerical, naming the iteration and the time level), a
// linear solve that fails (numerical). The fixed point's verdict: changes at round-off level
// are convergence, not divergence; a fixed point that does not settle is still reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/newton.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::ExitCode;
using fracmfg::core::CollectiveError;

std::string deck(const std::string& boundary, int points, const std::string& extra) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: " + boundary +
         "}\n  grid: {points: [" + std::to_string(points) +
         "]}\n  time: {horizon: 1.0, steps: 8}\n  diffusion: 0.05\n" + extra;
}

// The error that building and solving the game raises (or "no error").
std::pair<std::string, ExitCode> error_of(const std::string& text) {
  try {
    const auto cfg = fracmfg::io::Deck::from_string(text, "errors.yaml").mfg();
    mfg::Solver solver(PETSC_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false));
    solver.solve();
  } catch (const CollectiveError& e) {
    return {e.what(), e.exit_code()};
  } catch (const std::exception& e) {
    return {std::string("not a CollectiveError: ") + e.what(), ExitCode::failure};
  }
  return {"no error", ExitCode::success};
}

TEST(MfgErrors, ControlCostNotPositiveAtAGridPointIsADeckProblem) {
  // Negative only near x = 0.01, between the points the deck reader samples.
  const auto [what, code] =
      error_of(deck("periodic", 100,
                    "  hamiltonian: {control_cost: \"1 - 2*exp(-(x-0.01)^2/1e-6)\"}\n"
                    "  coupling: {type: log}\n  initial_density: \"1\"\n"));
  EXPECT_EQ(code, ExitCode::usage);
  EXPECT_EQ(what,
            "mfg.hamiltonian.control_cost: must be finite and > 0 on the grid, but is -1 at x = "
            "0.01");
}

TEST(MfgErrors, InitialDensityNegativeAtAGridPointIsADeckProblem) {
  const auto [what, code] = error_of(
      deck("periodic", 100,
           "  coupling: {type: log}\n  initial_density: \"1 - 3*exp(-(x-0.02)^2/1e-6)\"\n"));
  EXPECT_EQ(code, ExitCode::usage);
  EXPECT_EQ(what,
            "mfg.initial_density: must be finite and >= 0 on the grid, but is -2 at x = 0.02");
}

TEST(MfgErrors, InitialDensityWithoutMassOnTheGridIsADeckProblem) {
  // A spike at x = 0.5 that the reflecting grid's points (0.05, 0.15, ...) miss.
  const auto [what, code] = error_of(deck(
      "reflecting", 10, "  coupling: {type: log}\n  initial_density: \"exp(-(x-0.5)^2/1e-8)\"\n"));
  EXPECT_EQ(code, ExitCode::usage);
  EXPECT_EQ(what.rfind("mfg.initial_density: has no mass on the grid points", 0), 0u) << what;
}

TEST(MfgErrors, InfiniteSourceAtATimeLevelIsADeckProblem) {
  const auto [what, code] = error_of(deck("periodic", 20,
                                          "  coupling: {type: log}\n  initial_density: \"1\"\n"
                                          "  sources: {hjb: \"1/(t - 0.25)\"}\n"));
  EXPECT_EQ(code, ExitCode::usage);
  EXPECT_EQ(what, "mfg.sources.hjb: must be finite on the grid, but is inf at x = 0, t = 0.25");
}

TEST(MfgErrors, OverflowDuringTheIterationIsNumericalAndNamesIterationAndLevel) {
  // m0 peaks near 56; m^200 overflows in the running cost of the first HJB step.
  const auto [what, code] = error_of(deck(
      "periodic", 200,
      "  coupling: {type: power, exponent: 200}\n  initial_density: \"exp(-(x-0.5)^2/1e-4)\"\n"));
  EXPECT_EQ(code, ExitCode::numerical);
  EXPECT_EQ(what.rfind("mfg iteration 1, time level 7 (t = 0.875): HJB step: Newton's method "
                       "failed for u",
                       0),
            0u)
      << what;
}

TEST(MfgErrors, FailedFokkerPlanckSolveIsNumerical) {
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_type", "gmres"));
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_pc_type", "none"));
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_max_it", "1"));
  const auto [what, code] = error_of(deck(
      "periodic", 50, "  coupling: {type: log}\n  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"));
  FRACMFG_PETSC_CHECK(PetscOptionsClearValue(nullptr, "-mfg_fp_ksp_type"));
  FRACMFG_PETSC_CHECK(PetscOptionsClearValue(nullptr, "-mfg_fp_pc_type"));
  FRACMFG_PETSC_CHECK(PetscOptionsClearValue(nullptr, "-mfg_fp_ksp_max_it"));
  EXPECT_EQ(code, ExitCode::numerical);
  EXPECT_EQ(what,
            "mfg iteration 1, time level 1 (t = 0.125): Fokker-Planck step: the linear solve for m "
            "failed (DIVERGED_ITS after 1 iterations)");
}

mfg::SolveResult solve(const std::string& text) {
  const auto cfg = fracmfg::io::Deck::from_string(text, "verdict.yaml").mfg();
  mfg::Solver solver(PETSC_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false));
  return solver.solve();
}

TEST(MfgVerdicts, UniformDensityWithRoundOffChangesConverges) {
  // The data cancel exactly (log 1 = 0, no potential): u stays 0 up to round-off and the
  // first iteration's changes are 0 and 1e-16. They once counted as the smallest change
  // against which round-off of order 1 relative to u ~ 1e-17 looked like divergence.
  const mfg::SolveResult r = solve(
      "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
      "  grid: {points: [20]}\n  time: {horizon: 1.0, steps: 10}\n  diffusion: 0.05\n"
      "  coupling: {type: log}\n  initial_density: \"1\"\n");
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.iterations, 3);
  EXPECT_LE(r.change_u, 1e-8);
  EXPECT_LE(r.change_m, 1e-8);
}

TEST(MfgVerdicts, FixedPointThatDoesNotSettleIsStillReported) {
  // Strong congestion (50 m^3) with the full update (damping 1): the density flips between
  // two shapes and the changes stay of order 1; the run ends unconverged (the driver's exit
  // code 4) instead of being declared converged.
  const mfg::SolveResult r = solve(
      "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
      "  grid: {points: [40]}\n  time: {horizon: 1.0, steps: 10}\n  diffusion: 0.01\n"
      "  coupling: {type: power, exponent: 3, strength: 50}\n"
      "  initial_density: \"1 + 0.5*cos(2*pi*x)\"\n"
      "  iteration: {damping: 1, max_iterations: 30}\n");
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 30);
  EXPECT_GT(std::max(r.change_u, r.change_m), 0.1);
  // The verdict says why, and what to change.
  EXPECT_NE(r.advice.find("the change did not fall appreciably over the last 10 iterations"),
            std::string::npos)
      << r.advice;
  EXPECT_NE(r.advice.find("try mfg.iteration.damping 0.5 or mfg.iteration.anderson"),
            std::string::npos)
      << r.advice;
}

// The crowd game of perf/bench_mfg_spectrum (100 points x 40 steps, log coupling).
std::string crowd(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
         "  grid: {points: [100]}\n  time: {horizon: 1.0, steps: 40}\n  diffusion: 0.05\n"
         "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
         "  initial_density: \"exp(-(x-0.3)^2/0.005)\"\n  iteration: {" +
         iteration + "}\n";
}

double number_after(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  if (at == std::string::npos) return -1.0;
  return std::stod(text.substr(at + key.size()));
}

TEST(MfgVerdicts, ADampingAboveTheLargestStableOneIsNamedWithTheDampingItsRateImplies) {
  // The damped fixed point contracts at exactly 1 - theta up to theta* = 2 / (1 +
  // sqrt(1 - a_min)), a_min the most negative eigenvalue of the linearised game K; above it
  // the slowest mode's rate rho > 1 - theta gives a_min back (docs/performance.md, "The damped
  // fixed point's rate and its largest damping"). Here a_min comes independently from the
  // power iteration on K at the solution.
  const auto cfg = fracmfg::io::Deck::from_string(
                       crowd("damping: 0.5, tolerance: 1.0e-10, max_iterations: 200"), "k.yaml")
                       .mfg();
  mfg::Solver solver(PETSC_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false));
  ASSERT_TRUE(solver.solve().converged);
  std::vector<mfg::detail::VecPtr> u, m;
  mfg::detail::copy_solution(solver, u, m);
  mfg::detail::LinearizedGame game(solver.model());
  game.linearise(&u, &u, &m);
  const double norm = mfg::detail::power_iteration(game, solver.model(), 80).norm;
  const double a_min = -norm;  // -4.894 (perf/mfg_spectrum.py: every eigenvalue in [-4.894, 0])
  EXPECT_NEAR(a_min, -4.894, 0.02);
  const double theta_star = 2.0 / (1.0 + std::sqrt(1.0 - a_min));

  // Damping 0.6 > theta* = 0.583: the slowest mode contracts at about 0.75, not 0.4.
  const mfg::SolveResult above =
      solve(crowd("damping: 0.6, tolerance: 1.0e-8, max_iterations: 30"));
  ASSERT_FALSE(above.converged);
  EXPECT_NE(above.advice.find("the damping 0.6 is above this game's largest stable damping"),
            std::string::npos)
      << above.advice;
  const double estimate = number_after(above.advice, "which that rate puts at ");
  EXPECT_NEAR(estimate, theta_star, 0.02) << above.advice;
  const double suggested = number_after(above.advice, "mfg.iteration.damping ");
  EXPECT_LT(suggested, theta_star) << above.advice;
  EXPECT_GT(suggested, 0.9 * theta_star) << above.advice;

  // The suggested damping contracts at 1 - damping and converges.
  const fracmfg::io::Deck deck = fracmfg::io::Deck::from_string(
      crowd("damping: " + std::to_string(suggested) + ", tolerance: 1.0e-8, max_iterations: 60"),
      "suggested.yaml");
  mfg::Solver again(PETSC_COMM_WORLD, mfg::problem_from_config(deck.mfg()), nullptr,
                    fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false));
  ASSERT_TRUE(again.solve().converged);
  const auto& h = again.history();
  const std::size_t k = h.size();
  ASSERT_GE(k, 12u);
  const double rate = std::pow(std::max(h[k - 1].change_u, h[k - 1].change_m) /
                                   std::max(h[k - 6].change_u, h[k - 6].change_m),
                               0.2);
  EXPECT_NEAR(rate, 1.0 - suggested, 0.05);

  // Below theta*, short of iterations: the contraction and the iterations still needed.
  const mfg::SolveResult short_run =
      solve(crowd("damping: 0.3, tolerance: 1.0e-8, max_iterations: 25"));
  ASSERT_FALSE(short_run.converged);
  EXPECT_NEAR(number_after(short_run.advice, "the change fell by "), 0.7, 0.03) << short_run.advice;
  EXPECT_NE(short_run.advice.find("more would reach the tolerance: raise "
                                  "mfg.iteration.max_iterations (the damped fixed point contracts "
                                  "at 1 - damping = 0.7"),
            std::string::npos)
      << short_run.advice;
}

}  // namespace
