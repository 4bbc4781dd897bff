// kernels::tridiag_batched on the host: every system of random diagonally dominant batches
// against a dense Gaussian elimination with partial pivoting and against the exact solution
// the right-hand side was built from; both layouts, plain and cyclic; zero pivots.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/tridiag_batched.hpp"
#include "kernels/tridiag_item.hpp"

namespace fk = fracmfg::kernels;

namespace {

// Dense n x n system (row-major) solved by Gaussian elimination with partial pivoting.
std::vector<double> dense_solve(std::vector<double> a, std::vector<double> b, int n) {
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int i = k + 1; i < n; ++i) {
      if (std::fabs(a[i * n + k]) > std::fabs(a[p * n + k])) p = i;
    }
    if (p != k) {
      for (int j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
      std::swap(b[k], b[p]);
    }
    for (int i = k + 1; i < n; ++i) {
      if (a[i * n + k] == 0.0) continue;  // nothing to eliminate (keeps banded cases fast)
      const double f = a[i * n + k] / a[k * n + k];
      for (int j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
      b[i] -= f * b[k];
    }
  }
  std::vector<double> x(n);
  for (int i = n - 1; i >= 0; --i) {
    double s = b[i];
    for (int j = i + 1; j < n; ++j) s -= a[i * n + j] * x[j];
    x[i] = s / a[i * n + i];
  }
  return x;
}

// One system in plain vectors (row i: sub[i], diag[i], super[i]).
struct System {
  std::vector<double> sub, diag, super;
};

// The dense matrix of a system with the header's conventions (cyclic: indices wrap, and
// entries landing on the same column add up, as for n = 1, 2).
std::vector<double> dense_matrix(const System& s, int n, bool cyclic) {
  std::vector<double> a(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) {
    a[i * n + i] += s.diag[i];
    if (cyclic) {
      a[i * n + (i + n - 1) % n] += s.sub[i];
      a[i * n + (i + 1) % n] += s.super[i];
    } else {
      if (i > 0) a[i * n + i - 1] += s.sub[i];
      if (i + 1 < n) a[i * n + i + 1] += s.super[i];
    }
  }
  return a;
}

std::vector<double> matvec(const std::vector<double>& a, const std::vector<double>& x, int n) {
  std::vector<double> y(n, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) y[i] += a[i * n + j] * x[j];
  }
  return y;
}

double rel_error(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0.0;
  double den = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num = std::max(num, std::fabs(got[i] - want[i]));
    den = std::max(den, std::fabs(want[i]));
  }
  return num / den;
}

// A random batch (strictly diagonally dominant, random signs) with right-hand sides built
// from a known solution; stored in the requested layout.
struct Batch {
  int m = 0, n = 0;
  fk::TridiagLayout layout = fk::TridiagLayout::strided;
  std::vector<System> systems;
  std::vector<std::vector<double>> exact;
  std::vector<double> sub, diag, super, rhs;

  std::size_t at(int k, int i) const {
    return layout == fk::TridiagLayout::strided ? static_cast<std::size_t>(k) * n + i
                                                : static_cast<std::size_t>(i) * m + k;
  }
  fk::TridiagBatch view() {
    fk::TridiagBatch b;
    b.layout = layout;
    b.systems = m;
    b.size = n;
    b.sub = sub.data();
    b.diag = diag.data();
    b.super = super.data();
    b.rhs = rhs.data();
    return b;
  }
  std::vector<double> solution(int k) const {
    std::vector<double> x(n);
    for (int i = 0; i < n; ++i) x[i] = rhs[at(k, i)];
    return x;
  }
};

