// Per-side boundaries, exits, obstacles and time-dependent potentials give the same u, m
// and outflow on any number of ranks: each game is solved on all ranks of the job and on
// rank 0 alone and every time level is compared (run at 1, 2 and 3 ranks); the outflow of
// a restored, converged state.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::test::relative_difference;
using fracmfg::test::SubComm;

struct Fields {
  std::vector<double> u, m, outflow;  // u, m: all levels, natural order, on rank 0
  int iterations = 0;
};

Fields solve_on(MPI_Comm comm, const fracmfg::io::MfgConfig& cfg) {
  mfg::Solver solver(comm, mfg::problem_from_config(cfg), nullptr, fracmfg::test::quiet_logger());
  const auto r = solver.solve();
  EXPECT_TRUE(r.converged);
  const fracmfg::test::MfgLevels levels = fracmfg::test::levels_of(solver);
  Fields f;
  f.iterations = r.iterations;
  f.u = fracmfg::test::flatten(levels.u);
  f.m = fracmfg::test::flatten(levels.m);
  f.outflow = solver.outflow();
  return f;
}

struct Case {
  const char* name;
  const char* deck;
};

const Case kCases[] = {
    {"exit_1d_timed_cost_and_potential",
     "problem: mfg\nmfg:\n  domain:\n    length: [1.0]\n    boundary: reflecting\n"
     "    sides: {x_min: exit}\n    exit_cost: \"0.5*t\"\n"
     "  grid: {points: [47]}\n  time: {horizon: 0.8, steps: 16}\n  diffusion: 0.04\n"
     "  coupling: {type: log, potential: \"(1+t)*(x-0.7)^2\"}\n"
     "  initial_density: \"exp(-(x-0.6)^2/0.02)\"\n  terminal_cost: \"1\"\n"
     "  iteration: {damping: 0.5, anderson: 2, tolerance: 1.0e-11, max_iterations: 300}\n"},
    {"periodic_x_exit_y_2d_power",
     "problem: mfg\nmfg:\n  domain:\n    length: [1.0, 0.8]\n    boundary: periodic\n"
     "    sides: {y_min: reflecting, y_max: exit}\n    exit_cost: \"0.2*sin(2*pi*x)\"\n"
     "  grid: {points: [16, 13]}\n  time: {horizon: 0.5, steps: 8}\n  diffusion: 0.03\n"
     "  hamiltonian: {type: power, exponent: 1.5}\n"
     "  coupling: {type: power, exponent: 1}\n"
     "  initial_density: \"exp(-((x-0.4)^2+(y-0.3)^2)/0.03)\"\n  terminal_cost: \"1\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 300}\n"},
    {"room_pillars_door_2d",
     "problem: mfg\nmfg:\n  domain:\n    length: [2.0, 1.5]\n    boundary: reflecting\n"
     "    sides: {x_max: exit}\n    exit_cost: \"0\"\n"
     "    obstacle: \"max((x > 1.85) * (abs(y - 0.75) > 0.2), max(0.02 - (x-0.9)^2 - "
     "(y-0.5)^2, 0.02 - (x-0.9)^2 - (y-1)^2))\"\n"
     "  grid: {points: [20, 15]}\n  time: {horizon: 2.0, steps: 10}\n  diffusion: 0.03\n"
     "  coupling: {type: power, exponent: 1}\n"
     "  initial_density: \"exp(-((x-0.4)^2+(y-0.75)^2)/0.05)\"\n  terminal_cost: \"2\"\n"
     "  iteration: {damping: 0.6, tolerance: 1.0e-10, max_iterations: 300}\n"},
    {"room_column_door_3d",
     "problem: mfg\nmfg:\n  domain:\n    length: [2.0, 1.0, 1.0]\n    boundary: reflecting\n"
     "    sides: {x_max: exit}\n    exit_cost: \"0\"\n"
     "    obstacle: \"max((x > 1.8) * max(abs(y - 0.5) > 0.2, abs(z - 0.4) > 0.3), 0.04 - "
     "(x-1)^2 - (y-0.5)^2)\"\n"
     "  grid: {points: [16, 9, 8]}\n  time: {horizon: 2.0, steps: 8}\n  diffusion: 0.03\n"
     "  coupling: {type: power, exponent: 1}\n"
     "  initial_density: \"exp(-((x-0.4)^2+(y-0.5)^2+(z-0.5)^2)/0.05)\"\n"
     "  terminal_cost: \"2\"\n"
     "  iteration: {damping: 0.6, tolerance: 1.0e-10, max_iterations: 300}\n"},
    {"periodic_y_exit_z_min_3d_power_timed_cost",
     "problem: mfg\nmfg:\n  domain:\n    length: [1.0, 0.8, 0.6]\n    boundary: periodic\n"
     "    sides: {x_min: reflecting, x_max: reflecting, z_min: exit, z_max: reflecting}\n"
     "    exit_cost: \"0.1*t + 0.2*sin(2*pi*x)*cos(2*pi*y/0.8)\"\n"
     "  grid: {points: [9, 8, 7]}\n  time: {horizon: 0.6, steps: 6}\n  diffusion: 0.03\n"
     "  hamiltonian: {type: power, exponent: 1.5}\n"
     "  coupling: {type: log, potential: \"(1+t)*z\"}\n"
     "  initial_density: \"exp(-((x-0.4)^2+(y-0.3)^2+(z-0.3)^2)/0.03)\"\n"
     "  terminal_cost: \"z\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 300}\n"},
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class MfgBoundaryRanks : public ::testing::TestWithParam<Case> {};

TEST_P(MfgBoundaryRanks, SameUMAndOutflowOnAnyRankCount) {
  // Iterative 2D solves tightly, so that only round-off separates the rank counts.
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
  const double dout = relative_difference(single.outflow, all.outflow);
  std::printf(
      "  %s: %d vs %d iterations, max relative difference u %.2e, m %.2e, outflow %.2e "
      "(mass left %.6f)\n",
      GetParam().name, all.iterations, single.iterations, du, dm, dout, all.outflow.back());
  EXPECT_LT(du, 1e-10);
  EXPECT_LT(dm, 1e-10);
  EXPECT_LT(dout, 1e-10);
  EXPECT_GT(all.outflow.back(), 0.01);
}

INSTANTIATE_TEST_SUITE_P(Games, MfgBoundaryRanks, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return std::string(p.param.name);
                         });

