#pragma once
// The two-parameter Mittag-Leffler function and its derivative.
//
//   E_{alpha,beta}(z) = sum_{k>=0} z^k / Gamma(alpha k + beta),   alpha > 0, beta real.
//
// It solves the linear fractional ODEs: y(t) = E_alpha(lambda t^alpha) solves the Caputo
// problem D^alpha y = lambda y, y(0) = 1 (0 < alpha < 1), which makes it the reference
// solution of the fractional ODE tests.
//
// Method: inversion of the Laplace transform
//   t^{beta-1} E_{alpha,beta}(lambda t^alpha) = L^{-1}[ s^{alpha-beta} / (s^alpha - lambda) ]
// at t = 1 on an optimal parabolic contour, with the residues of the poles
// s_k = |z|^{1/alpha} exp(i (arg z + 2 pi k) / alpha) that lie to the right of the contour
// added explicitly (R. Garrappa, "Numerical evaluation of two and three parameter
// Mittag-Leffler functions", SIAM J. Numer. Anal. 53(3) (2015) 1350-1369: the OPC algorithm
// of the author's ml.m, with its choice of contour parameters per region between
// singularities). Additions where that algorithm alone loses digits:
//   - |z| <= 1: the Taylor series when it does not cancel (ml.m loses up to 1e-13 there);
//   - the contour sum is continued until its terms are negligible (the transform grows like
//     |s|^{-beta} along the contour; for beta < 0 the fixed truncation lost up to 1e-9);
//   - beta > 2 (|z| > 1) and beta < -1 (|z| <= 4) are brought into [-1, 2] with
//     E_{a,b}(z) = 1/Gamma(b) + z E_{a,a+b}(z) (large beta cost up to 1e-6 for small alpha);
//   - alpha > 2: E_{a,b}(z) = (1/m) sum_j E_{a/m,b}(z^{1/m} e^{2 pi i j/m}), a/m <= 2;
//   - the residues (1/alpha) s^{1-beta} e^s are formed in long double, since e^s needs s to
//     |s| u absolute accuracy.
// Measured against long-double series and asymptotic expansions over 0.05 <= alpha <= 5,
// -4 <= beta <= 10, |z| <= 10^4 (all arguments): |E - E_computed| <= 2e-14 (1 + |E|);
// tests/unit/mittag_leffler_test.cpp asserts 1e-13 on closed forms, series and asymptotics.
//
// Large |z|: values that exceed the double range are +-inf (e.g. E_alpha(x) for x^{1/alpha}
// > 709); E_{alpha,beta}(-x), x -> +inf, does not overflow for 0 < alpha <= 2 (it decays
// like x^{-1}/Gamma(beta - alpha)). For alpha > 2 it grows and may overflow.
// Pure functions, thread-safe, not collective. Invalid alpha (<= 0, not finite) or beta (not
// finite) throws fracmfg::Error.

#include <complex>

namespace fracmfg::frac {

/// E_{alpha,beta}(z) for complex z.
std::complex<double> mittag_leffler(std::complex<double> z, double alpha, double beta = 1.0);
/// E_{alpha,beta}(x) for real x (the imaginary round-off of the complex evaluation dropped).
double mittag_leffler(double x, double alpha, double beta = 1.0);

/// d/dz E_{alpha,beta}(z) = sum_{k>=1} k z^{k-1} / Gamma(alpha k + beta). For |z| > 1/2 it is
/// (E_{alpha,beta-1}(z) - (beta - 1) E_{alpha,beta}(z)) / (alpha z), otherwise the power
/// series. Absolute error about 1e-15 (1 + |E_{alpha,beta-1}| + |beta - 1||E_{alpha,beta}|) /
/// (alpha |z|) for |z| > 1/2.
std::complex<double> mittag_leffler_derivative(std::complex<double> z, double alpha,
                                               double beta = 1.0);
double mittag_leffler_derivative(double x, double alpha, double beta = 1.0);

}  // namespace fracmfg::frac