Batch random_batch(int m, int n, fk::TridiagLayout layout, bool cyclic, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Batch b;
  b.m = m;
  b.n = n;
  b.layout = layout;
  const std::size_t total = static_cast<std::size_t>(m) * n;
  b.sub.resize(total);
  b.diag.resize(total);
  b.super.resize(total);
  b.rhs.resize(total);
  for (int k = 0; k < m; ++k) {
    System s{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
    std::vector<double> x(n);
    for (int i = 0; i < n; ++i) {
      s.sub[i] = u(rng);
      s.super[i] = u(rng);
      const double margin = 0.5 + 0.5 * (u(rng) + 1.0);
      s.diag[i] =
          (u(rng) < 0 ? -1.0 : 1.0) * (std::fabs(s.sub[i]) + std::fabs(s.super[i]) + margin);
      x[i] = 10.0 * u(rng);
    }
    const std::vector<double> d = matvec(dense_matrix(s, n, cyclic), x, n);
    for (int i = 0; i < n; ++i) {
      b.sub[b.at(k, i)] = s.sub[i];
      b.diag[b.at(k, i)] = s.diag[i];
      b.super[b.at(k, i)] = s.super[i];
      b.rhs[b.at(k, i)] = d[i];
    }
    b.systems.push_back(std::move(s));
    b.exact.push_back(std::move(x));
  }
  return b;
}

void expect_matches_dense(bool cyclic) {
  unsigned seed = 1;
  for (const fk::TridiagLayout layout :
       {fk::TridiagLayout::strided, fk::TridiagLayout::interleaved}) {
    for (const int n : {1, 2, 3, 100}) {
      for (const int m : {1, 2, 17, 1000}) {
        SCOPED_TRACE("layout " + std::to_string(static_cast<int>(layout)) + ", n " +
                     std::to_string(n) + ", m " + std::to_string(m));
        Batch b = random_batch(m, n, layout, cyclic, seed++);
        // Right-hand sides of the dense reference, before the in-place solve.
        std::vector<std::vector<double>> rhs(m);
        for (int k = 0; k < m; ++k) rhs[k] = b.solution(k);
        fk::TridiagOptions opt;
        opt.cyclic = cyclic;
        fk::tridiag_batched_host(b.view(), opt);
        double worst_dense = 0.0;
        double worst_exact = 0.0;
        for (int k = 0; k < m; ++k) {
          const std::vector<double> x = b.solution(k);
          const std::vector<double> ref =
              dense_solve(dense_matrix(b.systems[k], n, cyclic), rhs[k], n);
          worst_dense = std::max(worst_dense, rel_error(x, ref));
          worst_exact = std::max(worst_exact, rel_error(x, b.exact[k]));
        }
        EXPECT_LE(worst_dense, 1e-12);
        EXPECT_LE(worst_exact, 1e-12);
      }
    }
  }
}

}  // namespace

TEST(kernels_tridiag_test, ThomasMatchesDenseLuForEverySystem) {
  expect_matches_dense(false);
}

TEST(kernels_tridiag_test, CyclicShermanMorrisonMatchesDenseLuForEverySystem) {
  expect_matches_dense(true);
}

TEST(kernels_tridiag_test, LayoutsAndWorkspaceGiveIdenticalResults) {
  for (const bool cyclic : {false, true}) {
    Batch s = random_batch(37, 29, fk::TridiagLayout::strided, cyclic, 99);
    Batch i = random_batch(37, 29, fk::TridiagLayout::interleaved, cyclic, 99);
    Batch w = random_batch(37, 29, fk::TridiagLayout::strided, cyclic, 99);
    fk::TridiagOptions opt;
    opt.cyclic = cyclic;
    fk::tridiag_batched_host(s.view(), opt);
    fk::tridiag_batched_host(i.view(), opt);
    std::vector<double> workspace(fk::tridiag_workspace_size(37, 29, cyclic), -7.0);
    fk::TridiagBatch wv = w.view();
    wv.workspace = workspace.data();
    fk::tridiag_batched_host(wv, opt);
    for (int k = 0; k < 37; ++k) {
      // The same arithmetic in the same order: bitwise equal.
      EXPECT_EQ(s.solution(k), i.solution(k)) << "system " << k;
      EXPECT_EQ(s.solution(k), w.solution(k)) << "system " << k;
    }
  }
}

TEST(kernels_tridiag_test, PoissonProblemReproducesItsExactSolution) {
  // -u'' = pi^2 sin(pi x) on (0,1), u(0) = u(1) = 0, second-order differences: the discrete
  // solution is sin(pi x_i) * (pi h / 2)^2 / sin(pi h / 2)^2 exactly.
  const int n = 255;
  const double h = 1.0 / (n + 1);
  const double pi = std::acos(-1.0);
  std::vector<double> sub(n, -1.0), diag(n, 2.0), super(n, -1.0), rhs(n);
  for (int i = 0; i < n; ++i) rhs[i] = h * h * pi * pi * std::sin(pi * (i + 1) * h);
  fk::TridiagBatch b;
  b.systems = 1;
  b.size = n;
  b.sub = sub.data();
  b.diag = diag.data();
  b.super = super.data();
  b.rhs = rhs.data();
  fk::tridiag_batched_host(b, {});
  const double factor = std::pow(pi * h / 2.0, 2) / std::pow(std::sin(pi * h / 2.0), 2);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(rhs[i], factor * std::sin(pi * (i + 1) * h), 1e-12) << i;
  }
}

