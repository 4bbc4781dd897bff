// Grid sequencing (iteration.coarse_levels, mfg::Solver::start_from): the interpolation from a
// coarser grid and time grid is exact for fields linear in x, y and t (reflecting walls: the
// coarse field held constant beyond the outermost coarse cell centres), wraps around on
// periodic axes, keeps M^0 = m0 and the mass of every level; a game started from its coarse
// solution converges to the same solution as from the cold start, in fewer fine iterations.
// Run at 1, 2 and 3 ranks (rank-count independence of the whole chain: mfg_ranks_test).
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscvec.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/mfg_configs.hpp"
#include "common/mpi_support.hpp"
#include "common/test_support.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/mfg/grid.hpp"
#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/solver.hpp"

namespace {

namespace mfg = fracmfg::mfg;
using fracmfg::test::quiet_logger;

using Field = std::function<double(double x, double y, double t)>;

// Writes f at every owned point of level n of u (or m) of a solver.
void fill(const mfg::Solver& s, bool density, const Field& f) {
  const mfg::Grid& g = s.model().grid();
  const auto& box = s.model().box();
  for (int n = 0; n <= s.steps(); ++n) {
    Vec v = density ? s.m(n) : s.u(n);
    double* a = nullptr;
    FRACMFG_PETSC_CHECK(VecGetArray(v, &a));
    for (PetscInt j = 0; j < box.ym; ++j) {
      for (PetscInt i = 0; i < box.xm; ++i) {
        const double x = g.coordinate(0, box.xs + i);
        const double y = g.dim == 2 ? g.coordinate(1, box.ys + j) : 0.0;
        a[j * box.xm + i] = f(x, y, s.model().time(n));
      }
    }
    FRACMFG_PETSC_CHECK(VecRestoreArray(v, &a));
  }
}

// max |v - f| / max |f| over the owned points of level n, over all ranks; `where` maps a
// fine point to the point at which f is to be evaluated.
double level_error(const mfg::Solver& s, bool density, int n, const Field& f,
                   const std::function<void(double&, double&)>& where, double scale = 1.0) {
  const mfg::Grid& g = s.model().grid();
  const auto& box = s.model().box();
  Vec v = density ? s.m(n) : s.u(n);
  const double* a = nullptr;
  FRACMFG_PETSC_CHECK(VecGetArrayRead(v, &a));
  double local[2] = {0.0, 0.0};
  for (PetscInt j = 0; j < box.ym; ++j) {
    for (PetscInt i = 0; i < box.xm; ++i) {
      double x = g.coordinate(0, box.xs + i);
      double y = g.dim == 2 ? g.coordinate(1, box.ys + j) : 0.0;
      where(x, y);
      const double want = scale * f(x, y, s.model().time(n));
      local[0] = std::max(local[0], std::abs(a[j * box.xm + i] - want));
      local[1] = std::max(local[1], std::abs(want));
    }
  }
  FRACMFG_PETSC_CHECK(VecRestoreArrayRead(v, &a));
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return global[0] / std::max(global[1], 1e-300);
}

std::string reflecting_2d(int nx, int ny, int steps, const std::string& iteration) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0, 0.8], boundary: reflecting}\n"
         "  grid: {points: [" +
         std::to_string(nx) + ", " + std::to_string(ny) +
         "]}\n  time: {horizon: 0.5, steps: " + std::to_string(steps) +
         "}\n  diffusion: 0.02\n"
         "  coupling: {type: log, potential: \"3*exp(-((x-0.5)^2+(y-0.4)^2)/0.02)\"}\n"
         "  initial_density: \"exp(-((x-0.2)^2+(y-0.4)^2)/0.02)\"\n"
         "  terminal_cost: \"(x-0.9)^2\"\n"
         "  iteration: " +
         iteration + "\n";
}

