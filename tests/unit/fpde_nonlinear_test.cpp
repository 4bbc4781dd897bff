// Nonlinear fractional PDEs D_t^a u = K Laplace u + f(u) (frac::FpdeSolver, type
// time_fractional, Newton's method per L1 step) and u_t = -K (-Laplace)^(s/2) u + f(u) (type
// space_fractional, theta scheme with f implicit, Newton on a shell Jacobian): Allen-Cahn
// (f = u - u^3, K = eps^2) and Fisher-KPP (f = r u (1 - u)) against manufactured solutions,
// the Jacobian from a given df/du against forward differences, and the Allen-Cahn energy
// from a random field.
//
// Manufactured solutions: the source is f(u) - f(u*) + (D^a u* - K Laplace u*) for an exact
// u*, so u = u* solves the equation, and its nonlinearity is the model's.
// Orders asserted (within 0.15 of the theory):
//  - time: 2 - a for u* = (1 + t^2) sin(pi x) on a uniform mesh, with the Laplacian replaced
//    by its discrete eigenvalue in the source, so that only the L1 error is measured;
//  - time on graded meshes: min(r a, 2 - a) for u* = (1 + t^a) sin(pi x) (a weak singularity
//    at t = 0), max over the time levels; a on the uniform mesh;
//  - space: 2 for u* = (1 + t) g(x), linear in time (the L1 scheme is exact there);
//  - space_fractional: 2 (Crank-Nicolson) and 1 (implicit Euler) in time on a periodic grid
//    with the discrete symbol, 2 in space for the Dirichlet solution of Celik & Duman.
#include <gtest/gtest.h>
#include <petscsys.h>
#include <petscvec.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_solver.hpp"

