// Fractional PDE kernels (Release build):
//
//  - the L1 history of the Caputo derivative on a 1D grid of 10^4 points over N_t steps:
//    the direct sum (every level kept: memory N_x N_t, work N_x N_t^2 / 2) against the
//    sum-of-exponentials history (memory N_x N_exp, work N_x N_t N_exp), uniform mesh,
//    T = 1, SOE tolerance 1e-10 (BM_HistoryDirect / BM_HistorySoe, one run each);
//  - the Riesz operator of order 1.5 on N = 2^10 .. 2^14 unknowns: the FFT shell matrix
//    against the assembled dense matrix (PETSc MATDENSE, BLAS dgemv) for one product
//    (BM_RieszProductShell / BM_RieszProductDense), and one Crank-Nicolson step solved by
//    CG with the Strang circulant preconditioner on the shell (BM_RieszStepShellCg);
//  - the 2D periodic Riesz operator on n x n points (n = 128 .. 1024): one product and one
//    circulant inverse through kernels::circulant_2d (BM_Riesz2dKernel) against the
//    previous code, the same two FFTW 2D transform pairs with the multiplier evaluated per
//    mode inline (BM_Riesz2dPrevious).
//
//   build-fpde-rel/perf/bench_fpde --benchmark_filter=History
//   build-fpde-rel/perf/bench_fpde --benchmark_filter=Riesz --benchmark_min_time=0.2
//   mpiexec -n 2 build-fpde-rel/perf/bench_fpde --benchmark_filter=Riesz   # distributed
//   build/perf/bench_fpde --benchmark_filter=Riesz2d --benchmark_repetitions=5
//
// Counters: memory_MB (the history's vectors, or the matrix), N_exp, us_per_step, its.
#include <benchmark/benchmark.h>
#include <fftw3.h>
#include <mpi.h>
#include <petscksp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/frac/fpde_grid.hpp"
#include "fracmfg/frac/fpde_history.hpp"
#include "fracmfg/frac/riesz_operator.hpp"
#include "fracmfg/frac/riesz_shell.hpp"
#include "fracmfg/io/config.hpp"
#include "mpi_benchmark_main.hpp"

