// Space-fractional diffusion with a variable diffusivity (diffusivity_profile, K(x, y)
// multiplying the Riesz operator) on several ranks: the distributed run agrees with the
// one-rank run to round-off (1D Dirichlet, 2D periodic on a grid that is not square, and
// Allen-Cahn with Newton), and a restart from a checkpoint reproduces the uninterrupted run
// bit for bit.
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
using fracmfg::test::world_rank;
using fracmfg::test::world_size;

using Named = fracmfg::test::NamedFpdeConfig;

io::FpdeConfig base(int dim, Boundary b, int points, int steps) {
  io::FpdeConfig c;
  c.type = io::FpdeConfig::Type::space_fractional;
  c.order = 1.6;
  c.domain.length.assign(static_cast<std::size_t>(dim), 1.0);
  c.domain.boundary = b;
  c.grid.points.assign(static_cast<std::size_t>(dim), points);
  if (dim == 2) c.grid.points[1] = points + 4;  // not square
  c.time.horizon = 0.5;
  c.time.steps = steps;
  c.diffusivity = 0.3;
  c.diffusivity_profile = {dim == 1 ? "1+0.8*sin(3*x)^2" : "1+0.5*x*y+0.4*cos(2*pi*y)", {"x", "y"}};
  c.initial = {dim == 1 ? "sin(pi*x)+0.3*x" : "sin(2*pi*x)*cos(2*pi*y)+0.2*cos(4*pi*x)",
               {"x", "y"}};
  c.source = {"x*(1-x)*cos(3*t)", {"x", "y", "t"}};
  c.boundary_value = {"0.3*x+0.1*t", {"x", "y", "t"}};
  return c;
}

std::vector<Named> cases() {
  std::vector<Named> v;
  v.push_back({"Riesz K(x) 1D dirichlet", base(1, Boundary::dirichlet, 90, 12)});
  v.push_back({"Riesz K(x, y) 2D periodic", base(2, Boundary::periodic, 18, 6)});
  {
    auto c = base(1, Boundary::dirichlet, 70, 10);
    c.source = {"u - u^3", {"x", "y", "t", "u"}};
    c.source_derivative = {"1 - 3*u^2", {"x", "y", "t", "u"}};
    v.push_back({"Riesz K(x) Allen-Cahn 1D", c});
  }
  return v;
}

TEST(FpdeRieszVariableDiffusivityRanks, RanksAgreeWithTheOneRankRunToRoundOff) {
  ASSERT_EQ(PetscOptionsSetValue(nullptr, "-rvk_ksp_rtol", "1e-13"), 0);
  ASSERT_EQ(PetscOptionsSetValue(nullptr, "-rvk_snes_rtol", "1e-12"), 0);
  frac::FpdeSolverOptions o;
  o.prefix = "rvk_";
  for (const Named& c : cases()) {
    SCOPED_TRACE(c.name);
    FpdeSolver dist(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c.config), o);
    FpdeSolver alone(PETSC_COMM_SELF, frac::fpde_problem_from_config(c.config), o);
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
      std::printf("%-28s %d ranks: max |u_dist - u_1| = %.2e (max |u| %.2e), CG %lld\n", c.name,
                  world_size(), diff, scale,
                  static_cast<long long>(dist.statistics().linear_iterations));
    }
    EXPECT_GT(scale, 0.02);  // not a trivial solution
    EXPECT_LE(diff, 1e-11 * scale);
  }
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-rvk_ksp_rtol"), 0);
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-rvk_snes_rtol"), 0);
}

TEST(FpdeRieszVariableDiffusivityRanks, RestartFromACheckpointReproducesTheUninterruptedRun) {
  const char* bin = std::getenv("FRACMFG_BINARY_DIR");
  const std::string dir = std::string(bin ? bin : ".") + "/fpde_riesz_variable_diffusivity_np" +
                          std::to_string(world_size());
  if (world_rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  fracmfg::test::expect_restart_reproduces_run(cases(), dir);
}

}  // namespace
