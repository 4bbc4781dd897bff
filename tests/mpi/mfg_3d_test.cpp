// 3D games (domain.length and grid.points with three entries; DMDA 3D, 7-point stencils):
//  - the same u and m on any number of ranks: the game is solved on all ranks of the job
//    and on rank 0 alone, every time level of both fields compared (run at 1, 2 and 3 ranks,
//    so 2 and 3 ranks are each compared with 1; the grids' shapes make PETSc split z, y or x
//    first); periodic and reflecting, the quadratic,
//    power and congestion Hamiltonians, the log coupling, a coarse (grid-sequenced)
//    start;
//  - the Fokker-Planck step (the transpose of the linearised HJB step) keeps the mass of
//    every time level at 1 to round-off and m >= 0;
//  - grid sequencing interpolates trilinearly (exact for trilinear fields);
//  - a checkpoint written on all ranks restarts on every rank count from 1 to the job's
//    size and, iterated on, reproduces the uninterrupted run;
//  - what 3D does not have (particles, fractional diffusion, the nonlocal coupling) is
//    refused, naming the member.
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
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::test::quiet_logger;
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
  f.iterations = solver.iterations();
  f.u = fracmfg::test::flatten(levels.u);
  f.m = fracmfg::test::flatten(levels.m);
  return f;
}

Fields solve_on(MPI_Comm comm, const fracmfg::io::MfgConfig& cfg) {
  mfg::Solver solver(comm, mfg::problem_from_config(cfg), nullptr, quiet_logger());
  const auto r = solver.solve();
  EXPECT_TRUE(r.converged);
  return fields_of(solver);
}

// Iterative solves tightly, so that only round-off separates the rank counts.
void tight_linear_solves() {
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_hjb_ksp_rtol", "1e-13"));
  FRACMFG_PETSC_CHECK(PetscOptionsSetValue(nullptr, "-mfg_fp_ksp_rtol", "1e-14"));
}

struct Case {
  const char* name;
  const char* deck;
};

const Case kCases[] = {
    {"periodic_3d_log",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0, 1.0], boundary: periodic}\n"
     "  grid: {points: [7, 6, 12]}\n  time: {horizon: 0.4, steps: 6}\n  diffusion: 0.03\n"
     "  hamiltonian: {control_cost: \"1 + 0.3*cos(2*pi*z)\"}\n"
     "  coupling: {type: log, potential: \"cos(2*pi*x)*sin(2*pi*y) + 0.5*cos(2*pi*z)\"}\n"
     "  initial_density: \"1 + 0.8*sin(2*pi*x)*cos(2*pi*z)\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 300}\n"},
    {"reflecting_3d_power_q3",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.8, 0.6], boundary: reflecting}\n"
     "  grid: {points: [9, 7, 6]}\n  time: {horizon: 0.5, steps: 6}\n  diffusion: 0.02\n"
     "  hamiltonian: {type: power, exponent: 3}\n"
     "  coupling: {type: log, potential: \"3*exp(-((x-0.5)^2+(y-0.4)^2)/0.02)\"}\n"
     "  initial_density: \"exp(-((x-0.2)^2+(y-0.4)^2+(z-0.3)^2)/0.02)\"\n"
     "  terminal_cost: \"(x-0.9)^2 + (z-0.1)^2\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 300}\n"},
    {"periodic_3d_congestion",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0, 1.0], boundary: periodic}\n"
     "  grid: {points: [6, 11, 7]}\n  time: {horizon: 0.4, steps: 6}\n  diffusion: 0.02\n"
     "  hamiltonian: {type: congestion, epsilon: 0.2, alpha: 1}\n"
     "  coupling: {type: log, potential: \"cos(2*pi*x)*sin(2*pi*z)\"}\n"
     "  initial_density: \"1 + 0.8*sin(2*pi*y)\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 300}\n"},
    {"reflecting_3d_log_coarse_start",
     "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.8, 0.8], boundary: reflecting}\n"
     "  grid: {points: [12, 10, 9]}\n  time: {horizon: 0.5, steps: 8}\n  diffusion: 0.02\n"
     "  coupling: {type: log, potential: \"3*exp(-((x-0.5)^2+(y-0.4)^2+(z-0.4)^2)/0.02)\"}\n"
     "  initial_density: \"exp(-((x-0.2)^2+(y-0.4)^2+(z-0.4)^2)/0.02)\"\n"
     "  terminal_cost: \"(x-0.9)^2\"\n"
     "  iteration: {damping: 0.5, tolerance: 1.0e-10, max_iterations: 200, coarse_levels: 1}\n"},
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class Mfg3dRanks : public ::testing::TestWithParam<Case> {};

