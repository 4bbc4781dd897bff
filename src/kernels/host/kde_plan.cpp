#include "kernels/host/kde_plan.hpp"

#include <climits>

#include <cmath>
#include <string>

#include "fracmfg/core/error.hpp"
#include "kernels/fftw_handles.hpp"

namespace fracmfg::kernels::detail {

namespace {

KdeAxisPlan make_axis(const KdeAxis& a, double truncation) {
  KdeAxisPlan p;
  p.origin = a.origin;
  p.spacing = a.spacing;
  p.bandwidth = a.bandwidth;
  p.cutoff = truncation * a.bandwidth;
  p.points = a.points;
  p.radius = static_cast<std::int64_t>(std::floor(p.cutoff / a.spacing));
  // Discrete normalisation: the sampled kernel sums to 1/dx.
  double sum = 0.0;
  for (std::int64_t o = -p.radius; o <= p.radius; ++o) {
    sum += kde_gauss(static_cast<double>(o) * a.spacing, a.bandwidth);
  }
  p.norm = 1.0 / (a.spacing * sum);
  switch (a.boundary) {
    case KdeBoundary::periodic:
      p.mode = kde_periodic;
      p.work = a.points;
      break;
    case KdeBoundary::reflecting:
      p.mode = kde_reflecting;
      p.work = 2 * a.points;  // mirror extension: reflecting = periodic with period 2L
      break;
    case KdeBoundary::open:
      p.mode = kde_open;
      p.work = fft_friendly_length(a.points + 2 * p.radius);  // no wrap onto the grid
      p.offset = p.radius;
      break;
  }
  return p;
}

KdeAxisPlan single_point_axis() {
  KdeAxisPlan p;
  p.norm = 1.0;
  return p;
}

// Real DFT of the axis' periodised kernel: it is even (k[q] = k[M - q]), so the transform
// is real; `full` returns all M values, else the M/2 + 1 of the r2c half spectrum.
std::vector<double> kernel_spectrum(const KdeAxisPlan& p, bool full, double scale) {
  const std::int64_t m = p.work;
  auto samples = fftw_real_array(static_cast<std::size_t>(m));
  auto spectrum = fftw_complex_array(static_cast<std::size_t>(m / 2 + 1));
  const FftwPlan plan(
      fftw_plan_dft_r2c_1d(static_cast<int>(m), samples.get(), spectrum.get(), FFTW_ESTIMATE));
  if (!plan) throw Error("kde: FFTW could not plan a transform of length " + std::to_string(m));
  for (std::int64_t q = 0; q < m; ++q) samples[q] = kde_kernel_sample(p, q);
  fftw_execute(plan.get());
  std::vector<double> out(static_cast<std::size_t>(full ? m : m / 2 + 1));
  for (std::int64_t q = 0; q < static_cast<std::int64_t>(out.size()); ++q) {
    const std::int64_t h = q <= m / 2 ? q : m - q;
    out[q] = spectrum[h][0] * scale;
  }
  return out;
}

}  // namespace

std::int64_t fft_friendly_length(std::int64_t n) {
  for (std::int64_t m = n < 1 ? 1 : n;; ++m) {
    std::int64_t r = m;
    for (const std::int64_t f : {2, 3, 5, 7}) {
      while (r % f == 0) r /= f;
    }
    if (r == 1) return m;
  }
}

KdePlan make_kde_plan(const KdeGrid& grid, const KdeOptions& options, bool with_spectra) {
  KdePlan plan;
  plan.dim = grid.dim;
  plan.x = make_axis(grid.axes[0], options.truncation);
  plan.y = grid.dim == 2 ? make_axis(grid.axes[1], options.truncation) : single_point_axis();
  if (!with_spectra) return plan;
  // FFTW and cuFFT take int lengths.
  const double work = static_cast<double>(plan.x.work) * static_cast<double>(plan.y.work);
  if (work > static_cast<double>(INT_MAX)) {
    throw Error("kde: the FFT work array (" + std::to_string(plan.x.work) + " x " +
                std::to_string(plan.y.work) +
                ") is too large; reduce the grid or the bandwidth/spacing ratio");
  }
  const double scale = 1.0 / work;
  plan.spectrum_x = kernel_spectrum(plan.x, false, scale);
  plan.spectrum_y = grid.dim == 2 ? kernel_spectrum(plan.y, true, 1.0) : std::vector<double>{1.0};
  return plan;
}

}  // namespace fracmfg::kernels::detail
