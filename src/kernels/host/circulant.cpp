// Host backend of kernels::circulant_batched and kernels::circulant_2d: FFTW r2c/c2r plans
// (batched 1D, or 2D) kept in the workspace per shape, Kokkos loops over the items of
// kernels/circulant_item.hpp.
#include "fracmfg/kernels/circulant.hpp"

#include <Kokkos_Core.hpp>
#include <fftw3.h>

#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"
#include "kernels/circulant_item.hpp"
#include "kernels/fftw_handles.hpp"
#include "kernels/host/kernel_checks.hpp"

namespace fracmfg::kernels {

namespace {
using HostPolicy =
    Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>;
// Kokkos takes a loop's label as a const std::string&: made once, not per call.
const std::string kLabelCirculant2dLoad{"fracmfg::circulant_2d_load"};
const std::string kLabelCirculant2dMultiply{"fracmfg::circulant_2d_multiply"};
const std::string kLabelCirculant2dStore{"fracmfg::circulant_2d_store"};
const std::string kLabelCirculantExtract{"fracmfg::circulant_extract"};
const std::string kLabelCirculantMultiply{"fracmfg::circulant_multiply"};
const std::string kLabelCirculantPad{"fracmfg::circulant_pad"};
constexpr const char* kNoPlan = "circulant_batched_host: FFTW could not create a plan";
constexpr const char* kNoPlan2d = "circulant_2d_host: FFTW could not create a plan";
}  // namespace

struct CirculantWorkspace::Impl {
  explicit Impl(CirculantOptions o) : options(o) {}

  /// The plans and arrays for (L, lines), made when the shape changes.
  void prepare(std::int64_t fft_length, std::int64_t lines) {
    if (fft_length == planned_length && lines == planned_lines) return;
    forward.reset();
    backward.reset();
    const std::int64_t half = fft_length / 2 + 1;
    padded = detail::fftw_real_array(static_cast<std::size_t>(fft_length * lines));
    spectrum = detail::fftw_complex_array(static_cast<std::size_t>(half * lines));
    const int n = static_cast<int>(fft_length);
    forward = detail::checked_fftw_plan(
        fftw_plan_many_dft_r2c(1, &n, static_cast<int>(lines), padded.get(), nullptr, 1, n,
                               spectrum.get(), nullptr, 1, static_cast<int>(half), FFTW_ESTIMATE),
        kNoPlan);
    backward = detail::checked_fftw_plan(
        fftw_plan_many_dft_c2r(1, &n, static_cast<int>(lines), spectrum.get(), nullptr, 1,
                               static_cast<int>(half), padded.get(), nullptr, 1, n, FFTW_ESTIMATE),
        kNoPlan);
    planned_length = fft_length;
    planned_lines = lines;
  }

  /// The 2D plans and arrays for (ny, nx), made when that shape changes.
  void prepare_2d(std::int64_t nx, std::int64_t ny) {
    if (nx == planned_nx && ny == planned_ny) return;
    forward_2d.reset();
    backward_2d.reset();
    const std::int64_t half = nx / 2 + 1;
    grid_2d = detail::fftw_real_array(static_cast<std::size_t>(nx * ny));
    spectrum_2d = detail::fftw_complex_array(static_cast<std::size_t>(half * ny));
    forward_2d = detail::checked_fftw_plan(
        fftw_plan_dft_r2c_2d(static_cast<int>(ny), static_cast<int>(nx), grid_2d.get(),
                             spectrum_2d.get(), FFTW_ESTIMATE),
        kNoPlan2d);
    backward_2d = detail::checked_fftw_plan(
        fftw_plan_dft_c2r_2d(static_cast<int>(ny), static_cast<int>(nx), spectrum_2d.get(),
                             grid_2d.get(), FFTW_ESTIMATE),
        kNoPlan2d);
    planned_nx = nx;
    planned_ny = ny;
  }

