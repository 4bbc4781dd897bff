// Manufactured solutions in 3D: smooth u(t, x, y, z), m(t, x, y, z) are chosen, the sources
// f_u and f_m that make them solve the MFG system are derived by hand below and given to the
// deck as formulas of (x, y, z, t), and the discrete solution is compared with (u, m) at
// every grid point and time level. The scheme (implicit Euler in time, the upwind numerical
// Hamiltonian and centred Laplacian on the 7-point stencil, the adjoint Fokker-Planck step)
// is first order in time and space: refining dt and h together (dt = h / 2) the max-norm
// errors of u and m must fall like h, observed order 1 within 0.15 on the finest pair.
//
// Derivation (c = 1, H = |p|^2 / 2, F = log m, V = 0):
//   f_u = -u_t - nu Lap u + |grad u|^2 / 2 - log m,
//   f_m = m_t - nu Lap m - div(m grad u) = m_t - nu Lap m - (grad m . grad u + m Lap u),
// u = a(t) (phi(x) + 0.5 phi(y) + 0.25 phi(z)), m = 1 + b(t) psi_x(x) psi(y) psi(z),
// a = A (1 + t), b = 0.5 exp(-t) (so m >= 0.5), A = 0.2 (reflecting) or 0.1 (periodic: with
// 2 pi waves and A = 0.2 the source f_m drives the 8^3 solution below 0);
//   periodic   phi = cos(2 pi v), psi_x = sin(2 pi x), psi = cos(2 pi v);
//   reflecting phi = psi_x = psi = cos(pi v) (the normal derivatives of u and m vanish on
//              the walls, so the zero-flux condition holds);
// psi_x has zero mean, so the mass stays 1 and f_m has zero mean.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;

constexpr double kNu = 0.1;
constexpr double kHorizon = 0.5;

std::string p(const std::string& s) {
  return "(" + s + ")";
}

// Formulas of one axis function and its first two derivatives, and its exact values.
struct AxisFunction {
  std::string f, df, ddf;               // formulas in the variable `v`
  std::function<double(double)> value;  // phi(v)
};

// k is the wave number, ks its formula ("pi" or "(2*pi)").
AxisFunction cos_k(double k, const std::string& ks, const std::string& v) {
  return {"cos(" + ks + "*" + v + ")", "(-" + ks + "*sin(" + ks + "*" + v + "))",
          "(-" + ks + "^2*cos(" + ks + "*" + v + "))", [k](double x) { return std::cos(k * x); }};
}

AxisFunction sin_k(double k, const std::string& ks, const std::string& v) {
  return {"sin(" + ks + "*" + v + ")", "(" + ks + "*cos(" + ks + "*" + v + "))",
          "(-" + ks + "^2*sin(" + ks + "*" + v + "))", [k](double x) { return std::sin(k * x); }};
}

struct Manufactured {
  std::string deck;
  std::function<double(double, double, double, double)> u, m;  // (t, x, y, z)
};

