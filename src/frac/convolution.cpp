#include "fracmfg/frac/convolution.hpp"

#include <climits>
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <sstream>
#include <utility>

#include "fracmfg/core/error.hpp"
#include "kernels/fftw_handles.hpp"

namespace fracmfg::frac {

namespace {

// Cost model of `automatic`, in units of one multiply-add of the direct sum: an FFT
// convolution of padded length L costs about kFftCostPerPoint * L log2 L + kFftFixedCost.
// Fitted to the direct and FFT timings of perf/bench_frac_convolution.cpp
// (docs/performance.md, "Host kernels"); with these constants the two meet near N = 48 in the
// causal case. The choice only affects speed, never the validity of the result.
constexpr double kFftCostPerPoint = 1.0;
constexpr double kFftFixedCost = 500.0;

// FFTW arrays and plans (kernels/fftw_handles.hpp).
namespace fftw = kernels::detail;

// Lengths that can contribute: only w_k and f_j with k, j < output reach an output n < output.
struct EffectiveLengths {
  std::size_t weights;
  std::size_t signal;
  std::size_t output;  // outputs that can be non-zero: min(output, weights + signal - 1)
};

EffectiveLengths effective_lengths(std::size_t weights, std::size_t signal, std::size_t output) {
  EffectiveLengths e{std::min(weights, output), std::min(signal, output), 0};
  e.output = (e.weights == 0 || e.signal == 0) ? 0 : std::min(output, e.weights + e.signal - 1);
  return e;
}

double direct_terms(const EffectiveLengths& e) {
  double terms = 0.0;
  for (std::size_t n = 0; n < e.output; ++n) {
    const std::size_t hi = std::min(n, e.weights - 1);
    const std::size_t lo = n + 1 > e.signal ? n + 1 - e.signal : 0;
    terms += static_cast<double>(hi - lo + 1);
  }
  return terms;
}

}  // namespace

const char* to_string(ConvolutionMethod method) {
  switch (method) {
    case ConvolutionMethod::automatic: return "automatic";
    case ConvolutionMethod::direct: return "direct";
    case ConvolutionMethod::fft: return "fft";
  }
  return "?";
}

std::size_t next_fast_fft_size(std::size_t n) {
  if (n <= 1) return 1;
  for (std::size_t m = n;; ++m) {
    std::size_t r = m;
    for (std::size_t p : {2, 3, 5, 7}) {
      while (r % p == 0) r /= p;
    }
    if (r == 1) return m;
  }
}

ConvolutionMethod resolve_convolution_method(ConvolutionMethod method, std::size_t weights,
                                             std::size_t signal, std::size_t output) {
  if (method != ConvolutionMethod::automatic) return method;
  const EffectiveLengths e = effective_lengths(weights, signal, output);
  if (e.output == 0) return ConvolutionMethod::direct;
  const double length = static_cast<double>(next_fast_fft_size(e.weights + e.signal - 1));
  const double fft_cost = kFftCostPerPoint * length * std::log2(length) + kFftFixedCost;
  return direct_terms(e) > fft_cost ? ConvolutionMethod::fft : ConvolutionMethod::direct;
}

void convolve_direct(const double* w, std::size_t nw, const double* f, std::size_t nf, double* c,
                     std::size_t nc) {
  const EffectiveLengths e = effective_lengths(nw, nf, nc);
  for (std::size_t n = 0; n < e.output; ++n) {
    const std::size_t hi = std::min(n, e.weights - 1);
    const std::size_t lo = n + 1 > e.signal ? n + 1 - e.signal : 0;
    double sum = 0.0;
    for (std::size_t k = lo; k <= hi; ++k) sum += w[k] * f[n - k];
    c[n] = sum;
  }
  std::fill(c + e.output, c + nc, 0.0);
}

std::vector<double> convolve(const std::vector<double>& w, const std::vector<double>& f,
                             ConvolutionMethod method) {
  Convolution conv(w, f.size(), method);
  return conv.apply(f);
}

struct Convolution::Impl {
  Impl(std::vector<double> w, std::size_t signal_length, std::size_t output_length,
       ConvolutionMethod requested)
      : signal(signal_length),
        output(output_length),
        eff(effective_lengths(w.size(), signal_length, output_length)),
        method(resolve_convolution_method(requested, w.size(), signal_length, output_length)),
        weights(std::move(w)),
        length(method == ConvolutionMethod::fft && eff.output > 0
                   ? next_fast_fft_size(eff.weights + eff.signal - 1)
                   : 0),
        real(fftw::fftw_real_array(length)),
        spectrum(fftw::fftw_complex_array(length / 2 + 1)),
        weights_spectrum(fftw::fftw_complex_array(length / 2 + 1)) {
    weights.resize(eff.weights);
    if (length == 0) return;
    if (length > static_cast<std::size_t>(INT_MAX)) {
      std::ostringstream os;
      os << "frac::Convolution: transform length " << length << " exceeds FFTW's int range";
      throw Error(os.str());
    }
    const int n = static_cast<int>(length);
    constexpr const char* kNoPlan = "frac::Convolution: FFTW could not create a plan";
    forward = fftw::checked_fftw_plan(
        fftw_plan_dft_r2c_1d(n, real.get(), spectrum.get(), FFTW_ESTIMATE), kNoPlan);
    backward = fftw::checked_fftw_plan(
        fftw_plan_dft_c2r_1d(n, spectrum.get(), real.get(), FFTW_ESTIMATE), kNoPlan);
    // The weights' transform, with the 1/L of the unnormalised inverse folded in.
    std::copy(weights.begin(), weights.end(), real.get());
    std::fill(real.get() + eff.weights, real.get() + length, 0.0);
    fftw_execute_dft_r2c(forward.get(), real.get(), weights_spectrum.get());
    const double scale = 1.0 / static_cast<double>(length);
    for (std::size_t i = 0; i < length / 2 + 1; ++i) {
      weights_spectrum.get()[i][0] *= scale;
      weights_spectrum.get()[i][1] *= scale;
    }
  }

