// The ghosts of the 1D fast path (mfg/direct_1d.hpp): after a distributed tridiagonal solve
// moves every block by x <- x - delta, Halo1d::after_step() gives, without a message, bit for
// bit the ghosts that a new exchange() returns: periodic and reflecting, uneven blocks, on 1,
// 2 and 3 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/mfg_configs.hpp"
#include "fracmfg/la/tridiag_solver.hpp"
#include "fracmfg/mfg/model.hpp"
#include "fracmfg/mfg/problem.hpp"
#include "mfg/direct_1d.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace la = fracmfg::la;

std::string deck_1d(const std::string& boundary, int points) {
  return "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: " + boundary +
         "}\n  grid: {points: [" + std::to_string(points) +
         "]}\n  time: {horizon: 0.5, steps: 4}\n  diffusion: 0.05\n"
         "  coupling: {type: log}\n  initial_density: \"1\"\n";
}

TEST(Halo1d, GhostsAfterASolveEqualAFreshExchange) {
  for (const std::string boundary : {"periodic", "reflecting"}) {
    for (const int points : {7, 40, 301}) {
      SCOPED_TRACE(boundary + ", " + std::to_string(points) + " points");
      const mfg::Model model(
          PETSC_COMM_WORLD,
          mfg::problem_from_config(fracmfg::test::mfg_config(deck_1d(boundary, points))));
      const mfg::detail::Halo1d halo(model);
      const PetscInt n = halo.count();
      const PetscInt first = model.box().xs;
      std::vector<double> u(static_cast<std::size_t>(n)), b(u.size()), delta(u.size());
      std::vector<double> sub(u.size()), diag(u.size()), super(u.size());
      for (PetscInt k = 0; k < n; ++k) {
        const double i = static_cast<double>(first + k);
        u[k] = std::sin(0.37 * i) + 0.01 * i;
        b[k] = std::cos(1.3 * i);
        sub[k] = -1.0 - 0.1 * std::sin(i);
        super[k] = -1.0 + 0.1 * std::cos(i);
        diag[k] = 4.0 + 0.5 * std::sin(2.0 * i);
      }
      const std::pair<double, double> before = halo.exchange(u.data());
      la::TridiagSolver solver(model.comm());
      solver.factor_solve(n, sub.data(), diag.data(), super.data(), boundary == "periodic",
                          b.data(), delta.data());
      for (PetscInt k = 0; k < n; ++k) u[k] -= delta[k];
      const std::pair<double, double> after =
          halo.after_step(before, solver.neighbour_solution(), u.data());
      const std::pair<double, double> fresh = halo.exchange(u.data());
      EXPECT_EQ(after.first, fresh.first);
      EXPECT_EQ(after.second, fresh.second);
      // The ghosts moved (the check is not of unchanged values).
      EXPECT_NE(after.first, before.first);
    }
  }
}

}  // namespace
