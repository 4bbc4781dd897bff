// The Riesz operator (frac/riesz_operator.hpp, frac/riesz_shell.hpp): weights, the FFT
// product against the assembled dense matrix, the exterior (boundary) term, the circulant
// preconditioners, and the Krylov iteration counts they give as the grid is refined.
#include "fracmfg/frac/riesz_operator.hpp"

#include <gtest/gtest.h>
#include <petscksp.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/frac/fpde_grid.hpp"
#include "fracmfg/frac/riesz_shell.hpp"

namespace {

using namespace fracmfg;
using frac::CirculantKind;
using frac::RieszOperator;

TEST(RieszWeights, MatchTheGammaFormulaAndSumToZero) {
  for (double s : {1.2, 1.5, 1.9}) {
    const auto g = frac::riesz_weights(s, 200001);
    for (int k = 0; k < 6; ++k) {
      // (-1)^k Gamma(s+1) / (Gamma(s/2-k+1) Gamma(s/2+k+1)), Gamma of a negative non-integer
      // argument through the reflection formula (tgamma handles it).
      const double expected = (k % 2 ? -1.0 : 1.0) * std::tgamma(s + 1) /
                              (std::tgamma(s / 2 - k + 1) * std::tgamma(s / 2 + k + 1));
      EXPECT_NEAR(g[k], expected, 1e-13 * std::fabs(expected)) << "s " << s << " k " << k;
      if (k > 0) {
        EXPECT_LT(g[k], 0.0);
      }
    }
    // g_0 + 2 sum_{k>=1} g_k = 0; the tail beyond K is O(K^-s).
    double sum = g[0];
    for (std::size_t k = 1; k < g.size(); ++k) sum += 2.0 * g[k];
    EXPECT_NEAR(sum, 0.0, 5.0 * std::pow(200000.0, -s)) << "s " << s;
  }
  const auto two = frac::riesz_weights(2.0, 4);  // the second difference
  EXPECT_NEAR(two[0], 2.0, 1e-15);
  EXPECT_NEAR(two[1], -1.0, 1e-15);
  EXPECT_NEAR(two[2], 0.0, 1e-15);
  EXPECT_THROW(frac::riesz_weights(2.5, 3), Error);
}

/// max_i |(A x)_i - (dense x)_i| / max |dense x| at the unknowns.
double product_error(RieszOperator& op, std::size_t nx, std::size_t ny) {
  const auto dense = op.dense();
  const std::size_t n = op.interior_size();
  std::vector<double> x(op.size());
  for (std::size_t p = 0; p < x.size(); ++p) x[p] = std::sin(1.7 * p + 0.3) + 0.1 * (p % 5);
  std::vector<double> y(op.size());
  op.apply(x.data(), y.data(), 0.0, 1.0, 0.0);
  std::vector<double> xi;
  std::vector<double> yi;
  for (std::size_t j = 0; j < ny; ++j) {
    for (std::size_t i = 0; i < nx; ++i) {
      if (!op.is_interior(i, j)) continue;
      xi.push_back(x[j * nx + i]);
      yi.push_back(y[j * nx + i]);
    }
  }
  EXPECT_EQ(xi.size(), n);
  double err = 0.0;
  double scale = 0.0;
  for (std::size_t r = 0; r < n; ++r) {
    double v = 0.0;
    for (std::size_t c = 0; c < n; ++c) v += dense[r * n + c] * xi[c];
    err = std::max(err, std::fabs(v - yi[r]));
    scale = std::max(scale, std::fabs(v));
  }
  return err / scale;
}

TEST(RieszOperator, FftProductEqualsTheDenseMatrixProduct) {
  for (double s : {1.3, 1.8, 2.0}) {
    {
      RieszOperator op(s, 1, {37, 1}, {1.0 / 36, 1.0}, false);
      EXPECT_LE(product_error(op, 37, 1), 1e-12) << "1D dirichlet s " << s;
    }
    {
      RieszOperator op(s, 1, {32, 1}, {1.0 / 32, 1.0}, true);
      EXPECT_LE(product_error(op, 32, 1), 1e-12) << "1D periodic s " << s;
    }
    {
      RieszOperator op(s, 2, {9, 13}, {0.125, 1.0 / 12}, false);
      EXPECT_LE(product_error(op, 9, 13), 1e-12) << "2D dirichlet s " << s;
    }
    {
      RieszOperator op(s, 2, {8, 10}, {0.125, 0.1}, true);
      EXPECT_LE(product_error(op, 8, 10), 1e-12) << "2D periodic s " << s;
    }
  }
}

TEST(RieszOperator, DenseMatrixIsTheSymmetricToeplitzOfTheWeights) {
  const double s = 1.6;
  const double h = 0.1;
  RieszOperator op(s, 1, {11, 1}, {h, 1.0}, false);
  const auto a = op.dense();
  const auto g = frac::riesz_weights(s, 9);
  ASSERT_EQ(a.size(), 81u);
  for (int i = 0; i < 9; ++i) {
    for (int j = 0; j < 9; ++j) {
      EXPECT_NEAR(a[i * 9 + j], std::pow(h, -s) * g[std::abs(i - j)], 1e-12 * std::pow(h, -s));
    }
  }
}

TEST(RieszOperator, ConstantsAreInTheKernelWithTheExteriorExtension) {
  // u = 1 inside and outside: sum_k g_k = 0, so A u = 0 once the exterior (boundary values
  // continued outside) is included; without it, A applied to the interior part alone is not 0.
  for (int dim : {1, 2}) {
    const std::size_t nx = 25;
    const std::size_t ny = dim == 2 ? 19 : 1;
    RieszOperator op(1.5, dim, {nx, ny}, {1.0 / 24, 1.0 / 18}, false);
    std::vector<double> one(op.size(), 1.0);
    std::vector<double> y(op.size());
    op.apply(one.data(), y.data(), 0.0, 1.0, 1.0);
    const double scale = std::pow(24.0, 1.5);
    for (std::size_t j = 0; j < ny; ++j) {
      for (std::size_t i = 0; i < nx; ++i) {
        if (op.is_interior(i, j)) {
          EXPECT_NEAR(y[j * nx + i], 0.0, 1e-12 * scale);
        } else {
          EXPECT_EQ(y[j * nx + i], 1.0);  // boundary rows are the identity
        }
      }
    }
    op.apply(one.data(), y.data(), 0.0, 1.0, 0.0);
    EXPECT_GT(y[(dim == 2 ? 9 * nx : 0) + 1], 0.1 * scale);
  }
}

TEST(RieszOperator, PeriodicCirculantInverseIsExact) {
  RieszOperator op(1.4, 2, {16, 12}, {1.0 / 16, 1.0 / 12}, true);
  std::vector<double> x(op.size());
  for (std::size_t p = 0; p < x.size(); ++p) x[p] = std::cos(0.37 * p);
  std::vector<double> z(op.size());
  std::vector<double> y(op.size());
  for (CirculantKind kind : {CirculantKind::strang, CirculantKind::tchan}) {
    op.apply_circulant_inverse(kind, x.data(), z.data(), 1.0, 0.01);
    op.apply(z.data(), y.data(), 1.0, 0.01, 0.0);
    for (std::size_t p = 0; p < x.size(); ++p) EXPECT_NEAR(y[p], x[p], 1e-12);
  }
}

TEST(RieszOperator, PeriodicCirculantInverseIsExactIn1D) {
  RieszOperator op(1.7, 1, {30, 1}, {1.0 / 30, 1.0}, true);
  std::vector<double> x(op.size()), z(op.size()), y(op.size());
  for (std::size_t p = 0; p < x.size(); ++p) x[p] = std::sin(0.53 * p) + 0.2;
  op.apply_circulant_inverse(CirculantKind::strang, x.data(), z.data(), 1.0, 0.02);
  op.apply(z.data(), y.data(), 1.0, 0.02, 0.0);
  for (std::size_t p = 0; p < x.size(); ++p) EXPECT_NEAR(y[p], x[p], 1e-12);
}

namespace {

fracmfg::exec::SelectorConfig riesz_selector_config(fracmfg::exec::BackendChoice backend) {
  fracmfg::exec::SelectorConfig c;
  c.use_environment = false;
  c.persist = false;
  c.activate_device = false;
  c.backend = backend;
  return c;
}

// Products and preconditioner applications of two operators, one placed by `selector`.
void compare_placed(fracmfg::exec::Selector& selector, double tolerance) {
  struct Shape {
    int dim;
    std::size_t nx, ny;
    bool periodic;
  };
  for (const Shape sh : {Shape{1, 41, 1, false}, Shape{1, 32, 1, true}, Shape{2, 17, 13, false},
                         Shape{2, 16, 9, true}}) {
    const std::array<std::size_t, 2> n = {sh.nx, sh.ny};
    const std::array<double, 2> h = {1.0 / static_cast<double>(sh.nx),
                                     1.0 / static_cast<double>(sh.ny)};
    RieszOperator plain(1.45, sh.dim, n, h, sh.periodic);
    RieszOperator placed(1.45, sh.dim, n, h, sh.periodic);
    placed.set_selector(&selector);
    std::vector<double> x(plain.size()), a(plain.size()), b(plain.size());
    for (std::size_t p = 0; p < x.size(); ++p) x[p] = std::cos(0.41 * p) + 0.3;
    for (int rep = 0; rep < 4; ++rep) {
      plain.apply(x.data(), a.data(), 1.0, 0.05, 0.05);
      placed.apply(x.data(), b.data(), 1.0, 0.05, 0.05);
      for (std::size_t p = 0; p < x.size(); ++p) {
        ASSERT_NEAR(b[p], a[p], tolerance * (1.0 + std::fabs(a[p]))) << "apply, point " << p;
      }
      plain.apply_circulant_inverse(CirculantKind::tchan, x.data(), a.data(), 1.0, 0.05);
      placed.apply_circulant_inverse(CirculantKind::tchan, x.data(), b.data(), 1.0, 0.05);
      for (std::size_t p = 0; p < x.size(); ++p) {
        ASSERT_NEAR(b[p], a[p], tolerance * (1.0 + std::fabs(a[p]))) << "inverse, point " << p;
      }
    }
  }
}

}  // namespace

TEST(RieszOperator, ASelectorOnTheHostGivesTheSameProducts) {
  namespace fe = fracmfg::exec;
  fe::Selector selector(fe::Hardware::from_yaml("host_name: cpu-node\nhost_cores: 2\n", "cpu.yaml"),
                        riesz_selector_config(fe::BackendChoice::automatic));
  compare_placed(selector, 0.0);
  const auto product = selector.model().find_kernel(fe::kernel_names::fpde_riesz_product);
  const auto pc = selector.model().find_kernel(fe::kernel_names::fpde_circulant_pc);
  const auto grid2d = selector.model().find_kernel(fe::kernel_names::fpde_circulant_2d);
  ASSERT_TRUE(product.has_value());
  ASSERT_TRUE(pc.has_value());
  ASSERT_TRUE(grid2d.has_value());
  // Per apply and inverse: 1D one product and one inverse (lines); 2D Dirichlet one product
  // per direction (lines) and one 2D inverse; 2D periodic one 2D product and one 2D inverse.
  EXPECT_EQ(selector.stats(*product, fe::Backend::cpu).calls, 4u * (1 + 1 + 2));
  EXPECT_EQ(selector.stats(*pc, fe::Backend::cpu).calls, 4u * 2);
  EXPECT_EQ(selector.stats(*grid2d, fe::Backend::cpu).calls, 4u * 3);
}

TEST(RieszOperator, AFailingDeviceFallsBackToTheHostProducts) {
  // Every product placed on an injected GPU: where this machine cannot run it, each try
  // fails with the outputs untouched and the host redoes it; with a device, cuFFT's results
  // agree with FFTW's to round-off.
  namespace fe = fracmfg::exec;
  const bool real_device = !fe::probe_cuda().devices.empty();
  fe::Selector selector(
      fe::Hardware::from_yaml(
          "host_name: gpu-node\nhost_cores: 8\ncuda_compiled: true\nnode_rank: 0\n"
          "node_size: 1\ngpus:\n  - {name: Injected GPU, cc: \"8.0\", multiprocessors: 108, "
          "memory_gb: 40, free_gb: 39}\n",
          "gpu.yaml"),
      riesz_selector_config(fe::BackendChoice::cuda),
      fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false));
  compare_placed(selector, real_device ? 1e-12 : 0.0);
  const std::pair<const char*, unsigned> kernels[] = {{fe::kernel_names::fpde_riesz_product, 16u},
                                                      {fe::kernel_names::fpde_circulant_pc, 8u},
                                                      {fe::kernel_names::fpde_circulant_2d, 12u}};
  for (const auto& [name, calls] : kernels) {
    const auto kernel = selector.model().find_kernel(name);
    ASSERT_TRUE(kernel.has_value()) << name;
    if (!real_device) {
      EXPECT_EQ(selector.stats(*kernel, fe::Backend::cuda).failures, 3u) << name;
      EXPECT_TRUE(selector.cuda_disabled(*kernel)) << name;
      // Every call ran on the host in the end: the three failed tries and the calls after
      // the device was given up.
      EXPECT_EQ(selector.stats(*kernel, fe::Backend::cpu).calls, calls) << name;
    }
  }
}