TEST_P(Mfg3dRanks, SameUAndMOnAnyRankCount) {
  tight_linear_solves();
  const auto cfg = fracmfg::io::Deck::from_string(GetParam().deck, "ranks_3d.yaml").mfg();
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

TEST_P(Mfg3dRanks, MassIsConservedAndDensityNonnegativeAtEveryLevel) {
  tight_linear_solves();
  const auto cfg = fracmfg::io::Deck::from_string(GetParam().deck, "mass_3d.yaml").mfg();
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet_logger());
  ASSERT_TRUE(solver.solve().converged);
  double worst_mass = 0.0, lowest = 1.0;
  for (int n = 0; n <= solver.steps(); ++n) {
    worst_mass = std::max(worst_mass, std::abs(solver.model().mass(solver.m(n)) - 1.0));
    PetscReal lo = 0.0;
    FRACMFG_PETSC_CHECK(VecMin(solver.m(n), nullptr, &lo));
    lowest = std::min(lowest, static_cast<double>(lo));
  }
  if (world_rank() == 0) {
    std::printf("  %s: max |mass - 1| %.2e, min m %.3e\n", GetParam().name, worst_mass, lowest);
  }
  EXPECT_LT(worst_mass, 1e-13);
  EXPECT_GE(lowest, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Games, Mfg3dRanks, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return std::string(p.param.name);
                         });

TEST(Mfg3dRestart, CheckpointRestartsOnEveryRankCountWithTheUninterruptedResult) {
  tight_linear_solves();
  constexpr int first = 4, second = 5;
  const auto cfg = fracmfg::test::mfg_config(
      "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0, 1.0], boundary: reflecting}\n"
      "  grid: {points: [8, 7, 6]}\n  time: {horizon: 0.5, steps: 5}\n  diffusion: 0.03\n"
      "  coupling: {type: power, exponent: 2, potential: \"(x-0.5)^2\"}\n"
      "  initial_density: \"exp(-((x-0.3)^2+(y-0.6)^2+(z-0.5)^2)/0.03)\"\n"
      "  terminal_cost: \"(y-0.2)^2 + (z-0.7)^2\"\n"
      "  iteration: {damping: 0.6, anderson: 2, tolerance: 1.0e-30, max_iterations: MAXIT}\n",
      first + second, "restart_3d.yaml");
  const std::string file =
      fracmfg::test::scratch_dir(MPI_COMM_WORLD,
                                 fracmfg::test::per_rank_count("mfg_3d_restart", "anderson")) +
      "/iterate.chk.h5";
  Fields whole;
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet_logger());
    for (int k = 0; k < first + second; ++k) solver.iterate();
    whole = fields_of(solver);
  }
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet_logger());
    for (int k = 0; k < first; ++k) solver.iterate();
    solver.write_checkpoint(file);
  }
  for (int ranks = 1; ranks <= world_size(); ++ranks) {
    SubComm sub(ranks);
    if (sub.comm == MPI_COMM_NULL) continue;
    mfg::Solver solver(sub.comm, mfg::problem_from_config(cfg), nullptr, quiet_logger());
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

TEST(Mfg3dRestart, CheckpointOfAnotherGridIsRefused) {
  const std::string base =
      "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0, 1.0], boundary: reflecting}\n"
      "  grid: {points: POINTS}\n  time: {horizon: 0.5, steps: 4}\n  diffusion: 0.03\n"
      "  coupling: {type: log}\n  initial_density: \"1 + x*y*z\"\n"
      "  iteration: {tolerance: 1.0e-30, max_iterations: 2}\n";
  auto with = [&](const std::string& points) {
    std::string d = base;
    d.replace(d.find("POINTS"), 6, points);
    return fracmfg::test::mfg_config(d, 0, "grid_3d.yaml");
  };
  const std::string file =
      fracmfg::test::scratch_dir(MPI_COMM_WORLD,
                                 fracmfg::test::per_rank_count("mfg_3d_restart", "grid")) +
      "/grid.chk.h5";
  {
    mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(with("[6, 6, 6]")), nullptr,
                       quiet_logger());
    solver.iterate();
    solver.write_checkpoint(file);
  }
  mfg::Solver other(MPI_COMM_WORLD, mfg::problem_from_config(with("[6, 6, 5]")), nullptr,
                    quiet_logger());
  try {
    other.restart(file);
    ADD_FAILURE() << "a checkpoint of a 6 x 6 x 6 grid restarted a 6 x 6 x 5 game";
  } catch (const fracmfg::core::CollectiveError& e) {
    EXPECT_NE(std::string(e.what()).find("its grid is"), std::string::npos) << e.what();
  }
}

// Calls f(k, x, y, z) for every owned point of a solver's grid, k its local index.
template <class F>
void for_owned(const mfg::Solver& s, F&& f) {
  const mfg::Grid& g = s.model().grid();
  const mfg::OwnedBox& b = s.model().box();
  for (PetscInt l = 0; l < b.zm; ++l) {
    for (PetscInt j = 0; j < b.ym; ++j) {
      for (PetscInt i = 0; i < b.xm; ++i) {
        f((l * b.ym + j) * b.xm + i, g.coordinate(0, b.xs + i), g.coordinate(1, b.ys + j),
          g.coordinate(2, b.zs + l));
      }
    }
  }
}

