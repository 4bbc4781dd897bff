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
//
// The other Hamiltonians of a deck (`mfg.hamiltonian.type`):
//
// power, H(x, p) = |p|^q / (q c(x)), q > 1: H evaluated at the upwind norm of the gradient
// (the Godunov combination of the one-sided differences, summed over the axes),
//
//   H_h = |p|_h^q / (q c_i),   |p|_h^2 = s_i = sum over axes of min(D+u_i, 0)^2 + max(D-u_i, 0)^2,
//
// monotone (s is nonincreasing in D+u, nondecreasing in D-u), consistent (s = |p|^2 when
// D+u = D-u = p) and C^1 for q > 1. Its derivatives are those of the quadratic form with 1/c
// replaced by w_i / c_i, w_i = s_i^((q-2)/2):
//
//   dH_h/dD+u = w_i min(D+u_i, 0) / c_i,   dH_h/dD-u = w_i max(D-u_i, 0) / c_i,
//
// (of size |p|_h^(q-1), which vanishes at s = 0 for every q > 1, so w is taken as 0 there:
// for q < 2, s^((q-2)/2) alone is singular at 0). So the Jacobian rows and the
// Fokker-Planck matrix are those above with the coefficient w_i / c_i per point.
//
// congestion, H(x, p, m) = |p|^2 / (2 c(x) (epsilon + m)^alpha), epsilon > 0, 0 <= alpha < 2
// (Achdou & Porretta, "Mean field games with congestion", Ann. IHP Anal. Non Lineaire 35
// (2018) 443-480): the mfg solver evaluates H at the density of the previous fixed-point
// iterate, m^{n+1} at time level n (as the coupling F(x, m^{n+1})), so at fixed m it is the
// quadratic form with 1/c replaced by 1 / (c_i (epsilon + m_i)^alpha), and the
// Fokker-Planck step is the transpose of that linearisation at the same m.

#include "fracmfg/kernels/upwind_hamiltonian.hpp"

namespace fracmfg::mfg {

// The functions live in the kernel layer (fracmfg/kernels/upwind_hamiltonian.hpp), shared
// with the row kernels: one copy of the arithmetic for the host and the device.
using kernels::congestion_factor;
using kernels::negative_part;
using kernels::positive_part;
using kernels::power_hamiltonian;
using kernels::power_weight;
using kernels::upwind_a_minus;
using kernels::upwind_a_plus;
using kernels::upwind_hamiltonian;
using kernels::upwind_norm2;

}  // namespace fracmfg::mfg
