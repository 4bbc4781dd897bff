// A linear-quadratic game with a closed-form solution, reproduced to discretisation
// accuracy (first order: the errors halve when h and dt halve).
//
// Derivation. c = 1 (H = p^2/2), no congestion (coupling strength 0), potential
// V(x) = (q/2)(x - xb)^2 and terminal cost G(x) = (r/2)(x - xb)^2 on the whole line:
//   -u_t - nu u_xx + u_x^2/2 = V,  u(T) = G.
// The ansatz u = (P(t)/2)(x - xb)^2 + s(t) gives
//   -(P'/2)(x - xb)^2 - s' - nu P + (P^2/2)(x - xb)^2 = (q/2)(x - xb)^2,
// so P' = P^2 - q, P(T) = r and s' = -nu P, s(T) = 0. With r = k = sqrt(q) the Riccati
// solution is constant, P = k, and s(t) = nu k (T - t):
//   u(t, x) = (k/2)(x - xb)^2 + nu k (T - t).
// The optimal drift -u_x = -k (x - xb) makes the state an Ornstein-Uhlenbeck process, so a
// Gaussian m0 = N(mu0, s0^2) stays Gaussian, m(t) = N(mu(t), s(t)^2) with
//   mu' = -k (mu - xb)          ->  mu(t) = xb + (mu0 - xb) e^{-k t},
//   (s^2)' = -2 k s^2 + 2 nu    ->  s(t)^2 = nu/k + (s0^2 - nu/k) e^{-2 k t}.
// Here k = 2, xb = 0.5, nu = 0.01, mu0 = 0.35, s0 = 0.06, T = 1 on [0, 1] with reflecting
// walls: the density stays more than 5.8 standard deviations from the walls (its mass
// outside [0, 1] is below 1e-8). The walls' zero-gradient condition bends u in a layer near
// them that the optimal paths, which run towards xb, never cross backward in time; u is
// therefore compared on [0.2, 0.8] and m everywhere.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;

constexpr double kK = 2.0, kXb = 0.5, kNu = 0.01, kMu0 = 0.35, kS0 = 0.06, kT = 1.0;

double exact_u(double t, double x) {
  return 0.5 * kK * (x - kXb) * (x - kXb) + kNu * kK * (kT - t);
}

double exact_m(double t, double x) {
  const double mu = kXb + (kMu0 - kXb) * std::exp(-kK * t);
  const double s2 = kNu / kK + (kS0 * kS0 - kNu / kK) * std::exp(-2 * kK * t);
  return std::exp(-(x - mu) * (x - mu) / (2 * s2)) / std::sqrt(2 * M_PI * s2);
}

std::string deck(int points, int steps) {
  return "problem: mfg\nmfg:\n"
         "  domain: {length: [1.0], boundary: reflecting}\n"
         "  grid: {points: [" +
         std::to_string(points) + "]}\n  time: {horizon: 1.0, steps: " + std::to_string(steps) +
         "}\n"
         "  diffusion: 0.01\n"
         "  coupling: {type: power, strength: 0, potential: \"2*(x-0.5)^2\"}\n"
         "  initial_density: \"exp(-(x-0.35)^2/(2*0.06^2))\"\n"
         "  terminal_cost: \"(x-0.5)^2\"\n"
         "  iteration: {damping: 1, tolerance: 1.0e-12, max_iterations: 20}\n";
}

struct Errors {
  double u = 0.0;  // max over [0.2, 0.8] and every level
  double m = 0.0;  // max over the grid and every level, relative to max m
  int iterations = 0;
};

Errors solve(int points, int steps) {
  const auto cfg = fracmfg::io::Deck::from_string(deck(points, steps), "lq.yaml").mfg();
  mfg::Solver solver(PETSC_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::core::Logger(0, fracmfg::core::LogLevel::warn, false));
  const mfg::SolveResult r = solver.solve();
  EXPECT_TRUE(r.converged);
  Errors e;
  e.iterations = r.iterations;
  double peak = 0.0;
  const auto& x = solver.model().x();
  for (int n = 0; n <= solver.steps(); ++n) {
    const double t = solver.model().time(n);
    detail::ReadArray u(solver.u(n)), m(solver.m(n));
    for (std::size_t k = 0; k < x.size(); ++k) {
      const auto i = static_cast<PetscInt>(k);
      if (x[k] >= 0.2 && x[k] <= 0.8) e.u = std::max(e.u, std::abs(u[i] - exact_u(t, x[k])));
      e.m = std::max(e.m, std::abs(m[i] - exact_m(t, x[k])));
      peak = std::max(peak, exact_m(t, x[k]));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &e.u, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &e.m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &peak, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  e.m /= peak;
  return e;
}

TEST(MfgLinearQuadratic, GaussianDensityAndQuadraticValueAreReproducedAtFirstOrder) {
  const Errors coarse = solve(200, 100);
  const Errors fine = solve(400, 200);
  std::printf("  N = 200: error u %.3e, m %.3e (relative), %d iterations\n", coarse.u, coarse.m,
              coarse.iterations);
  std::printf("  N = 400: error u %.3e, m %.3e (relative), %d iterations\n", fine.u, fine.m,
              fine.iterations);
  // No congestion: u does not depend on m, so the fixed point is reached as soon as the HJB
  // steps are solved to the tolerance (the solver tightens them by 1e-3 per iteration).
  EXPECT_LE(fine.iterations, 6);
  // Discretisation accuracy: first order, small.
  EXPECT_NEAR(std::log2(coarse.u / fine.u), 1.0, 0.15);
  EXPECT_NEAR(std::log2(coarse.m / fine.m), 1.0, 0.15);
  EXPECT_LT(fine.u, 5e-3);
  EXPECT_LT(fine.m, 5e-2);
}

}  // namespace