TEST(RieszOperator, CirculantPreconditionersAreSymmetricPositiveDefinite) {
  // x^T C^-1 x > 0 and <C^-1 x, y> = <x, C^-1 y> for the Dirichlet circulants.
  for (CirculantKind kind : {CirculantKind::strang, CirculantKind::tchan}) {
    RieszOperator op(1.7, 2, {20, 15}, {1.0 / 19, 1.0 / 14}, false);
    std::vector<double> x(op.size(), 0.0), y(op.size(), 0.0), cx(op.size()), cy(op.size());
    for (std::size_t j = 1; j + 1 < 15; ++j) {
      for (std::size_t i = 1; i + 1 < 20; ++i) {
        x[j * 20 + i] = std::sin(0.3 * i + 0.7 * j);
        y[j * 20 + i] = std::cos(1.1 * i) * j;
      }
    }
    op.apply_circulant_inverse(kind, x.data(), cx.data(), 1.0, 0.05);
    op.apply_circulant_inverse(kind, y.data(), cy.data(), 1.0, 0.05);
    double xcx = 0.0, ycx = 0.0, xcy = 0.0;
    for (std::size_t p = 0; p < x.size(); ++p) {
      xcx += x[p] * cx[p];
      ycx += y[p] * cx[p];
      xcy += x[p] * cy[p];
    }
    EXPECT_GT(xcx, 0.0);
    EXPECT_NEAR(ycx, xcy, 1e-12 * (std::fabs(ycx) + 1.0));
  }
}

