// E_{alpha,beta}(z) against closed forms, long-double power series, the asymptotic
// expansion and erfcx; erfcx against long double and its asymptotic series.
//
// Accuracy criterion throughout: |E - exact| <= 1e-13 (1 + |exact|).
#include "fracmfg/frac/mittag_leffler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/erfcx.hpp"

namespace {

using fracmfg::frac::erfcx;
using fracmfg::frac::mittag_leffler;
using fracmfg::frac::mittag_leffler_derivative;
using cplx = std::complex<double>;
using lcplx = std::complex<long double>;

constexpr double kTol = 1e-13;
constexpr long double kPiL = 3.141592653589793238462643383279502884L;

double scaled_error(cplx got, cplx exact) {
  return std::abs(got - exact) / (1.0 + std::abs(exact));
}

long double rgamma_l(long double x) {
  if (x <= 0.0L && x == std::floor(x)) return 0.0L;
  return 1.0L / std::tgamma(x);
}

// sum_k z^k / Gamma(a k + b) in long double. Returns false unless it converged and the sum of
// |terms| stays below 1e3 (1 + |sum|), so that the long-double round-off (1e-19 relative to
// the largest term) is far below the test tolerance.
bool series_reference(lcplx z, long double a, long double b, cplx& out) {
  lcplx sum = 0.0L;
  lcplx power = 1.0L;
  long double magnitude = 0.0L;
  for (int k = 0; k < 20000; ++k) {
    const lcplx term = power * rgamma_l(a * k + b);
    sum += term;
    magnitude += std::abs(term);
    power *= z;
    if (a * k + b > 2.0L &&
        std::abs(power) * std::fabs(rgamma_l(a * k + a + b)) < 1e-30L * (1.0L + std::abs(sum))) {
      out = cplx(static_cast<double>(sum.real()), static_cast<double>(sum.imag()));
      return magnitude < 1e3L * (1.0L + std::abs(sum));
    }
  }
  return false;
}

// Asymptotic expansion for large |z| (long double), 0 < a < 2:
//   E_{a,b}(z) = (1/a) sum_{poles} s^{1-b} exp(s) - sum_{k=1}^{K} z^{-k} / Gamma(b - a k) + ...
// over the poles s = z^{1/a} e^{2 pi i k/a} with |arg s| < pi. The algebraic series is
// summed while its terms (bounded with the reflection formula) decrease; returns false if
// they stop decreasing before reaching 1e-22.
bool asymptotic_reference(lcplx z, long double a, long double b, cplx& out) {
  const long double theta = std::arg(z);
  const long double radius = std::pow(std::abs(z), 1.0L / a);
  lcplx poles = 0.0L;
  const long k_min = static_cast<long>(std::ceil(-a / 2 - theta / (2 * kPiL)));
  const long k_max = static_cast<long>(std::floor(a / 2 - theta / (2 * kPiL)));
  for (long k = k_min; k <= k_max; ++k) {
    const long double angle = (theta + 2 * kPiL * k) / a;
    if (std::fabs(angle) >= kPiL) continue;
    const lcplx s = std::polar(radius, angle);
    poles += std::exp((1.0L - b) * std::log(s) + s) / a;
  }
  lcplx algebraic = 0.0L;
  lcplx inverse_power = 1.0L;
  long double previous = std::numeric_limits<long double>::max();
  for (int k = 1; k < 400; ++k) {
    inverse_power /= z;
    algebraic -= inverse_power * rgamma_l(b - a * k);
    const long double x = b - a * k;
    // |1/Gamma(x)| <= Gamma(1 - x)/pi for x < 0 (reflection), 1/Gamma(x) for x > 1.
    const long double bound =
        std::abs(inverse_power) *
        (x > 1.0L ? 1.0L / std::tgamma(x) : std::tgamma(1.0L - x + 1e-3L) / kPiL + 1.2L);
    if (bound < 1e-22L * (1.0L + std::abs(poles + algebraic))) {
      const lcplx e = poles + algebraic;
      out = cplx(static_cast<double>(e.real()), static_cast<double>(e.imag()));
      return true;
    }
    if (bound > previous && k > 3) return false;
    previous = bound;
  }
  return false;
}

TEST(MittagLeffler, OrderOneIsTheExponential) {
  for (double x : {1e-12, 0.01, 0.5, 1.0, 5.0, 10.0, 30.0, 50.0, 100.0, 300.0, 700.0}) {
    for (double z : {x, -x}) {
      const double exact = std::exp(z);
      EXPECT_LE(std::fabs(mittag_leffler(z, 1.0) - exact), kTol * (1.0 + exact)) << "z = " << z;
    }
  }
}

TEST(MittagLeffler, OrderTwoOnTheNegativeAxisIsCosine) {
  for (double x : {0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0}) {
    const double z = -x * x;
    const double root = std::sqrt(-z);  // exact for the rounded z
    EXPECT_LE(std::fabs(mittag_leffler(z, 2.0) - std::cos(root)), kTol * 2.0) << "x = " << x;
    const double sinc = std::sin(root) / root;
    EXPECT_LE(std::fabs(mittag_leffler(z, 2.0, 2.0) - sinc), kTol * (1.0 + std::fabs(sinc)))
        << "x = " << x;
  }
}

TEST(MittagLeffler, OrderOneHalfOnTheNegativeAxisIsErfcx) {
  for (double x : {0.01, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 50.0, 100.0, 1e3, 1e4, 1e6}) {
    const double exact = erfcx(x);
    EXPECT_LE(std::fabs(mittag_leffler(-x, 0.5) - exact), kTol * (1.0 + exact)) << "x = " << x;
  }
  // On the positive axis E_{1/2}(x) = erfcx(-x) = 2 exp(x^2) - erfcx(x) grows like exp(x^2).
  for (double x : {0.01, 0.5, 1.0, 3.0, 5.0, 10.0, 20.0}) {
    const double exact = erfcx(-x);
    EXPECT_LE(std::fabs(mittag_leffler(x, 0.5) - exact), kTol * (1.0 + exact)) << "x = " << x;
  }
}

TEST(MittagLeffler, BetaTwoIsTheDividedExponential) {
  for (double x : {1e-8, 0.01, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 50.0, 100.0, 700.0}) {
    for (double z : {x, -x}) {
      const double exact = std::expm1(z) / z;
      EXPECT_LE(std::fabs(mittag_leffler(z, 1.0, 2.0) - exact), kTol * (1.0 + std::fabs(exact)))
          << "z = " << z;
    }
  }
}

TEST(MittagLeffler, ComplexArgumentsMatchClosedForms) {
  for (double x : {0.5, 1.0, 5.0, 30.0, 100.0}) {
    const cplx exact = std::exp(cplx(0.0, x));
    EXPECT_LE(scaled_error(mittag_leffler(cplx(0.0, x), 1.0), exact), kTol) << "x = " << x;
    EXPECT_LE(scaled_error(mittag_leffler(cplx(0.0, -x), 1.0), std::conj(exact)), kTol);
  }
  const std::vector<cplx> points = {{0.3, 0.2},    {-0.7, 0.4},  {2.0, -3.0}, {20.0, 20.0},
                                    {-30.0, 10.0}, {-5.0, 40.0}, {3.0, -7.0}, {-25.0, -25.0},
                                    {0.0, 35.0},   {40.0, -5.0}, {-60.0, 1.0}};
  for (const cplx& z : points) {
    EXPECT_LE(scaled_error(mittag_leffler(z, 1.0), std::exp(z)), kTol) << z;
    const cplx root = std::sqrt(z);
    EXPECT_LE(scaled_error(mittag_leffler(z, 2.0), std::cosh(root)), kTol) << z;
    EXPECT_LE(scaled_error(mittag_leffler(z, 2.0, 2.0), std::sinh(root) / root), kTol) << z;
    EXPECT_LE(scaled_error(mittag_leffler(z, 1.0, 2.0), (std::exp(z) - 1.0) / z), kTol) << z;
  }
}

TEST(MittagLeffler, NonIntegerOrdersMatchLongDoubleSeries) {
  int checked = 0;
  for (double a : {0.3, 0.5, 0.75, 0.9, 1.25, 1.5, 1.8}) {
    for (double b : {1.0, a, 0.5, 2.0, 1.0 + a}) {
      for (double r : {0.05, 0.3, 0.8, 1.0, 1.5, 2.5, 4.0, 7.0, 12.0}) {
        for (double phi : {0.0, 0.7, 1.6, 2.4, 3.0, M_PI}) {
          const cplx z = std::polar(r, phi);
          cplx exact;
          if (!series_reference(lcplx(z.real(), z.imag()), a, b, exact)) continue;
          ++checked;
          EXPECT_LE(scaled_error(mittag_leffler(z, a, b), exact), kTol)
              << "a = " << a << " b = " << b << " z = " << z;
        }
      }
    }
  }
  EXPECT_GT(checked, 700);  // the reference is usable on most of the grid
}

TEST(MittagLeffler, LargeArgumentsMatchAsymptoticExpansion) {
  int checked = 0;
  for (double a : {0.3, 0.5, 0.75, 0.9, 1.25, 1.5, 1.8}) {
    for (double b : {1.0, a, 0.5, 2.0}) {
      for (double r : {30.0, 50.0, 100.0, 300.0, 1e3, 1e4}) {
        for (double phi : {0.0, 0.5, 1.0, 1.6, 2.2, 2.8, M_PI}) {
          const cplx z = std::polar(r, phi);
          cplx exact;
          if (!asymptotic_reference(lcplx(z.real(), z.imag()), a, b, exact)) continue;
          if (!std::isfinite(std::abs(exact))) continue;  // beyond the double range
          ++checked;
          EXPECT_LE(scaled_error(mittag_leffler(z, a, b), exact), kTol)
              << "a = " << a << " b = " << b << " z = " << z;
        }
      }
    }
  }
  EXPECT_GT(checked, 700);  // the rest overflow or are too close to |z| ~ 1 for the expansion
}

TEST(MittagLeffler, DoesNotOverflowForLargeNegativeArguments) {
  for (double a : {0.1, 0.3, 0.6, 0.9, 1.2, 1.5, 1.9}) {
    for (double x : {1e2, 1e4, 1e8, 1e12, 1e15}) {
      const double e = mittag_leffler(-x, a);
      ASSERT_TRUE(std::isfinite(e)) << "a = " << a << " x = " << x;
      // Leading term of the expansion: E_a(-x) ~ x^{-1} / Gamma(1 - a).
      const double leading = 1.0 / (x * std::tgamma(1.0 - a));
      if (x >= 1e8) {
        EXPECT_NEAR(e, leading, 1e-6 * std::fabs(leading) + 1e-300) << "a = " << a;
      }
    }
  }
}

TEST(MittagLeffler, ZeroArgumentIsReciprocalGamma) {
  EXPECT_DOUBLE_EQ(mittag_leffler(0.0, 0.7, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(mittag_leffler(0.0, 0.7, 2.5), 1.0 / std::tgamma(2.5));
  EXPECT_EQ(mittag_leffler(0.0, 0.7, 0.0), 0.0);
  EXPECT_EQ(mittag_leffler(0.0, 0.7, -1.0), 0.0);
}

TEST(MittagLeffler, DerivativeMatchesClosedFormsAndSeries) {
  for (double x : {0.01, 0.3, 0.6, 1.0, 5.0, 20.0, 50.0}) {
    for (double z : {x, -x}) {
      const double exact = std::exp(z);
      EXPECT_LE(std::fabs(mittag_leffler_derivative(z, 1.0) - exact), kTol * (1.0 + exact));
    }
    // d/dz cos(sqrt(-z)) = sin(sqrt(-z)) / (2 sqrt(-z)).
    const double z = -x * x;
    const double root = std::sqrt(-z);
    EXPECT_LE(std::fabs(mittag_leffler_derivative(z, 2.0) - std::sin(root) / (2.0 * root)),
              kTol * 2.0)
        << "x = " << x;
  }
  // Against the differentiated series sum k z^{k-1} / Gamma(a k + b) = E^{(2)}: use
  // d/dz E_{a,b}(z) = sum_{k>=0} (k+1) z^k / Gamma(a k + a + b), summed in long double.
  int checked = 0;
  for (double a : {0.5, 0.8, 1.5}) {
    for (double b : {1.0, a}) {
      for (double r : {0.1, 0.4, 0.7, 1.5, 3.0}) {
        for (double phi : {0.0, 1.2, M_PI}) {
          const cplx z = std::polar(r, phi);
          lcplx sum = 0.0L;
          lcplx power = 1.0L;
          long double magnitude = 0.0L;
          for (int k = 0; k < 3000; ++k) {
            const lcplx term = static_cast<long double>(k + 1) * power * rgamma_l(a * k + a + b);
            sum += term;
            magnitude += std::abs(term);
            power *= lcplx(z.real(), z.imag());
            if (k > 10 && std::abs(term) < 1e-30L * std::abs(sum)) break;
          }
          if (magnitude > 1e3L * (1.0L + std::abs(sum))) continue;
          ++checked;
          const cplx exact(static_cast<double>(sum.real()), static_cast<double>(sum.imag()));
          EXPECT_LE(scaled_error(mittag_leffler_derivative(z, a, b), exact), 1e-12)
              << "a = " << a << " b = " << b << " z = " << z;
        }
      }
    }
  }
  EXPECT_GT(checked, 60);
}

TEST(MittagLeffler, RejectsInvalidParameters) {
  EXPECT_THROW(mittag_leffler(1.0, 0.0), fracmfg::Error);
  EXPECT_THROW(mittag_leffler(1.0, -0.5), fracmfg::Error);
  EXPECT_THROW(mittag_leffler(1.0, 0.5, std::nan("")), fracmfg::Error);
  EXPECT_THROW(mittag_leffler_derivative(1.0, 0.0), fracmfg::Error);
}

TEST(Erfcx, MatchesLongDoubleDefinition) {
  // expl(x^2) erfcl(x) is representable in long double up to x ~ 106.
  for (double x : {-26.0, -10.0, -3.0, -1.0, -0.3, 0.0,  1e-8, 0.1,  0.5,  0.9,  1.5,  2.5,
                   3.9,   4.0,   4.1,  6.0,  10.0, 15.0, 26.0, 27.0, 30.0, 50.0, 75.0, 100.0}) {
    const long double xl = x;
    const double exact = static_cast<double>(std::exp(xl * xl) * std::erfc(xl));
    EXPECT_LE(std::fabs(erfcx(x) - exact), 1e-14 * exact) << "x = " << x;
  }
}

TEST(Erfcx, LargeArgumentsMatchAsymptoticSeries) {
  // erfcx(x) = 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2 x^2)^k, truncation error below the
  // first omitted term (2e-24 relative at x = 30 after 10 terms).
  for (double x : {30.0, 100.0, 1e3, 1e5, 1e10, 1e100}) {
    long double term = 1.0L;
    long double sum = 0.0L;
    for (int k = 0; k < 10; ++k) {
      sum += term;
      term *= -(2.0L * k + 1.0L) / (2.0L * static_cast<long double>(x) * x);
    }
    const double exact = static_cast<double>(sum / (static_cast<long double>(x) * std::sqrt(kPiL)));
    EXPECT_LE(std::fabs(erfcx(x) - exact), 1e-14 * exact) << "x = " << x;
  }
  EXPECT_EQ(erfcx(std::numeric_limits<double>::infinity()), 0.0);
  EXPECT_TRUE(std::isinf(erfcx(-30.0)));
}

}  // namespace