  void apply(const double* f, double* c) {
    if (method == ConvolutionMethod::direct || length == 0) {
      convolve_direct(weights.data(), eff.weights, f, eff.signal, c, output);
      return;
    }
    std::copy(f, f + eff.signal, real.get());
    std::fill(real.get() + eff.signal, real.get() + length, 0.0);
    fftw_execute_dft_r2c(forward.get(), real.get(), spectrum.get());
    fftw_complex* s = spectrum.get();
    const fftw_complex* ws = weights_spectrum.get();
    for (std::size_t i = 0; i < length / 2 + 1; ++i) {
      const double re = s[i][0] * ws[i][0] - s[i][1] * ws[i][1];
      const double im = s[i][0] * ws[i][1] + s[i][1] * ws[i][0];
      s[i][0] = re;
      s[i][1] = im;
    }
    fftw_execute_dft_c2r(backward.get(), spectrum.get(), real.get());
    std::copy(real.get(), real.get() + eff.output, c);
    std::fill(c + eff.output, c + output, 0.0);
  }

  std::size_t signal;
  std::size_t output;
  EffectiveLengths eff;
  ConvolutionMethod method;
  std::vector<double> weights;
  std::size_t length;
  fftw::FftwArray<double> real;
  fftw::FftwArray<fftw_complex> spectrum;
  fftw::FftwArray<fftw_complex> weights_spectrum;
  fftw::FftwPlan forward;
  fftw::FftwPlan backward;
};

Convolution::Convolution(std::vector<double> weights, std::size_t signal_length,
                         ConvolutionMethod method)
    : Convolution(std::move(weights), signal_length, signal_length, method) {}

Convolution::Convolution(std::vector<double> weights, std::size_t signal_length,
                         std::size_t output_length, ConvolutionMethod method)
    : impl_(std::make_unique<Impl>(std::move(weights), signal_length, output_length, method)) {}

Convolution::~Convolution() = default;
Convolution::Convolution(Convolution&&) noexcept = default;
Convolution& Convolution::operator=(Convolution&&) noexcept = default;

std::size_t Convolution::signal_length() const {
  return impl_->signal;
}
std::size_t Convolution::output_length() const {
  return impl_->output;
}
ConvolutionMethod Convolution::method() const {
  return impl_->method;
}
std::size_t Convolution::fft_length() const {
  return impl_->length;
}

void Convolution::apply(const double* f, double* c) {
  impl_->apply(f, c);
}

std::vector<double> Convolution::apply(const std::vector<double>& f) {
  if (f.size() != impl_->signal) {
    std::ostringstream os;
    os << "frac::Convolution: signal of length " << f.size() << ", expected " << impl_->signal;
    throw Error(os.str());
  }
  std::vector<double> c(impl_->output);
  impl_->apply(f.data(), c.data());
  return c;
}

void Convolution::apply_batch(const double* f, double* c, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    impl_->apply(f + i * impl_->signal, c + i * impl_->output);
  }
}

}  // namespace fracmfg::frac
