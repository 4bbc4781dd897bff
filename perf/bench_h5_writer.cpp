// io::H5Writer time series (Release build): the cost of writing many levels.
//
//  - BM_SmallLevels/N: N levels of a field of one value (an ODE's component), written from
//    the rank's array (the fode output's path), then committed: whole file, 10^3 .. 10^6
//    levels. The time per level must stay flat as N grows (O(N) work, a fixed number of
//    HDF5 objects).
//  - BM_SmallLevelsVec/N: the same from a DMDA Vec (each write checked on every rank).
//  - BM_LargeLevels/N: N levels of a 512 x 512 field (2 MiB each, chunks cut in two).
//
//   build/perf/bench_h5_writer                                  # all, one rank
//   build/perf/bench_h5_writer --benchmark_filter=SmallLevels/1048576
//   mpiexec -n 2 build/perf/bench_h5_writer --benchmark_filter=Large
//
// Files go to $TMPDIR (default /tmp), removed after each run. Counters: ns_per_level,
// MB_per_s (field data written per second), bytes (file size of the last run).
#include <benchmark/benchmark.h>
#include <mpi.h>
#include <petscdmda.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "mpi_benchmark_main.hpp"

namespace fs = std::filesystem;

namespace {

std::string scratch_file(const char* name) {
  const char* tmp = std::getenv("TMPDIR");
  return (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
          (std::string("fracmfg_bench_h5_") + name + ".h5"))
      .string();
}

struct Grid {
  DM da = nullptr;
  Vec v = nullptr;
  Grid(PetscInt nx, PetscInt ny) {
    if (ny == 1) {
      DMDACreate1d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, nx, 1, 0, nullptr, &da);
    } else {
      DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, nx, ny,
                   PETSC_DECIDE, PETSC_DECIDE, 1, 0, nullptr, nullptr, &da);
    }
    DMSetUp(da);
    DMCreateGlobalVector(da, &v);
    VecSet(v, 0.5);
  }
  Grid(const Grid&) = delete;
  Grid& operator=(const Grid&) = delete;
  ~Grid() {
    VecDestroy(&v);
    DMDestroy(&da);
  }
};

void report(benchmark::State& state, std::int64_t levels, double values_per_level,
            const std::string& path) {
  const double total = static_cast<double>(state.iterations()) * static_cast<double>(levels);
  state.counters["ns_per_level"] =
      benchmark::Counter(total * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["MB_per_s"] =
      benchmark::Counter(total * values_per_level * 8e-6, benchmark::Counter::kIsRate);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::error_code ec;
    state.counters["bytes"] = static_cast<double>(fs::file_size(path, ec));
    fs::remove(path, ec);
    fs::path xmf(path);
    fs::remove(xmf.replace_extension(".xmf"), ec);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void BM_SmallLevels(benchmark::State& state) {
  const std::int64_t levels = state.range(0);
  const std::string path = scratch_file("small");
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Grid g(size, 1);  // one value per rank
  const PetscScalar* local = nullptr;
  VecGetArrayRead(g.v, &local);
  for (auto _ : state) {
    fracmfg::io::H5WriterOptions opts;
    opts.problem = "bench";
    opts.write_xdmf = false;
    fracmfg::io::H5Writer w(MPI_COMM_WORLD, path, opts);
    fracmfg::io::FieldInfo info;
    info.expected_levels = levels;
    w.define_field("y", info);
    for (std::int64_t n = 0; n < levels; ++n) {
      w.write_field("y", g.da, local, n, 1e-3 * static_cast<double>(n));
    }
    w.commit();
  }
  VecRestoreArrayRead(g.v, &local);
  report(state, levels, size, path);
}
BENCHMARK(BM_SmallLevels)
    ->RangeMultiplier(10)
    ->Range(1000, 1000000)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SmallLevelsVec(benchmark::State& state) {
  const std::int64_t levels = state.range(0);
  const std::string path = scratch_file("small_vec");
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Grid g(size, 1);
  for (auto _ : state) {
    fracmfg::io::H5WriterOptions opts;
    opts.write_xdmf = false;
    fracmfg::io::H5Writer w(MPI_COMM_WORLD, path, opts);
    for (std::int64_t n = 0; n < levels; ++n) {
      w.write_field("y", g.da, g.v, n, 1e-3 * static_cast<double>(n));
    }
    w.commit();
  }
  report(state, levels, size, path);
}
BENCHMARK(BM_SmallLevelsVec)
    ->RangeMultiplier(10)
    ->Range(1000, 100000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_LargeLevels(benchmark::State& state) {
  const std::int64_t levels = state.range(0);
  const std::string path = scratch_file("large");
  Grid g(512, 512);
  for (auto _ : state) {
    fracmfg::io::H5Writer w(MPI_COMM_WORLD, path);
    for (std::int64_t n = 0; n < levels; ++n) {
      w.write_field("u", g.da, g.v, n, 1e-3 * static_cast<double>(n));
    }
    w.commit();
  }
  report(state, levels, 512.0 * 512.0, path);
}
BENCHMARK(BM_LargeLevels)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return fracmfg::perf::mpi_benchmark_main(argc, argv);
}
