#pragma once
// Scaled complementary error function.

namespace fracmfg::frac {

/// erfcx(x) = exp(x^2) erfc(x), to a few ulps for every real x. std::erfc underflows for
/// x > 26.5 while erfcx(x) ~ 1/(x sqrt(pi)) stays representable; erfcx(x) overflows to +inf
/// only for x < -26.6 (where it is about 2 exp(x^2)). Note E_{1/2}(-x) = erfcx(x).
double erfcx(double x);

}  // namespace fracmfg::frac
