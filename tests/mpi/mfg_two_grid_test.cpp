// The two-grid iteration of the coupled game (iteration.method two_grid, src/mfg/two_grid.hpp),
// and iteration.method auto (the two-grid iteration on these games, falling back to the fixed
// point; the fixed point elsewhere, its damping adapting where it stalls):
// it converges to the fixed point's discrete solution (to the tolerance) in fewer outer
// iterations (also from coarser grids), gives the same fields and iteration counts on 1, 2 and 3
// ranks, resumes from a checkpoint and survives a re-split of the grid, and the deck reader refuses
// what it does not support (2D, 3D, fractional diffusion, obstacles, particles). 1D periodic, and
// reflecting with an exit; quadratic and power Hamiltonians, log and power couplings.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petsclog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/scoped_options.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/solve_control.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/newton.hpp"

namespace {

namespace mfg = fracmfg::mfg;

std::string periodic_1d_game(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
         "  grid: {points: [160]}\n  time: {horizon: 0.5, steps: 32}\n  diffusion: 0.05\n"
         "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
         "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
         "  iteration: " +
         iteration + "\n";
}

struct Game {
  const char* name;
  std::string (*deck)(const std::string& iteration);
  const char* coarse_points;
  const char* damping;  // the fixed point's, for the reference solution
  // At most this fraction of the fixed point's iterations (measured: 16 of 43 periodic, 27
  // of 37 with the exit).
  double fraction;
};

// The exit game (a wall on the left, an exit on the right): tests/common/mfg_configs.hpp.
const Game kGames[] = {
    {"periodic_1d_log", periodic_1d_game, "40", "0.5", 0.5},
    {"exit_1d_power", fracmfg::test::exit_power_1d_game, "40", "0.5", 0.8},
};

std::string fixed_tight(const Game& g) {
  return std::string("{method: fixed_point, damping: ") + g.damping +
         ", tolerance: 1.0e-10, max_iterations: MAXIT}";
}

// From the cold start (coarse_levels 0; the default would start these 160-point games from
// two coarse levels, down to the 40-point coarse grid).
std::string two_grid_tight(const Game& g, const std::string& more = ", coarse_levels: 0") {
  return std::string("{method: two_grid, coarse_points: ") + g.coarse_points +
         ", tolerance: 1.0e-10, max_iterations: MAXIT" + more + "}";
}

using Solved = fracmfg::test::SolvedGame;

Solved solve_on(MPI_Comm comm, const std::string& deck, int max_iterations = 400) {
  return fracmfg::test::solve_game(comm, deck, max_iterations);
}

const fracmfg::test::Options kTightSolves = {{"-mfg_hjb_ksp_rtol", "1e-13"},
                                             {"-mfg_fp_ksp_rtol", "1e-14"},
                                             {"-mfg_newton_sweep_ksp_rtol", "1e-12"}};

// Both iterations solve the same discrete game: the two-grid solution equals the fixed
// point's to the tolerance, in fewer outer iterations.
TEST(MfgTwoGrid, ConvergesToTheFixedPointSolutionInFewerIterations) {
  const fracmfg::test::ScopedOptions tight(kTightSolves);
  for (const Game& g : kGames) {
    const Solved fixed = solve_on(MPI_COMM_WORLD, g.deck(fixed_tight(g)));
    const Solved two = solve_on(MPI_COMM_WORLD, g.deck(two_grid_tight(g)));
    EXPECT_TRUE(fixed.converged) << g.name;
    EXPECT_TRUE(two.converged) << g.name;
    const double du = fracmfg::test::relative_difference(fixed.levels.u, two.levels.u);
    const double dm = fracmfg::test::relative_difference(fixed.levels.m, two.levels.m);
    if (fracmfg::test::world_rank() == 0) {
      std::printf(
          "  %s: fixed point %d iterations, two-grid %d; max relative difference u %.2e, "
          "m %.2e\n",
          g.name, fixed.iterations, two.iterations, du, dm);
    }
    EXPECT_LT(du, 1e-8) << g.name;
    EXPECT_LT(dm, 1e-8) << g.name;
    EXPECT_LE(two.iterations, g.fraction * fixed.iterations) << g.name;
  }
}

// An iteration ends the run only when its HJB steps were solved to 1e-3 x the tolerance;
// every method solves an iteration that tightly when the last two changes predict (at their
// ratio) one below the tolerance (Solver::Impl::predicts_the_end), so the iteration that first
// reaches the tolerance also ends the run: the one before it is still above the tolerance, and
// no loosely solved iteration below it is left over. The fixed point from the cold start and
// from two coarse levels and the two-grid iteration (each of them ends one iteration later
// without the prediction), and Newton's method at 1e-6 (which gets there by its trials'
// tolerance, 1e-3 change^2 with the certifying floor).
TEST(MfgTwoGrid, TheIterationThatReachesTheToleranceEndsTheRun) {
  for (const Game& g : kGames) {
    const std::string damping = std::string(", damping: ") + g.damping;
    const std::pair<const char*, std::string> methods[] = {
        {"two_grid",
         std::string("method: two_grid, coarse_points: ") + g.coarse_points + ", coarse_levels: 0"},
        {"fixed_point", "method: fixed_point, coarse_levels: 0" + damping},
        {"fixed_point from 2 coarse levels", "method: fixed_point, coarse_levels: 2" + damping},
        {"newton", "method: newton, coarse_levels: 0"},
    };
    for (const auto& [method, iteration] : methods) {
      for (const char* tol : {"1.0e-6", "1.0e-9"}) {
        // Newton's method only at 1e-6 (its runs to 1e-9 take minutes on 3 ranks).
        if (std::string(method) == "newton" && std::string(tol) != "1.0e-6") continue;
        const std::string deck =
            g.deck("{" + iteration + ", tolerance: " + tol + ", max_iterations: MAXIT}");
        const auto cfg = fracmfg::test::mfg_config(deck, 400);
        mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                           fracmfg::test::quiet_logger());
        const auto r = solver.solve();
        const std::string what = std::string(g.name) + ", " + method + ", tolerance " + tol;
        ASSERT_TRUE(r.converged) << what;
        const auto& h = solver.history();
        ASSERT_GE(h.size(), 2U) << what;
        const double t = std::stod(tol);
        const auto& last = h.back();
        const auto& before = h[h.size() - 2];
        if (fracmfg::test::world_rank() == 0) {
          std::printf("  %s: %zu iterations, changes %.2e then %.2e\n", what.c_str(), h.size(),
                      std::max(before.change_u, before.change_m),
                      std::max(last.change_u, last.change_m));
        }
        EXPECT_LE(std::max(last.change_u, last.change_m), t) << what;
        EXPECT_LE(last.newton_tolerance, std::max(1e-3 * t, 1e-12)) << what;
        EXPECT_GT(std::max(before.change_u, before.change_m), t) << what;
      }
    }
  }
}