/// CG iterations for (I + kappa A) u = b on n points of [0, 1], Dirichlet.
int iterations(int n, int dim, const char* pc, double kappa) {
  io::FpdeConfig cfg;
  cfg.domain.length.assign(static_cast<std::size_t>(dim), 1.0);
  cfg.domain.boundary = io::FpdeConfig::Domain::Boundary::dirichlet;
  cfg.grid.points.assign(static_cast<std::size_t>(dim), n);
  frac::FpdeGrid grid(PETSC_COMM_WORLD, cfg);
  frac::RieszShell shell(grid, 1.6);
  shell.set_coefficients(1.0, kappa);
  KSP ksp = nullptr;
  KSPCreate(PETSC_COMM_WORLD, &ksp);
  KSPSetType(ksp, KSPCG);
  KSPSetTolerances(ksp, 1e-10, 1e-50, PETSC_DEFAULT, 100000);
  KSPSetOperators(ksp, shell.matrix(), shell.matrix());
  PC p = nullptr;
  KSPGetPC(ksp, &p);
  const std::string name = pc;
  if (name == "none") {
    PCSetType(p, PCNONE);
  } else {
    shell.set_preconditioner(p, name == "strang" ? CirculantKind::strang : CirculantKind::tchan);
  }
  Vec b = nullptr;
  Vec u = nullptr;
  DMCreateGlobalVector(grid.dm(), &b);
  VecDuplicate(b, &u);
  {
    PetscScalar* a = nullptr;
    VecGetArray(b, &a);
    for (std::size_t q = 0; q < grid.local_size(); ++q) {
      a[q] =
          grid.boundary()[q] ? 0.0 : std::exp(-20 * std::pow(grid.x()[q] - 0.3, 2)) + grid.y()[q];
    }
    VecRestoreArray(b, &a);
  }
  KSPSolve(ksp, b, u);
  KSPConvergedReason reason;
  KSPGetConvergedReason(ksp, &reason);
  EXPECT_GT(reason, 0) << pc << " n " << n;
  PetscInt its = 0;
  KSPGetIterationNumber(ksp, &its);
  VecDestroy(&b);
  VecDestroy(&u);
  KSPDestroy(&ksp);
  return static_cast<int>(its);
}