namespace {

using fracmfg::frac::FpdeTimeMesh;
using fracmfg::frac::L1History;

constexpr std::size_t kPoints = 10000;

void run_history(benchmark::State& state, L1History::Method method) {
  const auto steps = static_cast<std::int64_t>(state.range(0));
  const FpdeTimeMesh mesh(1.0, steps);
  std::vector<double> du(kPoints);
  for (std::size_t i = 0; i < kPoints; ++i) du[i] = 1e-3 * std::sin(0.001 * i);
  std::size_t bytes = 0;
  std::size_t terms = 0;
  double seconds = 0.0;
  double setup = 0.0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    L1History hist(method, 0.5, mesh, kPoints, 1e-10);
    const auto t1 = std::chrono::steady_clock::now();
    terms = hist.soe() ? hist.soe()->size() : 0;
    for (std::int64_t n = 1; n <= steps; ++n) {
      hist.push(du.data());
      benchmark::DoNotOptimize(hist.history().data());
    }
    bytes = hist.stored_bytes();
    setup += std::chrono::duration<double>(t1 - t0).count();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  }
  const auto runs = static_cast<double>(state.iterations());
  state.counters["N_t"] = static_cast<double>(steps);
  state.counters["N_exp"] = static_cast<double>(terms);
  state.counters["memory_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["setup_s"] = setup / runs;
  state.counters["us_per_step"] = 1e6 * seconds / runs / static_cast<double>(steps);
}

void BM_HistoryDirect(benchmark::State& state) {
  run_history(state, L1History::Method::direct);
}
void BM_HistorySoe(benchmark::State& state) {
  run_history(state, L1History::Method::soe);
}

/// The grid of N + 2 points on [0, 1] (N unknowns, Dirichlet).
fracmfg::io::FpdeConfig riesz_config(std::int64_t unknowns) {
  fracmfg::io::FpdeConfig c;
  c.type = fracmfg::io::FpdeConfig::Type::space_fractional;
  c.order = 1.5;
  c.domain.length = {1.0};
  c.grid.points = {static_cast<int>(unknowns + 2)};
  return c;
}

void fill(const fracmfg::frac::FpdeGrid& grid, Vec x) {
  PetscScalar* a = nullptr;
  VecGetArray(x, &a);
  for (std::size_t p = 0; p < grid.local_size(); ++p) {
    a[p] = grid.boundary()[p] ? 0.0 : std::sin(7.0 * grid.x()[p]) + grid.x()[p];
  }
  VecRestoreArray(x, &a);
}

void BM_RieszProductShell(benchmark::State& state) {
  const auto cfg = riesz_config(state.range(0));
  fracmfg::frac::FpdeGrid grid(PETSC_COMM_WORLD, cfg);
  fracmfg::frac::RieszShell shell(grid, cfg.order);
  shell.set_coefficients(1.0, 1e-3);
  Vec x = nullptr;
  Vec y = nullptr;
  DMCreateGlobalVector(grid.dm(), &x);
  VecDuplicate(x, &y);
  fill(grid, x);
  for (auto _ : state) MatMult(shell.matrix(), x, y);
  state.counters["N"] = static_cast<double>(state.range(0));
  state.counters["memory_MB"] = 0.0;
  VecDestroy(&x);
  VecDestroy(&y);
}

void BM_RieszProductDense(benchmark::State& state) {
  const auto cfg = riesz_config(state.range(0));
  fracmfg::frac::FpdeGrid grid(PETSC_COMM_WORLD, cfg);
  // The same operator assembled: rows of I + 1e-3 T at the unknowns (T_ij = h^-s g_|i-j|),
  // identity at the ends.
  const auto n = static_cast<PetscInt>(grid.points(0));
  const auto m = static_cast<std::size_t>(n - 2);
  const std::vector<double> g = fracmfg::frac::riesz_weights(cfg.order, m);
  const double scale = std::pow(grid.spacing(0), -cfg.order);
  Mat a = nullptr;
  Vec probe = nullptr;
  DMCreateGlobalVector(grid.dm(), &probe);
  PetscInt local = 0;
  VecGetLocalSize(probe, &local);
  MatCreateDense(PETSC_COMM_WORLD, local, local, n, n, nullptr, &a);
  PetscInt r0 = 0, r1 = 0;
  MatGetOwnershipRange(a, &r0, &r1);
  std::vector<PetscInt> cols(static_cast<std::size_t>(n));
  for (PetscInt j = 0; j < n; ++j) cols[static_cast<std::size_t>(j)] = j;
  std::vector<double> row(static_cast<std::size_t>(n));
  for (PetscInt i = r0; i < r1; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    if (i == 0 || i == n - 1) {
      row[static_cast<std::size_t>(i)] = 1.0;
    } else {
      const auto ri = static_cast<std::size_t>(i - 1);
      for (std::size_t j = 0; j < m; ++j) row[j + 1] = 1e-3 * scale * g[ri > j ? ri - j : j - ri];
      row[static_cast<std::size_t>(i)] += 1.0;
    }
    MatSetValues(a, 1, &i, n, cols.data(), row.data(), INSERT_VALUES);
  }
  MatAssemblyBegin(a, MAT_FINAL_ASSEMBLY);
  MatAssemblyEnd(a, MAT_FINAL_ASSEMBLY);
  Vec x = nullptr;
  Vec y = nullptr;
  VecDuplicate(probe, &x);
  VecDuplicate(probe, &y);
  fill(grid, x);
  for (auto _ : state) MatMult(a, x, y);
  state.counters["N"] = static_cast<double>(state.range(0));
  state.counters["memory_MB"] = static_cast<double>(n) * static_cast<double>(n) * 8e-6;
  VecDestroy(&x);
  VecDestroy(&y);
  VecDestroy(&probe);
  MatDestroy(&a);
}

void BM_RieszStepShellCg(benchmark::State& state) {
  const auto cfg = riesz_config(state.range(0));
  fracmfg::frac::FpdeGrid grid(PETSC_COMM_WORLD, cfg);
  fracmfg::frac::RieszShell shell(grid, cfg.order);
  shell.set_coefficients(1.0, 0.5e-2);  // Crank-Nicolson, dt = 0.01, K = 1
  KSP ksp = nullptr;
  KSPCreate(PETSC_COMM_WORLD, &ksp);
  KSPSetType(ksp, KSPCG);
  KSPSetTolerances(ksp, 1e-10, 1e-50, PETSC_DEFAULT, 10000);
  KSPSetOperators(ksp, shell.matrix(), shell.matrix());
  PC pc = nullptr;
  KSPGetPC(ksp, &pc);
  shell.set_preconditioner(pc, fracmfg::frac::CirculantKind::strang);
  Vec b = nullptr;
  Vec u = nullptr;
  DMCreateGlobalVector(grid.dm(), &b);
  VecDuplicate(b, &u);
  fill(grid, b);
  PetscInt its = 0;
  for (auto _ : state) {
    VecSet(u, 0.0);
    KSPSolve(ksp, b, u);
    KSPGetIterationNumber(ksp, &its);
  }
  state.counters["N"] = static_cast<double>(state.range(0));
  state.counters["its"] = static_cast<double>(its);
  KSPDestroy(&ksp);
  VecDestroy(&b);
  VecDestroy(&u);
}

BENCHMARK(BM_HistoryDirect)
    ->Arg(1000)
    ->Arg(3000)
    ->Arg(10000)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();
BENCHMARK(BM_HistorySoe)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();
// --- the 2D periodic operator: y = x + k A x and z = (I + k A)^-1 x on n x n points.
constexpr double kOrder2d = 1.5;
constexpr double kKappa2d = 1e-3;

std::vector<double> grid_field(std::size_t n) {
  std::vector<double> x(n * n);
  for (std::size_t p = 0; p < x.size(); ++p) x[p] = std::cos(0.37 * static_cast<double>(p)) + 0.3;
  return x;
}

void BM_Riesz2dKernel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const double h = 1.0 / static_cast<double>(n);
  fracmfg::frac::RieszOperator op(kOrder2d, 2, {n, n}, {h, h}, true);
  const std::vector<double> x = grid_field(n);
  std::vector<double> y(n * n), z(n * n);
  for (auto _ : state) {
    op.apply(x.data(), y.data(), 1.0, kKappa2d, 0.0);
    op.apply_circulant_inverse(fracmfg::frac::CirculantKind::strang, y.data(), z.data(), 1.0,
                               kKappa2d);
    benchmark::DoNotOptimize(z.data());
  }
  state.counters["check"] = z[n + 1] - x[n + 1];  // round-off: z = x
}

