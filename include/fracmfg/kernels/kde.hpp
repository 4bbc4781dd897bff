#pragma once
// kernels::kde: Gaussian kernel density estimate of N weighted samples on a uniform 1D or
// 2D grid, node-local.
//
//   f(x_j) = sum_i w_i K(x_j - X_i),   K(u) = C exp(-u^2 / (2 h^2)) for |u| <= c h, else 0,
//
// with images of each sample added for periodic and reflecting axes. In 2D the kernel is the
// product of one such factor per axis (own h, c, C, images) and f is evaluated at
// (x_jx, y_jy).
//
// Grid: along an axis, points x_j = origin + j * spacing, j = 0..points-1.
//   periodic    period L = points * spacing (x_0 + L is x_0 again); images X + m L.
//   reflecting  walls at origin - spacing/2 and origin + (points - 1/2) * spacing, the faces
//               of the cells around the points (a cell-centred grid); images X + 2 m L and
//               2 w - X + 2 m L (w the left wall), i.e. the mass that would leave is
//               mirrored back.
//   open        no images; kernel mass beyond the grid is lost.
//
// Normalisation: C = 1 / (dx * sum_{|o dx| <= c h} exp(-(o dx)^2 / (2 h^2))), the discrete
// normalisation of the sampled, truncated kernel (it differs from 1/(sqrt(2 pi) h) by a
// relative 2 exp(-2 pi^2 h^2 / dx^2) + erfc(c/sqrt 2): 5e-9 at h = dx, 1e-34 at h = 2 dx).
// Hence the binned estimate satisfies
//     sum_j f_j dx (* dy) = sum_i w_i    (the total weight; N when weights are null)
// exactly up to rounding when no axis is open; an open axis loses the kernel mass that lands
// outside its grid points. The exact sum (no open axis) satisfies it to the relative
// 2 exp(-2 pi^2 h^2 / dx^2).
//
// Truncation at c h (KdeOptions::truncation, default 8): the neglected kernel values are
// below exp(-c^2/2) K(0) = 1.3e-14 K(0) per sample and image at c = 8, and the neglected
// mass fraction is erfc(c / sqrt 2) = 1.2e-15 (absorbed by the normalisation C).
//
// Two algorithms, each with a host (Kokkos + FFTW) and a CUDA (cuFFT) implementation:
//   binned  linear binning (cloud-in-cell) of the samples onto the grid, then convolution
//           with the sampled kernel by FFT: O(N + M log M), M the FFT length (per axis: G
//           periodic, 2G reflecting (mirror extension), G + 2 floor(c h/dx) rounded up to a
//           2^a 3^b 5^c 7^d size open (zero padding, no wrap-around)).
//           Binning error: for each sample, binning replaces K(x_j - X) by its linear
//           interpolant between the two grid points around X, so
//               |f_binned - f_exact| <= W (dx/h)^2 K(0) / 8,  K(0) = C ~ 1/(sqrt(2 pi) h)
//           (2D: W C_x C_y ((dx/h_x)^2 + (dy/h_y)^2) / 8), W = sum |w_i|. For samples spread
//           over many cells the errors average out to the bias (dx^2/12) f'' (a relative
//           (dx/s)^2/12 at the mode of a density of width s >= h) plus a part that
//           fluctuates with the samples' positions in their cells, of relative size
//           ~ (dx/h)^2 / sqrt(n_h), n_h the number of samples within about h of the point
//           (fewer in 2D for the same N). Both are O((dx/h)^2): at h = 4 dx
//           the relative error is ~1e-4 in 1D for 2e4 samples (below 1e-3 in the tests);
//           in 2D, with a few thousand samples, h = 6 dx keeps it below 1e-3.
//   exact   the sum above for every grid point (one work item per grid point, looping over
//           all samples): O(N G). The reference implementation.
//
// Entry points: one signature, KdeFn, per algorithm and backend. The output `density`
// (host memory) has G (1D) or Gx*Gy (2D) entries, x fastest: density[jy * Gx + jx]. It is
// overwritten. Host entry points need Kokkos initialised (core::Environment). CUDA entry
// points throw NotCompiled in a build without CUDA and fracmfg::Error (message starting
// "CUDA", with the runtime's or cuFFT's error text) when the device cannot run them. Nothing
// here is collective; all calls are synchronous. Samples with non-finite coordinates are
// ignored.

