#pragma once
// Per-item bodies of kernels::kde, shared by the host (Kokkos) loops and the CUDA kernels:
// the binning of one sample, the exact sum at one grid point, and the index maps of the
// FFT work array. Definitions of the grid, images and normalisation: fracmfg/kernels/kde.hpp.

#include <cmath>
#include <cstdint>

#include "fracmfg/kernels/host_device.hpp"

namespace fracmfg::kernels::detail {

enum KdeMode : int { kde_open = 0, kde_reflecting = 1, kde_periodic = 2 };

/// Everything a work item needs about one axis (plain data, passed by value to kernels).
struct KdeAxisPlan {
  double origin = 0.0;      ///< x_0
  double spacing = 1.0;     ///< dx
  double bandwidth = 1.0;   ///< h
  double cutoff = 8.0;      ///< c h
  double norm = 0.0;        ///< C, the discrete normalisation of the kernel
  std::int64_t points = 1;  ///< G
  std::int64_t radius = 0;  ///< P = floor(c h / dx): kernel offsets |o| <= P on the grid
  std::int64_t work = 1;    ///< M: FFT length along this axis
  std::int64_t offset = 0;  ///< work index of grid point 0 (P when open, else 0)
  int mode = kde_open;
};

FRACMFG_HOST_DEVICE inline double kde_gauss(double u, double h) {
  const double r = u / h;
  return exp(-0.5 * r * r);
}

/// sum over m of exp(-(d + m T)^2 / (2 h^2)) for |d + m T| <= cutoff (T = period > 0).
FRACMFG_HOST_DEVICE inline double kde_image_sum(double d, double period, double cutoff, double h) {
  d -= period * floor(d / period + 0.5);  // nearest image first: d in [-T/2, T/2]
  const double m_lo = ceil((-cutoff - d) / period);
  const double m_hi = floor((cutoff - d) / period);
  double s = 0.0;
  for (double m = m_lo; m <= m_hi; m += 1.0) s += kde_gauss(d + m * period, h);
  return s;
}

/// K(xj - X) along one axis, images included (C applied).
FRACMFG_HOST_DEVICE inline double kde_exact_axis(const KdeAxisPlan& p, double xj, double X) {
  const double length = static_cast<double>(p.points) * p.spacing;
  if (p.mode == kde_periodic) {
    return p.norm * kde_image_sum(xj - X, length, p.cutoff, p.bandwidth);
  }
  if (p.mode == kde_reflecting) {
    const double wall = p.origin - 0.5 * p.spacing;
    return p.norm * (kde_image_sum(xj - X, 2.0 * length, p.cutoff, p.bandwidth) +
                     kde_image_sum(xj - (2.0 * wall - X), 2.0 * length, p.cutoff, p.bandwidth));
  }
  const double d = xj - X;
  return fabs(d) <= p.cutoff ? p.norm * kde_gauss(d, p.bandwidth) : 0.0;
}

/// Exact estimate at grid point j (1D).
FRACMFG_HOST_DEVICE inline double kde_exact_point_1d(const KdeAxisPlan& px, std::int64_t j,
                                                     std::int64_t count, const double* x,
                                                     const double* w) {
  const double xj = px.origin + static_cast<double>(j) * px.spacing;
  double s = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    const double k = kde_exact_axis(px, xj, x[i]);
    if (k != 0.0) s += (w != nullptr ? w[i] : 1.0) * k;
  }
  return s;
}

/// Exact estimate at grid point (jx, jy) (2D).
FRACMFG_HOST_DEVICE inline double kde_exact_point_2d(const KdeAxisPlan& px, const KdeAxisPlan& py,
                                                     std::int64_t jx, std::int64_t jy,
                                                     std::int64_t count, const double* x,
                                                     const double* y, const double* w) {
  const double xj = px.origin + static_cast<double>(jx) * px.spacing;
  const double yj = py.origin + static_cast<double>(jy) * py.spacing;
  double s = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    const double ky = kde_exact_axis(py, yj, y[i]);
    if (ky == 0.0) continue;
    const double kx = kde_exact_axis(px, xj, x[i]);
    if (kx != 0.0) s += (w != nullptr ? w[i] : 1.0) * kx * ky;
  }
  return s;
}