namespace {

using namespace fracmfg;
using frac::FpdeSolver;
using Boundary = io::FpdeConfig::Domain::Boundary;
using HistoryMethod = io::FpdeConfig::History::Method;

constexpr double kPi = 3.14159265358979323846;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// A model f(u), its derivative and f of the exact solution, as formulas.
struct Model {
  const char* name;
  std::string f;           ///< of u
  std::string derivative;  ///< df/du
  std::string of(const std::string& exact) const {
    std::string s;
    for (char ch : f) {
      if (ch == 'u')
        s += "(" + exact + ")";
      else
        s += ch;
    }
    return s;
  }
};

const Model kAllenCahn{"Allen-Cahn", "u - u^3", "1 - 3*u^2"};
const Model kFisher{"Fisher-KPP", "2*u*(1 - u)", "2 - 4*u"};

struct Case {
  Boundary boundary = Boundary::dirichlet;
  int points = 21;
  int steps = 10;
  double alpha = 0.5;
  double diffusivity = 0.05;
  std::string initial = "0";
  std::string source = "0";
  std::string derivative;  ///< empty: forward differences
};

io::FpdeConfig make_config(const Case& c) {
  io::FpdeConfig cfg;
  cfg.type = io::FpdeConfig::Type::time_fractional;
  cfg.order = c.alpha;
  cfg.domain.length = {1.0};
  cfg.domain.boundary = c.boundary;
  cfg.grid.points = {c.points};
  cfg.time.horizon = 1.0;
  cfg.time.steps = c.steps;
  cfg.diffusivity = c.diffusivity;
  cfg.initial = {c.initial, {"x", "y"}};
  cfg.source = {c.source, {"x", "y", "t", "u"}};
  cfg.source_derivative = {c.derivative, {"x", "y", "t", "u"}};
  cfg.history.method = HistoryMethod::direct;
  return cfg;
}

struct Outcome {
  double error = 0.0;
  std::int64_t newton = 0;
};

Outcome run(const Case& c, const std::string& exact) {
  const frac::FpdeProblem p = frac::fpde_problem_from_config(make_config(c));
  EXPECT_TRUE(p.nonlinear());
  EXPECT_EQ(static_cast<bool>(p.nonlinear_source_derivative), !c.derivative.empty());
  FpdeSolver solver(PETSC_COMM_WORLD, p);
  solver.run_until(c.steps);
  return {solver.error_against(core::Expression(exact, {"x", "y", "t"})).max,
          solver.statistics().nonlinear_iterations};
}

std::vector<double> orders(const std::vector<double>& e) {
  std::vector<double> p;
  for (std::size_t k = 0; k + 1 < e.size(); ++k) p.push_back(std::log2(e[k] / e[k + 1]));
  return p;
}

void print_table(const std::string& title, const std::vector<int>& n,
                 const std::vector<double>& e) {
  std::printf("%s\n", title.c_str());
  for (std::size_t k = 0; k < e.size(); ++k) {
    std::printf("  %6d  error %.3e", n[k], e[k]);
    if (k > 0) std::printf("  order %.3f", std::log2(e[k - 1] / e[k]));
    std::printf("\n");
  }
}

/// 4/h^2 sin^2(pi h / 2): the eigenvalue of -Laplace_h for sin(pi x) on [0, 1].
double discrete_eigenvalue(int points) {
  const double h = 1.0 / (points - 1);
  const double s = std::sin(kPi * h / 2.0);
  return 4.0 / (h * h) * s * s;
}

TEST(FpdeNonlinear, AllenCahnAndFisherConvergeAtOrderTwoMinusAlphaInTime) {
  const std::string exact = "(1+t^2)*sin(pi*x)";
  for (const Model* m : {&kAllenCahn, &kFisher}) {
    for (double alpha : {0.3, 0.7}) {
      Case c;
      c.alpha = alpha;
      c.points = 33;
      c.initial = "sin(pi*x)";
      c.derivative = m->derivative;
      const double lambda = discrete_eigenvalue(c.points);
      c.source = m->f + " - (" + m->of(exact) + ") + sin(pi*x)*(2*t^(" + num(2 - alpha) + ")/" +
                 num(std::tgamma(3 - alpha)) + "+" + num(c.diffusivity * lambda) + "*(1+t^2))";
      std::vector<int> steps = {20, 40, 80, 160};
      std::vector<double> err;
      for (int n : steps) {
        c.steps = n;
        const Outcome o = run(c, exact);
        EXPECT_GE(o.newton, n) << m->name;
        err.push_back(o.error);
      }
      char title[64];
      std::snprintf(title, sizeof title, "%s, time, alpha %.1f", m->name, alpha);
      print_table(title, steps, err);
      for (double p : orders(err)) EXPECT_NEAR(p, 2.0 - alpha, 0.15) << m->name << " " << alpha;
    }
  }
}

TEST(FpdeNonlinear, GradedMeshGivesOrderMinOfTwoMinusAlphaAndRAlphaForAWeakSingularity) {
  // u* = (1 + t^a) sin(pi x): u_t ~ t^(a - 1), the weak singularity of a typical solution.
  // The L1 scheme on t_n = T (n / N)^r has max_n |u(t_n) - U^n| = O(N^-min(r a, 2 - a))
  // (Stynes, O'Riordan & Gracia, SIAM J. Numer. Anal. 55 (2017) 1057, Theorem 5.2; for
  // semilinear sources Liao, Li & Zhang, SIAM J. Numer. Anal. 56 (2018) 1112): a on the
  // uniform mesh, 2 a for r = 2 (< 2 - a) and 2 - a for r = (2 - a) / a. The source takes the
  // discrete eigenvalue of sin(pi x), so only the time error is measured; D^a t^a =
  // Gamma(1 + a).
  const double alpha = 0.5;
  const std::string exact = "(1+t^" + num(alpha) + ")*sin(pi*x)";
  for (const Model* m : {&kAllenCahn, &kFisher}) {
    for (double r : {1.0, 2.0, (2.0 - alpha) / alpha}) {
      Case c;
      c.alpha = alpha;
      c.points = 33;
      c.initial = "sin(pi*x)";
      c.derivative = m->derivative;
      const double lambda = discrete_eigenvalue(c.points);
      c.source = m->f + " - (" + m->of(exact) + ") + sin(pi*x)*(" + num(std::tgamma(1 + alpha)) +
                 "+" + num(c.diffusivity * lambda) + "*(1+t^" + num(alpha) + "))";
      std::vector<int> steps = {128, 256, 512, 1024};
      std::vector<double> err;
      for (int n : steps) {
        c.steps = n;
        io::FpdeConfig cfg = make_config(c);
        cfg.time.grading = r;
        FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(cfg));
        const core::Expression u_exact(exact, {"x", "y", "t"});
        double worst = 0.0;  // max over the time levels
        solver.run_until(
            n, [&](const FpdeSolver& s) { worst = std::max(worst, s.error_against(u_exact).max); });
        err.push_back(worst);
      }
      const double expected = std::min(2.0 - alpha, r * alpha);
      char title[112];
      std::snprintf(title, sizeof title,
                    "%s, u = (1 + t^%.1f) sin(pi x), grading r = %.1f: max_n error, expected "
                    "order %.2f",
                    m->name, alpha, r, expected);
      print_table(title, steps, err);
      for (double p : orders(err)) EXPECT_NEAR(p, expected, 0.15) << m->name << " r " << r;
    }
  }
}

