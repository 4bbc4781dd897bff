#pragma once
// Convolution weights of the fractional operators on a uniform grid t_j = j h.
//
// Every operator in fracmfg::frac is a discrete convolution sum_k w_k g_{n-k} of one of
// these weight sequences with the samples (or their differences); see operators.hpp for
// how each one is applied. All functions are pure (no state, thread-safe) and throw
// fracmfg::Error for an order or a step outside the documented range.
//
// Differences of powers, (k+1)^p - k^p and (k+1)^p - 2 k^p + (k-1)^p, are evaluated
// without cancellation (expm1/log1p and a binomial series in 1/k), so the weights keep
// full relative accuracy for k up to 10^7 and beyond; the textbook formulas lose about
// k^2 * 1e-16 relative for the second differences.

#include <cstddef>
#include <vector>

namespace fracmfg::frac {

/// Grunwald-Letnikov weights w_k = (-1)^k binom(alpha, k), k = 0..n-1, by the recursion
/// w_0 = 1, w_k = (1 - (alpha + 1)/k) w_{k-1} (Podlubny, "Fractional Differential
/// Equations", Academic Press 1999, Ch. 7, the GL approximation and the recurrence for its
/// coefficients). alpha > 0 (any real alpha is
/// accepted; alpha < 0 gives the GL fractional integral weights). The GL derivative is
/// h^{-alpha} sum_{k=0}^{n} w_k f_{n-k}, first-order accurate at fixed t > 0.
std::vector<double> gl_weights(double alpha, std::size_t n);

/// L1 weights b_k = (k+1)^{1-alpha} - k^{1-alpha}, k = 0..n-1, 0 < alpha < 1, unscaled.
/// The L1 Caputo derivative (Lin & Xu, J. Comput. Phys. 225 (2007) 1533-1552, Sec. 2, the
/// time discretisation) is
///   D^alpha u(t_n) ~ l1_scale(alpha, h) * sum_{k=0}^{n-1} b_k (u_{n-k} - u_{n-k-1}),
/// with l1_scale = h^{-alpha} / Gamma(2 - alpha); error O(h^{2-alpha}) for u in C^2.
std::vector<double> l1_weights(double alpha, std::size_t n);
/// h^{-alpha} / Gamma(2 - alpha): the factor in front of the L1 sum.
double l1_scale(double alpha, double h);

/// L2 weights b_k = (k+1)^{2-alpha} - k^{2-alpha}, k = 0..n-1, 1 < alpha < 2, unscaled.
/// The second-difference scheme for the Caputo derivative of order 1 < alpha < 2 (Sun &
/// Wu, Appl. Numer. Math. 56 (2006) 193-209, the time discretisation of their
/// diffusion-wave scheme) replaces u'' on [t_{j-1}, t_j] by the second
/// difference (u_j - 2 u_{j-1} + u_{j-2}) / h^2 with the ghost value u_{-1} = u_0 - h u'(0):
///   l2_scale(alpha, h) * sum_{k=0}^{n-1} b_k (u_{n-k} - 2 u_{n-k-1} + u_{n-k-2}),
/// l2_scale = h^{-alpha} / Gamma(3 - alpha). This sum approximates D^alpha u at the
/// midpoint t_{n-1/2} (equivalently the mean of D^alpha u(t_{n-1}) and D^alpha u(t_n)) with
/// error O(h^{3-alpha}); at t_n itself it is only first-order accurate.
std::vector<double> l2_weights(double alpha, std::size_t n);
/// h^{-alpha} / Gamma(3 - alpha): the factor in front of the L2 sum.
double l2_scale(double alpha, double h);

/// Rectangle (product Euler) weights for the Riemann-Liouville integral, scaled:
///   b_k = h^alpha / Gamma(alpha + 1) * ((k+1)^alpha - k^alpha), k = 0..n-1, alpha > 0,
/// so that I^alpha f(t_n) ~ sum_{j=0}^{n-1} b_{n-1-j} f(t_j) (f frozen at the left end of
/// each cell). These are the predictor weights of Diethelm, Ford & Freed, Nonlinear Dynamics
/// 29 (2002) 3-22, Sec. 2 (the fractional Adams-Bashforth step); error O(h).
std::vector<double> rl_rectangle_weights(double alpha, double h, std::size_t n);

/// Trapezoid (product trapezoidal) weights for the Riemann-Liouville integral, scaled, in
/// convolution form: with c = h^alpha / Gamma(alpha + 2),
///   t_0 = c,  t_k = c * ((k+1)^{alpha+1} - 2 k^{alpha+1} + (k-1)^{alpha+1}),  k = 1..n-1,
/// and I^alpha f(t_n) ~ rl_trapezoid_start_weight(alpha, h, n) f(t_0)
///                      + sum_{k=0}^{n-1} t_k f(t_{n-k}),   n >= 1.
/// These are the corrector weights a_{j,n} of Diethelm, Ford & Freed (2002), Sec. 2, with
/// t_k = c a_{n-k,n} for 1 <= n-k <= n (k = 0 is a_{n,n} = 1); the piecewise linear
/// interpolant of f is integrated exactly, error O(h^2) for f in C^2.
std::vector<double> rl_trapezoid_weights(double alpha, double h, std::size_t n);
/// The weight of f(t_0) in the trapezoid rule at t_n, n >= 1:
///   h^alpha / Gamma(alpha + 2) * ((n-1)^{alpha+1} - (n-1-alpha) n^alpha)   (= c a_{0,n}).
/// n = 0 returns 0 (I^alpha f(0) = 0).
double rl_trapezoid_start_weight(double alpha, double h, std::size_t n);

}  // namespace fracmfg::frac
