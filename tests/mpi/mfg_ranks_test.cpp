// The MFG solver gives the same u and m on any number of ranks: the game is solved on all
// ranks of the job and on rank 0 alone, and every time level of both fields is compared
// (run at 1, 2 and 3 ranks, so 2 and 3 ranks are each compared with 1). 1D and 2D,
// periodic and reflecting, local and nonlocal couplings, cold and coarse (grid-sequenced)
// starts, the quadratic, power and congestion Hamiltonians.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscdmda.h>

#include <algorithm>
#include <cmath>
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

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::test::relative_difference;
using fracmfg::test::SubComm;

struct Fields {
  std::vector<double> u, m;  // all levels, natural order, on rank 0
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
  return f;
}

struct Case {
  const char* name;
  const char* deck;
};

const Case kCases[] = {
    {"periodic_1d_log",
     "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
     "  grid: {points: [61]}\n  time: {horizon: 0.5, steps: 25}\n  diffusion: 0.05\n"
     "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
     "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
     "  iteration: {damping: 0.5, anderson: 2, tolerance: 1.0e-11, max_iterations: 200}\n"},
    {"reflecting_1d_nonlocal",
     "problem: mfg\nmfg:\n  domain: {length: [2.0], boundary: reflecting}\n"
     "  grid: {points: [47]}\n  time: {horizon: 0.5, steps: 20}\n  diffusion: 0.03\n"
     "  hamiltonian: {control_cost: \"1 + 0.5*x\"}\n"
     "  coupling: {type: nonlocal, width: 0.2, strength: 2, potential: \"(x-1.5)^2\"}\n"
     "  initial_density: \"exp(-(x-0.6)^2/0.05)\"\n  terminal_cost: \"0.5*(x-1)^2\"\n"
     "  terminal_coupling: 0.1\n"
     "  iteration: {damping: 0.6, tolerance: 1.0e-11, max_iterations: 200}\n"},
    {"reflecting_2d_log",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.8], boundary: reflecting}\n"
     "  grid: {points: [17, 13]}\n  time: {horizon: 0.5, steps: 10}\n  diffusion: 0.02\n"
     "  coupling: {type: log, potential: \"3*exp(-((x-0.5)^2+(y-0.4)^2)/0.02)\"}\n"
     "  initial_density: \"exp(-((x-0.2)^2+(y-0.4)^2)/0.02)\"\n"
     "  terminal_cost: \"(x-0.9)^2\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 200}\n"},
    {"reflecting_2d_log_coarse_start",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.8], boundary: reflecting}\n"
     "  grid: {points: [22, 17]}\n  time: {horizon: 0.5, steps: 10}\n  diffusion: 0.02\n"
     "  coupling: {type: log, potential: \"3*exp(-((x-0.5)^2+(y-0.4)^2)/0.02)\"}\n"
     "  initial_density: \"exp(-((x-0.2)^2+(y-0.4)^2)/0.02)\"\n"
     "  terminal_cost: \"(x-0.9)^2\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 200, coarse_levels: 2}\n"},
    {"periodic_1d_coarse_start",
     "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
     "  grid: {points: [61]}\n  time: {horizon: 0.5, steps: 25}\n  diffusion: 0.05\n"
     "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
     "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-11, max_iterations: 200, coarse_levels: 3}\n"},
    {"periodic_2d_nonlocal",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: periodic}\n"
     "  grid: {points: [14, 15]}\n  time: {horizon: 0.4, steps: 8}\n  diffusion: 0.02\n"
     "  coupling: {type: nonlocal, width: 0.15, potential: \"cos(2*pi*x)*sin(2*pi*y)\"}\n"
     "  initial_density: \"1 + 0.8*sin(2*pi*x)\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 300}\n"},
    // The power and congestion Hamiltonians (1D: the fast path, whose Fokker-Planck rows
    // exchange the coefficients of the linearisation; 2D: PETSc's path).
    {"periodic_1d_power_q1_5",
     "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
     "  grid: {points: [61]}\n  time: {horizon: 0.5, steps: 25}\n  diffusion: 0.05\n"
     "  hamiltonian: {type: power, exponent: 1.5, control_cost: \"1 + 0.3*cos(2*pi*x)\"}\n"
     "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
     "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n"
     "  iteration: {damping: 0.2, anderson: 2, tolerance: 1.0e-11, max_iterations: 300}\n"},
    {"reflecting_1d_congestion",
     "problem: mfg\nmfg:\n  domain: {length: [2.0], boundary: reflecting}\n"
     "  grid: {points: [47]}\n  time: {horizon: 0.5, steps: 20}\n  diffusion: 0.03\n"
     "  hamiltonian: {type: congestion, epsilon: 0.1, alpha: 1.5, control_cost: \"1 + 0.5*x\"}\n"
     "  coupling: {type: log, potential: \"(x-1.5)^2\"}\n"
     "  initial_density: \"exp(-(x-0.6)^2/0.05)\"\n  terminal_cost: \"0.5*(x-1)^2\"\n"
     "  iteration: {damping: 0.5, anderson: 2, tolerance: 1.0e-11, max_iterations: 300}\n"},
    {"reflecting_2d_power_q3",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.8], boundary: reflecting}\n"
     "  grid: {points: [17, 13]}\n  time: {horizon: 0.5, steps: 10}\n  diffusion: 0.02\n"
     "  hamiltonian: {type: power, exponent: 3}\n"
     "  coupling: {type: log, potential: \"3*exp(-((x-0.5)^2+(y-0.4)^2)/0.02)\"}\n"
     "  initial_density: \"exp(-((x-0.2)^2+(y-0.4)^2)/0.02)\"\n"
     "  terminal_cost: \"(x-0.9)^2\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 300}\n"},
    {"periodic_2d_power_q1_5_coarse_start",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: periodic}\n"
     "  grid: {points: [16, 15]}\n  time: {horizon: 0.4, steps: 8}\n  diffusion: 0.02\n"
     "  hamiltonian: {type: power, exponent: 1.5}\n"
     "  coupling: {type: log, potential: \"cos(2*pi*x)*sin(2*pi*y)\"}\n"
     "  initial_density: \"1 + 0.8*sin(2*pi*x)\"\n"
     "  iteration: {damping: 0.2, anderson: 2, tolerance: 1.0e-11, max_iterations: 300, "
     "coarse_levels: 1}\n"},
    {"periodic_2d_congestion",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0], boundary: periodic}\n"
     "  grid: {points: [14, 15]}\n  time: {horizon: 0.4, steps: 8}\n  diffusion: 0.02\n"
     "  hamiltonian: {type: congestion, epsilon: 0.2, alpha: 1}\n"
     "  coupling: {type: log, potential: \"cos(2*pi*x)*sin(2*pi*y)\"}\n"
     "  initial_density: \"1 + 0.8*sin(2*pi*x)\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 300}\n"},
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class MfgRanks : public ::testing::TestWithParam<Case> {};

TEST_P(MfgRanks, SameUAndMOnAnyRankCount) {
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
  std::printf("  %s: %d vs %d iterations, max relative difference u %.2e, m %.2e\n",
              GetParam().name, all.iterations, single.iterations, du, dm);
  EXPECT_LT(du, 1e-10);
  EXPECT_LT(dm, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Games, MfgRanks, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return std::string(p.param.name);
                         });

}  // namespace