TEST(FpdeNonlinear, AllenCahnAndFisherConvergeAtOrderTwoInSpace) {
  const double alpha = 0.6;
  const std::string dt = "t^(" + num(1 - alpha) + ")/" + num(std::tgamma(2 - alpha));
  for (const Model* m : {&kAllenCahn, &kFisher}) {
    // Zero-flux Neumann: u* = (1 + t) (1 + cos(pi x)) / 2, -Laplace u* = pi^2 (1 + t) cos / 2.
    const std::string exact = "(1+t)*(1+cos(pi*x))/2";
    std::vector<int> points = {11, 21, 41, 81};
    std::vector<double> err;
    for (int n : points) {
      Case c;
      c.alpha = alpha;
      c.boundary = Boundary::neumann;
      c.points = n;
      c.steps = 4;
      c.initial = "(1+cos(pi*x))/2";
      c.derivative = m->derivative;
      c.source = m->f + " - (" + m->of(exact) + ") + " + dt + "*(1+cos(pi*x))/2 + " +
                 num(c.diffusivity) + "*pi^2*(1+t)*cos(pi*x)/2";
      err.push_back(run(c, exact).error);
    }
    print_table(std::string(m->name) + ", space (neumann)", points, err);
    for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15) << m->name;
  }
}

TEST(FpdeNonlinear, GivenDerivativeAndForwardDifferencesGiveTheSameSolution) {
  for (const Model* m : {&kAllenCahn, &kFisher}) {
    Case c;
    c.boundary = Boundary::neumann;
    c.points = 41;
    c.steps = 20;
    c.initial = "0.5+0.3*cos(3*pi*x)";
    c.source = m->f;
    c.derivative = m->derivative;
    const frac::FpdeProblem exact_jacobian = frac::fpde_problem_from_config(make_config(c));
    c.derivative.clear();
    const frac::FpdeProblem differenced = frac::fpde_problem_from_config(make_config(c));
    FpdeSolver a(PETSC_COMM_WORLD, exact_jacobian);
    FpdeSolver b(PETSC_COMM_WORLD, differenced);
    a.run_until(c.steps);
    b.run_until(c.steps);
    const double* ua = nullptr;
    const double* ub = nullptr;
    PetscInt n = 0;
    VecGetLocalSize(a.solution(), &n);
    VecGetArrayRead(a.solution(), &ua);
    VecGetArrayRead(b.solution(), &ub);
    double diff = 0.0;
    for (PetscInt p = 0; p < n; ++p) diff = std::max(diff, std::fabs(ua[p] - ub[p]));
    VecRestoreArrayRead(a.solution(), &ua);
    VecRestoreArrayRead(b.solution(), &ub);
    std::printf("%s: max |u_exact_jacobian - u_differences| = %.2e, Newton %lld vs %lld\n", m->name,
                diff, static_cast<long long>(a.statistics().nonlinear_iterations),
                static_cast<long long>(b.statistics().nonlinear_iterations));
    EXPECT_LE(diff, 1e-9) << m->name;
    // Quadratic convergence either way: a few Newton iterations per step.
    EXPECT_LE(a.statistics().nonlinear_iterations, 4 * c.steps) << m->name;
    EXPECT_LE(b.statistics().nonlinear_iterations, 4 * c.steps) << m->name;
  }
}

TEST(FpdeNonlinear, DerivativeWithoutNonlinearSourceIsRefused) {
  Case c;
  c.source = "u - u^3";
  frac::FpdeProblem p = frac::fpde_problem_from_config(make_config(c));
  p.nonlinear_source = {};
  p.source = [](double, double, double) { return 0.0; };
  p.nonlinear_source_derivative = [](double, double, double, double u) { return 1 - 3 * u * u; };
  EXPECT_THROW(FpdeSolver(PETSC_COMM_WORLD, p), Error);
}