// The same fields and iteration counts on every rank count: the job's ranks against rank 0
// alone (the test runs at 1, 2 and 3 ranks).
TEST(MfgTwoGrid, SameUAndMOnAnyRankCount) {
  const fracmfg::test::ScopedOptions tight(kTightSolves);
  const fracmfg::test::SubComm one(1);
  for (const Game& g : kGames) {
    const std::string deck = g.deck(two_grid_tight(g));
    const Solved all = solve_on(MPI_COMM_WORLD, deck);
    if (one.comm == MPI_COMM_NULL) continue;
    const Solved single = solve_on(one.comm, deck);
    const double du = fracmfg::test::relative_difference(single.levels.u, all.levels.u);
    const double dm = fracmfg::test::relative_difference(single.levels.m, all.levels.m);
    std::printf("  %s: %d vs %d iterations, max relative difference u %.2e, m %.2e\n", g.name,
                all.iterations, single.iterations, du, dm);
    EXPECT_EQ(all.iterations, single.iterations) << g.name;
    EXPECT_LT(du, 1e-10) << g.name;
    EXPECT_LT(dm, 1e-10) << g.name;
  }
}

// Grid sequencing under the two-grid iteration (iteration.coarse_levels; the coarse levels
// solved to the two-grid default, 1e-2 (unit.mfg_problem_check_test), or to 1e-4): the same
// solution as from the cold start, in fewer fine iterations, and the same on every rank
// count. The default coarse_levels (-1) is the coarse start down to the coarse grid: on
// these 160-point games with 40 coarse points the levels of 40 and 80 points (the log says
// which), the run of coarse_levels 2.
TEST(MfgTwoGrid, ACoarseStartEndsAtTheSameSolutionInFewerFineIterations) {
  const fracmfg::test::ScopedOptions tight(kTightSolves);
  const fracmfg::test::SubComm one(1);
  for (const Game& g : kGames) {
    const Solved cold = solve_on(MPI_COMM_WORLD, g.deck(two_grid_tight(g)));
    ASSERT_TRUE(cold.converged) << g.name;
    {
      const fracmfg::test::CapturedLog captured(fracmfg::core::LogLevel::info);
      mfg::Solver by_default(
          MPI_COMM_WORLD,
          mfg::problem_from_config(fracmfg::test::mfg_config(g.deck(two_grid_tight(g, "")), 400)),
          nullptr, captured.log());
      const auto r = by_default.solve();
      const Solved two_levels =
          solve_on(MPI_COMM_WORLD, g.deck(two_grid_tight(g, ", coarse_levels: 2")));
      const std::string text = captured.text();
      EXPECT_NE(text.find("coarse start level 2: 40 points"), std::string::npos) << text;
      EXPECT_NE(text.find("coarse start level 1: 80 points"), std::string::npos) << text;
      EXPECT_EQ(text.find("coarse start level 3"), std::string::npos) << text;
      EXPECT_TRUE(r.converged) << g.name;
      EXPECT_EQ(r.iterations, two_levels.iterations) << g.name;
      EXPECT_LT(r.iterations, cold.iterations) << g.name;
    }
    for (const char* extra :
         {", coarse_levels: 2", ", coarse_levels: 2, coarse_tolerance: 1.0e-4"}) {
      const std::string deck = g.deck(two_grid_tight(g, extra));
      const Solved warm = solve_on(MPI_COMM_WORLD, deck);
      ASSERT_TRUE(warm.converged) << g.name << extra;
      const double du = fracmfg::test::relative_difference(cold.levels.u, warm.levels.u);
      const double dm = fracmfg::test::relative_difference(cold.levels.m, warm.levels.m);
      if (fracmfg::test::world_rank() == 0) {
        std::printf("  %s%s: cold start %d iterations, coarse start %d; u %.2e, m %.2e\n", g.name,
                    extra, cold.iterations, warm.iterations, du, dm);
      }
      EXPECT_LT(du, 1e-8) << g.name << extra;
      EXPECT_LT(dm, 1e-8) << g.name << extra;
      EXPECT_LT(warm.iterations, cold.iterations) << g.name << extra;
      if (one.comm == MPI_COMM_NULL) continue;
      const Solved single = solve_on(one.comm, deck);
      EXPECT_EQ(single.iterations, warm.iterations) << g.name << extra;
      EXPECT_LT(fracmfg::test::relative_difference(single.levels.u, warm.levels.u), 1e-10);
      EXPECT_LT(fracmfg::test::relative_difference(single.levels.m, warm.levels.m), 1e-10);
    }
  }
}

// Interrupted after 3 iterations, checkpointed and restarted, the iteration ends at the
// uninterrupted solution (to the tolerance: the restart's first evaluation uses a fresh
// iteration's HJB tolerance).
TEST(MfgTwoGrid, RestartFromACheckpointEndsAtTheSameSolution) {
  const fracmfg::test::SharedTempDir dir("fracmfg-two-grid");
  ASSERT_TRUE(fracmfg::test::on_all_ranks(!dir.path().empty()));
  const std::string deck = kGames[0].deck(two_grid_tight(kGames[0]));
  const Solved whole = solve_on(MPI_COMM_WORLD, deck);
  const auto cfg = fracmfg::test::mfg_config(deck, 400);
  const std::string file = dir.path() + "/two_grid.chk.h5";
  mfg::SolveResult r;
  const auto second = fracmfg::test::restarted_after(cfg, 3, file, r);
  EXPECT_TRUE(r.converged);
  const fracmfg::test::MfgLevels resumed = fracmfg::test::levels_of(*second);
  const double du = fracmfg::test::relative_difference(whole.levels.u, resumed.u);
  const double dm = fracmfg::test::relative_difference(whole.levels.m, resumed.m);
  if (fracmfg::test::world_rank() == 0) {
    std::printf("  restart: %d iterations against %d; max relative difference u %.2e, m %.2e\n",
                r.iterations, whole.iterations, du, dm);
  }
  EXPECT_LT(du, 1e-8);
  EXPECT_LT(dm, 1e-8);
}