/// floor(t) as an integer for |t| < 2^62 (checked by the callers): a cast and a correction,
/// cheaper than a call to floor() on CPUs without a rounding instruction in the baseline ISA.
FRACMFG_HOST_DEVICE inline std::int64_t kde_floor(double t) {
  const std::int64_t i = static_cast<std::int64_t>(t);  // rounds toward zero
  return static_cast<double>(i) > t ? i - 1 : i;
}

/// Linear binning of coordinate X along one axis: up to two (work index, weight) pairs,
/// returned count 0..2. Periodic: indices wrap modulo G. Reflecting: X is first mirrored
/// into the domain; the half cells beyond the outer points fold back onto them. Open:
/// indices in the zero-padded work range [0, G + 2P); contributions outside it cannot
/// reach a grid point and are dropped. Non-finite X gives no contribution.
FRACMFG_HOST_DEVICE inline int kde_bin_axis(const KdeAxisPlan& p, double X, std::int64_t* index,
                                            double* weight) {
  const std::int64_t g = p.points;
  const double gd = static_cast<double>(g);
  double t = (X - p.origin) / p.spacing;
  if (p.mode == kde_periodic) {
    if (!(fabs(t) < 1e15)) return 0;
    t -= gd * static_cast<double>(kde_floor(t / gd));
    std::int64_t i0 = kde_floor(t);
    const double theta = t - static_cast<double>(i0);
    if (i0 >= g) i0 -= g;  // t rounded up to G
    index[0] = i0;
    weight[0] = 1.0 - theta;
    index[1] = i0 + 1 == g ? 0 : i0 + 1;
    weight[1] = theta;
    return 2;
  }
  if (p.mode == kde_reflecting) {
    double u = t + 0.5;  // distance from the left wall in cells
    if (!(fabs(u) < 1e15)) return 0;
    u -= 2.0 * gd * static_cast<double>(kde_floor(u / (2.0 * gd)));
    if (u > gd) u = 2.0 * gd - u;
    t = u - 0.5;  // in [-1/2, G - 1/2]
    const std::int64_t i0 = kde_floor(t);
    const double theta = t - static_cast<double>(i0);
    index[0] = i0 < 0 ? 0 : i0;               // point -1 mirrors onto point 0
    index[1] = i0 + 1 >= g ? g - 1 : i0 + 1;  // point G mirrors onto point G-1
    weight[0] = 1.0 - theta;
    weight[1] = theta;
    return 2;
  }
  const double extent = static_cast<double>(g + 2 * p.radius);
  t += static_cast<double>(p.radius);
  if (!(t >= -1.0 && t < extent)) return 0;
  const std::int64_t i0 = kde_floor(t);
  const double theta = t - static_cast<double>(i0);
  int n = 0;
  if (i0 >= 0) {
    index[n] = i0;
    weight[n++] = 1.0 - theta;
  }
  if (static_cast<double>(i0 + 1) < extent) {
    index[n] = i0 + 1;
    weight[n++] = theta;
  }
  return n;
}

/// Calls add(work_index, value) for each of the 1, 2 or 4 contributions of sample i.
template <class Add>
FRACMFG_HOST_DEVICE inline void kde_bin_sample(const KdeAxisPlan& px, const KdeAxisPlan& py,
                                               int dim, double x, double y, double w, Add&& add) {
  std::int64_t ix[2];
  double wx[2];
  const int nx = kde_bin_axis(px, x, ix, wx);
  if (dim == 1) {
    for (int a = 0; a < nx; ++a) add(ix[a], w * wx[a]);
    return;
  }
  std::int64_t iy[2];
  double wy[2];
  const int ny = kde_bin_axis(py, y, iy, wy);
  for (int b = 0; b < ny; ++b) {
    for (int a = 0; a < nx; ++a) add(iy[b] * px.work + ix[a], w * wx[a] * wy[b]);
  }
}

/// The periodised, truncated, normalised kernel at work index q in [0, M):
/// C sum over m of exp(-((q + m M) dx)^2 / (2 h^2)) for |q + m M| <= P.
FRACMFG_HOST_DEVICE inline double kde_kernel_sample(const KdeAxisPlan& p, std::int64_t q) {
  const std::int64_t m = p.work;
  std::int64_t o = q - ((q + p.radius) / m) * m;  // smallest image >= -P (q >= 0)
  double s = 0.0;
  for (; o <= p.radius; o += m) s += kde_gauss(static_cast<double>(o) * p.spacing, p.bandwidth);
  return p.norm * s;
}

}  // namespace fracmfg::kernels::detail
