// Direct O(N^2) against FFT O(N log N) causal convolution (the history sum of the
// fractional operators), N = 2^5 .. 2^17 (direct up to 2^15).
//
//   ./perf/bench_frac_convolution --benchmark_min_time=0.2
//
// BM_ConvolutionFft times apply() with the weights' transform and the FFTW plans prepared
// once (the solvers' use); BM_ConvolutionFftWithSetup includes constructing the object
// (planning with FFTW_ESTIMATE and transforming the weights). The small sizes locate the
// crossover used by ConvolutionMethod::automatic (src/frac/convolution.cpp).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "fracmfg/frac/convolution.hpp"
#include "fracmfg/frac/weights.hpp"

namespace {

using fracmfg::frac::Convolution;
using fracmfg::frac::ConvolutionMethod;

std::vector<double> random_signal(std::size_t n) {
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> f(n);
  for (double& v : f) v = dist(gen);
  return f;
}

void run(benchmark::State& state, ConvolutionMethod method) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto f = random_signal(n);
  std::vector<double> c(n);
  Convolution conv(fracmfg::frac::gl_weights(0.6, n), n, method);
  for (auto _ : state) {
    conv.apply(f.data(), c.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["N"] = static_cast<double>(n);
  state.counters["fft_length"] = static_cast<double>(conv.fft_length());
}

void BM_ConvolutionDirect(benchmark::State& state) {
  run(state, ConvolutionMethod::direct);
}
void BM_ConvolutionFft(benchmark::State& state) {
  run(state, ConvolutionMethod::fft);
}

void BM_ConvolutionFftWithSetup(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto f = random_signal(n);
  const auto w = fracmfg::frac::gl_weights(0.6, n);
  std::vector<double> c(n);
  for (auto _ : state) {
    Convolution conv(w, n, ConvolutionMethod::fft);
    conv.apply(f.data(), c.data());
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["N"] = static_cast<double>(n);
}

}  // namespace

BENCHMARK(BM_ConvolutionDirect)->RangeMultiplier(2)->Range(1 << 5, 1 << 15);
BENCHMARK(BM_ConvolutionFft)->RangeMultiplier(2)->Range(1 << 5, 1 << 17);
BENCHMARK(BM_ConvolutionFftWithSetup)->RangeMultiplier(2)->Range(1 << 10, 1 << 17);

BENCHMARK_MAIN();
