// Time-fractional diffusion D_t^a u = K Laplace u + f (frac::FpdeSolver, type
// time_fractional): observed orders against exact solutions, the SOE history against the
// direct one, non-smooth data on uniform and graded meshes, conservation, a nonlinear source.
//
// Orders asserted (within 0.15 of the theory):
//  - time: 2 - a for u = (1 + t^2) sin(pi x) [sin(pi y)], with the source built on the
//    discrete eigenvalue of the 3- or 5-point Laplacian so that the semi-discrete solution
//    is exact and only the L1 error is measured;
//  - space: 2 for u = (1 + t) g(x, y), linear in time (the L1 scheme is exact there);
//  - weakly singular solution E_a(-lambda t^a) sin(pi x) (smooth initial data, no source;
//    u - u(0) ~ t^a): error at t = T of order 1 on the uniform mesh (the local bound
//    t_n^(a-1) N^-1 of Stynes, O'Riordan & Gracia, SIAM J. Numer. Anal. 55 (2017), Sec. 5,
//    min(1, ...) at t_n = T), and max error over all levels of order 2 - a on the graded
//    mesh r = (2 - a)/a (their Theorem 5.2: N^-min(r a, 2 - a)).
#include <gtest/gtest.h>
#include <petscsys.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/fpde_problem.hpp"
#include "fracmfg/frac/fpde_solver.hpp"
#include "fracmfg/frac/mittag_leffler.hpp"

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

struct Case {
  int dim = 1;
  Boundary boundary = Boundary::dirichlet;
  int points = 21;
  int steps = 10;
  double alpha = 0.5;
  double horizon = 1.0;
  double grading = 1.0;
  double diffusivity = 1.0;
  std::string initial = "0";
  std::string source = "0";
  std::string boundary_value = "0";
  HistoryMethod history = HistoryMethod::direct;
  double tolerance = 1e-10;
  std::vector<std::string> source_variables = {"x", "y", "t"};
};

io::FpdeConfig make_config(const Case& c) {
  io::FpdeConfig cfg;
  cfg.type = io::FpdeConfig::Type::time_fractional;
  cfg.order = c.alpha;
  cfg.domain.length.assign(static_cast<std::size_t>(c.dim), 1.0);
  cfg.domain.boundary = c.boundary;
  cfg.grid.points.assign(static_cast<std::size_t>(c.dim), c.points);
  cfg.time.horizon = c.horizon;
  cfg.time.steps = c.steps;
  cfg.time.grading = c.grading;
  cfg.diffusivity = c.diffusivity;
  cfg.initial = {c.initial, {"x", "y"}};
  cfg.source = {c.source, c.source_variables};
  cfg.boundary_value = {c.boundary_value, {"x", "y", "t"}};
  cfg.history.method = c.history;
  cfg.history.tolerance = c.tolerance;
  return cfg;
}

/// Max over the final level (or over all levels) of |u - exact|.
double run_error(const Case& c, const std::string& exact, bool all_levels = false) {
  FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(make_config(c)));
  const core::Expression ex(exact, {"x", "y", "t"});
  double worst = 0.0;
  solver.run_until(c.steps, [&](const FpdeSolver& s) {
    if (all_levels || s.done()) worst = std::max(worst, s.error_against(ex).max);
  });
  return worst;
}

/// Observed orders log2(e_k / e_{k+1}) of a sequence halving the step.
std::vector<double> orders(const std::vector<double>& e) {
  std::vector<double> p;
  for (std::size_t k = 0; k + 1 < e.size(); ++k) p.push_back(std::log2(e[k] / e[k + 1]));
  return p;
}

