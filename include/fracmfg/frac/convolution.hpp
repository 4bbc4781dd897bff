#pragma once
// Linear (not circular) discrete convolution with fixed weights, by FFT or directly.
//
//   c_n = sum_k w_k f_{n-k},   over 0 <= k < weights, 0 <= n-k < signal,   n = 0..output-1.
//
// The common case, the history sum of a fractional operator, is the causal convolution of
// N samples with N weights truncated to N outputs: c_n = sum_{k=0}^{n} w_k f_{n-k}. The
// FFT path zero-pads to the smallest length L >= M' + N' - 1 (M', N' the weights and
// samples that can reach an output; 2N - 1 in the causal case) whose prime factors are 2,
// 3, 5 and 7, so no output is polluted by wrap-around; it costs O(L log L) per signal,
// against O(M' N') for the direct sum, which stays as the reference and is used below the
// crossover (see ConvolutionMethod::automatic).
//
// Accuracy: the direct sum has the usual forward error <= n u sum_k |w_k| |f_{n-k}|
// (u = 2^-53). The FFT result has a normwise error of order u log2(L) ||w||_2 ||f||_2 at
// every point, so a point whose own terms sum_k |w_k||f_{n-k}| are much smaller than those
// norms loses relative accuracy (e.g. the first outputs when the weights grow with k, as
// the product-integration weights do for alpha > 1). For decaying weights (Grunwald-
// Letnikov, L1, rectangle weights with alpha <= 1) both agree to ~1e-13 relative at every
// point for N up to 10^5 (tests/unit/frac_convolution_test.cpp).
//
// FFTW is used privately (its types never appear here). Plan creation in FFTW is not
// thread-safe: construct and destroy Convolution objects from one thread at a time. apply()
// uses the object's own work arrays: one thread per object. Not collective (node-local).

#include <cstddef>
#include <memory>
#include <vector>

namespace fracmfg::frac {

enum class ConvolutionMethod {
  automatic,  ///< FFT when its estimated cost is lower than the direct sum's
  direct,     ///< the O(M N) sum
  fft,        ///< zero-padded FFT, O(L log L)
};

/// "automatic" | "direct" | "fft".
const char* to_string(ConvolutionMethod method);

/// Smallest m >= n whose prime factors are all in {2, 3, 5, 7} (1 for n <= 1).
std::size_t next_fast_fft_size(std::size_t n);

/// The method `automatic` resolves to for these lengths (never returns automatic).
ConvolutionMethod resolve_convolution_method(ConvolutionMethod method, std::size_t weights,
                                             std::size_t signal, std::size_t output);

/// Reference direct sum: c[n] = sum_k w[k] f[n-k] for n = 0..nc-1 over the valid k (w has
/// nw entries, f has nf). c must not alias w or f.
void convolve_direct(const double* w, std::size_t nw, const double* f, std::size_t nf, double* c,
                     std::size_t nc);

/// Causal convolution truncated to f.size() outputs: c_n = sum_{k=0}^{n} w_k f_{n-k}
/// (w_k = 0 for k >= w.size()). Plans a transform for this one call; reuse a Convolution
/// object when the weights are applied more than once.
std::vector<double> convolve(const std::vector<double>& w, const std::vector<double>& f,
                             ConvolutionMethod method = ConvolutionMethod::automatic);

/// Convolution with fixed weights: the weights' transform is computed once, at
/// construction, and shared by every apply() and apply_batch().
class Convolution {
 public:
  /// Causal, truncated: signals and outputs of length `signal_length`.
  Convolution(std::vector<double> weights, std::size_t signal_length,
              ConvolutionMethod method = ConvolutionMethod::automatic);
  /// General: outputs n = 0..output_length-1 of the linear convolution (output_length up to
  /// weights.size() + signal_length - 1, the full convolution; larger values give zeros).
  Convolution(std::vector<double> weights, std::size_t signal_length, std::size_t output_length,
              ConvolutionMethod method = ConvolutionMethod::automatic);
  ~Convolution();
  Convolution(Convolution&&) noexcept;
  Convolution& operator=(Convolution&&) noexcept;
  Convolution(const Convolution&) = delete;
  Convolution& operator=(const Convolution&) = delete;

  std::size_t signal_length() const;
  std::size_t output_length() const;
  /// direct or fft: what `automatic` resolved to.
  ConvolutionMethod method() const;
  /// Padded transform length L (0 for the direct method).
  std::size_t fft_length() const;

  /// c[0..output_length) from f[0..signal_length); c must not alias f.
  void apply(const double* f, double* c);
  std::vector<double> apply(const std::vector<double>& f);
  /// `count` signals stored one after the other (signal i at f + i * signal_length), outputs
  /// likewise (output i at c + i * output_length).
  void apply_batch(const double* f, double* c, std::size_t count);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::frac