// A restored state that has converged needs no iteration: its outflow comes from the
// Fokker-Planck steps of the state, equal to the run's to the iteration's tolerance.
TEST(MfgBoundaryRestart, OutflowOfAConvergedCheckpointMatchesTheRun) {
  const auto cfg = fracmfg::io::Deck::from_string(kCases[0].deck, "restart.yaml").mfg();
  const fracmfg::test::SharedTempDir dir("mfg-exit-restart");
  ASSERT_FALSE(dir.path().empty());
  const std::string file = dir.path() + "/exit.chk.h5";
  std::vector<double> run;
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
    EXPECT_TRUE(solver.solve().converged);
    run = solver.outflow();
    solver.write_checkpoint(file);
  }
  mfg::Solver restored(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                       fracmfg::test::quiet_logger());
  restored.restart(file);
  EXPECT_TRUE(restored.solve().converged);
  const std::vector<double> again = restored.outflow();
  ASSERT_EQ(again.size(), run.size());
  double worst = 0.0;
  for (std::size_t n = 0; n < run.size(); ++n) worst = std::max(worst, std::abs(again[n] - run[n]));
  std::printf("  mass left %.6f; restored state's outflow differs by %.2e\n", run.back(), worst);
  EXPECT_GT(run.back(), 0.1);
  EXPECT_LT(worst, 1e-8);
}

}  // namespace