void print_table(const char* title, const std::vector<int>& n, const std::vector<double>& e) {
  std::printf("%s\n", title);
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

TEST(FpdeTimeFractional, L1SchemeConvergesAtOrderTwoMinusAlphaInTime1D) {
  for (double alpha : {0.3, 0.7}) {
    Case c;
    c.alpha = alpha;
    c.points = 33;
    const double lambda = discrete_eigenvalue(c.points);
    c.initial = "sin(pi*x)";
    c.source = "sin(pi*x)*(2*t^(" + num(2 - alpha) + ")/" + num(std::tgamma(3 - alpha)) + "+" +
               num(lambda) + "*(1+t^2))";
    std::vector<int> steps = {20, 40, 80, 160};
    std::vector<double> err;
    for (int n : steps) {
      c.steps = n;
      err.push_back(run_error(c, "(1+t^2)*sin(pi*x)"));
    }
    std::printf("alpha %.1f ", alpha);
    print_table("1D time", steps, err);
    for (double p : orders(err)) EXPECT_NEAR(p, 2.0 - alpha, 0.15) << "alpha " << alpha;
  }
}

TEST(FpdeTimeFractional, ConvergesAtOrderTwoInSpace1D) {
  const double alpha = 0.6;
  const double g2 = std::tgamma(2 - alpha);
  const std::string dt_part = "t^(" + num(1 - alpha) + ")/" + num(g2);
  struct Problem {
    const char* name;
    Boundary boundary;
    std::string exact, initial, source, boundary_value;
    double diffusivity;
  };
  const double k = 0.7;
  const std::vector<Problem> problems = {
      {"dirichlet, non-zero data", Boundary::dirichlet, "(1+t)*exp(x)", "exp(x)",
       "exp(x)*(" + dt_part + "-" + num(k) + "*(1+t))", "(1+t)*exp(x)", k},
      {"neumann, zero flux", Boundary::neumann, "(1+t)*cos(pi*x)", "cos(pi*x)",
       "cos(pi*x)*(" + dt_part + "+" + num(k) + "*pi^2*(1+t))", "0", k},
      // Outward flux -K du/dn: K u_x at x = 0, -K u_x at x = 1.
      {"neumann, non-zero flux", Boundary::neumann, "(1+t)*exp(x)", "exp(x)",
       "exp(x)*(" + dt_part + "-" + num(k) + "*(1+t))", num(k) + "*(1+t)*exp(x)*(x<0.5 ? 1 : -1)",
       k},
      {"periodic", Boundary::periodic, "(1+t)*sin(2*pi*x)", "sin(2*pi*x)",
       "sin(2*pi*x)*(" + dt_part + "+" + num(k) + "*4*pi^2*(1+t))", "0", k},
  };
  for (const Problem& pr : problems) {
    std::vector<int> points = {11, 21, 41, 81};
    std::vector<double> err;
    for (int n : points) {
      Case c;
      c.alpha = alpha;
      c.boundary = pr.boundary;
      c.points = pr.boundary == Boundary::periodic ? n - 1 : n;
      c.steps = 4;
      c.diffusivity = pr.diffusivity;
      c.initial = pr.initial;
      c.source = pr.source;
      c.boundary_value = pr.boundary == Boundary::periodic ? "0" : pr.boundary_value;
      err.push_back(run_error(c, pr.exact));
    }
    print_table((std::string("1D space, ") + pr.name).c_str(), points, err);
    for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15) << pr.name;
  }
}

TEST(FpdeTimeFractional, L1SchemeConvergesAtOrderTwoMinusAlphaInTime2D) {
  const double alpha = 0.5;
  Case c;
  c.dim = 2;
  c.alpha = alpha;
  c.points = 17;
  const double lambda = 2.0 * discrete_eigenvalue(c.points);
  c.initial = "sin(pi*x)*sin(pi*y)";
  c.source = "sin(pi*x)*sin(pi*y)*(2*t^(" + num(2 - alpha) + ")/" + num(std::tgamma(3 - alpha)) +
             "+" + num(lambda) + "*(1+t^2))";
  std::vector<int> steps = {16, 32, 64, 128};
  std::vector<double> err;
  for (int n : steps) {
    c.steps = n;
    err.push_back(run_error(c, "(1+t^2)*sin(pi*x)*sin(pi*y)"));
  }
  print_table("2D time, alpha 0.5", steps, err);
  for (double p : orders(err)) EXPECT_NEAR(p, 2.0 - alpha, 0.15);
}

TEST(FpdeTimeFractional, ConvergesAtOrderTwoInSpace2D) {
  const double alpha = 0.4;
  const std::string dt_part = "t^(" + num(1 - alpha) + ")/" + num(std::tgamma(2 - alpha));
  for (Boundary b : {Boundary::dirichlet, Boundary::neumann}) {
    const bool dir = b == Boundary::dirichlet;
    const std::string shape = dir ? "exp(x+0.5*y)" : "cos(pi*x)*cos(pi*y)";
    // -Laplace shape: -1.25 shape (Dirichlet data) or 2 pi^2 shape.
    const std::string lap_factor = dir ? "-1.25" : "2*pi^2";
    std::vector<int> points = {9, 17, 33, 65};
    std::vector<double> err;
    for (int n : points) {
      Case c;
      c.dim = 2;
      c.alpha = alpha;
      c.boundary = b;
      c.points = n;
      c.steps = 3;
      c.initial = shape;
      c.source = shape + "*(" + dt_part + "+" + lap_factor + "*(1+t))";
      c.boundary_value = dir ? "(1+t)*" + shape : "0";
      err.push_back(run_error(c, "(1+t)*" + shape));
    }
    print_table(dir ? "2D space, dirichlet" : "2D space, neumann", points, err);
    for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15);
  }
}

