// The linearised game K = dPsi/dU of the crowd games (src/mfg/newton.hpp) as a dense matrix,
// for its eigenvalues (perf/mfg_spectrum.py): the game of bench_mfg -problem crowd1d (or
// -problem crowd2d: N x N points) on N points and N_t steps, solved by the fixed point to
// 1e-10, linearised at its solution (U = Psi(U), M = M(U)); column j of K is
// e_j - (I - K) e_j. One rank; (points (N_t + 1))^2 values of 8 bytes (1D 100 x 40: 134 MB,
// 2D 20^2 x 12: 216 MB).
//   bench_mfg_spectrum -points 100 -steps 40 -out k100.bin
//   bench_mfg_spectrum -problem crowd2d -points 20 -steps 12 -out k2d20.bin
//   /usr/bin/python3 perf/mfg_spectrum.py k50.bin:50:20 k100.bin:100:40 k2d20.bin:400:12
// With -power N the matrix is not formed (any number of ranks): N steps of the power
// iteration on K (mfg::detail::power_iteration) give its eigenvalue of largest modulus (the
// most negative, a_min, on these games) on grids too large for a dense matrix, and the damping
// theta* = 2 / (1 + sqrt(1 - a_min)) beyond which the damped fixed point stops contracting
// at 1 - theta (docs/performance.md, "The damped fixed point's rate and its largest damping").
//   bench_mfg_spectrum -problem crowd2d -points 64 -steps 25 -power 60
#include <mpi.h>
#include <petscsys.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "crowd_games.hpp"
#include "fracmfg/core/environment.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/newton.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

namespace mfg = fracmfg::mfg;

int run(fracmfg::core::Environment& env) {
  PetscInt points = 50, steps = 20;
  char out[PETSC_MAX_PATH_LEN] = "k.bin";
  char problem[64] = "crowd1d";
  PetscInt power = 0;
  FRACMFG_PETSC_CHECK(PetscOptionsGetInt(nullptr, nullptr, "-power", &power, nullptr));
  if (power <= 0 && env.size() != 1) {
    throw fracmfg::Error("bench_mfg_spectrum forms the dense matrix on one rank (-power: any)");
  }
  FRACMFG_PETSC_CHECK(
      PetscOptionsGetString(nullptr, nullptr, "-problem", problem, sizeof problem, nullptr));
  const bool two_d = std::string(problem) == "crowd2d";
  if (!two_d && std::string(problem) != "crowd1d") {
    throw fracmfg::Error(std::string("-problem ") + problem + ": expected crowd1d or crowd2d");
  }
  FRACMFG_PETSC_CHECK(PetscOptionsGetInt(nullptr, nullptr, "-points", &points, nullptr));
  FRACMFG_PETSC_CHECK(PetscOptionsGetInt(nullptr, nullptr, "-steps", &steps, nullptr));
  FRACMFG_PETSC_CHECK(PetscOptionsGetString(nullptr, nullptr, "-out", out, sizeof out, nullptr));
  // The games of bench_mfg, solved by the damped fixed point (the 2D game at damping 0.3,
  // from two coarse levels on 64 points or more).
  const std::string iteration =
      two_d ? "  iteration: {method: fixed_point, damping: 0.3, tolerance: 1.0e-10, "
              "max_iterations: 2000" +
                  std::string(points >= 64 ? ", coarse_levels: 2" : "") + "}\n"
            : "  iteration: {method: fixed_point, tolerance: 1.0e-10, max_iterations: 500}\n";
  const std::string deck =
      "problem: mfg\nmfg:\n" +
      fracmfg::perf::crowd_game(problem, static_cast<long>(points), static_cast<long>(steps)) +
      iteration;
  const auto cfg = fracmfg::io::Deck::from_string(deck, "spectrum.yaml").mfg();
  mfg::Solver solver(env.comm(), mfg::problem_from_config(cfg), nullptr, env.log());
  if (!solver.solve().converged) throw fracmfg::Error("the fixed point did not converge");
  const mfg::Model& model = solver.model();
  const int levels = static_cast<int>(steps) + 1;
  std::vector<mfg::detail::VecPtr> u, m;
  mfg::detail::copy_solution(solver, u, m);
  mfg::detail::LinearizedGame game(model);
  game.linearise(&u, &u, &m);
  const auto per_level = static_cast<std::size_t>(points) * (two_d ? points : 1);
  const auto size = per_level * static_cast<std::size_t>(levels);
  if (power > 0) {
    mfg::detail::power_iteration(game, model, static_cast<int>(power),
                                 [&](const mfg::detail::PowerStep& p) {
                                   if (env.rank() != 0 || (p.step % 5 != 0 && p.step != power)) {
                                     return;
                                   }
                                   // The eigenvalue of largest modulus, negative on these games.
                                   const double a = -p.norm;
                                   const double theta = mfg::detail::largest_stable_damping(a);
                                   std::printf(
                                       "power iteration %d: |K x| %.5f, x.Kx %.5f, theta* %.4f, "
                                       "rate 1 - theta* %.4f\n",
                                       p.step, p.norm, p.rayleigh, theta, 1.0 - theta);
                                 });
    return 0;
  }
  std::vector<double> x(size, 0.0), y(size), k(size * size);
  for (std::size_t j = 0; j < size; ++j) {
    x[j] = 1.0;
    game.apply(x.data(), y.data());
    x[j] = 0.0;
    for (std::size_t i = 0; i < size; ++i) k[i * size + j] = (i == j ? 1.0 : 0.0) - y[i];
  }
  std::FILE* f = std::fopen(out, "wb");
  if (f == nullptr || std::fwrite(k.data(), sizeof(double), k.size(), f) != k.size()) {
    if (f != nullptr) std::fclose(f);
    throw fracmfg::Error(std::string("cannot write ") + out);
  }
  if (std::fclose(f) != 0) throw fracmfg::Error(std::string("cannot write ") + out);
  std::printf("K of %zu unknowns (%zu points x %ld levels) written to %s\n", size, per_level,
              static_cast<long>(levels), out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  fracmfg::core::EnvironmentOptions opts;
  opts.log_level = fracmfg::core::LogLevel::warn;
  return fracmfg::core::guarded_main(
      argc, argv, [](fracmfg::core::Environment& env) { return run(env); }, opts);
}
