// FFT convolution against the direct sum: agreement at every point, linear (not circular)
// results, odd and prime sizes, batches, and the general (full) output length.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "fracmfg/frac/convolution.hpp"
#include "fracmfg/frac/weights.hpp"

namespace {

using namespace fracmfg::frac;

std::vector<double> random_signal(std::size_t n, unsigned seed, bool with_signs) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> magnitude(0.5, 1.5);
  std::bernoulli_distribution sign(0.5);
  std::vector<double> f(n);
  for (double& v : f) v = (with_signs && sign(gen)) ? -magnitude(gen) : magnitude(gen);
  return f;
}

std::vector<double> absolute(std::vector<double> v) {
  for (double& x : v) x = std::fabs(x);
  return v;
}

std::vector<double> direct(const std::vector<double>& w, const std::vector<double>& f) {
  std::vector<double> c(f.size());
  convolve_direct(w.data(), w.size(), f.data(), f.size(), c.data(), c.size());
  return c;
}

// Small, odd, prime and power-of-two sizes, and N = 10^5 once (the O(N^2) reference
// dominates the test's run time).
const std::vector<std::size_t> kSizes = {1,  2,   3,   5,    7,    16,   17,
                                         97, 127, 128, 1000, 1009, 4096, 10007};
constexpr std::size_t kLargeSize = 100000;

TEST(Convolution, FftMatchesDirectRelativeToEachPointsTerms) {
  // Grunwald-Letnikov derivative weights change sign, so a point value may cancel; the
  // per-point relative error is measured against the size of its own terms,
  // S_n = sum_k |w_k| |f_{n-k}| (the condition scale of the sum at that point).
  for (double alpha : {0.5, 1.5}) {
    auto sizes = kSizes;
    if (alpha == 0.5) sizes.push_back(kLargeSize);
    for (std::size_t n : sizes) {
      const auto w = gl_weights(alpha, n);
      const auto f = random_signal(n, 1234u + static_cast<unsigned>(n), true);
      const auto ref = direct(w, f);
      // The scale only sets the tolerance: its FFT evaluation is accurate enough.
      const auto scale = Convolution(absolute(w), n, ConvolutionMethod::fft).apply(absolute(f));
      Convolution conv(w, n, ConvolutionMethod::fft);
      const auto got = conv.apply(f);
      double worst = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        worst = std::max(worst, std::fabs(got[j] - ref[j]) / scale[j]);
      }
      EXPECT_LE(worst, 1e-11) << "alpha = " << alpha << " N = " << n;
    }
  }
}

TEST(Convolution, FftMatchesDirectRelativeAtEveryPointForPositiveWeights) {
  // GL weights of the fractional integral (order -alpha) and rectangle product-integration
  // weights are positive; with positive samples every output is a sum of positive terms,
  // and FFT and direct agree in the plain relative sense at every point.
  for (std::size_t n : kSizes) {
    const auto f = random_signal(n, 99u + static_cast<unsigned>(n), false);
    const std::vector<std::vector<double>> weight_sets = {gl_weights(-0.5, n),
                                                          rl_rectangle_weights(0.7, 1.0 / n, n)};
    for (const auto& w : weight_sets) {
      const auto ref = direct(w, f);
      const auto got = Convolution(w, n, ConvolutionMethod::fft).apply(f);
      double worst = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        worst = std::max(worst, std::fabs(got[j] - ref[j]) / std::fabs(ref[j]));
      }
      EXPECT_LE(worst, 1e-11) << "N = " << n;
    }
  }
}