TEST(MfgCoarseStart, LinearFieldsInterpolatedExactlyOnReflectingGrids) {
  const auto coarse_cfg = fracmfg::test::mfg_config(reflecting_2d(10, 8, 4, "{damping: 0.5}"));
  const auto fine_cfg = fracmfg::test::mfg_config(reflecting_2d(20, 16, 8, "{damping: 0.5}"));
  mfg::Solver coarse(MPI_COMM_WORLD, mfg::problem_from_config(coarse_cfg), nullptr, quiet_logger());
  mfg::Solver fine(MPI_COMM_WORLD, mfg::problem_from_config(fine_cfg), nullptr, quiet_logger());
  const Field fu = [](double x, double y, double t) { return 1.0 + 2.0 * x - 3.0 * y + 0.5 * t; };
  const Field fm = [](double x, double y, double t) { return 1.0 + x + 2.0 * y + t; };
  fill(coarse, false, fu);
  fill(coarse, true, fm);
  fine.start_from(coarse);

  // Beyond the outermost coarse centres (h_c / 2 from the walls) the coarse value is held.
  const mfg::Grid& gc = coarse.model().grid();
  const auto clamp_to_coarse = [&](double& x, double& y) {
    x = std::clamp(x, gc.coordinate(0, 0), gc.coordinate(0, gc.points[0] - 1));
    y = std::clamp(y, gc.coordinate(1, 0), gc.coordinate(1, gc.points[1] - 1));
  };
  const double mass0 = fine.model().mass(fine.model().initial_density());
  for (int n = 0; n <= fine.steps(); ++n) {
    EXPECT_LT(level_error(fine, false, n, fu, clamp_to_coarse), 1e-14) << "u, level " << n;
    if (n == 0) {
      // M^0 is m0 itself.
      Vec d = nullptr;
      FRACMFG_PETSC_CHECK(VecDuplicate(fine.m(0), &d));
      FRACMFG_PETSC_CHECK(VecWAXPY(d, -1.0, fine.model().initial_density(), fine.m(0)));
      PetscReal norm = 1.0;
      FRACMFG_PETSC_CHECK(VecNorm(d, NORM_INFINITY, &norm));
      FRACMFG_PETSC_CHECK(VecDestroy(&d));
      EXPECT_EQ(norm, 0.0);
      continue;
    }
    // M^n: the interpolated field rescaled to the mass of m0.
    const double mass = fine.model().mass(fine.m(n));
    EXPECT_NEAR(mass, mass0, 1e-14 * mass0) << "level " << n;
    // The scale factor: mass0 over the mass of the interpolated field (computed from the
    // values the interpolation must give).
    double local = 0.0;
    {
      const mfg::Grid& g = fine.model().grid();
      const auto& box = fine.model().box();
      for (PetscInt j = 0; j < box.ym; ++j) {
        for (PetscInt i = 0; i < box.xm; ++i) {
          double x = g.coordinate(0, box.xs + i), y = g.coordinate(1, box.ys + j);
          clamp_to_coarse(x, y);
          local += fm(x, y, fine.model().time(n)) * g.cell_volume();
        }
      }
    }
    double interpolated_mass = 0.0;
    MPI_Allreduce(&local, &interpolated_mass, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_LT(level_error(fine, true, n, fm, clamp_to_coarse, mass0 / interpolated_mass), 1e-14)
        << "m, level " << n;
  }
}

TEST(MfgCoarseStart, PeriodicAxesWrapAround) {
  const auto game = [](int points, int steps) {
    return fracmfg::test::mfg_config(
        "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n"
        "  grid: {points: [" +
        std::to_string(points) + "]}\n  time: {horizon: 0.5, steps: " + std::to_string(steps) +
        "}\n  diffusion: 0.05\n  coupling: {type: log}\n"
        "  initial_density: \"exp(-(x-0.3)^2/0.01)\"\n");
  };
  mfg::Solver coarse(MPI_COMM_WORLD, mfg::problem_from_config(game(10, 3)), nullptr,
                     quiet_logger());
  mfg::Solver fine(MPI_COMM_WORLD, mfg::problem_from_config(game(20, 6)), nullptr, quiet_logger());
  // Coarse u = cos(2 pi x) (t + 1); fine points at odd i lie halfway between two coarse
  // points, the last one (x = 0.95) between x = 0.9 and x = 0 (= 1).
  const double pi = std::acos(-1.0);
  fill(coarse, false, [&](double x, double, double t) { return std::cos(2 * pi * x) * (t + 1); });
  fine.start_from(coarse);
  const Field expected = [&](double x, double, double t) {
    const double s = x / 0.1;
    const double lo = std::floor(s + 1e-12);
    const double w = s - lo;
    const auto c = [&](double i) { return std::cos(2 * pi * std::fmod(i, 10.0) * 0.1); };
    return ((1 - w) * c(lo) + w * c(lo + 1)) * (t + 1);
  };
  for (int n = 0; n <= fine.steps(); ++n) {
    EXPECT_LT(level_error(fine, false, n, expected, [](double&, double&) {}), 1e-14)
        << "level " << n;
  }
}

TEST(MfgCoarseStart, RefusedAfterIteratingOrOnAnotherDomain) {
  const auto cfg = fracmfg::test::mfg_config(reflecting_2d(10, 8, 4, "{damping: 0.5}"));
  mfg::Solver a(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet_logger());
  mfg::Solver b(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet_logger());
  b.iterate();
  EXPECT_THROW(b.start_from(a), fracmfg::Error);
  mfg::Solver periodic(MPI_COMM_WORLD,
                       mfg::problem_from_config(fracmfg::test::mfg_config(
                           fracmfg::test::periodic_1d_game("{damping: 0.5}"))),
                       nullptr, quiet_logger());
  mfg::Solver c(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet_logger());
  EXPECT_THROW(c.start_from(periodic), fracmfg::Error);
}

TEST(MfgCoarseStart, SameSolutionInFewerFineIterations) {
  // The fixed point named: under auto (the default) the fine level's damping would come from
  // the coarse levels' spectrum (MfgAuto tests), and 0.5 is also auto's default.
  const std::string iteration =
      "{method: fixed_point, damping: 0.5, tolerance: 1.0e-9, max_iterations: 300";
  const auto cold_cfg = fracmfg::test::mfg_config(reflecting_2d(32, 24, 16, iteration + "}"));
  const auto warm_cfg =
      fracmfg::test::mfg_config(reflecting_2d(32, 24, 16, iteration + ", coarse_levels: 2}"));
  mfg::Solver cold(MPI_COMM_WORLD, mfg::problem_from_config(cold_cfg), nullptr, quiet_logger());
  mfg::Solver warm(MPI_COMM_WORLD, mfg::problem_from_config(warm_cfg), nullptr, quiet_logger());
  const auto rc = cold.solve();
  const auto rw = warm.solve();
  ASSERT_TRUE(rc.converged);
  ASSERT_TRUE(rw.converged);
  const auto lc = fracmfg::test::levels_of(cold);
  const auto lw = fracmfg::test::levels_of(warm);
  const double du = fracmfg::test::relative_difference(lc.u, lw.u);
  const double dm = fracmfg::test::relative_difference(lc.m, lw.m);
  if (fracmfg::test::rank_of(MPI_COMM_WORLD) == 0) {
    std::printf("  cold start %d iterations, coarse start %d; relative difference u %.2e, m %.2e\n",
                rc.iterations, rw.iterations, du, dm);
    // Two solutions that each changed by less than 1e-9 in their last iteration.
    EXPECT_LT(du, 1e-7);
    EXPECT_LT(dm, 1e-7);
  }
  EXPECT_LT(rw.iterations, rc.iterations);
  // The fine solve's own history starts at iteration 1 with the configured damping.
  ASSERT_FALSE(warm.history().empty());
  EXPECT_EQ(warm.history().front().iteration, 1);
  EXPECT_DOUBLE_EQ(warm.history().front().damping, 0.5);
  EXPECT_DOUBLE_EQ(cold.history().front().damping, 1.0);
}

TEST(MfgCoarseStart, AStopRequestDuringTheCoarseStartStopsBeforeTheFirstFineIteration) {
  fracmfg::core::clear_stop_request();
  fracmfg::core::InterruptGuard guard;
  const auto cfg = fracmfg::test::mfg_config(
      reflecting_2d(32, 24, 16, "{damping: 0.5, tolerance: 1.0e-9, coarse_levels: 2}"));
  mfg::Solver solver(MPI_COMM_WORLD, mfg::problem_from_config(cfg), nullptr, quiet_logger());
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (fracmfg::test::rank_of(MPI_COMM_WORLD) == size - 1) fracmfg::core::request_stop(SIGUSR1);
  long long step = -1;
  std::string file = "unset";
  try {
    solver.solve({"coarse_stop.chk.h5", 0});
  } catch (const fracmfg::core::Interrupted& e) {
    step = e.step();
    file = e.checkpoint();
  }
  fracmfg::core::clear_stop_request();
  long long steps[2] = {step, -step};
  MPI_Allreduce(MPI_IN_PLACE, steps, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(steps[0], 0);
  EXPECT_EQ(steps[1], 0);
  EXPECT_EQ(file, "");
  EXPECT_EQ(solver.iterations(), 0);
  // Solving again repeats the coarse start and converges.
  const auto r = solver.solve();
  EXPECT_TRUE(r.converged);
}

}  // namespace