// The previous implementation of the same two operations: one FFTW 2D transform pair over
// a work array, the symbol (or its inverse) evaluated per mode in the multiply loop.
void BM_Riesz2dPrevious(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const double h = 1.0 / static_cast<double>(n);
  const std::size_t half = n / 2 + 1;
  std::vector<double> lam(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double sn = std::fabs(
        2.0 * std::sin(3.14159265358979323846 * static_cast<double>(k) / static_cast<double>(n)));
    lam[k] = std::pow(h, -kOrder2d) * std::pow(sn, kOrder2d);
  }
  double* in = fftw_alloc_real(n * n);
  fftw_complex* out = fftw_alloc_complex(half * n);
  const int ni = static_cast<int>(n);
  fftw_plan fwd = fftw_plan_dft_r2c_2d(ni, ni, in, out, FFTW_ESTIMATE);
  fftw_plan bwd = fftw_plan_dft_c2r_2d(ni, ni, out, in, FFTW_ESTIMATE);
  const double inv = 1.0 / static_cast<double>(n * n);
  auto spectral = [&](auto&& f) {
    fftw_execute(fwd);
    for (std::size_t ky = 0; ky < n; ++ky) {
      for (std::size_t kx = 0; kx < half; ++kx) {
        fftw_complex& c = out[ky * half + kx];
        const double w = f(kx, ky) * inv;
        c[0] *= w;
        c[1] *= w;
      }
    }
    fftw_execute(bwd);
  };
  const std::vector<double> x = grid_field(n);
  std::vector<double> y(n * n), z(n * n);
  for (auto _ : state) {
    std::copy(x.begin(), x.end(), in);
    spectral([&](std::size_t kx, std::size_t ky) { return lam[kx] + lam[ky]; });
    for (std::size_t p = 0; p < n * n; ++p) y[p] = x[p] + kKappa2d * in[p];
    std::copy(y.begin(), y.end(), in);
    spectral([&](std::size_t kx, std::size_t ky) {
      const double d = 1.0 + kKappa2d * (lam[kx] + lam[ky]);
      return 1.0 / (d < 1.0 ? 1.0 : d);
    });
    std::copy(in, in + n * n, z.begin());
    benchmark::DoNotOptimize(z.data());
  }
  state.counters["check"] = z[n + 1] - x[n + 1];
  fftw_destroy_plan(fwd);
  fftw_destroy_plan(bwd);
  fftw_free(in);
  fftw_free(out);
}

// Fixed iteration counts: on several ranks every rank must make the same collective calls.
BENCHMARK(BM_RieszProductShell)
    ->RangeMultiplier(2)
    ->Range(1 << 10, 1 << 14)
    ->Iterations(50)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_RieszProductDense)
    ->RangeMultiplier(2)
    ->Range(1 << 10, 1 << 14)
    ->Iterations(20)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_RieszStepShellCg)
    ->RangeMultiplier(2)
    ->Range(1 << 10, 1 << 14)
    ->Iterations(10)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_Riesz2dKernel)->RangeMultiplier(2)->Range(128, 1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Riesz2dPrevious)->RangeMultiplier(2)->Range(128, 1024)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  return fracmfg::perf::mpi_benchmark_main(argc, argv);
}