// Re-splitting the grid between outer iterations (rank r made to look r + 1 times as fast)
// builds the coarse game again on the new split: the same solution.
double faster_by_rank(int rank, std::int64_t) {
  return 1.0 + rank;
}

TEST(MfgTwoGrid, ReSplitGridEndsAtTheSameSolution) {
  for (const Game& g : kGames) {
    const std::string deck = g.deck(two_grid_tight(g));
    const Solved plain = solve_on(MPI_COMM_WORLD, deck);
    const auto cfg = fracmfg::test::mfg_config(deck, 400);
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    fracmfg::core::BalanceOptions o;
    o.enabled = true;
    o.interval = 1;
    o.patience = 1;
    o.speed = faster_by_rank;
    solver.set_balance(o);
    const auto r = solver.solve();
    EXPECT_TRUE(r.converged) << g.name;
    EXPECT_EQ(solver.resplits() > 0, fracmfg::test::world_size() > 1) << g.name;
    const fracmfg::test::MfgLevels moved = fracmfg::test::levels_of(solver);
    const double du = fracmfg::test::relative_difference(plain.levels.u, moved.u);
    const double dm = fracmfg::test::relative_difference(plain.levels.m, moved.m);
    if (fracmfg::test::world_rank() == 0) {
      std::printf("  %s re-split %d times: %d iterations against %d; difference u %.2e, m %.2e\n",
                  g.name, solver.resplits(), r.iterations, plain.iterations, du, dm);
    }
    EXPECT_LT(du, 1e-8) << g.name;
    EXPECT_LT(dm, 1e-8) << g.name;
  }
}

// iteration.method auto, the default, on these 1D games is the two-grid iteration: the same
// iterations and fields as method two_grid, and the solver's first line names the choice.
TEST(MfgTwoGrid, AutoIsTheTwoGridIterationOnA1DGame) {
  for (const Game& g : kGames) {
    const std::string automatic = std::string("{coarse_points: ") + g.coarse_points +
                                  ", tolerance: 1.0e-10, max_iterations: MAXIT, coarse_levels: 0}";
    const fracmfg::test::CapturedLog captured(fracmfg::core::LogLevel::info);
    mfg::Solver solver(MPI_COMM_WORLD,
                       mfg::problem_from_config(fracmfg::test::mfg_config(g.deck(automatic), 400)),
                       nullptr, captured.log());
    const auto r = solver.solve();
    const Solved two = solve_on(MPI_COMM_WORLD, g.deck(two_grid_tight(g)));
    const std::string text = captured.text();
    EXPECT_NE(text.find(", auto: two_grid"), std::string::npos) << text;
    EXPECT_EQ(text.find("warn"), std::string::npos) << text;
    EXPECT_TRUE(r.converged) << g.name;
    EXPECT_EQ(r.iterations, two.iterations) << g.name;
    const fracmfg::test::MfgLevels a = fracmfg::test::levels_of(solver);
    EXPECT_EQ(fracmfg::test::relative_difference(a.u, two.levels.u), 0.0) << g.name;
    EXPECT_EQ(fracmfg::test::relative_difference(a.m, two.levels.m), 0.0) << g.name;
  }
}

// Under auto, a two-grid iteration that fails hands over to the damped fixed point from the
// initial state, with a warning; the run ends at the fixed point's solution, its iterations
// counted after the failed ones, and a checkpoint written after the hand-over restarts with
// the fixed point. The failure here: a coarse grid of 4 points, far too coarse for the
// game, leaves the undamped iteration's large modes (factors beyond -1) uncorrected.
TEST(MfgTwoGrid, AutoFallsBackToTheFixedPointWhereTheTwoGridIterationFails) {
  const fracmfg::test::SharedTempDir dir("fracmfg-two-grid-auto");
  ASSERT_TRUE(fracmfg::test::on_all_ranks(!dir.path().empty()));
  const Game& g = kGames[0];
  const std::string deck =
      g.deck("{coarse_points: 4, tolerance: 1.0e-10, max_iterations: MAXIT, coarse_levels: 0}");
  const auto cfg = fracmfg::test::mfg_config(deck, 400);
  const Solved fixed = solve_on(MPI_COMM_WORLD, g.deck(fixed_tight(g)));
  ASSERT_TRUE(fixed.converged);
  const fracmfg::test::CapturedLog captured(fracmfg::core::LogLevel::warn);
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, captured.log());
  const auto r = solver.solve();
  const std::string text = captured.text();
  const std::string said = "the two-grid iteration (iteration.method auto) ends after iteration ";
  const auto at = text.find(said);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("the damped fixed point (damping 0.5) continues from u = 0, m(t) = m0"),
            std::string::npos)
      << text;
  const int failed = std::stoi(text.substr(at + said.size()));
  ASSERT_TRUE(r.converged);
  const fracmfg::test::MfgLevels a = fracmfg::test::levels_of(solver);
  const double du = fracmfg::test::relative_difference(fixed.levels.u, a.u);
  const double dm = fracmfg::test::relative_difference(fixed.levels.m, a.m);
  if (fracmfg::test::world_rank() == 0) {
    std::printf(
        "  auto with 4 coarse points: two-grid ended after %d iterations, %d in all (fixed "
        "point alone %d); u %.2e, m %.2e\n",
        failed, r.iterations, fixed.iterations, du, dm);
  }
  EXPECT_GE(failed, 1);
  // The fixed point's part is a fresh solve: its iterations and fields exactly.
  EXPECT_EQ(r.iterations, failed + fixed.iterations);
  EXPECT_EQ(du, 0.0);
  EXPECT_EQ(dm, 0.0);
  for (const auto& rec : solver.history()) {  // a cold start takes its first sweep whole
    EXPECT_EQ(rec.damping, rec.iteration <= failed + 1 ? 1.0 : 0.5) << rec.iteration;
  }

  // A checkpoint after the hand-over: the restart goes on with the fixed point (its damping
  // in the history), to the same solution.
  const std::string file = dir.path() + "/auto.chk.h5";
  mfg::SolveResult resumed;
  const auto second = fracmfg::test::restarted_after(cfg, failed + 3, file, resumed);
  EXPECT_TRUE(resumed.converged);
  EXPECT_EQ(resumed.iterations, r.iterations);
  for (const auto& rec : second->history()) {
    EXPECT_EQ(rec.damping, rec.iteration <= failed + 1 ? 1.0 : 0.5) << rec.iteration;
  }
  const fracmfg::test::MfgLevels b = fracmfg::test::levels_of(*second);
  EXPECT_EQ(fracmfg::test::relative_difference(a.u, b.u), 0.0);
  EXPECT_EQ(fracmfg::test::relative_difference(a.m, b.m), 0.0);
}

