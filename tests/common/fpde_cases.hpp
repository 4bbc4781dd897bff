#pragma once
// Fractional PDE cases shared by the tests under tests/mpi: a named configuration, the
// base problem of the rank and balance tests (one source, initial bump and boundary data
// per type and dimension), and the restart check every fpde family makes (stop a third of the
// way, checkpoint, restart, finish: bit for bit the uninterrupted run).

#include <gtest/gtest.h>
#include <petscvec.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_solver.hpp"
#include "fracmfg/io/config.hpp"

namespace fracmfg::test {

struct NamedFpdeConfig {
  const char* name;
  io::FpdeConfig config;
};

/// Order 0.6 (time_fractional) or 1.7 (space_fractional) on [0, 1]^dim, a grid of `points`
/// (points + 4 along y: not square), horizon 0.5 in `steps` steps, diffusivity 0.8, a bump as
/// initial data, a smooth source and boundary data that move with t.
inline io::FpdeConfig fpde_base_config(io::FpdeConfig::Type type, int dim,
                                       io::FpdeConfig::Domain::Boundary b, int points, int steps) {
  using Boundary = io::FpdeConfig::Domain::Boundary;
  io::FpdeConfig c;
  c.type = type;
  c.order = type == io::FpdeConfig::Type::time_fractional ? 0.6 : 1.7;
  c.domain.length.assign(static_cast<std::size_t>(dim), 1.0);
  c.domain.boundary = b;
  c.grid.points.assign(static_cast<std::size_t>(dim), points);
  if (dim == 2) c.grid.points[1] = points + 4;  // not square
  c.time.horizon = 0.5;
  c.time.steps = steps;
  c.diffusivity = 0.8;
  c.initial = {dim == 1 ? "exp(-30*(x-0.4)^2)" : "exp(-30*((x-0.4)^2+(y-0.55)^2))", {"x", "y"}};
  c.source = {"sin(3*x+2*y)*cos(4*t)", {"x", "y", "t"}};
  c.boundary_value = {b == Boundary::dirichlet ? "0.1*t*(1+x)" : "0.2*t", {"x", "y", "t"}};
  return c;
}

/// For each case: the uninterrupted run, and one stopped after steps / 3 + 1 steps with a
/// checkpoint in `dir` (which must exist) and restarted from it; the final solutions must be
/// equal bit for bit. Collective on PETSC_COMM_WORLD.
inline void expect_restart_reproduces_run(const std::vector<NamedFpdeConfig>& cases,
                                          const std::string& dir) {
  int k = 0;
  for (const NamedFpdeConfig& c : cases) {
    SCOPED_TRACE(c.name);
    const std::int64_t steps = c.config.time.steps;
    const std::int64_t stop = steps / 3 + 1;
    frac::FpdeSolver full(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c.config));
    full.run_until(steps);
    const std::string path = dir + "/case" + std::to_string(k++) + ".chk.h5";
    {
      frac::FpdeSolver first(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c.config));
      first.run_until(stop);
      first.write_checkpoint(path);
    }
    frac::FpdeSolver second(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c.config));
    second.restart(path);
    EXPECT_EQ(second.step(), stop);
    second.run_until(steps);
    const double* a = nullptr;
    const double* b = nullptr;
    VecGetArrayRead(full.solution(), &a);
    VecGetArrayRead(second.solution(), &b);
    std::size_t differ = 0;
    for (std::size_t p = 0; p < full.grid().local_size(); ++p) differ += a[p] != b[p];
    VecRestoreArrayRead(full.solution(), &a);
    VecRestoreArrayRead(second.solution(), &b);
    EXPECT_EQ(differ, 0u) << "points that differ after the restart";
  }
}

}  // namespace fracmfg::test
