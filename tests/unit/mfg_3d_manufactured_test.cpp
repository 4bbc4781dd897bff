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
#include "fracmfg/io/config.hpp"
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
      // Tolerance 1e-6: the errors are >= 1e-3 on these grids; the observed orders are those
      // at 1e-8 to three digits, in three quarters of the time.
      "\"}\n  iteration: {damping: 0.7, anderson: 3, tolerance: 1.0e-6, "
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

void expect_first_order(const std::vector<int>& points, const std::function<Errors(int)>& solve) {
  std::vector<Errors> errors;
  for (int n : points) {
    errors.push_back(solve(n));
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

// The power and congestion Hamiltonians in 3D (as tests/unit/mfg_hamiltonian_manufactured_test.cpp
// in 1D and 2D), the sources as C++ functions of (x, y, z, t) (Field::bulk), c = 1, F = log m:
//   power,      f_u = -u_t - nu Lap u + |grad u|^q / q - log m,
//               f_m = m_t - nu Lap m - div(m |grad u|^(q-2) grad u),
//   congestion, f_u = -u_t - nu Lap u + |grad u|^2 / (2 (eps + m)^alpha) - log m,
//               f_m = m_t - nu Lap m - div(W(m) grad u), W(m) = m (eps + m)^(-alpha),
// with u = a (phi(x) + 0.5 phi(y) + 0.25 phi(z)), m = 1 + b psi_x(x) psi(y) psi(z) as above.
struct HamiltonianGame {
  mfg::Problem::Hamiltonian::Type type;
  bool periodic = true;
  double q = 2.0, eps = 0.5, alpha = 1.5, A = 0.2, B = 0.5;
};

struct Point {
  double u, ut, g[3], dd[3], lap_u, m, mt, gm[3], lap_m;
};

Point point(const HamiltonianGame& h, double t, double x, double y, double z) {
  const double k = h.periodic ? 2 * M_PI : M_PI;
  const double a = h.A * (1 + t), b = h.B * std::exp(-t);
  const double w[3] = {1.0, 0.5, 0.25};
  const double v[3] = {x, y, z};
  Point p{};
  double phi = 0.0;
  for (int d = 0; d < 3; ++d) {
    phi += w[d] * std::cos(k * v[d]);
    p.g[d] = -a * w[d] * k * std::sin(k * v[d]);
    p.dd[d] = -a * w[d] * k * k * std::cos(k * v[d]);
  }
  p.u = a * phi;
  p.ut = h.A * phi;
  p.lap_u = p.dd[0] + p.dd[1] + p.dd[2];
  // psi_x = sin (periodic) or cos, psi = cos along y and z.
  const double f[3] = {h.periodic ? std::sin(k * x) : std::cos(k * x), std::cos(k * y),
                       std::cos(k * z)};
  const double df[3] = {h.periodic ? k * std::cos(k * x) : -k * std::sin(k * x),
                        -k * std::sin(k * y), -k * std::sin(k * z)};
  const double psi = f[0] * f[1] * f[2];
  p.m = 1 + b * psi;
  p.mt = -b * psi;
  p.gm[0] = b * df[0] * f[1] * f[2];
  p.gm[1] = b * f[0] * df[1] * f[2];
  p.gm[2] = b * f[0] * f[1] * df[2];
  p.lap_m = -3.0 * k * k * b * psi;
  return p;
}

double hjb_source(const HamiltonianGame& h, const Point& p) {
  const double s = p.g[0] * p.g[0] + p.g[1] * p.g[1] + p.g[2] * p.g[2];
  const double ham = h.type == mfg::Problem::Hamiltonian::Type::power
                         ? std::pow(s, 0.5 * h.q) / h.q
                         : s / (2.0 * std::pow(h.eps + p.m, h.alpha));
  return -p.ut - kNu * p.lap_u + ham - std::log(p.m);
}

double fp_source(const HamiltonianGame& h, const Point& p) {
  const double s = p.g[0] * p.g[0] + p.g[1] * p.g[1] + p.g[2] * p.g[2];
  const double gm_gu = p.gm[0] * p.g[0] + p.gm[1] * p.g[1] + p.gm[2] * p.g[2];
  double div = 0.0;  // div(m D_pH); u is separable, so its mixed derivatives vanish
  if (h.type == mfg::Problem::Hamiltonian::Type::power) {
    if (s > 0.0) {
      const double w = std::pow(s, 0.5 * h.q - 1.0);
      const double div_g =
          w * p.lap_u +
          (h.q - 2.0) * w / s *
              (p.g[0] * p.g[0] * p.dd[0] + p.g[1] * p.g[1] * p.dd[1] + p.g[2] * p.g[2] * p.dd[2]);
      div = w * gm_gu + p.m * div_g;
    }
  } else {
    const double f = std::pow(h.eps + p.m, -h.alpha);
    const double w = p.m * f;
    const double dw = f - h.alpha * p.m * f / (h.eps + p.m);
    div = dw * gm_gu + w * p.lap_u;
  }
  return p.mt - kNu * p.lap_m - div;
}

// A field of (x, y, z, t) from a function of the point.
template <class F>
mfg::Field bulk(F f, bool timed) {
  return mfg::Field::bulk(
      [f](std::size_t count, const double* x, const double* y, const double* z, double t,
          double* values) {
        for (std::size_t k = 0; k < count; ++k) values[k] = f(x[k], y[k], z[k], t);
      },
      timed);
}

Errors solve_hamiltonian_game(const HamiltonianGame& h, int points) {
  mfg::Problem pr;
  pr.domain.length = {1.0, 1.0, 1.0};
  pr.domain.boundary = h.periodic ? fracmfg::io::MfgConfig::Domain::Boundary::periodic
                                  : fracmfg::io::MfgConfig::Domain::Boundary::reflecting;
  pr.grid.points = {points, points, points};
  pr.time = {kHorizon, points};
  pr.diffusion = kNu;
  pr.hamiltonian.type = h.type;
  pr.hamiltonian.exponent = h.q;
  pr.hamiltonian.epsilon = h.eps;
  pr.hamiltonian.alpha = h.alpha;
  pr.coupling.type = mfg::Problem::Coupling::Type::log;
  pr.initial_density =
      bulk([h](double x, double y, double z, double) { return point(h, 0.0, x, y, z).m; }, false);
  pr.terminal_cost = bulk(
      [h](double x, double y, double z, double) { return point(h, kHorizon, x, y, z).u; }, false);
  pr.sources.hjb = bulk(
      [h](double x, double y, double z, double t) { return hjb_source(h, point(h, t, x, y, z)); },
      true);
  pr.sources.fp = bulk(
      [h](double x, double y, double z, double t) { return fp_source(h, point(h, t, x, y, z)); },
      true);
  pr.iteration.damping = 0.5;
  pr.iteration.anderson = 3;
  pr.iteration.tolerance = 1e-6;  // errors >= 1e-3 on these grids (as three_d's)
  pr.iteration.max_iterations = 300;
  mfg::Solver solver(PETSC_COMM_WORLD, pr, nullptr,
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
      const Point p = point(h, t, x[k], y[k], z[k]);
      const auto i = static_cast<PetscInt>(k);
      e.u = std::max(e.u, std::abs(u[i] - p.u));
      e.m = std::max(e.m, std::abs(m[i] - p.m));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &e.u, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &e.m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return e;
}

TEST(Mfg3dManufactured, PeriodicThreeDimensionalConvergesAtFirstOrder) {
  expect_first_order({8, 16, 32}, [](int n) { return solve_and_measure(three_d(true, n)); });
}

TEST(Mfg3dManufactured, ReflectingThreeDimensionalConvergesAtFirstOrder) {
  expect_first_order({8, 16, 32}, [](int n) { return solve_and_measure(three_d(false, n)); });
}

TEST(Mfg3dPowerManufactured, ReflectingThreeDimensionalQThreeConvergesAtFirstOrder) {
  HamiltonianGame h{mfg::Problem::Hamiltonian::Type::power};
  h.periodic = false;
  h.q = 3.0;
  expect_first_order({6, 12, 24}, [h](int n) { return solve_hamiltonian_game(h, n); });
}

TEST(Mfg3dCongestionManufactured, PeriodicThreeDimensionalConvergesAtFirstOrder) {
  HamiltonianGame h{mfg::Problem::Hamiltonian::Type::congestion};
  h.A = 0.1;
  // Pre-asymptotic in m on 12^3 -> 24^3 (observed 1.18); 16^3 -> 32^3: 1.15.
  expect_first_order({8, 16, 32}, [h](int n) { return solve_hamiltonian_game(h, n); });
}

}  // namespace
