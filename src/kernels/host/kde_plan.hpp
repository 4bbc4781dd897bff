#pragma once
// The per-call set-up of kernels::kde shared by the host and CUDA paths: per-axis plans
// (normalisation, truncation radius, FFT lengths and offsets) and the kernel's spectrum,
// computed on the host with FFTW (O(M log M) for each axis separately: the kernel is a
// product, so its 2D spectrum is the outer product of the axes' spectra).

#include <cstdint>
#include <vector>

#include "fracmfg/kernels/kde.hpp"
#include "kernels/kde_item.hpp"

namespace fracmfg::kernels::detail {

struct KdePlan {
  int dim = 1;
  KdeAxisPlan x;
  KdeAxisPlan y;  ///< a single point (work length 1) in 1D
  /// Real spectrum of the x kernel, Mx/2 + 1 values, times 1/(Mx My) (the inverse FFT's
  /// scale); empty unless requested.
  std::vector<double> spectrum_x;
  /// Real spectrum of the y kernel, My values ({1} in 1D); empty unless requested.
  std::vector<double> spectrum_y;

  std::int64_t work_size() const { return x.work * y.work; }
  /// Complex coefficients of the r2c transform: My * (Mx/2 + 1).
  std::int64_t spectrum_size() const { return y.work * (x.work / 2 + 1); }
};

/// Builds the plan of a checked call (check_kde first); with_spectra for the binned path.
KdePlan make_kde_plan(const KdeGrid& grid, const KdeOptions& options, bool with_spectra);

/// Smallest length >= n whose prime factors are 2, 3, 5, 7 (fast for FFTW and cuFFT).
std::int64_t fft_friendly_length(std::int64_t n);

}  // namespace fracmfg::kernels::detail