// A 1D game with an obstacle, for which auto is the fixed point, and a coupling strong enough
// to put its largest stable damping below the default 0.5: there the iteration wanders at
// changes of 0.1-0.5 instead of converging.
std::string obstacle_game(const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: reflecting, obstacle: "
         "\"0.02 - (x-0.7)^2\"}\n  grid: {points: [100]}\n  time: {horizon: 1.0, steps: 40}\n"
         "  diffusion: 0.05\n  coupling: {type: log, strength: 2, potential: "
         "\"0.5*cos(2*pi*x)\"}\n  initial_density: \"exp(-(x-0.3)^2/0.005)\"\n  iteration: " +
         iteration + "\n";
}

// Under auto with the fixed point's settings at their defaults the damping adapts: where the
// change stops falling (its smallest over 10 iterations not 0.9 x the smallest before) it is
// halved and the iteration starts again from the initial state, as a fresh solve at the
// halved damping (the same iterations and fields), on any rank count, also across a
// checkpoint. A damping set in the deck is kept (and stalls here).
TEST(MfgAuto, TheFixedPointHalvesAStallingDampingAndStartsAgain) {
  const fracmfg::test::SharedTempDir dir("fracmfg-auto-damping");
  ASSERT_TRUE(fracmfg::test::on_all_ranks(!dir.path().empty()));
  const std::string automatic = obstacle_game("{tolerance: 1.0e-10, max_iterations: MAXIT}");
  const Solved stalls = solve_on(
      MPI_COMM_WORLD,
      obstacle_game("{method: fixed_point, tolerance: 1.0e-10, max_iterations: MAXIT}"), 100);
  EXPECT_FALSE(stalls.converged);
  const Solved quarter = solve_on(
      MPI_COMM_WORLD, obstacle_game("{damping: 0.25, tolerance: 1.0e-10, max_iterations: MAXIT}"));
  ASSERT_TRUE(quarter.converged);

  const auto cfg = fracmfg::test::mfg_config(automatic, 400);
  const fracmfg::test::CapturedLog captured(fracmfg::core::LogLevel::info);
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, captured.log());
  const auto r = solver.solve();
  ASSERT_TRUE(r.converged);
  const std::string text = captured.text();
  EXPECT_NE(text.find(", auto: fixed_point"), std::string::npos) << text;
  const std::string said = "iteration.method auto halves it to 0.25 and starts again";
  ASSERT_NE(text.find(said), std::string::npos) << text;
  EXPECT_EQ(text.find(said, text.find(said) + 1), std::string::npos) << text;  // once
  int stalled = 0;  // the iterations at damping 0.5
  for (const auto& rec : solver.history()) {
    if (rec.damping == 0.5) stalled = rec.iteration;
  }
  EXPECT_GE(stalled, 20);
  EXPECT_EQ(r.iterations, stalled + quarter.iterations);
  for (const auto& rec : solver.history()) {
    const double want = rec.iteration == 1 || rec.iteration == stalled + 1 ? 1.0
                        : rec.iteration <= stalled                         ? 0.5
                                                                           : 0.25;
    EXPECT_EQ(rec.damping, want) << rec.iteration;
  }
  const fracmfg::test::MfgLevels a = fracmfg::test::levels_of(solver);
  EXPECT_EQ(fracmfg::test::relative_difference(a.u, quarter.levels.u), 0.0);
  EXPECT_EQ(fracmfg::test::relative_difference(a.m, quarter.levels.m), 0.0);
  if (fracmfg::test::world_rank() == 0) {
    std::printf("  auto: damping 0.5 for %d iterations, then 0.25: %d in all (0.25 alone %d)\n",
                stalled, r.iterations, quarter.iterations);
  }

  // The same on one rank.
  const fracmfg::test::SubComm one(1);
  if (one.comm != MPI_COMM_NULL) {
    const Solved single = solve_on(one.comm, automatic);
    EXPECT_EQ(single.iterations, r.iterations);
    EXPECT_LT(fracmfg::test::relative_difference(single.levels.u, a.u), 1e-10);
    EXPECT_LT(fracmfg::test::relative_difference(single.levels.m, a.m), 1e-10);
  }

  // Checkpointed 3 iterations after the halving and restarted: the same run.
  const std::string file = dir.path() + "/auto_damping.chk.h5";
  mfg::SolveResult resumed;
  const auto second = fracmfg::test::restarted_after(cfg, stalled + 3, file, resumed);
  EXPECT_TRUE(resumed.converged);
  EXPECT_EQ(resumed.iterations, r.iterations);
  const fracmfg::test::MfgLevels b = fracmfg::test::levels_of(*second);
  EXPECT_EQ(fracmfg::test::relative_difference(a.u, b.u), 0.0);
  EXPECT_EQ(fracmfg::test::relative_difference(a.m, b.m), 0.0);
}

