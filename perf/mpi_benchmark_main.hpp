#pragma once
// main() of a Google Benchmark executable whose benchmarks make collective calls: every rank
// runs every benchmark (in the same order, so the collectives match), rank 0 reports.
//
//   int main(int argc, char** argv) { return fracmfg::perf::mpi_benchmark_main(argc, argv); }

#include <benchmark/benchmark.h>

#include <vector>

#include "fracmfg/core/environment.hpp"

namespace fracmfg::perf {

/// Discards the results (ranks other than 0).
class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

/// Starts the environment (MPI, PETSc, Kokkos; log level warn), runs the benchmarks named on
/// the command line on every rank and reports them on rank 0. Returns main's exit code.
inline int mpi_benchmark_main(int argc, char** argv) {
  core::EnvironmentOptions opts;
  opts.log_level = core::LogLevel::warn;
  core::Environment env(&argc, &argv, opts);
  benchmark::Initialize(&argc, argv);
  if (env.rank() != 0) {
    NullReporter quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace fracmfg::perf
