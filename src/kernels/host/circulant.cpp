// Host backend of kernels::circulant_batched: batched FFTW r2c/c2r plans kept in the
// workspace per shape, Kokkos loops over the items of kernels/circulant_item.hpp.
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
constexpr const char* kNoPlan = "circulant_batched_host: FFTW could not create a plan";
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

  CirculantOptions options;
  std::int64_t planned_length = 0;
  std::int64_t planned_lines = 0;
  detail::FftwArray<double> padded;
  detail::FftwArray<fftw_complex> spectrum;
  detail::FftwPlan forward, backward;
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
  const std::string who = caller;
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
  Kokkos::parallel_for("fracmfg::circulant_pad", HostPolicy(0, b.lines), [=](std::int64_t line) {
    for (std::int64_t k = 0; k < fft_length; ++k) {
      detail::circulant_pad_item(line, k, fft_length, length, x, padded);
    }
  });
  Kokkos::fence();
  fftw_execute(w.forward.get());
  Kokkos::parallel_for(
      "fracmfg::circulant_multiply", HostPolicy(0, b.lines), [=](std::int64_t line) {
        for (std::int64_t k = 0; k < frequencies; ++k) {
          detail::circulant_multiply_item(line, k, frequencies, eigenvalues, spectrum);
        }
      });
  Kokkos::fence();
  fftw_execute(w.backward.get());
  Kokkos::parallel_for(
      "fracmfg::circulant_extract", HostPolicy(0, b.lines), [=](std::int64_t line) {
        for (std::int64_t k = 0; k < length; ++k) {
          detail::circulant_extract_item(line, k, fft_length, length, scale, padded, y);
        }
      });
  Kokkos::fence();
}

}  // namespace fracmfg::kernels
