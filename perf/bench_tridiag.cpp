// Batched tridiagonal solves on the host: kernels::tridiag_batched_host (Thomas, Kokkos loop
// over systems) against LAPACK's dgtsv (Gaussian elimination with partial pivoting) called
// once per system, on the same diagonally dominant data.
//
//   ./perf/bench_tridiag --benchmark_min_time=0.2
//   ./perf/bench_tridiag --benchmark_filter='n:64'
//
// Each iteration restores the arrays a solve overwrites (rhs for Thomas; dl, d, du and rhs
// for dgtsv) with the timer paused, so only the solves are timed. items/s counts rows.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/kernels/tridiag_batched.hpp"

extern "C" void dgtsv_(const int* n, const int* nrhs, double* dl, double* d, double* du, double* b,
                       const int* ldb, int* info);

namespace fk = fracmfg::kernels;

namespace {

struct Problem {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::vector<double> sub, diag, super, rhs;  // strided layout
};

Problem make_problem(std::int64_t m, std::int64_t n) {
  Problem p;
  p.m = m;
  p.n = n;
  const std::size_t total = static_cast<std::size_t>(m * n);
  p.sub.resize(total);
  p.diag.resize(total);
  p.super.resize(total);
  p.rhs.resize(total);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t i = 0; i < total; ++i) {
    p.sub[i] = u(rng);
    p.super[i] = u(rng);
    p.diag[i] = std::fabs(p.sub[i]) + std::fabs(p.super[i]) + 1.0;
    p.rhs[i] = u(rng);
  }
  return p;
}

std::vector<double> interleave(const std::vector<double>& v, std::int64_t m, std::int64_t n) {
  std::vector<double> out(v.size());
  for (std::int64_t k = 0; k < m; ++k) {
    for (std::int64_t i = 0; i < n; ++i) out[i * m + k] = v[k * n + i];
  }
  return out;
}

void report(benchmark::State& state, const Problem& p) {
  state.SetItemsProcessed(state.iterations() * p.m * p.n);
  state.counters["systems"] = static_cast<double>(p.m);
  state.counters["n"] = static_cast<double>(p.n);
}

void thomas_host(benchmark::State& state, fk::TridiagLayout layout, bool cyclic) {
  const Problem p = make_problem(state.range(0), state.range(1));
  const bool inter = layout == fk::TridiagLayout::interleaved;
  const std::vector<double> sub = inter ? interleave(p.sub, p.m, p.n) : p.sub;
  const std::vector<double> diag = inter ? interleave(p.diag, p.m, p.n) : p.diag;
  const std::vector<double> super = inter ? interleave(p.super, p.m, p.n) : p.super;
  const std::vector<double> rhs0 = inter ? interleave(p.rhs, p.m, p.n) : p.rhs;
  std::vector<double> rhs(rhs0.size());
  std::vector<double> work(fk::tridiag_workspace_size(p.m, p.n, cyclic));
  fk::TridiagBatch b;
  b.layout = layout;
  b.systems = p.m;
  b.size = p.n;
  b.sub = sub.data();
  b.diag = diag.data();
  b.super = super.data();
  b.rhs = rhs.data();
  b.workspace = work.data();
  fk::TridiagOptions opt;
  opt.cyclic = cyclic;
  for (auto _ : state) {
    state.PauseTiming();
    std::copy(rhs0.begin(), rhs0.end(), rhs.begin());
    state.ResumeTiming();
    fk::tridiag_batched_host(b, opt);
    benchmark::DoNotOptimize(rhs.data());
  }
  report(state, p);
}

void BM_ThomasHostStrided(benchmark::State& state) {
  thomas_host(state, fk::TridiagLayout::strided, false);
}
void BM_ThomasHostInterleaved(benchmark::State& state) {
  thomas_host(state, fk::TridiagLayout::interleaved, false);
}
void BM_CyclicThomasHostStrided(benchmark::State& state) {
  thomas_host(state, fk::TridiagLayout::strided, true);
}

void BM_LapackDgtsvPerSystem(benchmark::State& state) {
  const Problem p = make_problem(state.range(0), state.range(1));
  Problem w = p;
  const int n = static_cast<int>(p.n);
  const int nrhs = 1;
  for (auto _ : state) {
    state.PauseTiming();
    w.sub = p.sub;
    w.diag = p.diag;
    w.super = p.super;
    w.rhs = p.rhs;
    state.ResumeTiming();
    for (std::int64_t k = 0; k < p.m; ++k) {
      const std::size_t o = static_cast<std::size_t>(k * p.n);
      int info = 0;
      // dgtsv's dl holds rows 2..n of the sub-diagonal, du rows 1..n-1 of the super-diagonal.
      dgtsv_(&n, &nrhs, w.sub.data() + o + 1, w.diag.data() + o, w.super.data() + o,
             w.rhs.data() + o, &n, &info);
      if (info != 0) state.SkipWithError("dgtsv reported a singular system");
    }
    benchmark::DoNotOptimize(w.rhs.data());
  }
  report(state, p);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n"})->Args({1000, 1000})->Args({100000, 64})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_ThomasHostStrided)->Apply(sizes);
BENCHMARK(BM_ThomasHostInterleaved)->Apply(sizes);
BENCHMARK(BM_CyclicThomasHostStrided)->Apply(sizes);
BENCHMARK(BM_LapackDgtsvPerSystem)->Apply(sizes);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // removes its --benchmark_* flags
  fracmfg::core::EnvironmentOptions opts;
  opts.log_level = fracmfg::core::LogLevel::warn;
  fracmfg::core::Environment env(&argc, &argv, opts);  // MPI, PETSc, Kokkos
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
