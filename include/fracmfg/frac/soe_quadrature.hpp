#pragma once
// Gauss quadrature rules on [-1, 1], the building blocks of the sum-of-exponentials
// approximation (soe.hpp).
//
//   GaussRule r = gauss_jacobi(12, 0.0, -0.5);   // weight (1 - x)^0 (1 + x)^-0.5
//   double q = 0;  for (k...) q += r.weights[k] * f(r.nodes[k]);
//
// Both rules come from the Golub-Welsch algorithm: the nodes are the eigenvalues of the
// symmetric tridiagonal Jacobi matrix of the monic orthogonal polynomials' three-term
// recurrence, the weights mu_0 times the squared first components of the normalised
// eigenvectors (G. H. Golub and J. H. Welsch, Math. Comp. 23 (1969) 221-230). An n-point
// rule integrates p(x) w(x) exactly for polynomials p of degree <= 2n - 1. Nodes and weights
// are accurate to a few ulps (absolute, relative to the largest weight) for n <= 100.
// Pure functions, thread-safe, not collective; n < 1 or exponents <= -1 throw fracmfg::Error.

#include <vector>

namespace fracmfg::frac {

/// Nodes (increasing) and weights of a Gauss rule.
struct GaussRule {
  std::vector<double> nodes;
  std::vector<double> weights;
};

/// n-point Gauss-Jacobi rule for the weight (1 - x)^a (1 + x)^b on [-1, 1], a, b > -1.
GaussRule gauss_jacobi(int n, double a, double b);

/// n-point Gauss-Legendre rule (weight 1 on [-1, 1]).
GaussRule gauss_legendre(int n);

}  // namespace fracmfg::frac
