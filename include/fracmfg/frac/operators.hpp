#pragma once
// Fractional integrals and derivatives of sampled functions on a uniform grid.
//
// Every function takes the samples f_j = f(t_j), t_j = j h, j = 0..N (a vector of N + 1
// values, N >= 0) and returns N + 1 values, one per grid point, computed as a discrete
// convolution (convolution.hpp) with the weights of weights.hpp. `method` selects the FFT
// or the direct sum; `automatic` picks by size. Orders out of range, h <= 0 or an empty
// input throw fracmfg::Error. Pure functions, node-local, not collective.
//
// Accuracy at a fixed time t > 0, for smooth f (the observed orders are checked in
// tests/unit/frac_operators_test.cpp):
//   riemann_liouville_integral  rectangle O(h), trapezoid O(h^2)
//   caputo_derivative_l1        O(h^{2-alpha}),          0 < alpha < 1
//   caputo_derivative_l2        O(h^{3-alpha}) at t_{n-1/2}, 1 < alpha < 2
//   grunwald_letnikov_derivative O(h)

#include <vector>

#include "fracmfg/frac/convolution.hpp"

namespace fracmfg::frac {

/// Product-integration rule for the Riemann-Liouville integral.
enum class ProductRule {
  rectangle,  ///< f frozen at the left end of each cell (fractional Euler / ABM predictor)
  trapezoid,  ///< piecewise linear f (Diethelm-Ford-Freed corrector weights)
};

/// Riemann-Liouville integral I^alpha f(t_n) = 1/Gamma(alpha) int_0^{t_n} (t_n - s)^{alpha-1}
/// f(s) ds, alpha > 0, by product integration (weights.hpp: rl_rectangle_weights,
/// rl_trapezoid_weights). Value 0 at t_0.
std::vector<double> riemann_liouville_integral(
    const std::vector<double>& f, double h, double alpha, ProductRule rule = ProductRule::trapezoid,
    ConvolutionMethod method = ConvolutionMethod::automatic);

/// Caputo derivative D^alpha u(t_n) = 1/Gamma(1-alpha) int_0^{t_n} (t_n - s)^{-alpha} u'(s) ds,
/// 0 < alpha < 1, by the L1 scheme (Lin & Xu 2007; weights.hpp: l1_weights):
///   h^{-alpha}/Gamma(2-alpha) sum_{k=0}^{n-1} b_k (u_{n-k} - u_{n-k-1}).
/// Value 0 at t_0. Error O(h^{2-alpha}) for u in C^2[0, T].
std::vector<double> caputo_derivative_l1(const std::vector<double>& u, double h, double alpha,
                                         ConvolutionMethod method = ConvolutionMethod::automatic);

/// Caputo derivative of order 1 < alpha < 2, D^alpha u = 1/Gamma(2-alpha) int_0^t
/// (t - s)^{1-alpha} u''(s) ds, by the second-difference (L2) scheme of Sun & Wu 2006
/// (weights.hpp: l2_weights) with the ghost value u_{-1} = u_0 - h * du0, du0 = u'(0):
///   out[n] = h^{-alpha}/Gamma(3-alpha) sum_{k=0}^{n-1} b_k (u_{n-k} - 2 u_{n-k-1} + u_{n-k-2}).
/// out[n], n >= 1, approximates D^alpha u at the midpoint t_{n-1/2} = (n - 1/2) h (the
/// scheme is the mean of the L1 rule for u' at t_{n-1} and t_n), with error O(h^{3-alpha})
/// for u in C^3; out[0] = 0 (= D^alpha u(0) for u in C^2).
std::vector<double> caputo_derivative_l2(const std::vector<double>& u, double h, double alpha,
                                         double du0,
                                         ConvolutionMethod method = ConvolutionMethod::automatic);

/// Grunwald-Letnikov derivative h^{-alpha} sum_{k=0}^{n} w_k f_{n-k}, alpha > 0 (weights.hpp:
/// gl_weights). It approximates the Riemann-Liouville derivative D^alpha f(t_n) with error
/// O(h) at fixed t_n > 0 (Podlubny 1999, Ch. 7); for f with f(0) != 0 the RL derivative is
/// singular at t = 0 and out[0] = h^{-alpha} f_0 only mirrors that.
std::vector<double> grunwald_letnikov_derivative(
    const std::vector<double>& f, double h, double alpha,
    ConvolutionMethod method = ConvolutionMethod::automatic);

/// Riemann-Liouville derivative D^alpha f = d^m/dt^m I^{m-alpha} f (m = ceil(alpha)),
/// evaluated in Grunwald-Letnikov form: the same sum as grunwald_letnikov_derivative (the GL
/// limit equals the RL derivative for f in C^m, Podlubny 1999, Ch. 2), first-order
/// accurate at fixed t > 0.
inline std::vector<double> riemann_liouville_derivative(
    const std::vector<double>& f, double h, double alpha,
    ConvolutionMethod method = ConvolutionMethod::automatic) {
  return grunwald_letnikov_derivative(f, h, alpha, method);
}

}  // namespace fracmfg::frac
