#include "fracmfg/frac/erfcx.hpp"

#include <cmath>
#include <limits>

namespace fracmfg::frac {

namespace {

// exp(x^2) without the error of rounding x^2: x^2 = hi + lo exactly (fma), and
// exp(hi + lo) = exp(hi) (1 + lo) to O(lo^2). Rounding x^2 alone would cost a relative
// error of x^2 * 2^-53 (7e-14 at x = 26).
double exp_of_square(double x) {
  const double hi = x * x;
  const double lo = std::fma(x, x, -hi);
  return std::exp(hi) * (1.0 + lo);
}

// Laplace's continued fraction erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x +
// (3/2)/(x + ...)))), evaluated backwards; 60 terms reach full precision for x >= 4.
double erfcx_continued_fraction(double x) {
  constexpr int kTerms = 60;
  double t = x;
  for (int k = kTerms; k >= 1; --k) t = x + 0.5 * k / t;
  constexpr double kInvSqrtPi = 0.56418958354775628695;
  return kInvSqrtPi / t;
}

}  // namespace

double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x >= 4.0) {
    if (std::isinf(x)) return 0.0;
    return erfcx_continued_fraction(x);
  }
  if (x >= 0.0) return exp_of_square(x) * std::erfc(x);
  // erfc(-y) = 2 - erfc(y): erfcx(x) = 2 exp(x^2) - erfcx(-x); no cancellation for x < 0.
  if (x < -26.7) return std::numeric_limits<double>::infinity();
  return 2.0 * exp_of_square(x) - erfcx(-x);
}

}  // namespace fracmfg::frac