TEST(kernels_tridiag_test, ZeroPivotNamesTheFirstFailingSystemAndRow) {
  const int m = 5;
  const int n = 2;
  // Every system is [[1, 1], [1, 1]] except that systems 3 and 4 have the singular
  // elimination at row 1 while the others are regular.
  std::vector<double> sub(m * n, 1.0), diag(m * n, 1.0), super(m * n, 1.0), rhs(m * n, 1.0);
  for (int k = 0; k < 3; ++k) diag[k * n + 1] = 3.0;
  fk::TridiagBatch b;
  b.systems = m;
  b.size = n;
  b.sub = sub.data();
  b.diag = diag.data();
  b.super = super.data();
  b.rhs = rhs.data();
  try {
    fk::tridiag_batched_host(b, {});
    FAIL() << "expected a NumericalError";
  } catch (const fracmfg::NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("zero pivot in system 3 (row 1)"), std::string::npos)
        << e.what();
  }
  // A zero first pivot (row 0) in system 0.
  diag[0] = 0.0;
  try {
    fk::tridiag_batched_host(b, {});
    FAIL() << "expected a NumericalError";
  } catch (const fracmfg::NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("system 0 (row 0)"), std::string::npos) << e.what();
  }
}

TEST(kernels_tridiag_test, CyclicSingularSystemIsReported) {
  // n = 1: (sub + diag + super) x = rhs with a zero sum; n = 3: the all-ones circulant
  // [[1,1,1],...] is singular.
  std::vector<double> sub{1.0, 1.0, 1.0, 1.0}, diag{-2.0, 1.0, 1.0, 1.0};
  std::vector<double> super{1.0, 1.0, 1.0, 1.0}, rhs{1.0, 1.0, 1.0, 1.0};
  fk::TridiagOptions opt;
  opt.cyclic = true;
  fk::TridiagBatch b;
  b.systems = 1;
  b.size = 1;
  b.sub = sub.data();
  b.diag = diag.data();
  b.super = super.data();
  b.rhs = rhs.data();
  EXPECT_THROW(fk::tridiag_batched_host(b, opt), fracmfg::NumericalError);
  b.size = 3;
  b.sub = sub.data() + 1;
  b.diag = diag.data() + 1;
  b.super = super.data() + 1;
  b.rhs = rhs.data() + 1;
  try {
    fk::tridiag_batched_host(b, opt);
    FAIL() << "expected a NumericalError";
  } catch (const fracmfg::NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("system 0"), std::string::npos) << e.what();
  }
}

TEST(kernels_tridiag_test, BadArgumentsAreRejectedBeforeAnyWork) {
  std::vector<double> v(6, 1.0);
  fk::TridiagBatch b;
  b.systems = 2;
  b.size = 3;
  b.sub = v.data();
  b.diag = v.data();
  b.super = v.data();
  b.rhs = nullptr;
  EXPECT_THROW(fk::tridiag_batched_host(b, {}), fracmfg::Error);
  b.rhs = v.data();
  b.size = -1;
  EXPECT_THROW(fk::tridiag_batched_host(b, {}), fracmfg::Error);
  b.size = 3;
  b.systems = -2;
  EXPECT_THROW(fk::tridiag_batched_host(b, {}), fracmfg::Error);
  // An empty batch is a no-op, even with null pointers.
  fk::TridiagBatch empty;
  EXPECT_NO_THROW(fk::tridiag_batched_host(empty, {}));
  EXPECT_EQ(fk::tridiag_workspace_size(10, 4, false), 40u);
  EXPECT_EQ(fk::tridiag_workspace_size(10, 4, true), 80u);
}

