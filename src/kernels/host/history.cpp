// Host backend of kernels::history: Kokkos loops over the work items of
// kernels/history_item.hpp, FFTW (advanced interface, batched over components) for the
// transforms. Plans and scratch arrays live in the HistoryWorkspace, so a solver that calls
// this thousands of times plans each (L, batch) once.
#include "fracmfg/kernels/history.hpp"

#include <Kokkos_Core.hpp>
#include <climits>
#include <fftw3.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"
#include "kernels/fftw_handles.hpp"
#include "kernels/history_item.hpp"
#include "kernels/host/kernel_checks.hpp"

namespace fracmfg::kernels {

namespace {

using HostPolicy =
    Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>;
// Kokkos takes a loop's label as a const std::string&: made once, not per call.
const std::string kLabelHistoryDirectHost{"fracmfg::history_direct_host"};
const std::string kLabelHistoryExtractHost{"fracmfg::history_extract_host"};
const std::string kLabelHistoryMultiplyHost{"fracmfg::history_multiply_host"};
const std::string kLabelHistoryPadHost{"fracmfg::history_pad_host"};

constexpr int kPack = 8;  // components per work item of the direct sum
constexpr int kTile = 8;  // components per work item of the FFT path's transposes

std::string str(std::int64_t v) {
  return std::to_string(v);
}

}  // namespace

// --- workspace ---------------------------------------------------------------------------

struct HistoryWorkspace::Impl {
  struct PlanPair {
    std::int64_t length = 0;
    std::int64_t batch = 0;
    detail::FftwPlan forward;
    detail::FftwPlan backward;
  };

  explicit Impl(HistoryOptions o) : options(o) {}

  /// Scratch for `batch` components of length L (grown, never shrunk).
  void reserve(std::int64_t length, std::int64_t batch) {
    const auto reals = static_cast<std::size_t>(length * batch);
    const auto complexes = static_cast<std::size_t>((length / 2 + 1) * batch);
    if (reals > real_capacity) {
      padded = detail::fftw_real_array(reals);
      convolution = detail::fftw_real_array(reals);
      real_capacity = reals;
    }
    if (complexes > complex_capacity) {
      spectrum = detail::fftw_complex_array(complexes);
      product = detail::fftw_complex_array(complexes);
      complex_capacity = complexes;
    }
  }

  /// The plan pair for (L, batch), created on first use with the current scratch arrays
  /// (fftw_malloc'ed arrays share the alignment FFTW planned for, so the new-array execute
  /// functions may run the plans on regrown arrays).
  const PlanPair& plans(std::int64_t length, std::int64_t batch) {
    for (const PlanPair& p : cache) {
      if (p.length == length && p.batch == batch) return p;
    }
    reserve(length, batch);
    const int n = static_cast<int>(length);
    const int howmany = static_cast<int>(batch);
    const int frequencies = n / 2 + 1;
    PlanPair p;
    p.length = length;
    p.batch = batch;
    p.forward.reset(fftw_plan_many_dft_r2c(1, &n, howmany, padded.get(), nullptr, 1, n,
                                           spectrum.get(), nullptr, 1, frequencies, FFTW_ESTIMATE));
    p.backward.reset(fftw_plan_many_dft_c2r(1, &n, howmany, product.get(), nullptr, 1, frequencies,
                                            convolution.get(), nullptr, 1, n, FFTW_ESTIMATE));
    if (!p.forward || !p.backward) {
      throw Error("history_fft_host: FFTW could not plan a batch of " + str(batch) +
                  " transforms of length " + str(length));
    }
    cache.push_back(std::move(p));
    return cache.back();
  }