// The 2D crowd game (inputs/crowd_2d.yaml's) on 48^2 x 20 from `levels` coarse levels, at
// the deck's default method (auto: the fixed point) and damping.
std::string crowd_48(const std::string& levels) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: reflecting}\n"
         "  grid: {points: [48, 48]}\n  time: {horizon: 1.0, steps: 20}\n  diffusion: 0.01\n"
         "  coupling: {type: log, potential: \"50*exp(-((x-0.5)^2/0.002 + (y-0.5)^2/0.03))\"}\n"
         "  initial_density: \"exp(-((x-0.15)^2 + (y-0.5)^2)/0.01)\"\n"
         "  terminal_cost: \"5*(x-0.9)^2\"\n"
         "  iteration: {tolerance: 1.0e-6, max_iterations: MAXIT, coarse_levels: " +
         levels + "}\n";
}

// The number after `key` in `text` (the first occurrence); NaN when absent.
double number_after(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  if (at == std::string::npos) return std::nan("");
  return std::stod(text.substr(at + key.size()));
}

// The most negative eigenvalue of the linearised game at `solver`'s solution, by 40 steps of
// the power iteration.
double a_min_at_solution(const mfg::Solver& solver) {
  std::vector<mfg::detail::VecPtr> u, m;
  mfg::detail::copy_solution(solver, u, m);
  mfg::detail::LinearizedGame game(solver.model());
  game.linearise(&u, &u, &m);
  return mfg::detail::power_iteration(game, solver.model(), 40).rayleigh;
}

// With grid sequencing under auto the fine level's damping comes from the linearised game's
// spectrum on the coarse levels: the 2D crowd game (the fixed point; damping 0.5 stalls on
// it) on 48^2 x 20 from one coarse level of 24^2 x 10, which halves 0.5 to 0.25 and then
// measures a_min; the fine level runs at 0.9 theta* of it, without a halving of its own.
TEST(MfgAuto, AFinerLevelStartsAtTheDampingTheCoarseSpectrumGives) {
  const fracmfg::test::CapturedLog captured(fracmfg::core::LogLevel::info);
  mfg::Solver solver(MPI_COMM_WORLD,
                     mfg::problem_from_config(fracmfg::test::mfg_config(crowd_48("1"), 400)),
                     nullptr, captured.log());
  const auto r = solver.solve();
  ASSERT_TRUE(r.converged);
  const std::string text = captured.text();
  EXPECT_NE(text.find("coarse start level 1: 24 x 24 points"), std::string::npos) << text;
  EXPECT_EQ(text.find("halves it"), std::string::npos) << text;  // not on the fine level
  const double a_coarse = number_after(text, "coarse start level 1: a_min ");
  ASSERT_TRUE(std::isfinite(a_coarse)) << text;
  const double theta = solver.history().front().damping;
  EXPECT_NEAR(theta, 0.9 * mfg::detail::largest_stable_damping(a_coarse),
              3e-3);  // a_min as logged, to 3 digits; the damping rounded down to 3 decimals
  EXPECT_GT(theta, 0.25);
  for (const auto& rec : solver.history()) EXPECT_EQ(rec.damping, theta) << rec.iteration;
  // Below the fine grid's own largest stable damping, by about the margin.
  const double theta_fine = mfg::detail::largest_stable_damping(a_min_at_solution(solver));
  EXPECT_LT(theta, theta_fine);
  EXPECT_GT(theta, 0.85 * theta_fine);
  // Fewer fine iterations than at the 0.25 the coarse level's stall left (the same coarse
  // start with the damping set: nothing adapts).
  std::string warm_deck = crowd_48("1");
  warm_deck.replace(warm_deck.find("{tolerance"), 10, "{damping: 0.25, tolerance");
  const Solved quarter_warm = solve_on(MPI_COMM_WORLD, warm_deck);
  ASSERT_TRUE(quarter_warm.converged);
  EXPECT_LT(r.iterations, quarter_warm.iterations);
  if (fracmfg::test::world_rank() == 0) {
    std::printf(
        "  2D 48^2 x 20 from 24^2 x 10 (a_min %.4g): damping %.4f (theta* of the fine "
        "grid %.4f), %d fine iterations; at 0.25 %d\n",
        a_coarse, theta, theta_fine, r.iterations, quarter_warm.iterations);
  }
  // The deck's default (coarse_levels -1) is this coarse start: every halving that keeps 16
  // points per axis (mfg::coarse_levels).
  const Solved by_default = solve_on(MPI_COMM_WORLD, crowd_48("-1"));
  const fracmfg::test::MfgLevels one_level = fracmfg::test::levels_of(solver);
  ASSERT_TRUE(by_default.converged);
  EXPECT_EQ(by_default.iterations, r.iterations);
  EXPECT_EQ(fracmfg::test::relative_difference(by_default.levels.u, one_level.u), 0.0);
  EXPECT_EQ(fracmfg::test::relative_difference(by_default.levels.m, one_level.m), 0.0);
  // The cold fine solve alone halves its own, once: its restart at 0.25 grows to changes
  // of about 10 before it contracts, which must not read as a stall against the cold start's
  // first change (1 by construction). After the halving it is the solve at 0.25.
  const fracmfg::test::CapturedLog cold_log(fracmfg::core::LogLevel::info);
  mfg::Solver cold(MPI_COMM_WORLD,
                   mfg::problem_from_config(fracmfg::test::mfg_config(crowd_48("0"), 400)), nullptr,
                   cold_log.log());
  ASSERT_TRUE(cold.solve().converged);
  const std::string cold_text = cold_log.text();
  EXPECT_NE(cold_text.find("auto halves it to 0.25"), std::string::npos) << cold_text;
  EXPECT_EQ(cold_text.find("auto halves it to 0.125"), std::string::npos) << cold_text;
  int stalled = 0;
  for (const auto& rec : cold.history()) {
    if (rec.damping == 0.5) stalled = rec.iteration;
  }
  std::string quarter_deck = crowd_48("0");
  quarter_deck.replace(quarter_deck.find("{tolerance"), 10, "{damping: 0.25, tolerance");
  const Solved quarter = solve_on(MPI_COMM_WORLD, quarter_deck);
  ASSERT_TRUE(quarter.converged);
  EXPECT_EQ(cold.iterations(), stalled + quarter.iterations);
  if (fracmfg::test::world_rank() == 0) {
    std::printf(
        "  2D 48^2 x 20: %d fine iterations from the coarse level; cold %d (0.5 for %d, then "
        "as 0.25 alone: %d)\n",
        r.iterations, cold.iterations(), stalled, quarter.iterations);
  }
  EXPECT_LT(r.iterations, cold.iterations());
}

