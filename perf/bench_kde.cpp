// Gaussian kernel density estimates on the host: the FFT-binned estimate
// (kernels::kde_binned_host, O(N + G log G)) against the exact sum (kernels::kde_exact_host,
// O(N G)), N(0.5, 0.1) samples on [0, 1) with Silverman's bandwidth for 10^6 samples.
//
//   ./perf/bench_kde --benchmark_min_time=0.2
//
// The exact sum runs on 10^4 and 10^5 samples; it is linear in N, so its time for 10^6
// samples is that figure times 100 or 10. After the benchmarks, one timed call of each
// (binned at 10^6, exact at 10^5 scaled by 10) prints the ratio.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/kernels/kde.hpp"

namespace fk = fracmfg::kernels;

namespace {

constexpr std::int64_t full_samples = 1000000;

const std::vector<double>& samples(int axis) {
  static const std::vector<double> xs = [] {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> d(0.5, 0.1);
    std::vector<double> v(2 * full_samples);
    for (auto& x : v) x = d(rng);
    return v;
  }();
  static const std::vector<double> x(xs.begin(), xs.begin() + full_samples);
  static const std::vector<double> y(xs.begin() + full_samples, xs.end());
  return axis == 0 ? x : y;
}

double bandwidth() {
  static const double h = fk::silverman_bandwidth(samples(0).data(), nullptr, full_samples);
  return h;
}

fk::KdeAxis axis(std::int64_t g, fk::KdeBoundary b) {
  fk::KdeAxis a;
  a.spacing = 1.0 / static_cast<double>(g);
  a.origin = 0.5 * a.spacing;
  a.points = g;
  a.boundary = b;
  a.bandwidth = bandwidth();
  return a;
}

fk::KdeSamples first(std::int64_t n, int dim) {
  fk::KdeSamples s;
  s.count = n;
  s.x = samples(0).data();
  s.y = dim == 2 ? samples(1).data() : nullptr;
  return s;
}

void run(benchmark::State& state, fk::KdeFn* fn, const fk::KdeGrid& grid, std::int64_t n) {
  std::vector<double> f(static_cast<std::size_t>(grid.size()));
  const fk::KdeSamples s = first(n, grid.dim);
  for (auto _ : state) {
    fn(grid, s, f.data(), {});
    benchmark::DoNotOptimize(f.data());
  }
  state.SetItemsProcessed(state.iterations() * n);  // samples per second
  state.counters["samples"] = static_cast<double>(n);
  state.counters["grid"] = static_cast<double>(grid.size());
  state.counters["h_over_dx"] = grid.axes[0].bandwidth / grid.axes[0].spacing;
}

void BM_KdeBinned1D(benchmark::State& state) {
  const auto b = static_cast<fk::KdeBoundary>(state.range(1));
  run(state, fk::kde_binned_host, fk::kde_grid_1d(axis(1024, b)), state.range(0));
}
void BM_KdeExact1D(benchmark::State& state) {
  run(state, fk::kde_exact_host, fk::kde_grid_1d(axis(1024, fk::KdeBoundary::open)),
      state.range(0));
}
void BM_KdeBinned2D(benchmark::State& state) {
  const fk::KdeAxis a = axis(256, fk::KdeBoundary::reflecting);
  run(state, fk::kde_binned_host, fk::kde_grid_2d(a, a), state.range(0));
}

// Boundary codes: 0 open, 1 reflecting, 2 periodic.
BENCHMARK(BM_KdeBinned1D)
    ->ArgNames({"N", "boundary"})
    ->Args({full_samples, 0})
    ->Args({full_samples, 1})
    ->Args({full_samples, 2})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KdeExact1D)->ArgName("N")->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KdeBinned2D)->ArgName("N")->Arg(full_samples)->Unit(benchmark::kMillisecond);

double seconds(fk::KdeFn* fn, const fk::KdeGrid& grid, std::int64_t n) {
  std::vector<double> f(static_cast<std::size_t>(grid.size()));
  const auto t0 = std::chrono::steady_clock::now();
  fn(grid, first(n, grid.dim), f.data(), {});
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // removes its --benchmark_* flags
  fracmfg::core::EnvironmentOptions opts;
  opts.log_level = fracmfg::core::LogLevel::warn;
  fracmfg::core::Environment env(&argc, &argv, opts);  // MPI, PETSc, Kokkos
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const fk::KdeGrid grid = fk::kde_grid_1d(axis(1024, fk::KdeBoundary::open));
  const double binned = seconds(fk::kde_binned_host, grid, full_samples);
  const double exact = 10.0 * seconds(fk::kde_exact_host, grid, full_samples / 10);
  std::printf(
      "kde 1D, 10^6 samples, 1024 points, h = %.3g (%.2f dx): binned %.4f s, exact %.3f s "
      "(10^5 samples x 10), ratio exact/binned %.0f\n",
      bandwidth(), bandwidth() * 1024, binned, exact, exact / binned);
  return 0;
}
