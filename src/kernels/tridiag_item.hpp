#pragma once
// Bodies of kernels::tridiag_batched, shared by the host (Kokkos) loop and the CUDA kernel.
// A body solves one system (the CUDA thread's item) or a small pack of W systems with the
// same per-system arithmetic (the host's item), whose entry i sits at p[i * stride] for every
// array p (stride 1 for the strided layout, m for the interleaved one), overwriting the
// right-hand side with the solution.
//
// Status: 0 on success, r + 1 when the pivot of row r is zero or NaN (the values of that
// system are then meaningless). The cyclic bodies report a singular Sherman-Morrison
// denominator as row n - 1.

#include <cstdint>

#include "fracmfg/kernels/host_device.hpp"

namespace fracmfg::kernels::detail {

FRACMFG_HOST_DEVICE inline bool is_bad_pivot(double p) {
  // Catches 0 and NaN (every comparison with NaN is false).
  return !(p > 0.0 || p < 0.0);
}

/// Thomas' algorithm for W systems at once: lane l's arrays start at p + l * lane_stride,
/// row i at p[l * lane_stride + i * stride]; cp is scratch of n entries per lane (same
/// addressing). The W eliminations are interleaved row by row so that a CPU core overlaps
/// their division chains; per lane the arithmetic is exactly that of W = 1. status[l] gets
/// 0, or r + 1 for the first row r whose pivot is zero or NaN; such a lane carries on with
/// meaningless values, the other lanes are unaffected. sub[0] and super[n-1] are not read.
template <int W>
FRACMFG_HOST_DEVICE inline void thomas_solve_pack(std::int64_t n, std::int64_t stride,
                                                  std::int64_t lane_stride, const double* sub,
                                                  const double* diag, const double* super,
                                                  double* rhs, double* cp, std::int64_t* status) {
  for (int l = 0; l < W; ++l) status[l] = 0;
  if (n <= 0) return;
  // One reciprocal per row instead of two divisions (the division is on the critical path).
  double inv[W];
  for (int l = 0; l < W; ++l) {
    const std::int64_t o = l * lane_stride;
    if (is_bad_pivot(diag[o])) status[l] = 1;
    inv[l] = 1.0 / diag[o];
    if (n > 1) cp[o] = super[o] * inv[l];
    rhs[o] *= inv[l];
  }
  for (std::int64_t i = 1; i < n; ++i) {
    for (int l = 0; l < W; ++l) {
      const std::int64_t o = l * lane_stride + i * stride;
      const std::int64_t op = o - stride;
      const double denom = diag[o] - sub[o] * cp[op];
      if (is_bad_pivot(denom) && status[l] == 0) status[l] = i + 1;
      inv[l] = 1.0 / denom;
      if (i + 1 < n) cp[o] = super[o] * inv[l];
      rhs[o] = (rhs[o] - sub[o] * rhs[op]) * inv[l];
    }
  }
  for (std::int64_t i = n - 2; i >= 0; --i) {
    for (int l = 0; l < W; ++l) {
      const std::int64_t o = l * lane_stride + i * stride;
      rhs[o] -= cp[o] * rhs[o + stride];
    }
  }
}

/// Thomas' algorithm for one system (the CUDA thread's body): thomas_solve_pack<1>.
FRACMFG_HOST_DEVICE inline std::int64_t thomas_solve_one(std::int64_t n, std::int64_t stride,
                                                         const double* sub, const double* diag,
                                                         const double* super, double* rhs,
                                                         double* cp) {
  std::int64_t status = 0;
  thomas_solve_pack<1>(n, stride, 0, sub, diag, super, rhs, cp, &status);
  return status;
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

/// Cyclic (periodic) tridiagonal solve of W systems at once, n >= 3 (addressing and status
/// as thomas_solve_pack; cp and z are scratch of n entries per lane each): row 0 couples to
/// x[n-1] through sub[0], row n-1 to x[0] through super[n-1]. Sherman-Morrison on Thomas
/// (Numerical Recipes, 3rd ed., sec. 2.7.2, with gamma = -diag[0]): A = A' + u v^T with
/// u = (gamma, 0, .., 0, alpha), v = (1, 0, .., 0, beta/gamma), alpha = super[n-1],
/// beta = sub[0]; A' is tridiagonal with diag'[0] = diag[0] - gamma and
/// diag'[n-1] = diag[n-1] - alpha beta / gamma. One elimination pass serves both
/// A' y = rhs and A' z = u.
template <int W>
FRACMFG_HOST_DEVICE inline void cyclic_thomas_solve_pack(std::int64_t n, std::int64_t stride,
                                                         std::int64_t lane_stride,
                                                         const double* sub, const double* diag,
                                                         const double* super, double* rhs,
                                                         double* cp, double* z,
                                                         std::int64_t* status) {
  const std::int64_t last = (n - 1) * stride;
  double alpha[W];
  double beta[W];
  double gamma[W];
  double inv[W];
  for (int l = 0; l < W; ++l) {
    const std::int64_t o = l * lane_stride;
    alpha[l] = super[o + last];
    beta[l] = sub[o];
    gamma[l] = sherman_morrison_gamma(diag[o]);
    const double denom = diag[o] - gamma[l];
    status[l] = is_bad_pivot(denom) ? 1 : 0;
    inv[l] = 1.0 / denom;
    cp[o] = super[o] * inv[l];
    rhs[o] *= inv[l];
    z[o] = gamma[l] * inv[l];
  }
  for (std::int64_t i = 1; i < n; ++i) {
    const bool is_last = i + 1 == n;
    for (int l = 0; l < W; ++l) {
      const std::int64_t o = l * lane_stride + i * stride;
      const std::int64_t op = o - stride;
      const double d_i = is_last ? diag[o] - alpha[l] * beta[l] / gamma[l] : diag[o];
      const double denom = d_i - sub[o] * cp[op];
      if (is_bad_pivot(denom) && status[l] == 0) status[l] = i + 1;
      inv[l] = 1.0 / denom;
      if (!is_last) cp[o] = super[o] * inv[l];
      rhs[o] = (rhs[o] - sub[o] * rhs[op]) * inv[l];
      z[o] = ((is_last ? alpha[l] : 0.0) - sub[o] * z[op]) * inv[l];
    }
  }
  for (std::int64_t i = n - 2; i >= 0; --i) {
    for (int l = 0; l < W; ++l) {
      const std::int64_t o = l * lane_stride + i * stride;
      rhs[o] -= cp[o] * rhs[o + stride];
      z[o] -= cp[o] * z[o + stride];
    }
  }
  for (int l = 0; l < W; ++l) {
    if (status[l] != 0) continue;
    const std::int64_t o = l * lane_stride;
    status[l] = sherman_morrison_correct(n, stride, beta[l], gamma[l], rhs + o, z + o);
  }
}

/// Cyclic solve of one system, any n >= 0 (n = 1 and 2 directly, see tridiag_batched.hpp).
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
  std::int64_t status = 0;
  cyclic_thomas_solve_pack<1>(n, stride, 0, sub, diag, super, rhs, cp, z, &status);
  return status;
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

/// Solves systems k0 .. k0 + W - 1 of a batch together (the host's work item: W
/// independent eliminations keep a core's pipelines busy). Same arithmetic per system as
/// tridiag_solve_item; status[l] for system k0 + l.
template <int W>
inline void tridiag_solve_pack_item(bool interleaved, bool cyclic, std::int64_t systems,
                                    std::int64_t size, std::int64_t k0, const double* sub,
                                    const double* diag, const double* super, double* rhs,
                                    double* work, std::int64_t* status) {
  if (cyclic && size < 3) {  // the direct small cases have no elimination to interleave
    for (int l = 0; l < W; ++l) {
      status[l] = tridiag_solve_item(interleaved, cyclic, systems, size, k0 + l, sub, diag, super,
                                     rhs, work);
    }
    return;
  }
  const TridiagAddressing a = tridiag_addressing(interleaved, systems, size, k0);
  const std::int64_t o = a.offset;
  const std::int64_t lane_stride = interleaved ? 1 : size;
  if (cyclic) {
    cyclic_thomas_solve_pack<W>(size, a.stride, lane_stride, sub + o, diag + o, super + o, rhs + o,
                                work + o, work + systems * size + o, status);
  } else {
    thomas_solve_pack<W>(size, a.stride, lane_stride, sub + o, diag + o, super + o, rhs + o,
                         work + o, status);
  }
}

}  // namespace fracmfg::kernels::detail
