// The linearised game K = dPsi/dU of the 1D crowd game (src/mfg/newton.hpp) as a dense
// matrix, for its eigenvalues (perf/mfg_spectrum.py): the game of bench_mfg -problem crowd1d
// on N points and N_t steps, solved by the fixed point to 1e-10, linearised at its solution
// (U = Psi(U), M = M(U)); column j of K is e_j - (I - K) e_j. One rank; (N (N_t + 1))^2
// values of 8 bytes (100 x 40: 134 MB).
//   bench_mfg_spectrum -points 100 -steps 40 -out k100.bin
//   /usr/bin/python3 perf/mfg_spectrum.py k50.bin:50:20 k100.bin:100:40
#include <mpi.h>
#include <petscsys.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

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
  if (env.size() != 1) throw fracmfg::Error("bench_mfg_spectrum runs on one rank");
  PetscInt points = 50, steps = 20;
  char out[PETSC_MAX_PATH_LEN] = "k.bin";
  FRACMFG_PETSC_CHECK(PetscOptionsGetInt(nullptr, nullptr, "-points", &points, nullptr));
  FRACMFG_PETSC_CHECK(PetscOptionsGetInt(nullptr, nullptr, "-steps", &steps, nullptr));
  FRACMFG_PETSC_CHECK(PetscOptionsGetString(nullptr, nullptr, "-out", out, sizeof out, nullptr));
  const std::string deck =
      "problem: mfg\nmfg:\n  domain: {length: [1.0], boundary: periodic}\n  grid: {points: [" +
      std::to_string(points) + "]}\n  time: {horizon: 1.0, steps: " + std::to_string(steps) +
      "}\n  diffusion: 0.05\n  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
      "  initial_density: \"exp(-(x-0.3)^2/0.005)\"\n"
      "  iteration: {tolerance: 1.0e-10, max_iterations: 500}\n";
  const auto cfg = fracmfg::io::Deck::from_string(deck, "spectrum.yaml").mfg();
  mfg::Solver solver(env.comm(), mfg::problem_from_config(cfg), nullptr, env.log());
  if (!solver.solve().converged) throw fracmfg::Error("the fixed point did not converge");
  const mfg::Model& model = solver.model();
  const int levels = static_cast<int>(steps) + 1;
  std::vector<mfg::detail::VecPtr> u, m;
  for (int n = 0; n < levels; ++n) {
    u.push_back(mfg::detail::global_vec(model.dm()));
    m.push_back(mfg::detail::global_vec(model.dm()));
    FRACMFG_PETSC_CHECK(VecCopy(solver.u(n), u.back().get()));
    FRACMFG_PETSC_CHECK(VecCopy(solver.m(n), m.back().get()));
  }
  mfg::detail::LinearizedGame game(model);
  game.linearise(&u, &u, &m);
  const auto size = static_cast<std::size_t>(points) * static_cast<std::size_t>(levels);
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
  std::printf("K of %zu unknowns (%ld points x %ld levels) written to %s\n", size,
              static_cast<long>(points), static_cast<long>(levels), out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  fracmfg::core::EnvironmentOptions opts;
  opts.log_level = fracmfg::core::LogLevel::warn;
  return fracmfg::core::guarded_main(
      argc, argv, [](fracmfg::core::Environment& env) { return run(env); }, opts);
}
