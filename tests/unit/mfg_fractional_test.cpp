// The building blocks of fractional diffusion in the mean field game
// (mfg/fractional_diffusion.hpp): the periodised fractional centred difference converges at
// order 2 to (-Lap)^(s/2) on a Fourier mode, equals the 3-point / 5-point Laplacian at s = 2,
// is a circulant with a positive diagonal, non-positive off-diagonals and zero row sums; the
// matrix-free HJB Jacobian is the derivative of the residual, the Fokker-Planck operator is
// its transpose with column sums 1/dt, and the FFT preconditioner inverts I/dt + nu A_s.
#include <gtest/gtest.h>
#include <petscmat.h>
#include <petscsnes.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/mfg/fokker_planck.hpp"
#include "fracmfg/mfg/hjb.hpp"
#include "fracmfg/mfg/model.hpp"
#include "mfg/fractional_diffusion.hpp"
#include "mfg/petsc_handles.hpp"

namespace {

using fracmfg::io::Deck;
namespace mfg = fracmfg::mfg;
namespace detail = fracmfg::mfg::detail;

constexpr double kNu = 0.05;

mfg::Problem problem(int dim, int points, double order, int steps = 10) {
  const std::string n = std::to_string(points);
  return mfg::problem_from_config(
      Deck::from_string(
          "problem: mfg\nmfg:\n"
          "  domain: {length: " +
              std::string(dim == 1 ? "[1.0]" : "[1.0, 1.5]") + ", boundary: periodic}\n" +
              "  grid: {points: " + (dim == 1 ? "[" + n + "]" : "[" + n + ", " + n + "]") +
              "}\n  time: {horizon: 0.5, steps: " + std::to_string(steps) +
              "}\n  diffusion_order: " + std::to_string(order) +
              "\n  diffusion: " + std::to_string(kNu) +
              "\n  hamiltonian: {control_cost: \"1 + 0.3*sin(2*pi*x)\"}\n"
              "  coupling: {type: log, potential: \"0.5*cos(2*pi*x)\"}\n"
              "  initial_density: \"exp(-(x-0.3)^2/0.005)\"\n",
          "fractional.yaml")
          .mfg());
}

void fill(const mfg::Model& model, Vec v, double phase) {
  detail::WriteArray a(v);
  const auto& x = model.x();
  const auto& y = model.y();
  for (std::size_t k = 0; k < x.size(); ++k) {
    a[static_cast<PetscInt>(k)] = std::sin(2 * M_PI * x[k] + phase) + 0.5 * std::cos(3 * y[k]);
  }
}

// The operator applied to cos(2 pi x) (1D) or cos(2 pi x) cos(2 pi y / 1.5) (2D), whose
// exact images are (2 pi)^s u and ((2 pi)^s + (2 pi / 1.5)^s) u: max error.
double mode_error(int dim, int points, double order) {
  const mfg::Model model(PETSC_COMM_WORLD, problem(dim, points, order));
  detail::FractionalDiffusion frac(model);
  auto u = detail::global_vec(model.dm());
  auto au = detail::global_vec(model.dm());
  const auto& x = model.x();
  const auto& y = model.y();
  const double ky = 2 * M_PI / 1.5;
  {
    detail::WriteArray a(u.get());
    for (std::size_t k = 0; k < x.size(); ++k) {
      a[static_cast<PetscInt>(k)] =
          std::cos(2 * M_PI * x[k]) * (dim == 2 ? std::cos(ky * y[k]) : 1.0);
    }
  }
  frac.apply(u.get(), au.get());
  const double symbol = std::pow(2 * M_PI, order) + (dim == 2 ? std::pow(ky, order) : 0.0);
  double err = 0.0;
  detail::ReadArray a(u.get()), b(au.get());
  for (std::size_t k = 0; k < x.size(); ++k) {
    const auto i = static_cast<PetscInt>(k);
    err = std::max(err, std::abs(b[i] - kNu * symbol * a[i]));
  }
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return err;
}

TEST(MfgFractional, OperatorConvergesAtOrderTwoOnAFourierMode) {
  for (int dim : {1, 2}) {
    for (double s : {1.3, 1.7}) {
      std::vector<double> e;
      const std::vector<int> sizes = {16, 32, 64};
      for (int n : sizes) e.push_back(mode_error(dim, n, s));
      for (std::size_t i = 1; i < e.size(); ++i) {
        const double order = std::log(e[i - 1] / e[i]) / std::log(2.0);
        std::printf("  %dD s = %.1f, N = %d -> %d: error %.3e -> %.3e, observed order %.3f\n", dim,
                    s, sizes[i - 1], sizes[i], e[i - 1], e[i], order);
        if (i + 1 == e.size()) {
          EXPECT_NEAR(order, 2.0, 0.15);
        }
      }
    }
  }
}

// The matrix of a linear map given by y = f(x), columns by unit vectors (one rank, small).
template <class F>
std::vector<double> dense_of(const mfg::Model& model, F&& f) {
  const PetscInt n = model.grid().size();
  std::vector<double> d(static_cast<std::size_t>(n * n));
  auto e = detail::global_vec(model.dm());
  auto y = detail::global_vec(model.dm());
  for (PetscInt j = 0; j < n; ++j) {
    VecSet(e.get(), 0.0);
    VecSetValue(e.get(), j, 1.0, INSERT_VALUES);
    VecAssemblyBegin(e.get());
    VecAssemblyEnd(e.get());
    f(e.get(), y.get());
    detail::ReadArray a(y.get());
    for (PetscInt i = 0; i < n; ++i) d[static_cast<std::size_t>(i * n + j)] = a[i];
  }
  return d;
}

TEST(MfgFractional, OperatorIsAZeroRowSumMMatrixAndTheLaplacianAtOrderTwo) {
  for (int dim : {1, 2}) {
    for (double s : {1.2, 1.5, 2.0}) {
      const mfg::Model model(PETSC_COMM_WORLD, problem(dim, 9, s));
      detail::FractionalDiffusion frac(model);
      const PetscInt n = model.grid().size();
      const auto a = dense_of(model, [&](Vec x, Vec y) { frac.apply(x, y); });
      const auto rest = dense_of(model, [&](Vec x, Vec y) {
        VecSet(y, 0.0);
        frac.add_nonlocal(x, y);
      });
      double scale = 0.0;
      for (PetscInt i = 0; i < n; ++i)
        scale = std::max(scale, a[static_cast<std::size_t>(i * n + i)]);
      for (PetscInt i = 0; i < n; ++i) {
        double row = 0.0;
        EXPECT_GT(a[static_cast<std::size_t>(i * n + i)], 0.0);
        for (PetscInt j = 0; j < n; ++j) {
          const double v = a[static_cast<std::size_t>(i * n + j)];
          row += v;
          EXPECT_NEAR(v, a[static_cast<std::size_t>(j * n + i)], 1e-13 * scale) << "symmetric";
          if (i != j) {
            EXPECT_LE(v, 1e-13 * scale) << dim << "D s = " << s << " (" << i << ", " << j << ")";
          }
          // At s = 2 nothing is left beyond the local stencil's Laplacian.
          if (s == 2.0) {
            EXPECT_NEAR(rest[static_cast<std::size_t>(i * n + j)], 0.0, 1e-13 * scale);
          }
        }
        EXPECT_NEAR(row, 0.0, 1e-13 * scale);
      }
    }
  }
}

TEST(MfgFractional, HjbJacobianIsTheDerivativeAndFokkerPlanckItsTranspose) {
  for (int dim : {1, 2}) {
    const mfg::Model model(PETSC_COMM_WORLD, problem(dim, dim == 1 ? 12 : 6, 1.4));
    mfg::HjbSolver hjb(model);
    mfg::FokkerPlanckFdm fp(model);
    auto u = detail::global_vec(model.dm());
    auto u_next = detail::global_vec(model.dm());
    auto rhs = detail::global_vec(model.dm());
    fill(model, u.get(), 0.3);
    fill(model, u_next.get(), 1.1);
    VecSet(rhs.get(), 0.7);
    hjb.jacobian(u.get());
    Mat shell = nullptr, pmat = nullptr;
    SNESGetJacobian(hjb.snes(), &shell, &pmat, nullptr, nullptr);
    ASSERT_NE(shell, pmat) << "matrix-free Jacobian";
    const PetscInt n = model.grid().size();
    const auto jac = dense_of(model, [&](Vec x, Vec y) { MatMult(shell, x, y); });
    const double eps = 1e-7;
    auto up = detail::global_vec(model.dm());
    auto um = detail::global_vec(model.dm());
    auto rp = detail::global_vec(model.dm());
    auto rm = detail::global_vec(model.dm());
    double worst = 0.0;
    for (PetscInt j = 0; j < n; ++j) {
      VecCopy(u.get(), up.get());
      VecCopy(u.get(), um.get());
      VecSetValue(up.get(), j, eps, ADD_VALUES);
      VecSetValue(um.get(), j, -eps, ADD_VALUES);
      for (Vec v : {up.get(), um.get()}) {
        VecAssemblyBegin(v);
        VecAssemblyEnd(v);
      }
      hjb.residual(u_next.get(), rhs.get(), up.get(), rp.get());
      hjb.residual(u_next.get(), rhs.get(), um.get(), rm.get());
      detail::ReadArray a(rp.get()), b(rm.get());
      for (PetscInt i = 0; i < n; ++i) {
        const double fd = (a[i] - b[i]) / (2 * eps);
        const double exact = jac[static_cast<std::size_t>(i * n + j)];
        worst = std::max(worst, std::abs(fd - exact) / (1.0 + std::abs(exact)));
      }
    }
    EXPECT_LT(worst, 1e-5) << dim << "D";
    // The Fokker-Planck operator: the transpose, columns summing to 1/dt.
    fp.matrix(u.get());
    Mat fa = nullptr, fpm = nullptr;
    KSPGetOperators(fp.ksp(), &fa, &fpm);
    // The KSP's operators are set at the first step; the shell exists from then on.
    auto m = detail::global_vec(model.dm());
    auto m_next = detail::global_vec(model.dm());
    VecSet(m.get(), 1.0);
    fp.step(u.get(), m.get(), nullptr, m_next.get());
    KSPGetOperators(fp.ksp(), &fa, &fpm);
    ASSERT_NE(fa, fpm) << "matrix-free Fokker-Planck operator";
    const auto a = dense_of(model, [&](Vec x, Vec y) { MatMult(fa, x, y); });
    double scale = 0.0;
    for (double v : jac) scale = std::max(scale, std::abs(v));
    for (PetscInt r = 0; r < n; ++r) {
      double column = 0.0;
      for (PetscInt c = 0; c < n; ++c) {
        EXPECT_NEAR(a[static_cast<std::size_t>(r * n + c)],
                    jac[static_cast<std::size_t>(c * n + r)], 1e-13 * scale);
        column += a[static_cast<std::size_t>(c * n + r)];
        if (r != c) {
          EXPECT_LE(a[static_cast<std::size_t>(r * n + c)], 1e-13 * scale) << "M-matrix";
        }
      }
      EXPECT_NEAR(column, 1.0 / model.dt(), 1e-12 * scale);
    }
  }
}

TEST(MfgFractional, PreconditionerInvertsTheImplicitDiffusion) {
  for (int dim : {1, 2}) {
    const mfg::Model model(PETSC_COMM_WORLD, problem(dim, 10, 1.5));
    detail::FractionalDiffusion frac(model);
    auto x = detail::global_vec(model.dm());
    auto ax = detail::global_vec(model.dm());
    auto back = detail::global_vec(model.dm());
    fill(model, x.get(), 0.4);
    const double sigma = 1.0 / model.dt();
    frac.apply(x.get(), ax.get());
    VecAXPY(ax.get(), sigma, x.get());
    frac.apply_inverse(ax.get(), back.get(), sigma);
    VecAXPY(back.get(), -1.0, x.get());
    PetscReal err = 0.0;
    VecNorm(back.get(), NORM_INFINITY, &err);
    EXPECT_LT(err, 1e-13) << dim << "D";
  }
}

// Krylov iterations per Newton step of the HJB step and per Fokker-Planck step, for a field
// with gradients of order 2 pi (a drift of that size), with dt fixed as the grid grows.
struct KrylovCounts {
  double hjb = 0.0;  // per Newton iteration
  double fp = 0.0;   // per step
};

KrylovCounts krylov_counts(int dim, int points, double order, int steps) {
  const mfg::Model model(PETSC_COMM_WORLD, problem(dim, points, order, steps));
  mfg::HjbSolver hjb(model);
  mfg::FokkerPlanckFdm fp(model);
  auto u = detail::global_vec(model.dm());
  auto u_next = detail::global_vec(model.dm());
  auto rhs = detail::global_vec(model.dm());
  fill(model, u_next.get(), 0.2);
  VecScale(u_next.get(), 0.5);
  VecCopy(model.potential(), rhs.get());
  VecCopy(u_next.get(), u.get());
  const int newton = hjb.step(u_next.get(), rhs.get(), u.get(), "counts", 1e-10);
  PetscInt linear = 0;
  SNESGetLinearSolveIterations(hjb.snes(), &linear);
  auto m_next = detail::global_vec(model.dm());
  fp.step(u.get(), model.initial_density(), nullptr, m_next.get());
  PetscInt fp_its = 0;
  KSPGetIterationNumber(fp.ksp(), &fp_its);
  return {static_cast<double>(linear) / std::max(newton, 1), static_cast<double>(fp_its)};
}

TEST(MfgFractional, KrylovIterationsDoNotGrowWithTheGrid) {
  // dt refined with h (steps = N / 4), the refinement of a first-order scheme. The s = 2
  // game is the baseline (in 1D its steps are direct tridiagonal solves: no Krylov
  // iterations; in 2D GMRES with block Jacobi/ILU(3)).
  for (int dim : {1, 2}) {
    const std::vector<int> sizes =
        dim == 1 ? std::vector<int>{128, 512, 2048} : std::vector<int>{32, 64, 128};
    double baseline_fp_growth = 0.0;
    for (double s : {2.0, 1.7, 1.3}) {
      std::vector<KrylovCounts> c;
      for (int n : sizes) {
        c.push_back(krylov_counts(dim, n, s, n / 4));
        std::printf(
            "  %dD s = %.1f, N = %4d, %4d steps: GMRES iterations per Newton step %.1f, per "
            "Fokker-Planck step %.0f\n",
            dim, s, n, n / 4, c.back().hjb, c.back().fp);
      }
      if (s == 2.0) {
        baseline_fp_growth = c.back().fp - c.front().fp;
        continue;
      }
      // Bounded: the finest grid needs at most 3 more than the coarsest (Fokker-Planck,
      // solved to 1e-12: no more growth than the s = 2 game's).
      EXPECT_LE(c.back().hjb, c.front().hjb + 3.0) << dim << "D s = " << s;
      EXPECT_LE(c.back().fp, c.front().fp + std::max(3.0, baseline_fp_growth))
          << dim << "D s = " << s;
    }
  }
}

// A library user's Problem is checked like a deck: the order in (1, 2], and below 2 only
// with periodic boundaries and the fdm Fokker-Planck method.
TEST(MfgFractional, ProblemOutsideTheSupportedCasesIsRefused) {
  auto refused = [](const mfg::Problem& p, const std::string& words) {
    try {
      mfg::check_problem(p);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const fracmfg::core::CollectiveError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("problem.diffusion_order"), std::string::npos) << what;
      EXPECT_NE(what.find(words), std::string::npos) << what;
    }
  };
  mfg::Problem p = problem(1, 16, 1.5);
  EXPECT_NO_THROW(mfg::check_problem(p));
  p.diffusion_order = 2.5;
  refused(p, "in (1, 2]");
  p.diffusion_order = 1.0;
  refused(p, "in (1, 2]");
  p.diffusion_order = 1.5;
  p.domain.boundary = fracmfg::io::MfgConfig::Domain::Boundary::reflecting;
  refused(p, "reflecting");
  p.domain.boundary = fracmfg::io::MfgConfig::Domain::Boundary::periodic;
  p.fokker_planck.method = fracmfg::io::MfgConfig::FokkerPlanck::Method::particles;
  refused(p, "particle");
  p.diffusion_order = 2.0;
  EXPECT_NO_THROW(mfg::check_problem(p));
}

}  // namespace