// A stall on a level that started from coarser ones (here forced: -mfg_auto_damping_margin
// 1.4 puts the 48^2 x 20 game's fine level at the default 0.5, where it stalls) halves the
// damping and starts that level again from the coarse levels, not from u = 0: after the stall
// the run is the fine solve at 0.25 from the same coarse start (the deck's damping 0.25 on
// both levels, which is where the coarse level's own stall leaves it), bitwise.
TEST(MfgAuto, AStallAfterACoarseStartStartsAgainFromTheCoarseLevels) {
  fracmfg::test::CapturedLog captured(fracmfg::core::LogLevel::info);
  mfg::SolveResult r;
  int stalled = 0;
  fracmfg::test::MfgLevels levels;
  {
    const fracmfg::test::ScopedOptions wide(
        fracmfg::test::Options{{"-mfg_auto_damping_margin", "1.4"}});
    mfg::Solver solver(MPI_COMM_WORLD,
                       mfg::problem_from_config(fracmfg::test::mfg_config(crowd_48("1"), 400)),
                       nullptr, captured.log());
    r = solver.solve();
    ASSERT_TRUE(r.converged);
    for (const auto& rec : solver.history()) {
      if (rec.damping == 0.5) stalled = rec.iteration;
    }
    for (const auto& rec : solver.history()) {
      EXPECT_EQ(rec.damping, rec.iteration <= stalled ? 0.5 : 0.25) << rec.iteration;
    }
    levels = fracmfg::test::levels_of(solver);
  }
  const std::string text = captured.text();
  EXPECT_NE(text.find("mfg: damping 0.5 on the fine grid (1.4 x"), std::string::npos) << text;
  EXPECT_NE(text.find("halves it to 0.25 and starts again from the coarse levels"),
            std::string::npos)
      << text;
  EXPECT_GE(stalled, 20);
  std::string warm_deck = crowd_48("1");
  warm_deck.replace(warm_deck.find("{tolerance"), 10, "{damping: 0.25, tolerance");
  const Solved quarter_warm = solve_on(MPI_COMM_WORLD, warm_deck);
  ASSERT_TRUE(quarter_warm.converged);
  EXPECT_EQ(r.iterations, stalled + quarter_warm.iterations);
  EXPECT_EQ(fracmfg::test::relative_difference(levels.u, quarter_warm.levels.u), 0.0);
  EXPECT_EQ(fracmfg::test::relative_difference(levels.m, quarter_warm.levels.m), 0.0);
  if (fracmfg::test::world_rank() == 0) {
    std::printf(
        "  2D 48^2 x 20 at 0.5 on the fine level: stalled after %d, %d in all (%d from the "
        "coarse start at 0.25)\n",
        stalled, r.iterations, quarter_warm.iterations);
  }
}

// The damping of a level from a_min on coarser ones (mfg::detail::sequenced_damping).
TEST(MfgAuto, TheSequencedDampingExtrapolatesAMinAndKeepsItsBounds) {
  namespace d = mfg::detail;
  const double inf = std::numeric_limits<double>::infinity();
  // 0.9 theta*, rounded down to 3 decimals.
  const auto theta = [](double a) {
    return std::floor(900.0 * 2.0 / (1.0 + std::sqrt(1.0 - a))) / 1000.0;
  };
  // The 2D crowd game's 16^2 x 6 and 32^2 x 12 (4 and 3 halvings below 256^2 x 100):
  // -26.46 at the fine grid (the power iteration there: -26.62), -22.22 at 64^2 x 25 (-22.13).
  const std::vector<std::pair<int, double>> crowd = {{4, -17.98}, {3, -20.10}};
  EXPECT_NEAR(d::sequenced_damping(crowd, 0, 0.9, inf, 0.05).a_min, -26.46, 1e-12);
  EXPECT_NEAR(d::sequenced_damping(crowd, 2, 0.9, inf, 0.05).a_min, -22.22, 1e-12);
  EXPECT_EQ(d::sequenced_damping(crowd, 0, 0.9, inf, 0.05).damping, theta(-26.46));
  EXPECT_EQ(theta(-26.46), 0.288);
  EXPECT_NEAR(d::largest_stable_damping(-26.62), 0.3198, 1e-4);
  // One measurement is held; so is a_min where the extrapolation would raise it.
  EXPECT_EQ(d::sequenced_damping({{1, -20.9}}, 0, 0.9, inf, 0.05).a_min, -20.9);
  EXPECT_EQ(d::sequenced_damping({{2, -20.0}, {1, -18.0}}, 0, 0.9, inf, 0.05).a_min, -18.0);
  // At most the default damping 0.5 and 0.9 x a damping that stalled; at least the floor.
  EXPECT_EQ(d::sequenced_damping({{1, -0.5}}, 0, 0.9, inf, 0.05).damping, 0.5);
  EXPECT_EQ(d::sequenced_damping(crowd, 0, 0.9, 0.3, 0.05).damping, 0.27);
  EXPECT_EQ(d::sequenced_damping({{1, -1e6}}, 0, 0.9, inf, 0.05).damping, 0.05);
  EXPECT_THROW(d::sequenced_damping({}, 0, 0.9, inf, 0.05), fracmfg::Error);
}

