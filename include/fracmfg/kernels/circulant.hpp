#pragma once
// kernels::circulant_batched and kernels::circulant_2d: products with symmetric circulant
// matrices by real FFTs, node-local.
//
// circulant_batched: a batch of lines times one circulant. For `lines` lines x_b of
// `length` = m values,
//
//     y_b += scale * (C pad(x_b))[0..m),     C = F^-1 diag(lambda) F  of size L = fft_length,
//
// pad() appending L - m zeros. With L >= 2m - 1 and C the circulant embedding of a symmetric
// Toeplitz matrix T (first column t_0..t_{m-1}, zeros, t_{m-1}..t_1) this is y_b += scale *
// T x_b: the Riesz operator's products of the space-fractional PDE solver
// (frac/riesz_operator.hpp); with L = m it is the circulant itself (a circulant
// preconditioner's inverse, lambda holding the inverted eigenvalues). `eigenvalues` holds
// L/2 + 1 real values lambda_k / L (the inverse transform's 1/L folded in; real because C is
// symmetric).
//
// circulant_2d: one (ny, nx) array (x fastest) times a shifted symmetric block circulant
// with circulant blocks (BCCB), diagonal in the 2D discrete Fourier basis:
//
//     y = shift * x + scale * F2^-1 diag(lambda) F2 x      (y overwritten),
//
// `eigenvalues` holding ny (nx/2 + 1) real values lambda_{ky,kx} / (nx ny) on the half
// spectrum of the real 2D transform (row ky, column kx; the 1/(nx ny) of the inverse
// transform folded in). The Riesz operator's 2D periodic operator sigma I + kappa A and its
// 2D circulant preconditioner's inverse (shift 0; frac/riesz_operator.hpp).
//
// Per frequency and per value both backends run the same bodies
// (kernels/circulant_item.hpp); the transforms are FFTW's (host) and cuFFT's (device), so
// the two agree to round-off (about 1e-15 relative to the size of the terms).
//
// Entry points:
//   circulant_batched_host   FFTW batched r2c/c2r plans (FFTW_ESTIMATE, kept in the
//                            workspace per (L, lines)) and Kokkos loops on the default host
//                            execution space (needs Kokkos initialised).
//   circulant_2d_host        FFTW r2c/c2r 2D plans (FFTW_ESTIMATE, kept per (ny, nx))
//                            and Kokkos loops over the rows.
//   circulant_batched_cuda   copies x, y and the eigenvalues to device
//                            workspace.options().cuda_device, cuFFT D2Z/Z2D batched plans
//                            (from workspace.cuda_resources(), e.g. the rank's selector's
//                            cache), copies y back. Throws NotCompiled without CUDA and
//                            fracmfg::Error ("CUDA ...") on a device failure, with y untouched.
//   circulant_2d_cuda        the same with cuFFT D2Z/Z2D 2D plans.
// Not collective; synchronous; a workspace serves one thread.

#include <cstdint>
#include <memory>

namespace fracmfg::kernels {

class CudaResources;  // fracmfg/kernels/cuda_resources.hpp

struct CirculantBatch {
  std::int64_t lines = 0;               ///< >= 0
  std::int64_t length = 0;              ///< m >= 0 values per line
  std::int64_t fft_length = 0;          ///< L >= max(m, 1)
  const double* eigenvalues = nullptr;  ///< L/2 + 1 values lambda_k / L
  const double* x = nullptr;            ///< line b at x + b * m
  double* y = nullptr;                  ///< line b at y + b * m (+=); may not alias x
  double scale = 1.0;
};

struct Circulant2d {
  std::int64_t nx = 0;                  ///< >= 0 values per row (fastest)
  std::int64_t ny = 0;                  ///< >= 0 rows
  const double* eigenvalues = nullptr;  ///< ny (nx/2 + 1) values lambda_{ky,kx} / (nx ny)
  const double* x = nullptr;            ///< value (j, i) at x + j * nx + i
  double* y = nullptr;                  ///< same layout (overwritten); may not alias x
  double shift = 0.0;                   ///< y = shift x + scale C x
  double scale = 1.0;
};

struct CirculantOptions {
  int cuda_device = 0;  ///< runtime device index of the cuda path
  /// cuFFT plans of the cuda path come from this cache; null: the workspace's own.
  CudaResources* cuda_resources = nullptr;
};

/// FFTW plans and arrays of the host paths (kept for the next call of the same shape; the
/// batched and the 2D shapes separately) and
/// the cuFFT plan cache of the cuda path when the options name none.
class CirculantWorkspace {
 public:
  explicit CirculantWorkspace(CirculantOptions options = {});
  ~CirculantWorkspace();
  CirculantWorkspace(CirculantWorkspace&&) noexcept;
  CirculantWorkspace& operator=(CirculantWorkspace&&) noexcept;
  CirculantWorkspace(const CirculantWorkspace&) = delete;
  CirculantWorkspace& operator=(const CirculantWorkspace&) = delete;

  const CirculantOptions& options() const;
  CudaResources& cuda_resources();

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// Input checks (fracmfg::Error naming the problem).
void check_circulant_batch(const CirculantBatch& batch, const char* caller);

void check_circulant_2d(const Circulant2d& product, const char* caller);

void circulant_batched_host(const CirculantBatch& batch, CirculantWorkspace& workspace);
void circulant_batched_cuda(const CirculantBatch& batch, CirculantWorkspace& workspace);
void circulant_2d_host(const Circulant2d& product, CirculantWorkspace& workspace);
void circulant_2d_cuda(const Circulant2d& product, CirculantWorkspace& workspace);

}  // namespace fracmfg::kernels