/// E(u) = sum_p h^d (eps^2/2 |grad_h u|^2 + (u^2 - 1)^2 / 4) on a periodic grid, grad_h by
/// forward differences (the pairing of the 3- or 5-point Laplacian by summation by parts).
double allen_cahn_energy(const std::vector<double>& u, int nx, int ny, double h, double eps2) {
  double e = 0.0;
  const double cell = ny > 1 ? h * h : h;
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i < nx; ++i) {
      const double v = u[static_cast<std::size_t>(j * nx + i)];
      const double dx = (u[static_cast<std::size_t>(j * nx + (i + 1) % nx)] - v) / h;
      double g2 = dx * dx;
      if (ny > 1) {
        const double dy = (u[static_cast<std::size_t>(((j + 1) % ny) * nx + i)] - v) / h;
        g2 += dy * dy;
      }
      e += cell * (0.5 * eps2 * g2 + 0.25 * (v * v - 1.0) * (v * v - 1.0));
    }
  }
  return e;
}

TEST(FpdeNonlinear, AllenCahnEnergyNeverExceedsItsInitialValue) {
  // Tang, Yu & Zhou, SIAM J. Sci. Comput. 41 (2019) A3757, prove E(u(t)) <= E(u(0)) for the
  // time-fractional Allen-Cahn equation and the same bound for the implicit L1 scheme on a
  // uniform mesh under a step condition. The condition relied on here: the L1 diagonal
  // c = 1 / (Gamma(2 - a) tau^a) is at least 2 (tau^a <= 1 / (2 Gamma(2 - a))), twice the
  // bound f'(u) = 1 - 3 u^2 <= 1 of the non-convex part, so each step minimises a convex
  // functional (c/2 |u - u^{n-1}|^2 + E(u) + history terms) with a unique solution.
  const double alpha = 0.5;
  const double eps = 0.05;
  const double horizon = 4.0;
  const int steps = 200;
  const double tau = horizon / steps;
  ASSERT_LE(std::pow(tau, alpha), 1.0 / (2.0 * std::tgamma(2.0 - alpha)));
  for (int dim : {1, 2}) {
    const int n = dim == 1 ? 128 : 40;
    const double h = 1.0 / n;
    std::mt19937 rng(20190611);
    std::uniform_real_distribution<double> uniform(-0.5, 0.5);
    std::vector<double> u0(static_cast<std::size_t>(dim == 1 ? n : n * n));
    for (double& v : u0) v = uniform(rng);
    Case c;
    c.boundary = Boundary::periodic;
    c.points = n;
    c.steps = steps;
    c.alpha = alpha;
    c.diffusivity = eps * eps;
    c.source = kAllenCahn.f;
    c.derivative = kAllenCahn.derivative;
    io::FpdeConfig cfg = make_config(c);
    cfg.time.horizon = horizon;
    cfg.domain.length.assign(static_cast<std::size_t>(dim), 1.0);
    cfg.grid.points.assign(static_cast<std::size_t>(dim), n);
    frac::FpdeProblem p = frac::fpde_problem_from_config(cfg);
    p.initial = [&](double x, double y, double) {
      const auto i = static_cast<std::size_t>(std::lround(x / h));
      const auto j = static_cast<std::size_t>(std::lround(y / h));
      return u0[j * static_cast<std::size_t>(n) + i];
    };
    FpdeSolver solver(PETSC_COMM_WORLD, p);
    const auto energy = [&](const FpdeSolver& s) {
      const double* u = nullptr;
      VecGetArrayRead(s.solution(), &u);
      const std::vector<double> v(u, u + u0.size());
      VecRestoreArrayRead(s.solution(), &u);
      return allen_cahn_energy(v, n, dim == 1 ? 1 : n, h, eps * eps);
    };
    const double e0 = energy(solver);
    EXPECT_NEAR(e0, allen_cahn_energy(u0, n, dim == 1 ? 1 : n, h, eps * eps), 1e-14 * e0);
    double highest = -1.0;
    double last = e0;
    solver.run_until(steps, [&](const FpdeSolver& s) {
      const double e = energy(s);
      highest = std::max(highest, e);
      last = e;
      EXPECT_LE(e, e0) << "dim " << dim << " step " << s.step();
    });
    std::printf("Allen-Cahn %dD: E(0) = %.6f, max_n E(u^n) = %.6f, E(T) = %.6f\n", dim, e0, highest,
                last);
    EXPECT_LT(last, 0.5 * e0) << "the phases separate";
  }
}

// --- space_fractional: u_t = -K (-Laplace)^(s/2) u + f(u), theta scheme with f implicit ------

