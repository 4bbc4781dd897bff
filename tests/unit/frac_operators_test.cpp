// Fractional operators on uniform grids: exactness on the functions each scheme integrates
// exactly, and observed convergence orders from grid refinement against closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/mittag_leffler.hpp"
#include "fracmfg/frac/operators.hpp"

namespace {

using namespace fracmfg::frac;

std::vector<double> sample(const std::function<double(double)>& f, double h, std::size_t n) {
  std::vector<double> v(n + 1);
  for (std::size_t j = 0; j <= n; ++j) v[j] = f(static_cast<double>(j) * h);
  return v;
}

// Error at T = 1 for N = n0, 2 n0, ..., 2^{levels-1} n0; the observed order is log2 of the
// ratio of the last two errors.
double observed_order(const std::function<double(std::size_t)>& error_at_t1, std::size_t n0,
                      int levels) {
  std::vector<double> errors;
  for (int l = 0; l < levels; ++l) errors.push_back(error_at_t1(n0 << l));
  const double order = std::log2(errors[errors.size() - 2] / errors.back());
  std::printf("    errors:");
  for (double e : errors) std::printf(" %.3e", e);
  std::printf("  -> order %.3f\n", order);
  return order;
}

TEST(CaputoL1, IsExactForLinearFunctions) {
  // L1 interpolates u piecewise linearly, so D^a t = t^{1-a}/Gamma(2-a) is reproduced.
  for (double a : {0.2, 0.5, 0.9}) {
    const std::size_t n = 300;
    const double h = 1.0 / n;
    const auto d = caputo_derivative_l1(sample([](double t) { return 3.0 + t; }, h, n), h, a);
    for (std::size_t j = 0; j <= n; ++j) {
      const double t = j * h;
      const double exact = std::pow(t, 1.0 - a) / std::tgamma(2.0 - a);
      EXPECT_NEAR(d[j], exact, 1e-12 * (1.0 + exact)) << "a = " << a << " j = " << j;
    }
  }
}

TEST(CaputoL1, ConvergesAtOrderTwoMinusAlphaOnTSquared) {
  // D^a t^2 = 2 t^{2-a} / Gamma(3-a).
  for (double a : {0.2, 0.5, 0.8}) {
    const double exact = 2.0 / std::tgamma(3.0 - a);
    const double order = observed_order(
        [&](std::size_t n) {
          const double h = 1.0 / n;
          const auto d = caputo_derivative_l1(sample([](double t) { return t * t; }, h, n), h, a);
          return std::fabs(d[n] - exact);
        },
        64, 6);
    EXPECT_LT(std::fabs(order - (2.0 - a)), 0.15) << "a = " << a;
  }
}

TEST(CaputoL2, IsTheMeanOfTheEndpointDerivativesForQuadratics) {
  // For quadratic u the scheme is exactly (D^a u(t_{n-1}) + D^a u(t_n)) / 2 (the L1 rule for
  // the linear u' is exact, and the difference quotients are exact midpoint values of u').
  for (double a : {1.2, 1.5, 1.8}) {
    const std::size_t n = 200;
    const double h = 1.0 / n;
    // u = 1 + 2 t + t^2: D^a u = 2 t^{2-a} / Gamma(3-a) (constants and t are annihilated for
    // 1 < a < 2), u'(0) = 2.
    const auto d = caputo_derivative_l2(
        sample([](double t) { return 1.0 + 2.0 * t + t * t; }, h, n), h, a, 2.0);
    auto exact = [&](double t) { return 2.0 * std::pow(t, 2.0 - a) / std::tgamma(3.0 - a); };
    EXPECT_EQ(d[0], 0.0);
    for (std::size_t j = 1; j <= n; ++j) {
      const double mean = 0.5 * (exact((j - 1) * h) + exact(j * h));
      EXPECT_NEAR(d[j], mean, 1e-11 * (1.0 + mean)) << "a = " << a << " j = " << j;
    }
  }
}

TEST(CaputoL2, ConvergesAtOrderThreeMinusAlphaAtMidpoints) {
  // Sun & Wu (2006): truncation error O(h^{3-a}) at t_{n-1/2} for u in C^3. u = t^3 has
  // D^a u = 6 t^{3-a} / Gamma(4-a) and u'(0) = 0; value checked at t = 1 - h/2.
  for (double a : {1.3, 1.5, 1.7}) {
    const double order = observed_order(
        [&](std::size_t n) {
          const double h = 1.0 / n;
          const auto d =
              caputo_derivative_l2(sample([](double t) { return t * t * t; }, h, n), h, a, 0.0);
          const double t = 1.0 - 0.5 * h;
          return std::fabs(d[n] - 6.0 * std::pow(t, 3.0 - a) / std::tgamma(4.0 - a));
        },
        64, 6);
    EXPECT_LT(std::fabs(order - (3.0 - a)), 0.15) << "a = " << a;
  }
}

TEST(GrunwaldLetnikov, ConvergesAtOrderOne) {
  // f = t^2 vanishes with its derivative at 0, so its RL and Caputo derivatives coincide:
  // 2 t^{2-a} / Gamma(3-a), for any order a.
  for (double a : {0.3, 0.7, 1.5}) {
    const double exact = 2.0 / std::tgamma(3.0 - a);
    const double order = observed_order(
        [&](std::size_t n) {
          const double h = 1.0 / n;
          const auto d =
              grunwald_letnikov_derivative(sample([](double t) { return t * t; }, h, n), h, a);
          return std::fabs(d[n] - exact);
        },
        128, 6);
    EXPECT_LT(std::fabs(order - 1.0), 0.15) << "a = " << a;
  }
}

TEST(GrunwaldLetnikov, RiemannLiouvilleDerivativeOfAConstantConverges) {
  // D^a 1 = t^{-a} / Gamma(1-a) (RL, 0 < a < 1): the GL form converges at first order
  // even though the derivative is singular at t = 0.
  const double a = 0.4;
  const double exact = 1.0 / std::tgamma(1.0 - a);
  const double order = observed_order(
      [&](std::size_t n) {
        const double h = 1.0 / n;
        const auto d = riemann_liouville_derivative(std::vector<double>(n + 1, 1.0), h, a);
        return std::fabs(d[n] - exact);
      },
      128, 6);
  EXPECT_LT(std::fabs(order - 1.0), 0.15);
}

TEST(RiemannLiouvilleIntegral, TrapezoidIsExactForLinearFunctions) {
  for (double a : {0.3, 0.5, 1.0, 1.7}) {
    const std::size_t n = 500;
    const double h = 1.0 / n;
    // I^a (1 + 2 t) = t^a / Gamma(a+1) + 2 t^{a+1} / Gamma(a+2).
    const auto v = riemann_liouville_integral(sample([](double t) { return 1.0 + 2.0 * t; }, h, n),
                                              h, a, ProductRule::trapezoid);
    for (std::size_t j = 0; j <= n; ++j) {
      const double t = j * h;
      const double exact =
          std::pow(t, a) / std::tgamma(a + 1.0) + 2.0 * std::pow(t, a + 1.0) / std::tgamma(a + 2.0);
      EXPECT_NEAR(v[j], exact, 1e-13 * (1.0 + exact)) << "a = " << a << " j = " << j;
    }
  }
}

TEST(RiemannLiouvilleIntegral, RectangleIsExactForConstants) {
  for (double a : {0.3, 1.0, 2.5}) {
    const std::size_t n = 400;
    const double h = 0.01;
    const auto v =
        riemann_liouville_integral(std::vector<double>(n + 1, 2.0), h, a, ProductRule::rectangle);
    for (std::size_t j = 0; j <= n; ++j) {
      const double exact = 2.0 * std::pow(j * h, a) / std::tgamma(a + 1.0);
      EXPECT_NEAR(v[j], exact, 1e-13 * (1.0 + exact));
    }
  }
}

TEST(RiemannLiouvilleIntegral, TrapezoidConvergesAtOrderTwo) {
  // f = exp(t): I^a f(t) = t^a E_{1,1+a}(t) (term-by-term integration of the series).
  for (double a : {0.3, 0.6, 1.4}) {
    const double exact = mittag_leffler(1.0, 1.0, 1.0 + a);
    const double order = observed_order(
        [&](std::size_t n) {
          const double h = 1.0 / n;
          const auto v = riemann_liouville_integral(
              sample([](double t) { return std::exp(t); }, h, n), h, a, ProductRule::trapezoid);
          return std::fabs(v[n] - exact);
        },
        32, 6);
    EXPECT_LT(std::fabs(order - 2.0), 0.15) << "a = " << a;
  }
}

TEST(RiemannLiouvilleIntegral, RectangleConvergesAtOrderOne) {
  // f = t^3: I^a f(t) = 6 t^{3+a} / Gamma(4+a).
  for (double a : {0.3, 0.8}) {
    const double exact = 6.0 / std::tgamma(4.0 + a);
    const double order = observed_order(
        [&](std::size_t n) {
          const double h = 1.0 / n;
          const auto v = riemann_liouville_integral(
              sample([](double t) { return t * t * t; }, h, n), h, a, ProductRule::rectangle);
          return std::fabs(v[n] - exact);
        },
        64, 6);
    EXPECT_LT(std::fabs(order - 1.0), 0.15) << "a = " << a;
  }
}

TEST(Operators, FftAndDirectGiveTheSameResultAtEveryPoint) {
  const std::size_t n = 3000;
  const double h = 1.0 / n;
  const auto f = sample([](double t) { return std::sin(3.0 * t) + t * t; }, h, n);
  auto compare = [&](const std::vector<double>& x, const std::vector<double>& y) {
    ASSERT_EQ(x.size(), y.size());
    double scale = 0.0;
    for (double v : y) scale = std::max(scale, std::fabs(v));
    for (std::size_t j = 0; j < x.size(); ++j) EXPECT_NEAR(x[j], y[j], 1e-12 * scale) << j;
  };
  const auto fft = ConvolutionMethod::fft;
  const auto direct = ConvolutionMethod::direct;
  compare(caputo_derivative_l1(f, h, 0.6, fft), caputo_derivative_l1(f, h, 0.6, direct));
  compare(caputo_derivative_l2(f, h, 1.6, 3.0, fft), caputo_derivative_l2(f, h, 1.6, 3.0, direct));
  compare(grunwald_letnikov_derivative(f, h, 0.6, fft),
          grunwald_letnikov_derivative(f, h, 0.6, direct));
  for (ProductRule rule : {ProductRule::rectangle, ProductRule::trapezoid}) {
    compare(riemann_liouville_integral(f, h, 0.6, rule, fft),
            riemann_liouville_integral(f, h, 0.6, rule, direct));
  }
}

TEST(Operators, HandleASinglePointAndRejectBadInput) {
  const std::vector<double> one = {2.0};
  EXPECT_EQ(caputo_derivative_l1(one, 0.1, 0.5), std::vector<double>{0.0});
  EXPECT_EQ(riemann_liouville_integral(one, 0.1, 0.5), std::vector<double>{0.0});
  EXPECT_EQ(grunwald_letnikov_derivative(one, 0.1, 0.5)[0], 2.0 * std::pow(0.1, -0.5));
  const std::vector<double> f(10, 1.0);
  EXPECT_THROW(caputo_derivative_l1(f, 0.1, 1.2), fracmfg::Error);
  EXPECT_THROW(caputo_derivative_l2(f, 0.1, 0.5, 0.0), fracmfg::Error);
  EXPECT_THROW(riemann_liouville_integral(f, 0.1, -1.0), fracmfg::Error);
  EXPECT_THROW(grunwald_letnikov_derivative(f, 0.0, 0.5), fracmfg::Error);
  EXPECT_THROW(grunwald_letnikov_derivative(std::vector<double>{}, 0.1, 0.5), fracmfg::Error);
}

}  // namespace
