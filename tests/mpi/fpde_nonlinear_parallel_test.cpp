// Nonlinear fractional PDEs (frac::FpdeSolver with a source of u, Newton per step) on
// several ranks: the distributed run agrees with the one-rank run to round-off, and a run
// stopped and restarted from a checkpoint reproduces the uninterrupted run bit for bit
// (Allen-Cahn and Fisher-KPP, 1D and 2D, given derivative and forward differences; the L1
// scheme and the Riesz theta scheme).
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscsys.h>
#include <petscvec.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/fpde_cases.hpp"
#include "common/mpi_support.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_solver.hpp"

namespace {

using namespace fracmfg;
using frac::FpdeSolver;
using Boundary = io::FpdeConfig::Domain::Boundary;
using HistoryMethod = io::FpdeConfig::History::Method;
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

using Named = fracmfg::test::NamedFpdeConfig;

io::FpdeConfig base(int dim, Boundary b, int points, int steps) {
  io::FpdeConfig c;
  c.type = io::FpdeConfig::Type::time_fractional;
  c.order = 0.6;
  c.domain.length.assign(static_cast<std::size_t>(dim), 1.0);
  c.domain.boundary = b;
  c.grid.points.assign(static_cast<std::size_t>(dim), points);
  if (dim == 2) c.grid.points[1] = points + 4;  // not square
  c.time.horizon = 2.0;
  c.time.steps = steps;
  c.time.grading = 1.5;
  c.diffusivity = 0.01;
  c.initial = {dim == 1 ? "0.4*sin(5*x)+0.2*cos(9*x)" : "0.4*sin(5*x+2*y)+0.2*cos(9*x*y)",
               {"x", "y"}};
  c.source = {"u - u^3", {"x", "y", "t", "u"}};
  c.source_derivative = {"1 - 3*u^2", {"x", "y", "t", "u"}};
  c.history.method = HistoryMethod::soe;
  return c;
}

std::vector<Named> cases() {
  std::vector<Named> v;
  v.push_back({"Allen-Cahn 1D neumann", base(1, Boundary::neumann, 61, 30)});
  {
    auto c = base(1, Boundary::dirichlet, 60, 25);
    c.source = {"2*u*(1-u) + x*t", {"x", "y", "t", "u"}};
    c.source_derivative = {"", {"x", "y", "t", "u"}};  // forward differences
    c.initial = {"0.5+0.3*sin(5*x)", {"x", "y"}};      // Fisher-KPP: u >= 0
    c.boundary_value = {"0.1*t", {"x", "y", "t"}};
    c.history.method = HistoryMethod::direct;
    v.push_back({"Fisher-KPP 1D dirichlet fd", c});
  }
  v.push_back({"Allen-Cahn 2D periodic", base(2, Boundary::periodic, 20, 10)});
  {
    auto c = base(2, Boundary::neumann, 19, 10);
    c.initial = {"0.5+0.3*sin(5*x+2*y)", {"x", "y"}};
    c.source = {"2*u*(1-u)", {"x", "y", "t", "u"}};
    c.source_derivative = {"2 - 4*u", {"x", "y", "t", "u"}};
    v.push_back({"Fisher-KPP 2D neumann", c});
  }
  {
    auto c = base(1, Boundary::dirichlet, 70, 20);
    c.type = io::FpdeConfig::Type::space_fractional;
    c.order = 1.6;
    c.time.grading = 1.0;
    c.source_derivative = {"", {"x", "y", "t", "u"}};  // forward differences
    c.boundary_value = {"0.2*t", {"x", "y", "t"}};
    v.push_back({"Riesz Allen-Cahn 1D dirichlet", c});
  }
  {
    auto c = base(2, Boundary::periodic, 16, 8);
    c.type = io::FpdeConfig::Type::space_fractional;
    c.order = 1.4;
    c.time.grading = 1.0;
    v.push_back({"Riesz Allen-Cahn 2D periodic", c});
  }
  return v;
}

frac::FpdeSolverOptions tight() {
  frac::FpdeSolverOptions o;
  o.prefix = "nlpar_";
  return o;
}

TEST(FpdeNonlinearParallel, RanksAgreeWithTheOneRankRunToRoundOff) {
  // The 2D inner solves (CG + BoomerAMG) run to rtol 1e-13 and Newton to 1e-12, so that the
  // iteration counts' dependence on the decomposition leaves only round-off; 1D is exact.
  ASSERT_EQ(PetscOptionsSetValue(nullptr, "-nlpar_ksp_rtol", "1e-13"), 0);
  ASSERT_EQ(PetscOptionsSetValue(nullptr, "-nlpar_snes_rtol", "1e-12"), 0);
  for (const Named& c : cases()) {
    SCOPED_TRACE(c.name);
    FpdeSolver dist(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c.config), tight());
    FpdeSolver alone(PETSC_COMM_SELF, frac::fpde_problem_from_config(c.config), tight());
    dist.run_until(c.config.time.steps);
    alone.run_until(c.config.time.steps);
    const std::vector<double> a = fracmfg::test::natural_on_all(dist.dm(), dist.solution());
    const double* b = nullptr;
    VecGetArrayRead(alone.solution(), &b);
    double diff = 0.0;
    double scale = 0.0;
    for (std::size_t p = 0; p < a.size(); ++p) {
      diff = std::max(diff, std::fabs(a[p] - b[p]));
      scale = std::max(scale, std::fabs(b[p]));
    }
    VecRestoreArrayRead(alone.solution(), &b);
    if (world_rank() == 0) {
      std::printf("%-28s %d ranks: max |u_dist - u_1| = %.2e (max |u| %.2e), Newton %lld\n", c.name,
                  world_size(), diff, scale,
                  static_cast<long long>(dist.statistics().nonlinear_iterations));
    }
    EXPECT_GT(dist.statistics().nonlinear_iterations, c.config.time.steps);
    EXPECT_LE(diff, 1e-11 * scale);
  }
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-nlpar_ksp_rtol"), 0);
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-nlpar_snes_rtol"), 0);
}

TEST(FpdeNonlinearParallel, RestartFromACheckpointReproducesTheUninterruptedRun) {
  const char* bin = std::getenv("FRACMFG_BINARY_DIR");
  const std::string dir =
      std::string(bin ? bin : ".") + "/fpde_nonlinear_parallel_np" + std::to_string(world_size());
  if (world_rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  fracmfg::test::expect_restart_reproduces_run(cases(), dir);
}

}  // namespace