/// -d^s w/d|x|^s for w = v^2 (1 - v)^2 in the variable v, as an expression (Celik & Duman,
/// J. Comput. Phys. 231 (2012), Example 1; as in fpde_space_fractional_test.cpp).
std::string riesz_of_w(const std::string& v, double s) {
  auto rl = [&](const std::string& z) {
    return "(" + num(2.0 / std::tgamma(3 - s)) + "*(" + z + ")^" + num(2 - s) + "-" +
           num(12.0 / std::tgamma(4 - s)) + "*(" + z + ")^" + num(3 - s) + "+" +
           num(24.0 / std::tgamma(5 - s)) + "*(" + z + ")^" + num(4 - s) + ")";
  };
  return "(" + num(1.0 / (2.0 * std::cos(kPi * s / 2.0))) + "*(" + rl(v) + "+" + rl("1-" + v) +
         "))";
}

io::FpdeConfig riesz_config(Boundary b, int points, int steps, double s, double k) {
  io::FpdeConfig c;
  c.type = io::FpdeConfig::Type::space_fractional;
  c.order = s;
  c.domain.length = {1.0};
  c.domain.boundary = b;
  c.grid.points = {points};
  c.time.horizon = 1.0;
  c.time.steps = steps;
  c.diffusivity = k;
  return c;
}

TEST(FpdeNonlinear, RieszCrankNicolsonIsSecondOrderAndEulerFirstOrderInTime) {
  // Periodic grid, u* = exp(-K lambda_h t) sin(2 pi x) with the discrete symbol lambda_h =
  // h^-s |2 sin(pi h)|^s and the source f(u) - f(u*): the semi-discrete solution is u*, the
  // error is the time error.
  const double s = 1.7;
  const int n = 32;
  const double h = 1.0 / n;
  const double k = 0.2;
  const double lambda = k * std::pow(h, -s) * std::pow(2.0 * std::sin(kPi * h), s);
  const std::string exact = "exp(-" + num(lambda) + "*t)*sin(2*pi*x)";
  for (const Model* m : {&kAllenCahn, &kFisher}) {
    for (const char* scheme : {"crank_nicolson", "euler"}) {
      ASSERT_EQ(PetscOptionsSetValue(nullptr, "-nlts_time_scheme", scheme), 0);
      std::vector<int> steps = {10, 20, 40, 80};
      std::vector<double> err;
      for (int count : steps) {
        auto c = riesz_config(Boundary::periodic, n, count, s, k);
        c.time.horizon = 0.5;
        c.initial = {"sin(2*pi*x)", {"x", "y"}};
        c.source = {m->f + " - (" + m->of(exact) + ")", {"x", "y", "t", "u"}};
        c.source_derivative = {m->derivative, {"x", "y", "t", "u"}};
        frac::FpdeSolverOptions o;
        o.prefix = "nlts_";
        FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c), o);
        solver.run_until(count);
        EXPECT_GE(solver.statistics().nonlinear_iterations, count);
        err.push_back(solver.error_against(core::Expression(exact, {"x", "y", "t"})).max);
      }
      print_table(std::string(m->name) + ", Riesz time scheme " + scheme, steps, err);
      const double expected = std::string(scheme) == "euler" ? 1.0 : 2.0;
      for (double p : orders(err)) EXPECT_NEAR(p, expected, 0.15) << m->name << " " << scheme;
    }
  }
  ASSERT_EQ(PetscOptionsClearValue(nullptr, "-nlts_time_scheme"), 0);
}

TEST(FpdeNonlinear, RieszConvergesAtOrderTwoInSpace) {
  // Dirichlet, u* = e^-t w(x), w = x^2 (1 - x)^2 continued by zero; Crank-Nicolson with
  // tau = h, so both errors are O(h^2); forward differences for df/du.
  const double s = 1.5;
  const double k = 0.5;
  const std::string exact = "exp(-t)*x^2*(1-x)^2";
  for (const Model* m : {&kAllenCahn, &kFisher}) {
    std::vector<int> points = {33, 65, 129, 257};
    std::vector<double> err;
    for (int n : points) {
      auto c = riesz_config(Boundary::dirichlet, n, n - 1, s, k);
      c.initial = {"x^2*(1-x)^2", {"x", "y"}};
      c.source = {m->f + " - (" + m->of(exact) + ") + exp(-t)*(-x^2*(1-x)^2 + " + num(k) + "*" +
                      riesz_of_w("x", s) + ")",
                  {"x", "y", "t", "u"}};
      FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(c));
      solver.run_until(c.time.steps);
      err.push_back(solver.error_against(core::Expression(exact, {"x", "y", "t"})).max);
      EXPECT_LE(solver.statistics().last_linear_iterations, 15);
    }
    print_table(std::string(m->name) + ", Riesz space (dirichlet)", points, err);
    for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15) << m->name;
  }
}

}  // namespace