// Two coarse levels: a_min extrapolated from 12^2 x 5 and 24^2 x 10 to the 48^2 x 20 grid
// gives a theta* near the fine grid's own, the damping below it; the same damping and run on
// one rank, and resumed from a checkpoint (the damping is the checkpoint's).
TEST(MfgAuto, TwoCoarseLevelsExtrapolateAMinToTheFineGrid) {
  const fracmfg::test::SharedTempDir dir("fracmfg-auto-spectrum");
  ASSERT_TRUE(fracmfg::test::on_all_ranks(!dir.path().empty()));
  const auto cfg = fracmfg::test::mfg_config(crowd_48("2"), 400);
  const fracmfg::test::CapturedLog captured(fracmfg::core::LogLevel::info);
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, captured.log());
  const std::string file = dir.path() + "/auto_spectrum.chk.h5";
  const auto r = solver.solve(mfg::CheckpointOptions{file, 10});
  ASSERT_TRUE(r.converged);
  const std::string text = captured.text();
  const double theta_logged = number_after(text, "x the largest stable damping ");
  const double a2 = number_after(text, "coarse start level 2: a_min ");
  const double a1 = number_after(text, "coarse start level 1: a_min ");
  ASSERT_TRUE(std::isfinite(a2) && std::isfinite(a1)) << text;
  EXPECT_LT(a1, a2);  // a_min falls as the grid is refined
  const double a_fine = a_min_at_solution(solver);
  const double theta = solver.history().back().damping;
  const double theta_fine = mfg::detail::largest_stable_damping(a_fine);
  if (fracmfg::test::world_rank() == 0) {
    std::printf(
        "  2D 48^2 x 20: a_min %.4g (12^2 x 5), %.4g (24^2 x 10), fine %.4g; theta* "
        "%.4f as logged, %.4f fine; damping %.4f, %d fine iterations\n",
        a2, a1, a_fine, theta_logged, theta_fine, theta, r.iterations);
  }
  // The extrapolation from these coarsest grids (a_min -17.1, -18.2) gives -19.3 at 48^2 x 20
  // against -21.1 there: theta* 0.363 against 0.351, which the margin covers.
  EXPECT_NEAR(theta_logged, theta_fine, 0.05 * theta_fine);
  EXPECT_LT(theta, theta_fine);
  EXPECT_GT(theta, 0.85 * theta_fine);
  for (const auto& rec : solver.history()) EXPECT_EQ(rec.damping, theta) << rec.iteration;
  const fracmfg::test::MfgLevels all = fracmfg::test::levels_of(solver);

  const fracmfg::test::SubComm one(1);
  if (one.comm != MPI_COMM_NULL) {
    mfg::Solver single(one.comm, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger(one.comm));
    EXPECT_EQ(single.solve().iterations, r.iterations);
    EXPECT_EQ(single.history().back().damping, theta);
    // At the same damping the fields differ as any 2D solve's at the sweeps' default Krylov
    // tolerances (block Jacobi over the ranks): 1.1e-8 (u) and 4.9e-9 (m) between 1 and 2
    // ranks, below the outer tolerance 1e-6.
    const fracmfg::test::MfgLevels ls = fracmfg::test::levels_of(single);
    EXPECT_LT(fracmfg::test::relative_difference(ls.u, all.u), 1e-7);
    EXPECT_LT(fracmfg::test::relative_difference(ls.m, all.m), 1e-7);
  }

  ASSERT_GT(r.iterations % 10, 0) << "the last checkpoint would be the converged state";
  mfg::Solver resumed(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                      fracmfg::test::quiet_logger());
  resumed.restart(file);
  ASSERT_EQ(resumed.iterations(), r.iterations / 10 * 10);
  const auto rr = resumed.solve();
  EXPECT_TRUE(rr.converged);
  EXPECT_EQ(rr.iterations, r.iterations);
  EXPECT_EQ(resumed.history().back().damping, theta);
  const fracmfg::test::MfgLevels again = fracmfg::test::levels_of(resumed);
  EXPECT_EQ(fracmfg::test::relative_difference(again.u, all.u), 0.0);
  EXPECT_EQ(fracmfg::test::relative_difference(again.m, all.m), 0.0);
}

// The fixed point starts Newton's method for HJB level n from the previous iterate shifted by
// the change the sweep just made at level n + 1 (Solver::Impl::initial_guess): on the 2D
// crowd game of 48^2 x 20 from its coarse start the fine level's HJB steps take 1.23 Newton
// systems per level and iteration on one rank, against 1.56 from the previous iterate
// alone (the start before; docs/performance.md).
TEST(MfgSweeps, TheShiftedStartSavesNewtonStepsOnA2DGame) {
  mfg::Solver solver(MPI_COMM_WORLD,
                     mfg::problem_from_config(fracmfg::test::mfg_config(crowd_48("1"), 400)),
                     nullptr, fracmfg::test::quiet_logger());
  ASSERT_TRUE(solver.solve().converged);
  long long systems = 0;
  for (const auto& rec : solver.history()) systems += rec.newton_iterations;
  const double per_level = static_cast<double>(systems) /
                           (static_cast<double>(solver.history().size()) * solver.steps());
  if (fracmfg::test::world_rank() == 0) {
    std::printf("  2D 48^2 x 20: %zu fine iterations, %.3f HJB Newton systems per level\n",
                solver.history().size(), per_level);
  }
  EXPECT_GE(per_level, 1.0);
  EXPECT_LT(per_level, 1.35);
}

