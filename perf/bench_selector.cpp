// Cost of the per-call selector: place() (the decision) and run() around an empty kernel
// (decision + two clock reads + statistics + model update). Targets: median place() <= 50 ns,
// run() bookkeeping <= 200 ns.
//
//   ./perf/bench_selector --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
//
// The hardware is described (a node with one A100), so the figures do not depend on the
// machine having a GPU; the CUDA "kernel" is an empty function like the host one.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>

#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/selector.hpp"

namespace fe = fracmfg::exec;

namespace {

fe::Hardware node() {
  return fe::Hardware::from_yaml(
      "host_name: bench\nhost_cores: 8\nkokkos_host_concurrency: 8\ncuda_compiled: true\n"
      "gpus:\n  - {name: A100, cc: \"8.0\", multiprocessors: 108, memory_gb: 40}\n",
      "bench.yaml");
}

fe::SelectorConfig config(fe::BackendChoice backend) {
  fe::SelectorConfig c;
  c.backend = backend;
  c.use_environment = false;
  c.persist = false;
  c.activate_device = false;
  return c;
}

// Sizes on both sides of the crossover, so both branches of the model are taken.
std::array<fe::Workload, 8> workloads(fe::KernelId k) {
  std::array<fe::Workload, 8> w{};
  std::int64_t n = 100;
  for (auto& x : w) {
    x.kernel = k;
    x.elements = n;
    x.bytes = 16.0 * static_cast<double>(n);
    x.transfer_bytes = 0.0;
    x.flops = 2.0 * static_cast<double>(n);
    x.device_bytes = 16.0 * static_cast<double>(n);
    n *= 10;
  }
  return w;
}

void BM_place(benchmark::State& state) {
  fe::Selector sel(node(), config(fe::BackendChoice::automatic));
  const auto w = workloads(sel.kernel("bench"));
  std::size_t i = 0;
  for (auto _ : state) {
    fe::Decision d = sel.place(w[i++ & 7]);
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_place);

void BM_run_empty_host(benchmark::State& state) {
  fe::Selector sel(node(), config(fe::BackendChoice::cpu));
  const auto w = workloads(sel.kernel("bench"));
  std::size_t i = 0;
  for (auto _ : state) {
    fe::RunResult r = sel.run(
        w[i++ & 7], [] {}, [] {});
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_run_empty_host);

void BM_run_empty_auto(benchmark::State& state) {
  fe::Selector sel(node(), config(fe::BackendChoice::automatic));
  const auto w = workloads(sel.kernel("bench"));
  std::size_t i = 0;
  for (auto _ : state) {
    fe::RunResult r = sel.run(
        w[i++ & 7], [] {}, [] {});
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_run_empty_auto);

// The clock alone, to separate timing cost from bookkeeping.
void BM_steady_clock_pair(benchmark::State& state) {
  fe::Selector sel(node(), config(fe::BackendChoice::cpu));
  for (auto _ : state) {
    const double t0 = sel.now();
    const double t1 = sel.now();
    benchmark::DoNotOptimize(t1 - t0);
  }
}
BENCHMARK(BM_steady_clock_pair);

}  // namespace

BENCHMARK_MAIN();
