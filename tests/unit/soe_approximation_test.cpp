// Sum-of-exponentials approximation of t^-beta (frac/soe.hpp) and the Gauss rules it is
// built from (frac/soe_quadrature.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/soe.hpp"
#include "fracmfg/frac/soe_quadrature.hpp"

namespace {

using namespace fracmfg::frac;

TEST(GaussJacobi, IntegratesPolynomialsOfDegreeTwoNMinusOneExactly) {
  // int_{-1}^{1} (1-x)^a (1+x)^(b+k) dx = 2^(a+b+k+1) B(a+1, b+k+1).
  for (double a : {0.0, 0.3}) {
    for (double b : {-0.5, -0.9, 0.0, 0.7}) {
      for (int n : {1, 3, 8, 20}) {
        const GaussRule r = gauss_jacobi(n, a, b);
        ASSERT_EQ(r.nodes.size(), static_cast<std::size_t>(n));
        for (int k = 0; k <= 2 * n - 1; ++k) {
          double q = 0.0;
          for (int i = 0; i < n; ++i) q += r.weights[i] * std::pow(1.0 + r.nodes[i], k);
          const double exact = std::exp((a + b + k + 1) * std::log(2.0) + std::lgamma(a + 1) +
                                        std::lgamma(b + k + 1) - std::lgamma(a + b + k + 2));
          EXPECT_NEAR(q, exact, 1e-13 * exact)
              << "a " << a << " b " << b << " n " << n << " k " << k;
        }
      }
    }
  }
}

TEST(GaussLegendre, NodesAreSymmetricAndWeightsSumToTwo) {
  const GaussRule r = gauss_legendre(11);
  double sum = 0.0;
  for (int i = 0; i < 11; ++i) {
    sum += r.weights[i];
    EXPECT_NEAR(r.nodes[i], -r.nodes[10 - i], 1e-15);
    EXPECT_GT(r.weights[i], 0.0);
  }
  EXPECT_NEAR(sum, 2.0, 1e-14);
  EXPECT_NEAR(r.nodes[5], 0.0, 1e-15);
}

TEST(SoeApproximation, RelativeErrorIsBelowToleranceOverTheWholeInterval) {
  // Checked at 1000 points per decade, five times the density the construction verified.
  std::printf("   beta      delta    horizon  tolerance  terms  max rel. error\n");
  for (double beta : {0.1, 0.5, 0.9, 1.5}) {
    for (double delta_ratio : {1e-2, 1e-5, 1e-8}) {
      for (double tol : {1e-6, 1e-10, 1e-13}) {
        const double horizon = 2.5;
        const SoeApproximation soe = soe_approximation(beta, delta_ratio * horizon, horizon, tol);
        const double err = soe_relative_error(soe, 1000);
        std::printf("%7.2f %10.1e %10.2f %10.0e %6zu %15.2e\n", beta, delta_ratio * horizon,
                    horizon, tol, soe.size(), err);
        EXPECT_LE(err, tol) << "beta " << beta << " delta/T " << delta_ratio;
        for (std::size_t j = 0; j < soe.size(); ++j) {
          EXPECT_GT(soe.nodes[j], 0.0);
          EXPECT_GT(soe.weights[j], 0.0);
        }
      }
    }
  }
}

TEST(SoeApproximation, TermCountGrowsLogarithmicallyWithTheIntervalRatio) {
  // Each factor 100 in horizon / delta adds about the same number of terms.
  std::size_t previous = 0;
  std::size_t first_increase = 0;
  for (int e = 2; e <= 10; e += 2) {
    const std::size_t n = soe_approximation(0.5, std::pow(10.0, -e), 1.0, 1e-10).size();
    if (previous != 0) {
      const std::size_t inc = n - previous;
      if (first_increase == 0) first_increase = inc;
      EXPECT_GT(n, previous);
      EXPECT_LE(inc, 2 * first_increase + 10) << "delta 1e-" << e;
    }
    previous = n;
  }
  EXPECT_LE(previous, 400u);
}

TEST(SoeApproximation, SinglePointIntervalAndArgumentChecks) {
  const SoeApproximation soe = soe_approximation(0.7, 0.3, 0.3, 1e-9);
  EXPECT_NEAR(soe(0.3), std::pow(0.3, -0.7), 1e-9 * std::pow(0.3, -0.7));
  EXPECT_THROW(soe_approximation(0.0, 0.1, 1.0, 1e-8), fracmfg::Error);
  EXPECT_THROW(soe_approximation(0.5, 0.0, 1.0, 1e-8), fracmfg::Error);
  EXPECT_THROW(soe_approximation(0.5, 2.0, 1.0, 1e-8), fracmfg::Error);
  EXPECT_THROW(soe_approximation(0.5, 0.1, 1.0, 0.5), fracmfg::Error);
  EXPECT_THROW(soe_approximation(0.5, 0.1, 1.0, 1e-16), fracmfg::Error);
}

}  // namespace