TEST(Convolution, IsLinearNotCircular) {
  // w = e_{N-1}, f = e_{N-1}: the linear convolution's only non-zero entry is at 2N-2, past
  // the N outputs, so every output is 0; a length-N circular convolution would put a 1 at
  // N-2. With all-ones weights the outputs are prefix sums (exact integers).
  for (std::size_t n : {2, 3, 8, 17, 100}) {
    std::vector<double> e(n, 0.0);
    e.back() = 1.0;
    for (auto method : {ConvolutionMethod::fft, ConvolutionMethod::direct}) {
      const auto c = Convolution(e, n, method).apply(e);
      for (std::size_t j = 0; j < n; ++j) EXPECT_NEAR(c[j], 0.0, 1e-15) << "N = " << n;
      std::vector<double> f(n);
      for (std::size_t j = 0; j < n; ++j) f[j] = static_cast<double>(j + 1);
      const auto prefix = Convolution(std::vector<double>(n, 1.0), n, method).apply(f);
      for (std::size_t j = 0; j < n; ++j) {
        EXPECT_NEAR(prefix[j], (j + 1.0) * (j + 2.0) / 2.0, 1e-11 * (j + 1.0) * (j + 2.0));
      }
    }
  }
}

TEST(Convolution, FullOutputMatchesDirect) {
  const std::vector<double> w = {1.0, -2.0, 0.5, 3.0, 0.25};
  const auto f = random_signal(7, 7u, true);
  const std::size_t full = w.size() + f.size() - 1;
  std::vector<double> ref(full + 3);
  convolve_direct(w.data(), w.size(), f.data(), f.size(), ref.data(), ref.size());
  for (std::size_t k = full; k < ref.size(); ++k) EXPECT_EQ(ref[k], 0.0);
  Convolution conv(w, f.size(), full + 3, ConvolutionMethod::fft);
  EXPECT_GE(conv.fft_length(), full);
  const auto got = conv.apply(f);
  ASSERT_EQ(got.size(), ref.size());
  for (std::size_t k = 0; k < ref.size(); ++k) EXPECT_NEAR(got[k], ref[k], 1e-13) << k;
}

TEST(Convolution, BatchSharesTheWeightsAndMatchesSingleApplies) {
  const std::size_t n = 777;
  const std::size_t count = 4;
  const auto w = gl_weights(0.3, n);
  const auto f = random_signal(n * count, 5u, true);
  Convolution conv(w, n, ConvolutionMethod::fft);
  std::vector<double> c(n * count);
  conv.apply_batch(f.data(), c.data(), count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::vector<double> fi(f.begin() + i * n, f.begin() + (i + 1) * n);
    const auto ref = direct(w, fi);
    const auto scale = direct(absolute(w), absolute(fi));
    for (std::size_t j = 0; j < n; ++j)
      EXPECT_LE(std::fabs(c[i * n + j] - ref[j]), 1e-12 * scale[j]);
  }
}

TEST(Convolution, AutomaticPicksDirectForSmallAndFftForLargeSizes) {
  EXPECT_EQ(resolve_convolution_method(ConvolutionMethod::automatic, 8, 8, 8),
            ConvolutionMethod::direct);
  EXPECT_EQ(resolve_convolution_method(ConvolutionMethod::automatic, 1 << 14, 1 << 14, 1 << 14),
            ConvolutionMethod::fft);
  EXPECT_EQ(resolve_convolution_method(ConvolutionMethod::fft, 8, 8, 8), ConvolutionMethod::fft);
  const auto w = gl_weights(0.5, 20000);
  const auto f = random_signal(20000, 3u, true);
  EXPECT_EQ(Convolution(w, f.size()).method(), ConvolutionMethod::fft);
  EXPECT_EQ(convolve(w, f).size(), f.size());
}

TEST(Convolution, NextFastSizeIsTheSmallestSevenSmoothNumber) {
  auto smooth = [](std::size_t m) {
    for (std::size_t p : {2, 3, 5, 7}) {
      while (m % p == 0) m /= p;
    }
    return m == 1;
  };
  EXPECT_EQ(next_fast_fft_size(0), 1u);
  EXPECT_EQ(next_fast_fft_size(1), 1u);
  for (std::size_t n = 2; n < 3000; ++n) {
    const std::size_t m = next_fast_fft_size(n);
    ASSERT_GE(m, n);
    EXPECT_TRUE(smooth(m)) << m;
    for (std::size_t k = n; k < m; ++k) EXPECT_FALSE(smooth(k)) << k;
  }
}

}  // namespace
