// Failures of an MFG run are reported as errors every rank agrees on (core::CollectiveError)
// with the documented exit code and a message that names what went wrong and where:
// data that is inadmissible on the grid points (the deck reader only samples the domain),
// an overflow during the iteration (numerical, naming the iteration and the time level), a
// linear solve that fails (numerical). The fixed point's verdict: changes at round-off level
// are convergence, not divergence; a fixed point that does not settle is still reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"

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
}

}  // namespace