#include <array>
#include <cstdint>

namespace fracmfg::kernels {

class CudaResources;  // fracmfg/kernels/cuda_resources.hpp

enum class KdeBoundary : std::uint8_t { open = 0, reflecting = 1, periodic = 2 };

/// One axis of the grid and the kernel's bandwidth along it.
struct KdeAxis {
  double origin = 0.0;      ///< coordinate of grid point 0
  double spacing = 0.0;     ///< dx > 0
  std::int64_t points = 0;  ///< G >= 1
  KdeBoundary boundary = KdeBoundary::open;
  double bandwidth = 0.0;  ///< h > 0: standard deviation of the Gaussian along this axis
};

struct KdeGrid {
  int dim = 1;  ///< 1 or 2; axes[1] is read only when dim == 2
  std::array<KdeAxis, 2> axes{};

  /// Number of grid points (the length of the density array).
  std::int64_t size() const { return dim == 2 ? axes[0].points * axes[1].points : axes[0].points; }
};

inline KdeGrid kde_grid_1d(const KdeAxis& x) {
  return KdeGrid{1, {x, KdeAxis{}}};
}
inline KdeGrid kde_grid_2d(const KdeAxis& x, const KdeAxis& y) {
  return KdeGrid{2, {x, y}};
}

/// Samples over caller-owned host memory.
struct KdeSamples {
  std::int64_t count = 0;          ///< N >= 0
  const double* x = nullptr;       ///< N coordinates along axis 0
  const double* y = nullptr;       ///< N coordinates along axis 1 (2D only)
  const double* weight = nullptr;  ///< N weights, or null for unit weights
};

struct KdeOptions {
  double truncation = 8.0;  ///< c: the kernel is cut at c h; 1 <= c <= 40
  int cuda_device = 0;      ///< runtime device index for the cuda entry points
  /// cuFFT plans of the cuda entry points are taken from (and kept in) this cache; null:
  /// each call plans and destroys its own (see cuda_resources.hpp).
  CudaResources* cuda_resources = nullptr;
  /// The binned cuda path copies and bins the samples in this many pieces (>= 1), so that
  /// only ceil(N / sample_chunks) of them are on the device at once (the selector's
  /// Decision::chunks). The other entry points ignore it.
  int sample_chunks = 1;
};

/// The signature every algorithm and backend implements.
using KdeFn = void(const KdeGrid& grid, const KdeSamples& samples, double* density,
                   const KdeOptions& options);

/// Checks the grid, samples, output pointer and options (fracmfg::Error naming the
/// problem); every entry point calls it.
void check_kde(const KdeGrid& grid, const KdeSamples& samples, const double* density,
               const KdeOptions& options, const char* caller);

void kde_binned_host(const KdeGrid& grid, const KdeSamples& samples, double* density,
                     const KdeOptions& options);
void kde_binned_cuda(const KdeGrid& grid, const KdeSamples& samples, double* density,
                     const KdeOptions& options);
void kde_exact_host(const KdeGrid& grid, const KdeSamples& samples, double* density,
                    const KdeOptions& options);
void kde_exact_cuda(const KdeGrid& grid, const KdeSamples& samples, double* density,
                    const KdeOptions& options);

/// Silverman's rule of thumb h = 0.9 min(sigma, IQR / 1.34) n^(-1/5) for weighted samples
/// (weight null: unit weights). sigma^2 = sum w (x - mean)^2 / sum w; the quartiles are
/// weighted quantiles interpolated linearly between the points (S_i - w_i/2) / W of the
/// sorted samples (S_i the cumulative weight; Hazen's rule for unit weights); n is Kish's
/// effective sample size (sum w)^2 / sum w^2 (N for unit weights). When IQR is 0 sigma is
/// used alone. Weights must be >= 0 with a positive sum. Throws NumericalError when the
/// samples have no spread, fracmfg::Error on bad input.
double silverman_bandwidth(const double* x, const double* weight, std::int64_t count);

}  // namespace fracmfg::kernels
