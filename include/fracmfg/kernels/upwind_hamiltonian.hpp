#pragma once
// The upwind numerical Hamiltonians of the mean field game solvers as plain host/device
// functions (no state, nothing collective): the formulas of fracmfg/mfg/hamiltonian.hpp,
// which documents them and re-exports them in namespace fracmfg::mfg. Here, in the kernel
// layer, so that the row kernels (kernels/mfg_rows.hpp) and the solvers evaluate one copy.
#include <cmath>

#include "fracmfg/kernels/host_device.hpp"

namespace fracmfg::kernels {

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

/// The squared upwind norm of one axis: min(dplus, 0)^2 + max(dminus, 0)^2.
FRACMFG_HOST_DEVICE inline double upwind_norm2(double dplus, double dminus) {
  const double p = negative_part(dplus);
  const double q = positive_part(dminus);
  return p * p + q * q;
}

/// The power Hamiltonian s^(q/2) / (q c) at the squared upwind norm s (summed over the axes).
FRACMFG_HOST_DEVICE inline double power_hamiltonian(double s, double inv_c, double q) {
  return inv_c / q * pow(s, 0.5 * q);
}

/// w = s^((q-2)/2), the factor of 1/c in the derivatives of power_hamiltonian; 0 at s = 0,
/// where the derivatives (of size s^((q-1)/2)) vanish for q > 1.
FRACMFG_HOST_DEVICE inline double power_weight(double s, double q) {
  return s > 0.0 ? pow(s, 0.5 * q - 1.0) : 0.0;
}

/// (epsilon + m)^(-alpha), the factor of 1/c of the congestion Hamiltonian at density m >= 0.
FRACMFG_HOST_DEVICE inline double congestion_factor(double m, double epsilon, double alpha) {
  return pow(epsilon + m, -alpha);
}

/// f + f'(m) m for f = congestion_factor(m, epsilon, alpha): d[m f(m)]/dm, the factor of 1/c
/// in the derivative in m of the Fokker-Planck flux m H_p (f' = -alpha f / (epsilon + m)).
FRACMFG_HOST_DEVICE inline double congestion_flux_factor(double f, double m, double epsilon,
                                                         double alpha) {
  return f * (epsilon + (1.0 - alpha) * m) / (epsilon + m);
}

}  // namespace fracmfg::kernels
