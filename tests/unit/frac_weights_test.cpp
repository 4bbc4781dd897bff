// Weights of the fractional operators: definitions, identities that hold exactly in exact
// arithmetic (telescoping sums), and accuracy of the cancellation-free evaluation at large k.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/weights.hpp"

namespace {

using namespace fracmfg::frac;

TEST(GlWeights, AreSignedBinomialCoefficients) {
  for (double a : {0.3, 0.5, 1.5, 2.0}) {
    const auto w = gl_weights(a, 30);
    long double binom = 1.0L;  // binom(a, k) by its product formula
    for (int k = 0; k < 30; ++k) {
      const long double expected = (k % 2 == 0 ? 1.0L : -1.0L) * binom;
      EXPECT_NEAR(w[k], static_cast<double>(expected), 1e-15 * (1.0 + std::fabs(w[k])));
      binom *= (a - k) / (k + 1.0L);
    }
  }
  const auto w2 = gl_weights(2.0, 5);  // the second difference 1, -2, 1, 0, 0
  EXPECT_EQ(w2, (std::vector<double>{1.0, -2.0, 1.0, 0.0, 0.0}));
}

TEST(GlWeights, PartialSumsMatchTheClosedForm) {
  // sum_{k=0}^{n-1} (-1)^k binom(a, k) = (-1)^{n-1} binom(a-1, n-1).
  const double a = 0.6;
  const std::size_t n = 100000;
  const auto w = gl_weights(a, n);
  long double sum = 0.0L;
  long double magnitude = 0.0L;
  for (double v : w) {
    sum += v;
    magnitude += std::fabs(v);
  }
  // The sum (4.5e-4) cancels terms whose magnitudes add up to ~2: the weights' round-off is
  // judged against that.
  const double closed = std::exp(std::lgamma(n - a) - std::lgamma(1.0 - a) - std::lgamma(n));
  EXPECT_NEAR(static_cast<double>(sum), closed, 1e-13 * static_cast<double>(magnitude));
}

TEST(L1Weights, MatchTheDefinitionAndTelescope) {
  for (double a : {0.1, 0.5, 0.9}) {
    const std::size_t n = 1000000;
    const auto b = l1_weights(a, n);
    for (std::size_t k : {0, 1, 2, 10, 100}) {
      const long double kl = k;
      const long double expected = std::pow(kl + 1, 1.0L - a) - std::pow(kl, 1.0L - a);
      EXPECT_NEAR(b[k], static_cast<double>(expected), 1e-15 * b[k]);
    }
    long double sum = 0.0L;
    for (double v : b) sum += v;
    const double total = std::pow(static_cast<double>(n), 1.0 - a);  // telescoping
    EXPECT_NEAR(static_cast<double>(sum), total, 1e-13 * total);
  }
  EXPECT_NEAR(l1_scale(0.5, 0.01), std::pow(0.01, -0.5) / std::tgamma(1.5), 1e-14);
}

TEST(L2Weights, MatchTheDefinition) {
  const double a = 1.4;
  const auto b = l2_weights(a, 50);
  for (std::size_t k = 0; k < 50; ++k) {
    const long double kl = k;
    const long double expected = std::pow(kl + 1, 2.0L - a) - std::pow(kl, 2.0L - a);
    EXPECT_NEAR(b[k], static_cast<double>(expected), 1e-15 * b[k]);
  }
  EXPECT_NEAR(l2_scale(a, 0.1), std::pow(0.1, -a) / std::tgamma(3.0 - a), 1e-13);
}

TEST(RectangleWeights, SumToTheIntegralOfOne) {
  // sum_{k<n} b_k = h^a n^a / Gamma(a+1) = I^a 1 at t = n h.
  for (double a : {0.3, 1.0, 1.7, 3.2}) {
    const std::size_t n = 1000000;
    const double h = 1e-3;
    const auto b = rl_rectangle_weights(a, h, n);
    long double sum = 0.0L;
    for (double v : b) sum += v;
    const double exact = std::pow(n * h, a) / std::tgamma(a + 1.0);
    EXPECT_NEAR(static_cast<double>(sum), exact, 1e-13 * exact) << "a = " << a;
  }
}

TEST(TrapezoidWeights, IntegrateConstantsExactlyAtLargeN) {
  // start_n + sum_{k<n} t_k = h^a n^a / Gamma(a+1): the second differences telescope. With
  // the textbook formula the second differences lose ~k^2 u relative at k ~ 10^6.
  for (double a : {0.05, 0.3, 0.5, 1.0, 1.5, 2.5}) {
    const std::size_t n = 1000000;
    const double h = 1.0 / n;
    const auto t = rl_trapezoid_weights(a, h, n);
    long double sum = rl_trapezoid_start_weight(a, h, n);
    for (double v : t) sum += v;
    const double exact = 1.0 / std::tgamma(a + 1.0);
    EXPECT_NEAR(static_cast<double>(sum), exact, 1e-12 * exact) << "a = " << a;
  }
}

TEST(TrapezoidWeights, MatchTheDiethelmFordFreedWeights) {
  // a_{0,n} = (n-1)^{a+1} - (n-1-a) n^a, a_{j,n} = (n-j+1)^{a+1} - 2 (n-j)^{a+1} + (n-j-1)^{a+1}.
  const double a = 0.7;
  const double h = 0.5;
  const std::size_t n = 40;
  const double c = std::pow(h, a) / std::tgamma(a + 2.0);
  const auto t = rl_trapezoid_weights(a, h, n);
  EXPECT_NEAR(t[0], c, 1e-15);
  for (std::size_t k = 1; k < n; ++k) {
    const long double kl = k;
    const long double p = a + 1.0L;
    const long double dff = std::pow(kl + 1, p) - 2 * std::pow(kl, p) + std::pow(kl - 1, p);
    EXPECT_NEAR(t[k], static_cast<double>(c * dff), 1e-13 * t[k]) << k;
  }
  for (std::size_t m = 1; m < n; ++m) {
    const long double ml = m;
    const long double a0 = std::pow(ml - 1, a + 1.0L) - (ml - 1 - a) * std::pow(ml, a + 0.0L);
    EXPECT_NEAR(rl_trapezoid_start_weight(a, h, m), static_cast<double>(c * a0),
                1e-13 * std::fabs(c * a0))
        << m;
  }
  EXPECT_EQ(rl_trapezoid_start_weight(a, h, 0), 0.0);
}

TEST(Weights, RejectOrdersOutOfRange) {
  EXPECT_THROW(l1_weights(1.0, 5), fracmfg::Error);
  EXPECT_THROW(l1_weights(0.0, 5), fracmfg::Error);
  EXPECT_THROW(l2_weights(1.0, 5), fracmfg::Error);
  EXPECT_THROW(l2_weights(2.0, 5), fracmfg::Error);
  EXPECT_THROW(rl_rectangle_weights(0.0, 0.1, 5), fracmfg::Error);
  EXPECT_THROW(rl_trapezoid_weights(0.5, -0.1, 5), fracmfg::Error);
  EXPECT_THROW(gl_weights(std::nan(""), 5), fracmfg::Error);
}

}  // namespace