TEST(RieszShell, CirculantPreconditionerKeepsIterationsBoundedAsTheGridIsRefined) {
  // One Crank-Nicolson step with dt = 0.01, K = 1, s = 1.6: kappa = dt/2. Without a
  // preconditioner the condition number grows like h^-s and CG like its square root.
  const double kappa = 0.005;
  for (int dim : {1, 2}) {
    std::vector<int> sizes = dim == 1 ? std::vector<int>{66, 130, 258, 514, 1026, 2050, 4098}
                                      : std::vector<int>{18, 34, 66, 130};
    std::printf("%dD Riesz s = 1.6, (I + 0.005 A) u = b, CG rtol 1e-10: iterations\n", dim);
    std::printf("  %8s %6s %6s %6s\n", "unknowns", "none", "strang", "tchan");
    std::vector<int> none, strang, tchan;
    for (int n : sizes) {
      none.push_back(iterations(n, dim, "none", kappa));
      strang.push_back(iterations(n, dim, "strang", kappa));
      tchan.push_back(iterations(n, dim, "tchan", kappa));
      std::printf("  %8d %6d %6d %6d\n", dim == 1 ? n - 2 : (n - 2) * (n - 2), none.back(),
                  strang.back(), tchan.back());
    }
    // Unpreconditioned CG grows with the grid (like h^-s/2).
    EXPECT_GE(none.back(), 3 * none.front());
    if (dim == 1) {
      // Strang (the default): bounded, the spectrum of C^-1 (I + kappa A) clusters at 1
      // (Lei & Sun, J. Comput. Phys. 242 (2013) 715-725).
      for (int its : strang) {
        EXPECT_LE(its, 12);
        EXPECT_LE(its, strang.front() + 4);
      }
    }
    // T. Chan in 1D, and both in 2D (a multilevel circulant cannot be an optimal
    // preconditioner for a multilevel Toeplitz matrix: Serra Capizzano & Tyrtyshnikov, SIAM
    // J. Matrix Anal. Appl. 21 (1999) 431-439): slow growth, at most x1.35 per halving of h,
    // against x1.7-1.8 without a preconditioner.
    for (const auto* series : {&strang, &tchan}) {
      for (std::size_t k = 1; k < series->size(); ++k) {
        EXPECT_LE((*series)[k], 1.35 * (*series)[k - 1] + 1) << "dim " << dim << " k " << k;
      }
      EXPECT_LE(3 * series->back(), none.back());
    }
  }
}

}  // namespace