TEST(FpdeTimeFractional, SoeSolutionMatchesTheDirectSolutionAtEveryStep) {
  // The SOE kernel has relative error <= tol at every lag, so the histories differ by at
  // most tol times the history of |du| (tests/unit/fpde_history_test.cpp); through the
  // stable implicit step the solutions then differ by a small multiple of tol max|u|.
  for (int dim : {1, 2}) {
    for (double grading : {1.0, 2.0}) {
      const double tol = 1e-9;
      Case c;
      c.dim = dim;
      c.points = dim == 1 ? 41 : 13;
      c.steps = 150;
      c.grading = grading;
      c.alpha = 0.4;
      c.initial = dim == 1 ? "sin(pi*x)+0.3*sin(3*pi*x)" : "sin(pi*x)*sin(2*pi*y)";
      c.source = "x*(1-x)*cos(5*t)";
      FpdeSolver direct(PETSC_COMM_WORLD, frac::fpde_problem_from_config(make_config(c)));
      c.history = HistoryMethod::soe;
      c.tolerance = tol;
      FpdeSolver fast(PETSC_COMM_WORLD, frac::fpde_problem_from_config(make_config(c)));
      ASSERT_NE(fast.history()->soe(), nullptr);
      double worst = 0.0;
      for (int n = 1; n <= c.steps; ++n) {
        direct.advance();
        fast.advance();
        Vec d = nullptr;
        ASSERT_EQ(VecDuplicate(direct.solution(), &d), 0);
        ASSERT_EQ(VecWAXPY(d, -1.0, direct.solution(), fast.solution()), 0);
        PetscReal diff = 0.0;
        PetscReal scale = 0.0;
        ASSERT_EQ(VecNorm(d, NORM_INFINITY, &diff), 0);
        ASSERT_EQ(VecNorm(direct.solution(), NORM_INFINITY, &scale), 0);
        ASSERT_EQ(VecDestroy(&d), 0);
        EXPECT_LE(diff, 10.0 * tol * std::max(scale, 1.0)) << "dim " << dim << " step " << n;
        worst = std::max(worst, diff);
      }
      std::printf("dim %d grading %.0f: N_exp %zu, max |u_soe - u_direct| over 150 steps %.2e\n",
                  dim, grading, fast.history()->soe()->size(), worst);
      EXPECT_LT(fast.history()->stored_vectors(), direct.history()->stored_vectors());
    }
  }
}

TEST(FpdeTimeFractional, WeaklySingularSolutionOrderOneUniformAndTwoMinusAlphaGraded) {
  // D^a u = u_xx, u(0) = sin(pi x): u = E_a(-lambda_h t^a) sin(pi x_i) for the semi-discrete
  // problem (lambda_h the discrete eigenvalue), so the error is the L1 error alone.
  const double alpha = 0.5;
  const int points = 17;
  const double lambda = discrete_eigenvalue(points);
  auto max_error = [&](int steps, double grading, bool all_levels) {
    Case c;
    c.alpha = alpha;
    c.points = points;
    c.steps = steps;
    c.grading = grading;
    c.initial = "sin(pi*x)";
    FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(make_config(c)));
    double worst = 0.0;
    solver.run_until(steps, [&](const FpdeSolver& s) {
      if (!all_levels && !s.done()) return;
      const double e = frac::mittag_leffler(-lambda * std::pow(s.time(), alpha), alpha);
      const double* u = nullptr;
      VecGetArrayRead(s.solution(), &u);
      for (std::size_t p = 0; p < s.grid().local_size(); ++p) {
        worst = std::max(worst, std::fabs(u[p] - e * std::sin(kPi * s.grid().x()[p])));
      }
      VecRestoreArrayRead(s.solution(), &u);
    });
    return worst;
  };
  std::vector<int> steps = {128, 256, 512, 1024};
  std::vector<double> uniform;
  std::vector<double> graded;
  const double r = (2.0 - alpha) / alpha;
  for (int n : steps) {
    uniform.push_back(max_error(n, 1.0, false));
    graded.push_back(max_error(n, r, true));
  }
  print_table("weakly singular, uniform mesh, error at t = T (expected order 1)", steps, uniform);
  print_table("weakly singular, graded r = (2-a)/a, max error over all t_n (expected 2 - a)", steps,
              graded);
  for (double p : orders(uniform)) EXPECT_NEAR(p, 1.0, 0.15);
  for (double p : orders(graded)) EXPECT_NEAR(p, 2.0 - alpha, 0.15);
}