TEST(Mfg3dCoarseStart, TrilinearFieldsInterpolatedExactlyOnReflectingGrids) {
  // Grid sequencing in 3D: start_from() interpolates u trilinearly in space and linearly in
  // time, exact for such a field inside the outermost coarse cell centres (held beyond them).
  const std::string deck =
      "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.8, 0.6], boundary: reflecting}\n"
      "  grid: {points: POINTS}\n  time: {horizon: 0.5, steps: STEPS}\n  diffusion: 0.02\n"
      "  coupling: {type: log}\n  initial_density: \"1 + x*y*z\"\n";
  auto game = [&](const std::string& points, int steps) {
    std::string d = deck;
    d.replace(d.find("POINTS"), 6, points);
    d.replace(d.find("STEPS"), 5, std::to_string(steps));
    return mfg::problem_from_config(fracmfg::test::mfg_config(d, 0, "coarse_3d.yaml"));
  };
  mfg::Solver coarse(MPI_COMM_WORLD, game("[6, 5, 4]", 4), nullptr, quiet_logger());
  mfg::Solver fine(MPI_COMM_WORLD, game("[12, 10, 8]", 8), nullptr, quiet_logger());
  auto fu = [](double x, double y, double z, double t) {
    return 1.0 + 2.0 * x - 3.0 * y + 0.5 * z + x * y * z + 0.5 * t * (1.0 + x * z);
  };
  for (int n = 0; n <= coarse.steps(); ++n) {
    const double t = coarse.model().time(n);
    double* a = nullptr;
    FRACMFG_PETSC_CHECK(VecGetArray(coarse.u(n), &a));
    for_owned(coarse, [&](PetscInt k, double x, double y, double z) { a[k] = fu(x, y, z, t); });
    FRACMFG_PETSC_CHECK(VecRestoreArray(coarse.u(n), &a));
  }
  fine.start_from(coarse);
  const mfg::Grid& gc = coarse.model().grid();
  auto held = [&](int axis, double v) {
    return std::clamp(v, gc.coordinate(axis, 0), gc.coordinate(axis, gc.points[axis] - 1));
  };
  double worst = 0.0;
  for (int n = 0; n <= fine.steps(); ++n) {
    const double t = fine.model().time(n);
    const double* a = nullptr;
    FRACMFG_PETSC_CHECK(VecGetArrayRead(fine.u(n), &a));
    for_owned(fine, [&](PetscInt k, double x, double y, double z) {
      worst = std::max(worst, std::abs(a[k] - fu(held(0, x), held(1, y), held(2, z), t)));
    });
    FRACMFG_PETSC_CHECK(VecRestoreArrayRead(fine.u(n), &a));
  }
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LT(worst, 1e-13);
  // M^n: mass of m0 at every level.
  const double mass0 = fine.model().mass(fine.model().initial_density());
  for (int n = 0; n <= fine.steps(); ++n) {
    EXPECT_NEAR(fine.model().mass(fine.m(n)), mass0, 1e-14 * mass0) << "level " << n;
  }
}

TEST(Mfg3dProblem, WhatThreeDimensionsLackIsRefusedNamingTheMember) {
  const auto base = fracmfg::test::mfg_config(
      "problem: mfg\nmfg:\n  domain: {length: [1.0, 1.0, 1.0], boundary: periodic}\n"
      "  grid: {points: [6, 6, 6]}\n  time: {horizon: 0.5, steps: 4}\n  diffusion: 0.03\n"
      "  coupling: {type: log}\n  initial_density: \"1\"\n",
      0, "refused_3d.yaml");
  auto expect_refused = [&](mfg::Problem p, const std::string& member) {
    try {
      mfg::Solver solver(MPI_COMM_WORLD, p, nullptr, quiet_logger());
      ADD_FAILURE() << member << " was accepted in 3D";
    } catch (const fracmfg::core::CollectiveError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("problem." + member), std::string::npos) << what;
      EXPECT_NE(what.find("not available in 3D"), std::string::npos) << what;
    }
  };
  mfg::Problem particles = mfg::problem_from_config(base);
  particles.fokker_planck.method = fracmfg::io::MfgConfig::FokkerPlanck::Method::particles;
  expect_refused(particles, "fokker_planck.method");
  mfg::Problem fractional = mfg::problem_from_config(base);
  fractional.diffusion_order = 1.5;
  expect_refused(fractional, "diffusion_order");
  mfg::Problem nonlocal = mfg::problem_from_config(base);
  nonlocal.coupling.type = mfg::Problem::Coupling::Type::nonlocal;
  expect_refused(nonlocal, "coupling.type");
}

}  // namespace
