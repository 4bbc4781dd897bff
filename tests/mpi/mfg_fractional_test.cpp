// The fractional mean field game (mfg.diffusion_order < 2, mfg/fractional_diffusion.hpp) on
// 1, 2 and 3 ranks: the same u and m as on one rank (1D and 2D, cold and grid-sequenced
// starts, Anderson), the mass of every time level 1 to round-off and m >= 0, a checkpoint
// that restarts on every rank count to the uninterrupted result, and the limit s -> 2: at
// s = 2 - 1e-9 (the fractional path: matrix-free Newton-Krylov with the FFT product) the
// game equals the s = 2 game (the local 3-point path) to 1e-7.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::test::relative_difference;
using fracmfg::test::SubComm;
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

struct Fields {
  std::vector<double> u, m;  // all levels, natural order, on rank 0
  int iterations = 0;
};

Fields fields_of(const mfg::Solver& solver) {
  const fracmfg::test::MfgLevels levels = fracmfg::test::levels_of(solver);
  Fields f;
  f.u = fracmfg::test::flatten(levels.u);
  f.m = fracmfg::test::flatten(levels.m);
  f.iterations = solver.iterations();
  return f;
}

// Every level's mass is 1 and its minimum >= 0 (reduced over the ranks).
void expect_mass_and_sign(const mfg::Solver& solver) {
  for (int n = 0; n <= solver.steps(); ++n) {
    EXPECT_NEAR(solver.model().mass(solver.m(n)), 1.0, 1e-12) << "level " << n;
    PetscReal lo = 0.0;
    VecMin(solver.m(n), nullptr, &lo);
    EXPECT_GE(lo, 0.0) << "level " << n;
  }
}

Fields solve_on(MPI_Comm comm, const fracmfg::io::MfgConfig& cfg) {
  mfg::Solver solver(comm, mfg::problem_from_config(cfg), nullptr, fracmfg::test::quiet_logger());
  const auto r = solver.solve();
  EXPECT_TRUE(r.converged);
  expect_mass_and_sign(solver);
  return fields_of(solver);
}

struct Case {
  const char* name;
  const char* deck;
};

const Case kCases[] = {
    {"levy_1d_anderson",
     "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
     "  grid: {points: [32]}\n  time: {horizon: 0.5, steps: 12}\n  diffusion_order: 1.3\n"
     "  diffusion: 0.1\n  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
     "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
     "  iteration: {damping: 0.5, anderson: 2, tolerance: 1.0e-9, max_iterations: 200}\n"},
    {"levy_1d_coarse_start",
     "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
     "  grid: {points: [32]}\n  time: {horizon: 0.5, steps: 12}\n  diffusion_order: 1.6\n"
     "  diffusion: 0.1\n  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
     "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n  terminal_cost: \"0.3*sin(2*pi*x)\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-9, max_iterations: 200, coarse_levels: 2}\n"},
    {"levy_2d_nonlocal",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: periodic}\n"
     "  grid: {points: [14, 15]}\n  time: {horizon: 0.4, steps: 8}\n  diffusion_order: 1.5\n"
     "  diffusion: 0.03\n"
     "  coupling: {type: nonlocal, width: 0.15, potential: \"cos(2*pi*x)*sin(2*pi*y)\"}\n"
     "  initial_density: \"1 + 0.8*sin(2*pi*x)\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-9, max_iterations: 300}\n"},
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class MfgFractionalRanks : public ::testing::TestWithParam<Case> {};

TEST_P(MfgFractionalRanks, SameUAndMOnAnyRankCountWithExactMassAndNonnegativeDensity) {
  // Krylov solves tightly, so that only round-off separates the rank counts.
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_hjb_ksp_rtol", "1e-13"));
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_rtol", "1e-14"));
  const auto cfg = fracmfg::io::Deck::from_string(GetParam().deck, "ranks.yaml").mfg();
  const Fields all = solve_on(MPI_COMM_WORLD, cfg);
  SubComm one(1);
  if (one.comm == MPI_COMM_NULL) return;
  const Fields single = solve_on(one.comm, cfg);
  ASSERT_EQ(all.u.size(), single.u.size());
  const double du = relative_difference(single.u, all.u);
  const double dm = relative_difference(single.m, all.m);
  std::printf("  %s: %d vs %d iterations, max relative difference u %.2e, m %.2e\n",
              GetParam().name, all.iterations, single.iterations, du, dm);
  EXPECT_LT(du, 1e-10);
  EXPECT_LT(dm, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Games, MfgFractionalRanks, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return std::string(p.param.name);
                         });

TEST(MfgFractional, CheckpointRestartsOnEveryRankCountWithTheUninterruptedResult) {
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_hjb_ksp_rtol", "1e-13"));
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_rtol", "1e-14"));
  const auto cfg = fracmfg::io::Deck::from_string(kCases[0].deck, "restart.yaml").mfg();
  const std::string file =
      fracmfg::test::scratch_dir(MPI_COMM_WORLD,
                                 fracmfg::test::per_rank_count("mfg_fractional", "restart")) +
      "/levy.chk.h5";
  constexpr int first = 3, second = 3;
  Fields whole;
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    for (int k = 0; k < first + second; ++k) solver.iterate();
    whole = fields_of(solver);
  }
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    for (int k = 0; k < first; ++k) solver.iterate();
    solver.write_checkpoint(file);
  }
  for (int ranks = 1; ranks <= world_size(); ++ranks) {
    SubComm sub(ranks);
    if (sub.comm == MPI_COMM_NULL) continue;
    mfg::Solver solver(sub.comm, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    solver.restart(file);
    EXPECT_EQ(solver.iterations(), first);
    for (int k = 0; k < second; ++k) solver.iterate();
    const Fields resumed = fields_of(solver);
    if (world_rank() != 0) continue;
    const double du = relative_difference(whole.u, resumed.u);
    const double dm = relative_difference(whole.m, resumed.m);
    std::printf("  restart on %d of %d rank(s): max relative difference u %.2e, m %.2e\n", ranks,
                world_size(), du, dm);
    EXPECT_LT(du, 1e-11) << ranks << " rank(s)";
    EXPECT_LT(dm, 1e-11) << ranks << " rank(s)";
  }
}

TEST(MfgFractional, OrderJustBelowTwoEqualsTheLaplacianGame) {
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_hjb_ksp_rtol", "1e-13"));
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_rtol", "1e-14"));
  const std::string deck = fracmfg::test::periodic_1d_game(
      "{damping: 0.5, anderson: 2, tolerance: 1.0e-10, max_iterations: 200}");
  auto cfg = fracmfg::io::Deck::from_string(deck, "order.yaml").mfg();
  ASSERT_EQ(cfg.diffusion_order, 2.0);
  const Fields laplacian = solve_on(MPI_COMM_WORLD, cfg);
  cfg.diffusion_order = 2.0 - 1e-9;
  const Fields fractional = solve_on(MPI_COMM_WORLD, cfg);
  if (world_rank() != 0) return;
  const double du = relative_difference(laplacian.u, fractional.u);
  const double dm = relative_difference(laplacian.m, fractional.m);
  std::printf("  s = 2 (3-point path) vs s = 2 - 1e-9 (FFT path): u %.2e, m %.2e\n", du, dm);
  EXPECT_LT(du, 1e-7);
  EXPECT_LT(dm, 1e-7);
}

}  // namespace