  HistoryOptions options;
  std::vector<PlanPair> cache;
  detail::FftwArray<double> padded;
  detail::FftwArray<double> convolution;
  detail::FftwArray<fftw_complex> spectrum;
  detail::FftwArray<fftw_complex> product;
  std::size_t real_capacity = 0;
  std::size_t complex_capacity = 0;
  // cuFFT plans of history_fft_cuda when options.cuda_resources is null.
  CudaResources cuda;
};

HistoryWorkspace::HistoryWorkspace(HistoryOptions options)
    : impl_(std::make_unique<Impl>(options)) {
  if (options.max_batch_doubles < 1) {
    throw Error("HistoryWorkspace: max_batch_doubles must be positive");
  }
}
HistoryWorkspace::~HistoryWorkspace() = default;
HistoryWorkspace::HistoryWorkspace(HistoryWorkspace&&) noexcept = default;
HistoryWorkspace& HistoryWorkspace::operator=(HistoryWorkspace&&) noexcept = default;

const HistoryOptions& HistoryWorkspace::options() const {
  return impl_->options;
}
std::int64_t HistoryWorkspace::plans_created() const {
  return static_cast<std::int64_t>(impl_->cache.size());
}
CudaResources& HistoryWorkspace::cuda_resources() {
  if (impl_->options.cuda_resources != nullptr) return *impl_->options.cuda_resources;
  return impl_->cuda;
}

// --- checks ------------------------------------------------------------------------------

void check_history_block(const HistoryBlock& b, const char* caller) {
  const detail::Who who{caller};
  if (b.components < 0 || b.signal_rows < 0 || b.output_rows < 0) {
    throw Error(who + ": negative size (components " + str(b.components) + ", signal rows " +
                str(b.signal_rows) + ", output rows " + str(b.output_rows) + ")");
  }
  if (b.rules != 1 && b.rules != 2) {
    throw Error(who + ": rules must be 1 or 2, got " + std::to_string(b.rules));
  }
  if (b.components == 0 || b.output_rows == 0) return;
  if (b.offset < 1) throw Error(who + ": offset must be >= 1, got " + str(b.offset));
  if (b.stride < b.components) {
    throw Error(who + ": stride " + str(b.stride) + " is smaller than the " + str(b.components) +
                " components of a row");
  }
  if (b.signal_rows > 0 && b.signal == nullptr) throw Error(who + ": null signal");
  for (int r = 0; r < b.rules; ++r) {
    if (b.output[r] == nullptr) throw Error(who + ": null output for rule " + std::to_string(r));
  }
  const std::int64_t rows = std::max(b.signal_rows, b.output_rows);
  if (rows > std::numeric_limits<std::int64_t>::max() / 4 / b.stride) {
    throw Error(who + ": block of " + str(rows) + " rows of stride " + str(b.stride) +
                " is too large");
  }
}

void check_history_fft(const HistoryBlock& b, const HistorySpectra& s, const char* caller) {
  check_history_block(b, caller);
  const detail::Who who{caller};
  if (b.components == 0 || b.output_rows == 0 || b.signal_rows == 0) return;
  if (b.offset != b.signal_rows) {
    throw Error(who +
                ": the FFT path adds an adjacent square (offset == signal rows), got offset " +
                str(b.offset) + " for " + str(b.signal_rows) + " signal rows");
  }
  if (b.output_rows > b.signal_rows) {
    throw Error(who + ": " + str(b.output_rows) + " output rows exceed the " + str(b.signal_rows) +
                " signal rows");
  }
  if (s.fft_length < b.signal_rows + b.output_rows - 1) {
    throw Error(who + ": FFT length " + str(s.fft_length) +
                " is below m + p - 1 = " + str(b.signal_rows + b.output_rows - 1));
  }
  if (s.fft_length > INT_MAX) throw Error(who + ": FFT length exceeds FFTW's int range");
  for (int r = 0; r < b.rules; ++r) {
    if (s.spectrum[r] == nullptr) {
      throw Error(who + ": null weight spectrum for rule " + std::to_string(r));
    }
  }
}

// --- spectra -----------------------------------------------------------------------------

std::vector<double> history_spectrum(const double* weights, std::int64_t fft_length) {
  if (fft_length < 1 || fft_length > INT_MAX) {
    throw Error("history_spectrum: FFT length must lie in [1, INT_MAX], got " + str(fft_length));
  }
  if (weights == nullptr) throw Error("history_spectrum: null weights");
  const auto n = static_cast<std::size_t>(fft_length);
  auto real = detail::fftw_real_array(n);
  auto spectrum = detail::fftw_complex_array(n / 2 + 1);
  const int len = static_cast<int>(fft_length);
  const detail::FftwPlan plan(fftw_plan_dft_r2c_1d(len, real.get(), spectrum.get(), FFTW_ESTIMATE));
  if (!plan) throw Error("history_spectrum: FFTW could not plan the transform");
  std::copy(weights + 1, weights + 1 + fft_length, real.get());
  fftw_execute(plan.get());
  const double scale = 1.0 / static_cast<double>(fft_length);
  std::vector<double> out(2 * (n / 2 + 1));
  for (std::size_t k = 0; k < n / 2 + 1; ++k) {
    out[2 * k] = spectrum[k][0] * scale;
    out[2 * k + 1] = spectrum[k][1] * scale;
  }
  return out;
}

// --- direct sum --------------------------------------------------------------------------

void history_direct_host(const HistoryBlock& b, const HistoryWeights& w) {
  constexpr const char* who = "history_direct_host";
  check_history_block(b, who);
  if (b.components == 0 || b.output_rows == 0 || b.signal_rows == 0) return;
  for (int r = 0; r < b.rules; ++r) {
    if (w.weights[r] == nullptr) {
      throw Error(std::string(who) + ": null weights for rule " + std::to_string(r));
    }
  }
  if (w.count < b.offset + b.output_rows) {
    throw Error(std::string(who) + ": " + str(w.count) + " weights, the block reads up to K(" +
                str(b.offset + b.output_rows - 1) + ")");
  }
  detail::require_kokkos(who);
  const std::int64_t c = b.components;
  const std::int64_t stride = b.stride;
  const std::int64_t m = b.signal_rows;
  const std::int64_t p = b.output_rows;
  const std::int64_t offset = b.offset;
  const int rules = b.rules;
  const double* f = b.signal;
  const double* k0 = w.weights[0];
  const double* k1 = rules == 2 ? w.weights[1] : w.weights[0];
  double* out0 = b.output[0];
  double* out1 = rules == 2 ? b.output[1] : b.output[0];
  const std::int64_t full = c / kPack;
  if (full > 0) {
    Kokkos::parallel_for(kLabelHistoryDirectHost, HostPolicy(0, full), [=](const std::int64_t q) {
      detail::history_direct_pack<kPack>(q * kPack, stride, m, p, offset, rules, f, k0, k1, out0,
                                         out1);
    });
  }
  // The remaining components one by one (same arithmetic per component).
  for (std::int64_t i = full * kPack; i < c; ++i) {
    detail::history_direct_pack<1>(i, stride, m, p, offset, rules, f, k0, k1, out0, out1);
  }
}

// --- FFT ---------------------------------------------------------------------------------

void history_fft_host(const HistoryBlock& b, const HistorySpectra& s, HistoryWorkspace& ws) {
  constexpr const char* who = "history_fft_host";
  check_history_fft(b, s, who);
  if (b.components == 0 || b.output_rows == 0 || b.signal_rows == 0) return;
  detail::require_kokkos(who);
  HistoryWorkspace::Impl& impl = ws.impl();
  const std::int64_t c = b.components;
  const std::int64_t length = s.fft_length;
  const std::int64_t frequencies = length / 2 + 1;
  const std::int64_t m = b.signal_rows;
  const std::int64_t p = b.output_rows;
  const std::int64_t stride = b.stride;
  const std::int64_t chunk =
      std::clamp<std::int64_t>(impl.options.max_batch_doubles / length, 1, c);
  for (std::int64_t c0 = 0; c0 < c; c0 += chunk) {
    const std::int64_t cc = std::min(chunk, c - c0);
    const HistoryWorkspace::Impl::PlanPair& plans = impl.plans(length, cc);
    impl.reserve(length, cc);
    double* padded = impl.padded.get();
    double* conv = impl.convolution.get();
    double* spectrum = reinterpret_cast<double*>(impl.spectrum.get());
    double* product = reinterpret_cast<double*>(impl.product.get());
    const double* signal = b.signal + c0;
    const std::int64_t tiles = (cc + kTile - 1) / kTile;
    Kokkos::parallel_for(kLabelHistoryPadHost, HostPolicy(0, tiles), [=](const std::int64_t q) {
      const int count = static_cast<int>(std::min<std::int64_t>(kTile, cc - q * kTile));
      detail::history_pad_tile<kTile>(q * kTile, count, length, m, stride, signal, padded);
    });
    fftw_execute_dft_r2c(plans.forward.get(), padded, impl.spectrum.get());
    for (int r = 0; r < b.rules; ++r) {
      const double* weights = s.spectrum[r];
      Kokkos::parallel_for(kLabelHistoryMultiplyHost, HostPolicy(0, cc), [=](const std::int64_t i) {
        for (std::int64_t k = 0; k < frequencies; ++k) {
          detail::history_multiply_value(i * frequencies + k, k, spectrum, weights, product);
        }
      });
      fftw_execute_dft_c2r(plans.backward.get(), impl.product.get(), conv);
      double* out = b.output[r] + c0;
      Kokkos::parallel_for(
          kLabelHistoryExtractHost, HostPolicy(0, tiles), [=](const std::int64_t q) {
            const int count = static_cast<int>(std::min<std::int64_t>(kTile, cc - q * kTile));
            detail::history_extract_tile<kTile>(q * kTile, count, p, stride, length, m, conv, out);
          });
    }
  }
}

}  // namespace fracmfg::kernels