  CirculantOptions options;
  std::int64_t planned_length = 0;
  std::int64_t planned_lines = 0;
  detail::FftwArray<double> padded;
  detail::FftwArray<fftw_complex> spectrum;
  detail::FftwPlan forward, backward;
  std::int64_t planned_nx = 0;
  std::int64_t planned_ny = 0;
  detail::FftwArray<double> grid_2d;
  detail::FftwArray<fftw_complex> spectrum_2d;
  detail::FftwPlan forward_2d, backward_2d;
  CudaResources cuda;  // cuFFT plans when options.cuda_resources is null
};

CirculantWorkspace::CirculantWorkspace(CirculantOptions options)
    : impl_(std::make_unique<Impl>(options)) {}
CirculantWorkspace::~CirculantWorkspace() = default;
CirculantWorkspace::CirculantWorkspace(CirculantWorkspace&&) noexcept = default;
CirculantWorkspace& CirculantWorkspace::operator=(CirculantWorkspace&&) noexcept = default;

const CirculantOptions& CirculantWorkspace::options() const {
  return impl_->options;
}

CudaResources& CirculantWorkspace::cuda_resources() {
  if (impl_->options.cuda_resources != nullptr) return *impl_->options.cuda_resources;
  return impl_->cuda;
}

void check_circulant_batch(const CirculantBatch& b, const char* caller) {
  const detail::Who who{caller};
  if (b.lines < 0 || b.length < 0) {
    throw Error(who + ": negative size (" + std::to_string(b.lines) + " lines of " +
                std::to_string(b.length) + ")");
  }
  if (b.lines == 0 || b.length == 0) return;
  if (b.fft_length < b.length) {
    throw Error(who + ": FFT length " + std::to_string(b.fft_length) +
                " is shorter than the lines (" + std::to_string(b.length) + ")");
  }
  if (b.fft_length > (std::int64_t{1} << 30) || b.lines > (std::int64_t{1} << 30) / b.fft_length) {
    throw Error(who + ": batch of " + std::to_string(b.lines) + " lines of FFT length " +
                std::to_string(b.fft_length) + " is too large");
  }
  if (b.eigenvalues == nullptr || b.x == nullptr || b.y == nullptr) {
    throw Error(who + ": null eigenvalue, input or output array");
  }
  if (b.x == b.y) throw Error(who + ": the output may not alias the input");
}

void check_circulant_2d(const Circulant2d& p, const char* caller) {
  const detail::Who who{caller};
  if (p.nx < 0 || p.ny < 0) {
    throw Error(who + ": negative size (" + std::to_string(p.ny) + " rows of " +
                std::to_string(p.nx) + ")");
  }
  if (p.nx == 0 || p.ny == 0) return;
  if (p.nx > (std::int64_t{1} << 30) || p.ny > (std::int64_t{1} << 30) / p.nx) {
    throw Error(who + ": a 2D transform of " + std::to_string(p.ny) + " x " + std::to_string(p.nx) +
                " values is too large");
  }
  if (p.eigenvalues == nullptr || p.x == nullptr || p.y == nullptr) {
    throw Error(who + ": null eigenvalue, input or output array");
  }
  if (p.x == p.y) throw Error(who + ": the output may not alias the input");
}

void circulant_2d_host(const Circulant2d& p, CirculantWorkspace& workspace) {
  constexpr const char* who = "circulant_2d_host";
  check_circulant_2d(p, who);
  if (p.nx == 0 || p.ny == 0) return;
  detail::require_kokkos(who);
  CirculantWorkspace::Impl& w = workspace.impl();
  w.prepare_2d(p.nx, p.ny);
  // The whole grid is one "line" of nx ny values (no padding) whose spectrum has ny (nx/2 +
  // 1) frequencies in FFTW's r2c layout, the same flat layout as the eigenvalues: the
  // batched kernel's load and multiply items serve unchanged, parallel over rows here.
  const std::int64_t nx = p.nx;
  const std::int64_t values = p.nx * p.ny;
  const std::int64_t half = p.nx / 2 + 1;
  const std::int64_t frequencies = half * p.ny;
  const double* x = p.x;
  double* y = p.y;
  const double* eigenvalues = p.eigenvalues;
  const double shift = p.shift;
  const double scale = p.scale;
  double* grid = w.grid_2d.get();
  double* spectrum = reinterpret_cast<double*>(w.spectrum_2d.get());
  Kokkos::parallel_for(kLabelCirculant2dLoad, HostPolicy(0, p.ny), [=](std::int64_t row) {
    for (std::int64_t k = row * nx; k < (row + 1) * nx; ++k) {
      detail::circulant_pad_item(0, k, values, values, x, grid);
    }
  });
  Kokkos::fence();
  fftw_execute(w.forward_2d.get());
  Kokkos::parallel_for(kLabelCirculant2dMultiply, HostPolicy(0, p.ny), [=](std::int64_t row) {
    for (std::int64_t k = row * half; k < (row + 1) * half; ++k) {
      detail::circulant_multiply_item(0, k, frequencies, eigenvalues, spectrum);
    }
  });
  Kokkos::fence();
  fftw_execute(w.backward_2d.get());
  Kokkos::parallel_for(kLabelCirculant2dStore, HostPolicy(0, p.ny), [=](std::int64_t row) {
    for (std::int64_t k = row * nx; k < (row + 1) * nx; ++k) {
      detail::circulant_shift_store_item(k, shift, scale, x, grid, y);
    }
  });
  Kokkos::fence();
}

void circulant_batched_host(const CirculantBatch& b, CirculantWorkspace& workspace) {
  constexpr const char* who = "circulant_batched_host";
  check_circulant_batch(b, who);
  if (b.lines == 0 || b.length == 0) return;
  detail::require_kokkos(who);
  CirculantWorkspace::Impl& w = workspace.impl();
  w.prepare(b.fft_length, b.lines);
  const std::int64_t length = b.length;
  const std::int64_t fft_length = b.fft_length;
  const std::int64_t frequencies = fft_length / 2 + 1;
  const double* x = b.x;
  double* y = b.y;
  const double* eigenvalues = b.eigenvalues;
  const double scale = b.scale;
  double* padded = w.padded.get();
  double* spectrum = reinterpret_cast<double*>(w.spectrum.get());
  // One line per iteration, its items in order.
  Kokkos::parallel_for(kLabelCirculantPad, HostPolicy(0, b.lines), [=](std::int64_t line) {
    for (std::int64_t k = 0; k < fft_length; ++k) {
      detail::circulant_pad_item(line, k, fft_length, length, x, padded);
    }
  });
  Kokkos::fence();
  fftw_execute(w.forward.get());
  Kokkos::parallel_for(kLabelCirculantMultiply, HostPolicy(0, b.lines), [=](std::int64_t line) {
    for (std::int64_t k = 0; k < frequencies; ++k) {
      detail::circulant_multiply_item(line, k, frequencies, eigenvalues, spectrum);
    }
  });
  Kokkos::fence();
  fftw_execute(w.backward.get());
  Kokkos::parallel_for(kLabelCirculantExtract, HostPolicy(0, b.lines), [=](std::int64_t line) {
    for (std::int64_t k = 0; k < length; ++k) {
      detail::circulant_extract_item(line, k, fft_length, length, scale, padded, y);
    }
  });
  Kokkos::fence();
}

}  // namespace fracmfg::kernels