TEST(FpdeTimeFractional, WeightedMassIsConservedWithZeroFluxNeumann) {
  for (int dim : {1, 2}) {
    Case c;
    c.dim = dim;
    c.boundary = Boundary::neumann;
    c.points = dim == 1 ? 31 : 15;
    c.steps = 30;
    c.grading = 2.0;
    c.initial = "exp(-20*((x-0.3)^2+(y-0.6)^2))";
    FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(make_config(c)));
    // Weights 1, 1/2 on faces, 1/4 at corners.
    auto mass = [&](const FpdeSolver& s) {
      const double* u = nullptr;
      VecGetArrayRead(s.solution(), &u);
      double m = 0.0;
      for (std::size_t p = 0; p < s.grid().local_size(); ++p) {
        double w = 1.0;
        for (unsigned bit : {1u, 2u, 4u, 8u}) {
          if (s.grid().boundary()[p] & bit) w *= 0.5;
        }
        m += w * u[p];
      }
      VecRestoreArrayRead(s.solution(), &u);
      double total = 0.0;
      MPI_Allreduce(&m, &total, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
      return total;
    };
    const double m0 = mass(solver);
    solver.run_until(c.steps, [&](const FpdeSolver& s) {
      EXPECT_NEAR(mass(s), m0, 1e-10 * std::fabs(m0)) << "dim " << dim << " step " << s.step();
    });
  }
}

TEST(FpdeTimeFractional, NonlinearSourceIsSolvedByNewtonAtSecondOrderInSpace) {
  // f(x, t, u) = D^a u* + K pi^2 u* + u*^3 - u^3 with u* = (1 + t) sin(pi x).
  const double alpha = 0.5;
  const std::string exact = "(1+t)*sin(pi*x)";
  std::vector<int> points = {11, 21, 41};
  std::vector<double> err;
  for (int n : points) {
    Case c;
    c.alpha = alpha;
    c.points = n;
    c.steps = 4;
    c.initial = "sin(pi*x)";
    c.source =
        "sin(pi*x)*(t^0.5/" + num(std::tgamma(1.5)) + "+pi^2*(1+t)) + (" + exact + ")^3 - u^3";
    c.source_variables = {"x", "y", "t", "u"};
    FpdeSolver solver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(make_config(c)));
    solver.run_until(c.steps);
    EXPECT_GE(solver.statistics().nonlinear_iterations, 4);
    err.push_back(solver.error_against(core::Expression(exact, {"x", "y", "t"})).max);
  }
  print_table("1D space, nonlinear source (SNES)", points, err);
  for (double p : orders(err)) EXPECT_NEAR(p, 2.0, 0.15);
}

TEST(FpdeTimeFractional, DefaultsAndOptionsSelectTheLinearSolver) {
  Case c;
  c.points = 21;
  c.steps = 3;
  c.initial = "sin(pi*x)";
  {
    FpdeSolver s(PETSC_COMM_WORLD, frac::fpde_problem_from_config(make_config(c)));
    PC pc = nullptr;
    KSPGetPC(s.ksp(), &pc);
    PCType type = nullptr;
    PCGetType(pc, &type);
    EXPECT_STREQ(type, "fracmfg_tridiag");
    s.run_until(3);
    EXPECT_EQ(s.statistics().last_linear_iterations, 1);
  }
  {
    c.dim = 2;
    c.points = 9;
    FpdeSolver s(PETSC_COMM_WORLD, frac::fpde_problem_from_config(make_config(c)));
    PC pc = nullptr;
    KSPGetPC(s.ksp(), &pc);
    PCType type = nullptr;
    PCGetType(pc, &type);
    EXPECT_STREQ(type, PCHYPRE);
  }
  {
    ASSERT_EQ(PetscOptionsSetValue(nullptr, "-optest_pc_type", "jacobi"), 0);
    frac::FpdeSolverOptions opts;
    opts.prefix = "optest_";
    FpdeSolver s(PETSC_COMM_WORLD, frac::fpde_problem_from_config(make_config(c)), opts);
    ASSERT_EQ(PetscOptionsClearValue(nullptr, "-optest_pc_type"), 0);
    PC pc = nullptr;
    KSPGetPC(s.ksp(), &pc);
    PCType type = nullptr;
    PCGetType(pc, &type);
    EXPECT_STREQ(type, PCJACOBI);
    KSPType ktype = nullptr;
    KSPGetType(s.ksp(), &ktype);
    EXPECT_STREQ(ktype, KSPCG);  // PREONLY is kept for exact PCs only
    s.run_until(3);
    EXPECT_GT(s.statistics().linear_iterations, 3);
  }
  {
    io::FpdeConfig cfg = make_config(c);
    cfg.solver.preconditioner = io::FpdeConfig::Solver::Preconditioner::circulant;
    EXPECT_THROW(FpdeSolver(PETSC_COMM_WORLD, frac::fpde_problem_from_config(cfg)), Error);
  }
}

}  // namespace
