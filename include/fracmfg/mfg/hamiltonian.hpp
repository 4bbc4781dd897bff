#pragma once
// The monotone upwind (Godunov) numerical Hamiltonian of H(x, p) = |p|^2 / (2 c(x)) and its
// derivatives, per point and per axis, after Achdou & Capuzzo-Dolcetta, "Mean field games:
// numerical methods", SIAM J. Numer. Anal. 48 (2010) 1136-1162, section 2 (the numerical
// Hamiltonian g of eq. (2.4) for H = |p|^2 / 2):
//
//   H_h(x_i, D+u_i, D-u_i) = sum over axes of (1 / (2 c_i)) (min(D+u_i, 0)^2 + max(D-u_i, 0)^2),
//   D+u_i = (u_{i+1} - u_i) / h,   D-u_i = (u_i - u_{i-1}) / h.
//
// It is nonincreasing in D+u and nondecreasing in D-u (monotone), consistent
// (H_h(x, p, p) = H(x, p)) and C^1, so the implicit HJB scheme gives an M-matrix Jacobian:
//
//   dH_h/du_{i+1} =  a+_i / h <= 0,   dH_h/du_{i-1} = -a-_i / h <= 0,
//   dH_h/du_i     = (a-_i - a+_i) / h >= 0,
//   a+_i = min(D+u_i, 0) / c_i,  a-_i = max(D-u_i, 0) / c_i.
//
// The drift of the Fokker-Planck equation, -D_pH = -grad u / c, is discretised by the
// transpose of this linearisation (mfg::FokkerPlanckFdm). Plain inline functions: no state,
// nothing collective.

#include <cmath>

#include "fracmfg/kernels/host_device.hpp"

namespace fracmfg::mfg {

/// One axis of the numerical Hamiltonian: (1/(2c)) (min(dplus, 0)^2 + max(dminus, 0)^2).
// min(d, 0) and max(d, 0) without a branch (the signs of the differences change from point
// to point, and a mispredicted branch costs more than the arithmetic); exact: d + |d| and
// d - |d| are 2 max(d, 0) and 2 min(d, 0) without rounding.
FRACMFG_HOST_DEVICE inline double negative_part(double d) {
  return 0.5 * (d - fabs(d));
}
FRACMFG_HOST_DEVICE inline double positive_part(double d) {
  return 0.5 * (d + fabs(d));
}

FRACMFG_HOST_DEVICE inline double upwind_hamiltonian(double dplus, double dminus, double inv_c) {
  const double p = negative_part(dplus);
  const double q = positive_part(dminus);
  return 0.5 * inv_c * (p * p + q * q);
}

/// a+ = min(dplus, 0) / c: the derivative of upwind_hamiltonian in dplus (<= 0).
FRACMFG_HOST_DEVICE inline double upwind_a_plus(double dplus, double inv_c) {
  return inv_c * negative_part(dplus);
}

/// a- = max(dminus, 0) / c: the derivative of upwind_hamiltonian in dminus (>= 0).
FRACMFG_HOST_DEVICE inline double upwind_a_minus(double dminus, double inv_c) {
  return inv_c * positive_part(dminus);
}

}  // namespace fracmfg::mfg