// -mfg_fp_pc_lag: the Fokker-Planck preconditioner built every lag levels of a sweep changes
// the Krylov path only: the same iterations, the same solution to the solves' tolerances,
// from a factorisation at every level (1), every 4 (the default) or one per sweep; a lag
// below 1 is refused with the option's name.
TEST(MfgSweeps, TheFokkerPlanckPreconditionerLagChangesOnlyTheKrylovPath) {
  const std::string deck =
      "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: reflecting}\n"
      "  grid: {points: [24, 22]}\n  time: {horizon: 1.0, steps: 12}\n  diffusion: 0.02\n"
      "  coupling: {type: log, potential: \"20*exp(-((x-0.5)^2 + (y-0.5)^2)/0.01)\"}\n"
      "  initial_density: \"exp(-((x-0.2)^2 + (y-0.5)^2)/0.02)\"\n"
      "  terminal_cost: \"3*(x-0.9)^2\"\n"
      "  iteration: {damping: 0.3, tolerance: 1.0e-9, max_iterations: MAXIT}\n";
  auto with_lag = [&](const char* lag) {
    const fracmfg::test::ScopedOptions option(fracmfg::test::Options{{"-mfg_fp_pc_lag", lag}});
    return solve_on(MPI_COMM_WORLD, deck);
  };
  const Solved every = with_lag("1");
  ASSERT_TRUE(every.converged);
  for (const char* lag : {"4", "1000"}) {
    const Solved lagged = with_lag(lag);
    ASSERT_TRUE(lagged.converged) << lag;
    const double du = fracmfg::test::relative_difference(every.levels.u, lagged.levels.u);
    const double dm = fracmfg::test::relative_difference(every.levels.m, lagged.levels.m);
    if (fracmfg::test::world_rank() == 0) {
      std::printf("  lag %s: %d iterations (lag 1: %d), difference u %.2e, m %.2e\n", lag,
                  lagged.iterations, every.iterations, du, dm);
    }
    EXPECT_EQ(lagged.iterations, every.iterations) << lag;
    EXPECT_LT(du, 1e-9) << lag;
    EXPECT_LT(dm, 1e-9) << lag;
  }
  // What the lag saves, counted by PETSc's log (MatLUFactorNum: every ILU factorisation of the
  // HJB and Fokker-Planck systems), from the cold start (coarse_levels 0) so that every sweep
  // is in the history: each HJB Newton system is factored once, and a sweep of 12
  // Fokker-Planck steps factors at the levels n % lag == 0, 12, 3 and 1 times.
  FRACMFG_PETSC_CHECK(PetscLogDefaultBegin());
  PetscLogEvent factor_event = 0;
  FRACMFG_PETSC_CHECK(PetscLogEventGetId("MatLUFactorNum", &factor_event));
  const auto factorisations = [&] {
    PetscEventPerfInfo info{};
    FRACMFG_PETSC_CHECK(PetscLogEventGetPerfInfo(0, factor_event, &info));
    return static_cast<long long>(info.count);
  };
  std::string cold = deck;
  cold.replace(cold.find("max_iterations: MAXIT}"), 22, "max_iterations: MAXIT, coarse_levels: 0}");
  for (const auto& [lag, per_sweep] :
       {std::pair<const char*, long long>{"1", 12}, {"4", 3}, {"1000", 1}}) {
    const fracmfg::test::ScopedOptions option(fracmfg::test::Options{{"-mfg_fp_pc_lag", lag}});
    const long long before = factorisations();
    mfg::Solver solver(MPI_COMM_WORLD,
                       mfg::problem_from_config(fracmfg::test::mfg_config(cold, 400)), nullptr,
                       fracmfg::test::quiet_logger());
    const auto r = solver.solve();
    const long long factored = factorisations() - before;
    ASSERT_TRUE(r.converged) << lag;
    long long hjb = 0;
    for (const auto& rec : solver.history()) hjb += rec.newton_iterations;
    const auto sweeps = static_cast<long long>(solver.history().size());
    if (fracmfg::test::world_rank() == 0) {
      std::printf("  lag %s: %lld factorisations in %lld sweeps (%lld HJB Newton systems)\n", lag,
                  factored, sweeps, hjb);
    }
    EXPECT_EQ(factored, hjb + sweeps * per_sweep) << lag;
  }
  const fracmfg::test::ScopedOptions zero(fracmfg::test::Options{{"-mfg_fp_pc_lag", "0"}});
  try {
    mfg::Solver solver(MPI_COMM_WORLD,
                       mfg::problem_from_config(fracmfg::test::mfg_config(deck, 10)), nullptr,
                       fracmfg::test::quiet_logger());
    ADD_FAILURE() << "a lag of 0 was accepted";
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_EQ(e.exit_code(), fracmfg::ExitCode::usage);
    EXPECT_NE(std::string(e.what()).find("-mfg_fp_pc_lag: 0 is out of range"), std::string::npos)
        << e.what();
  }
}

// What the iteration does not support is a deck error naming the key.
TEST(MfgTwoGrid, DeckRefusesWhatItDoesNotSupport) {
  const auto error_of = [](const std::string& deck) -> std::string {
    try {
      (void)fracmfg::io::Deck::from_string(deck, "deck.yaml").mfg();
    } catch (const fracmfg::Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string it = "{method: two_grid, coarse_points: 11}";
  std::string base = fracmfg::test::periodic_1d_game(it);
  const std::string particles =
      error_of(base + "  fokker_planck: {method: particles, particles: 1000}\n");
  EXPECT_NE(particles.find("two_grid needs fokker_planck.method fdm"), std::string::npos)
      << particles;
  const std::string obstacle = error_of(
      "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: reflecting, obstacle: \"x < "
      "0.1\"}\n  grid: {points: [41]}\n  time: {horizon: 0.5, steps: 8}\n  diffusion: 0.05\n"
      "  coupling: {type: log}\n  initial_density: \"1\"\n  iteration: " +
      it + "\n");
  EXPECT_NE(obstacle.find("two_grid does not support mfg.domain.obstacle"), std::string::npos)
      << obstacle;
  const std::string small =
      error_of(fracmfg::test::periodic_1d_game("{method: two_grid, coarse_points: 3}"));
  EXPECT_NE(small.find("coarse_points"), std::string::npos) << small;
  const std::string plane = error_of(fracmfg::test::reflecting_2d_game(it));
  EXPECT_NE(plane.find("two_grid is available in 1D"), std::string::npos) << plane;
  std::string levy = fracmfg::test::periodic_1d_game(it);
  levy.replace(levy.find("  diffusion: 0.05\n"), 17, "  diffusion: 0.05\n  diffusion_order: 1.5\n");
  const std::string fractional = error_of(levy);
  EXPECT_NE(fractional.find("two_grid needs diffusion_order 2"), std::string::npos) << fractional;
  const std::string congestion =
      error_of(base + "  hamiltonian: {type: congestion, epsilon: 0.2, alpha: 1}\n");
  EXPECT_NE(congestion.find("two_grid needs a quadratic or power Hamiltonian"), std::string::npos)
      << congestion;
}

}  // namespace
