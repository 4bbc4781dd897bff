#pragma once
// Per-system bodies of kernels::tridiag_batched, shared by the host (Kokkos) loop and the
// CUDA kernel. Each body solves one system whose entry i sits at p[i * stride] for every
// array p (stride 1 for the strided layout, m for the interleaved one), overwriting the
// right-hand side with the solution.
//
// Return value: 0 on success, r + 1 when the pivot of row r is zero or NaN (the system is
// then left partly eliminated). The cyclic body reports a singular Sherman-Morrison
// denominator as row n - 1.

#include <cstdint>

#include "fracmfg/kernels/host_device.hpp"

namespace fracmfg::kernels::detail {

FRACMFG_HOST_DEVICE inline bool is_bad_pivot(double p) {
  // Catches 0 and NaN (every comparison with NaN is false).
  return !(p > 0.0 || p < 0.0);
}

/// Thomas' algorithm; cp is scratch of n entries (same stride). sub[0] and super[n-1] are
/// not read.
FRACMFG_HOST_DEVICE inline std::int64_t thomas_solve_one(std::int64_t n, std::int64_t stride,
                                                         const double* sub, const double* diag,
                                                         const double* super, double* rhs,
                                                         double* cp) {
  if (n <= 0) return 0;
  double denom = diag[0];
  if (is_bad_pivot(denom)) return 1;
  if (n > 1) cp[0] = super[0] / denom;
  rhs[0] /= denom;
  for (std::int64_t i = 1; i < n; ++i) {
    const std::int64_t s = i * stride;
    const std::int64_t sp = s - stride;
    denom = diag[s] - sub[s] * cp[sp];
    if (is_bad_pivot(denom)) return i + 1;
    if (i + 1 < n) cp[s] = super[s] / denom;
    rhs[s] = (rhs[s] - sub[s] * rhs[sp]) / denom;
  }
  for (std::int64_t i = n - 2; i >= 0; --i) {
    rhs[i * stride] -= cp[i * stride] * rhs[(i + 1) * stride];
  }
  return 0;
}

/// The Sherman-Morrison step of a cyclic solve (n >= 3): given y = A'^{-1} rhs (in rhs) and
/// z = A'^{-1} u, with u = (gamma, 0, .., 0, alpha) and v = (1, 0, .., 0, beta/gamma),
/// overwrites rhs with x = y - (v.y / (1 + v.z)) z. Returns 0, or n when 1 + v.z is zero.
FRACMFG_HOST_DEVICE inline std::int64_t sherman_morrison_correct(std::int64_t n,
                                                                 std::int64_t stride, double beta,
                                                                 double gamma, double* rhs,
                                                                 const double* z) {
  const std::int64_t last = (n - 1) * stride;
  const double vz = 1.0 + z[0] + beta * z[last] / gamma;
  if (is_bad_pivot(vz)) return n;
  const double factor = (rhs[0] + beta * rhs[last] / gamma) / vz;
  for (std::int64_t i = 0; i < n; ++i) rhs[i * stride] -= factor * z[i * stride];
  return 0;
}

/// gamma of the Sherman-Morrison splitting: -diag[0] (no cancellation in diag[0] - gamma),
/// or -1 when diag[0] is zero.
FRACMFG_HOST_DEVICE inline double sherman_morrison_gamma(double diag0) {
  return is_bad_pivot(diag0) ? -1.0 : -diag0;
}

/// Cyclic (periodic) tridiagonal solve: row 0 couples to x[n-1] through sub[0], row n-1 to
/// x[0] through super[n-1]. For n >= 3, Sherman-Morrison on Thomas (Numerical Recipes,
/// 3rd ed., sec. 2.7.2, with gamma = -diag[0]); cp and z are scratch of n entries each.
FRACMFG_HOST_DEVICE inline std::int64_t cyclic_thomas_solve_one(std::int64_t n, std::int64_t stride,
                                                                const double* sub,
                                                                const double* diag,
                                                                const double* super, double* rhs,
                                                                double* cp, double* z) {
  if (n <= 0) return 0;
  if (n == 1) {
    const double p = sub[0] + diag[0] + super[0];
    if (is_bad_pivot(p)) return 1;
    rhs[0] /= p;
    return 0;
  }
  if (n == 2) {
    // [ diag0        sub0+super0 ] [x0]   [rhs0]
    // [ sub1+super1  diag1       ] [x1] = [rhs1]
    const double a00 = diag[0];
    const double a01 = sub[0] + super[0];
    const double a10 = sub[stride] + super[stride];
    const double a11 = diag[stride];
    const double det = a00 * a11 - a01 * a10;
    if (is_bad_pivot(det)) return 2;
    const double r0 = rhs[0];
    const double r1 = rhs[stride];
    rhs[0] = (a11 * r0 - a01 * r1) / det;
    rhs[stride] = (a00 * r1 - a10 * r0) / det;
    return 0;
  }
  const std::int64_t last = (n - 1) * stride;
  const double alpha = super[last];  // A[n-1][0]
  const double beta = sub[0];        // A[0][n-1]
  const double gamma = sherman_morrison_gamma(diag[0]);
  // A = A' + u v^T with u = (gamma, 0, .., 0, alpha), v = (1, 0, .., 0, beta/gamma); A' is
  // tridiagonal with diag'[0] = diag[0] - gamma, diag'[n-1] = diag[n-1] - alpha*beta/gamma.
  // One elimination pass serves both A' y = rhs and A' z = u.
  double denom = diag[0] - gamma;
  if (is_bad_pivot(denom)) return 1;
  cp[0] = super[0] / denom;
  rhs[0] /= denom;
  z[0] = gamma / denom;
  for (std::int64_t i = 1; i < n; ++i) {
    const std::int64_t s = i * stride;
    const std::int64_t sp = s - stride;
    const bool is_last = i + 1 == n;
    const double d_i = is_last ? diag[s] - alpha * beta / gamma : diag[s];
    denom = d_i - sub[s] * cp[sp];
    if (is_bad_pivot(denom)) return i + 1;
    if (!is_last) cp[s] = super[s] / denom;
    rhs[s] = (rhs[s] - sub[s] * rhs[sp]) / denom;
    z[s] = ((is_last ? alpha : 0.0) - sub[s] * z[sp]) / denom;
  }
  for (std::int64_t i = n - 2; i >= 0; --i) {
    const std::int64_t s = i * stride;
    rhs[s] -= cp[s] * rhs[s + stride];
    z[s] -= cp[s] * z[s + stride];
  }
  return sherman_morrison_correct(n, stride, beta, gamma, rhs, z);
}

/// Offset of system k's entry 0 and the stride between its rows, for either layout.
struct TridiagAddressing {
  std::int64_t offset;
  std::int64_t stride;
};

FRACMFG_HOST_DEVICE inline TridiagAddressing tridiag_addressing(bool interleaved,
                                                                std::int64_t systems,
                                                                std::int64_t size, std::int64_t k) {
  return interleaved ? TridiagAddressing{k, systems} : TridiagAddressing{k * size, 1};
}

/// Solves system k of a batch (the work item of both backends). work holds n (plain) or
/// 2n (cyclic) scratch entries per system, in the batch's layout: the second half starts
/// at work + m*n.
FRACMFG_HOST_DEVICE inline std::int64_t tridiag_solve_item(bool interleaved, bool cyclic,
                                                           std::int64_t systems, std::int64_t size,
                                                           std::int64_t k, const double* sub,
                                                           const double* diag, const double* super,
                                                           double* rhs, double* work) {
  const TridiagAddressing a = tridiag_addressing(interleaved, systems, size, k);
  const std::int64_t o = a.offset;
  if (cyclic) {
    return cyclic_thomas_solve_one(size, a.stride, sub + o, diag + o, super + o, rhs + o, work + o,
                                   work + systems * size + o);
  }
  return thomas_solve_one(size, a.stride, sub + o, diag + o, super + o, rhs + o, work + o);
}

}  // namespace fracmfg::kernels::detail