Manufactured three_d(bool periodic, int points) {
  const double A = periodic ? 0.1 : 0.2, B = 0.5;
  const std::string a = "(" + std::to_string(A) + "*(1+t))", da = std::to_string(A);
  const std::string b = "(" + std::to_string(B) + "*exp(-t))";
  const std::string db = "(-" + std::to_string(B) + "*exp(-t))";
  const double k = periodic ? 2 * M_PI : M_PI;
  const std::string ks = periodic ? "(2*pi)" : "pi";
  const AxisFunction phx = cos_k(k, ks, "x"), phy = cos_k(k, ks, "y"), phz = cos_k(k, ks, "z");
  const AxisFunction psx = periodic ? sin_k(k, ks, "x") : cos_k(k, ks, "x");
  const AxisFunction psy = cos_k(k, ks, "y"), psz = cos_k(k, ks, "z");
  // u = a (phx + 0.5 phy + 0.25 phz), m = 1 + b psx psy psz
  const std::string phi = "(" + phx.f + "+0.5*" + phy.f + "+0.25*" + phz.f + ")";
  const std::string u_t = da + "*" + phi;
  const std::string u_x = a + "*" + phx.df, u_y = a + "*0.5*" + phy.df, u_z = a + "*0.25*" + phz.df;
  const std::string lap_u = a + "*(" + phx.ddf + "+0.5*" + phy.ddf + "+0.25*" + phz.ddf + ")";
  const std::string psi = psx.f + "*" + psy.f + "*" + psz.f;
  const std::string m = "(1+" + b + "*" + psi + ")";
  const std::string m_t = db + "*" + psi;
  const std::string m_x = b + "*" + psx.df + "*" + psy.f + "*" + psz.f;
  const std::string m_y = b + "*" + psx.f + "*" + psy.df + "*" + psz.f;
  const std::string m_z = b + "*" + psx.f + "*" + psy.f + "*" + psz.df;
  const std::string lap_m = b + "*(" + psx.ddf + "*" + psy.f + "*" + psz.f + "+" + psx.f + "*" +
                            psy.ddf + "*" + psz.f + "+" + psx.f + "*" + psy.f + "*" + psz.ddf + ")";
  const std::string nu = std::to_string(kNu);
  const std::string fu = "-" + p(u_t) + "-" + nu + "*" + p(lap_u) + "+(" + p(u_x) + "^2+" + p(u_y) +
                         "^2+" + p(u_z) + "^2)/2-log" + p(m);
  const std::string fm = p(m_t) + "-" + nu + "*" + p(lap_m) + "-(" + p(m_x) + "*" + p(u_x) + "+" +
                         p(m_y) + "*" + p(u_y) + "+" + p(m_z) + "*" + p(u_z) + "+" + m + "*" +
                         p(lap_u) + ")";
  const std::string n = std::to_string(points);
  Manufactured r;
  r.deck =
      "problem: mfg\nmfg:\n"
      "  domain: {length: [1.0, 1.0, 1.0], boundary: " +
      std::string(periodic ? "periodic" : "reflecting") + "}\n  grid: {points: [" + n + ", " + n +
      ", " + n + "]}\n  time: {horizon: " + std::to_string(kHorizon) + ", steps: " + n +
      "}\n  diffusion: " + nu + "\n  coupling: {type: log}\n  initial_density: \"1+" +
      std::to_string(B) + "*" + psi + "\"\n  terminal_cost: \"" +
      std::to_string(A * (1 + kHorizon)) + "*" + phi + "\"\n  sources: {hjb: \"" + fu +
      "\", fp: \"" + fm +
      "\"}\n  iteration: {damping: 0.7, anderson: 3, tolerance: 1.0e-8, "
      "max_iterations: 300}\n";
  r.u = [phx, phy, phz, A](double t, double x, double y, double z) {
    return A * (1 + t) * (phx.value(x) + 0.5 * phy.value(y) + 0.25 * phz.value(z));
  };
  r.m = [psx, psy, psz, B](double t, double x, double y, double z) {
    return 1.0 + B * std::exp(-t) * psx.value(x) * psy.value(y) * psz.value(z);
  };
  return r;
}

struct Errors {
  double u = 0.0, m = 0.0;
};

// Max-norm errors over every grid point and time level, reduced over the ranks.
Errors solve_and_measure(const Manufactured& problem) {
  const auto cfg = fracmfg::io::Deck::from_string(problem.deck, "manufactured_3d.yaml").mfg();
  mfg::Solver solver(PETSC_COMM_WORLD, mfg::problem_from_config(cfg), nullptr,
                     fracmfg::core::Logger(0, fracmfg::core::LogLevel::warn, false));
  const mfg::SolveResult r = solver.solve();
  EXPECT_TRUE(r.converged) << "fixed point not converged: " << r.change_u << " " << r.change_m;
  const auto& x = solver.model().x();
  const auto& y = solver.model().y();
  const auto& z = solver.model().z();
  Errors e;
  for (int n = 0; n <= solver.steps(); ++n) {
    const double t = solver.model().time(n);
    detail::ReadArray u(solver.u(n)), m(solver.m(n));
    for (std::size_t k = 0; k < x.size(); ++k) {
      const auto i = static_cast<PetscInt>(k);
      e.u = std::max(e.u, std::abs(u[i] - problem.u(t, x[k], y[k], z[k])));
      e.m = std::max(e.m, std::abs(m[i] - problem.m(t, x[k], y[k], z[k])));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &e.u, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &e.m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return e;
}

void expect_first_order(const std::vector<int>& points, bool periodic) {
  std::vector<Errors> errors;
  for (int n : points) {
    errors.push_back(solve_and_measure(three_d(periodic, n)));
    std::printf("  N = %3d: max error u %.3e, m %.3e\n", n, errors.back().u, errors.back().m);
  }
  for (std::size_t i = 1; i < points.size(); ++i) {
    const double ratio = static_cast<double>(points[i]) / points[i - 1];
    const double order_u = std::log(errors[i - 1].u / errors[i].u) / std::log(ratio);
    const double order_m = std::log(errors[i - 1].m / errors[i].m) / std::log(ratio);
    std::printf("  N = %3d -> %3d: observed order u %.3f, m %.3f\n", points[i - 1], points[i],
                order_u, order_m);
    if (i + 1 == points.size()) {  // the asymptotic pair
      EXPECT_NEAR(order_u, 1.0, 0.15);
      EXPECT_NEAR(order_m, 1.0, 0.15);
    }
  }
}

TEST(Mfg3dManufactured, PeriodicThreeDimensionalConvergesAtFirstOrder) {
  expect_first_order({8, 16, 32}, true);
}

TEST(Mfg3dManufactured, ReflectingThreeDimensionalConvergesAtFirstOrder) {
  expect_first_order({8, 16, 32}, false);
}

}  // namespace