TEST(kernels_tridiag_test, PerSystemBodyWorksOnAStridedView) {
  // The body the CUDA kernel runs, called directly on system 1 of an interleaved batch.
  Batch b = random_batch(3, 50, fk::TridiagLayout::interleaved, false, 7);
  std::vector<double> cp(b.rhs.size());
  const std::int64_t status = fk::detail::tridiag_solve_item(
      true, false, 3, 50, 1, b.sub.data(), b.diag.data(), b.super.data(), b.rhs.data(), cp.data());
  EXPECT_EQ(status, 0);
  EXPECT_LE(rel_error(b.solution(1), b.exact[1]), 1e-12);
}

TEST(kernels_tridiag_test, PackedEliminationEqualsSingleSystemsBitwise) {
  // The host interleaves four systems per work item; each lane must do exactly the
  // single-system arithmetic (the CUDA body), and a failing lane must not disturb the others.
  for (const bool cyclic : {false, true}) {
    Batch packed = random_batch(4, 40, fk::TridiagLayout::strided, cyclic, 123);
    // Lane 2: row 5 has zero sub and diagonal entries, so its pivot is exactly zero.
    packed.diag[2 * 40 + 5] = 0.0;
    packed.sub[2 * 40 + 5] = 0.0;
    Batch single = packed;
    std::vector<double> work_p(2 * 160), work_s(2 * 160);
    std::int64_t status[4];
    if (cyclic) {
      fk::detail::cyclic_thomas_solve_pack<4>(40, 1, 40, packed.sub.data(), packed.diag.data(),
                                              packed.super.data(), packed.rhs.data(), work_p.data(),
                                              work_p.data() + 160, status);
    } else {
      fk::detail::thomas_solve_pack<4>(40, 1, 40, packed.sub.data(), packed.diag.data(),
                                       packed.super.data(), packed.rhs.data(), work_p.data(),
                                       status);
    }
    for (int l = 0; l < 4; ++l) {
      const std::size_t o = static_cast<std::size_t>(l) * 40;
      const std::int64_t s =
          cyclic
              ? fk::detail::cyclic_thomas_solve_one(
                    40, 1, single.sub.data() + o, single.diag.data() + o, single.super.data() + o,
                    single.rhs.data() + o, work_s.data() + o, work_s.data() + 160 + o)
              : fk::detail::thomas_solve_one(40, 1, single.sub.data() + o, single.diag.data() + o,
                                             single.super.data() + o, single.rhs.data() + o,
                                             work_s.data() + o);
      EXPECT_EQ(status[l], l == 2 ? 6 : 0) << "lane " << l;
      EXPECT_EQ(s, status[l]) << "lane " << l;
      if (l != 2) {
        EXPECT_EQ(packed.solution(l), single.solution(l)) << "lane " << l;
      }
    }
  }
}

TEST(kernels_tridiag_test, CudaMethodFollowsTheMeasuredRule) {
  fk::TridiagBatch b;
  b.systems = 100;
  fk::TridiagOptions o;
  EXPECT_EQ(o.cuda_method, fk::TridiagCudaMethod::automatic);
  // automatic: cuSPARSE for long non-cyclic systems, Thomas for short or cyclic ones.
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{128},
                               fk::kTridiagCusparseMinSize - 1}) {
    b.size = n;
    EXPECT_EQ(fk::tridiag_cuda_method_for(b, o), fk::TridiagCudaMethod::thomas) << n;
  }
  for (const std::int64_t n :
       {fk::kTridiagCusparseMinSize, std::int64_t{1024}, std::int64_t{10000}}) {
    b.size = n;
    EXPECT_EQ(fk::tridiag_cuda_method_for(b, o), fk::TridiagCudaMethod::cusparse) << n;
    o.cyclic = true;
    EXPECT_EQ(fk::tridiag_cuda_method_for(b, o), fk::TridiagCudaMethod::thomas) << n;
    o.cyclic = false;
  }
  // An explicit choice is kept, except that cuSPARSE cannot take n < 3.
  o.cuda_method = fk::TridiagCudaMethod::cusparse;
  b.size = 128;
  EXPECT_EQ(fk::tridiag_cuda_method_for(b, o), fk::TridiagCudaMethod::cusparse);
  b.size = 2;
  EXPECT_EQ(fk::tridiag_cuda_method_for(b, o), fk::TridiagCudaMethod::thomas);
  o.cuda_method = fk::TridiagCudaMethod::thomas;
  b.size = 10000;
  EXPECT_EQ(fk::tridiag_cuda_method_for(b, o), fk::TridiagCudaMethod::thomas);
}
