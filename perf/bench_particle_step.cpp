// The MFG particle step on the host: the kernel (kernels::particle_step_host: Kokkos loops
// over the particles running the bodies of kernels/particle_item.hpp, compiled per dimension
// and kind of call) against the loops mfg::ParticleFokkerPlanck ran before it was a kernel
// (a move loop over the particles, then a binning loop), on the same particles and drift: 2 x 10^5
// particles on the 1D grid of inputs/mfg_particles_1d.yaml (200 points, reflecting) and on a 2D 64
// x 64 reflecting grid.
//
//   ./perf/bench_particle_step --benchmark_min_time=0.5
//
// After the benchmarks, both are timed alternately (15 rounds, medians) and the ratio is
// printed, so a loaded machine slows both alike.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/kernels/particle_step.hpp"
#include "kernels/particle_item.hpp"

namespace fk = fracmfg::kernels;
namespace kd = fracmfg::kernels::detail;

namespace {

constexpr std::int64_t kParticles = 200000;
constexpr std::int64_t kOne = std::int64_t{1} << 32;

struct Setup {
  fk::ParticleStep s;
  std::vector<double> cdf, inv_c, dx, dy, x, y;
  std::vector<std::int64_t> bins;
};

Setup make(int dim) {
  Setup d;
  fk::ParticleStep& s = d.s;
  s.dim = dim;
  for (int a = 0; a < dim; ++a) {
    fk::ParticleAxis& ax = s.axis[a];
    ax.points = dim == 1 ? 200 : 64;
    ax.length = 1.0;
    ax.spacing = 1.0 / static_cast<double>(ax.points);
    ax.origin = 0.5 * ax.spacing;
    ax.periodic = false;
  }
  const std::int64_t n = fk::particle_grid_points(s);
  double c = 0.0;
  for (std::int64_t k = 0; k < n; ++k) {
    c += std::exp(-std::pow(static_cast<double>(k % s.axis[0].points) /
                                    static_cast<double>(s.axis[0].points) -
                                0.25,
                            2) /
                  0.01);
    d.cdf.push_back(c);
    d.inv_c.push_back(1.0);
  }
  for (std::int64_t k = 0; k < fk::particle_x_faces(s); ++k) {
    d.dx.push_back(0.8 * std::sin(0.05 * static_cast<double>(k)));
  }
  for (std::int64_t k = 0; k < fk::particle_y_faces(s); ++k) {
    d.dy.push_back(0.5 * std::cos(0.07 * static_cast<double>(k)));
  }
  d.x.resize(kParticles);
  d.y.resize(dim == 2 ? kParticles : 0);
  d.bins.assign(static_cast<std::size_t>(n), 0);
  s.seed = 2024;
  s.count = kParticles;
  s.dt = 0.01;
  s.noise = std::sqrt(2.0 * 0.02 * s.dt);
  s.cdf = d.cdf.data();
  s.inv_c = d.inv_c.data();
  s.dx_face = d.dx.data();
  s.dy_face = dim == 2 ? d.dy.data() : nullptr;
  s.x = d.x.data();
  s.y = dim == 2 ? d.y.data() : nullptr;
  s.bins = d.bins.data();
  s.draw = true;  // the start positions
  fk::particle_step_host(s);
  s.draw = false;
  s.move = true;
  s.step = 1;
  return d;
}

kd::Lattice nodes(const fk::ParticleAxis& a) {
  return {a.origin, a.spacing, a.points, a.periodic};
}
kd::Lattice faces(const fk::ParticleAxis& a) {
  return a.periodic ? kd::Lattice{0.5 * a.spacing, a.spacing, a.points, true}
                    : kd::Lattice{0.0, a.spacing, a.points + 1, false};
}

// The previous step: ParticleFokkerPlanck's move loop, then its binning loop.
void previous_step(Setup& d) {
  const fk::ParticleStep& s = d.s;
  const fk::ParticleAxis& ax = s.axis[0];
  const kd::Lattice nx_l = nodes(ax), fx_l = faces(ax);
  const std::int64_t nxp = ax.points, fx = fx_l.count;
  auto at = [](const std::vector<double>& a, std::int64_t row, std::int64_t stride,
               std::int64_t col) { return a[static_cast<std::size_t>(row * stride + col)]; };
  if (s.dim == 1) {
    for (std::int64_t p = 0; p < s.count; ++p) {
      double& x = d.x[static_cast<std::size_t>(p)];
      const kd::Stencil2 f = kd::locate(fx_l, x);
      const kd::Stencil2 c = kd::locate(nx_l, x);
      const double du = (1.0 - f.frac) * d.dx[static_cast<std::size_t>(f.lo)] +
                        f.frac * d.dx[static_cast<std::size_t>(f.hi)];
      const double ic = (1.0 - c.frac) * d.inv_c[static_cast<std::size_t>(c.lo)] +
                        c.frac * d.inv_c[static_cast<std::size_t>(c.hi)];
      double z1 = 0.0, z2 = 0.0;
      kd::normals(kd::philox(s.seed, static_cast<std::uint64_t>(s.first + p), s.step, 0), z1, z2);
      x = kd::into_domain(x - du * ic * s.dt + s.noise * z1, ax.length, ax.periodic);
    }
  } else {
    const fk::ParticleAxis& ay = s.axis[1];
    const kd::Lattice ny_l = nodes(ay), fy_l = faces(ay);
    for (std::int64_t p = 0; p < s.count; ++p) {
      double& x = d.x[static_cast<std::size_t>(p)];
      double& y = d.y[static_cast<std::size_t>(p)];
      const kd::Stencil2 fx_s = kd::locate(fx_l, x), nx_s = kd::locate(nx_l, x);
      const kd::Stencil2 fy_s = kd::locate(fy_l, y), ny_s = kd::locate(ny_l, y);
      const double dux = (1.0 - ny_s.frac) * ((1.0 - fx_s.frac) * at(d.dx, ny_s.lo, fx, fx_s.lo) +
                                              fx_s.frac * at(d.dx, ny_s.lo, fx, fx_s.hi)) +
                         ny_s.frac * ((1.0 - fx_s.frac) * at(d.dx, ny_s.hi, fx, fx_s.lo) +
                                      fx_s.frac * at(d.dx, ny_s.hi, fx, fx_s.hi));
      const double duy = (1.0 - fy_s.frac) * ((1.0 - nx_s.frac) * at(d.dy, fy_s.lo, nxp, nx_s.lo) +
                                              nx_s.frac * at(d.dy, fy_s.lo, nxp, nx_s.hi)) +
                         fy_s.frac * ((1.0 - nx_s.frac) * at(d.dy, fy_s.hi, nxp, nx_s.lo) +
                                      nx_s.frac * at(d.dy, fy_s.hi, nxp, nx_s.hi));
      const double ic =
          (1.0 - ny_s.frac) * ((1.0 - nx_s.frac) * at(d.inv_c, ny_s.lo, nxp, nx_s.lo) +
                               nx_s.frac * at(d.inv_c, ny_s.lo, nxp, nx_s.hi)) +
          ny_s.frac * ((1.0 - nx_s.frac) * at(d.inv_c, ny_s.hi, nxp, nx_s.lo) +
                       nx_s.frac * at(d.inv_c, ny_s.hi, nxp, nx_s.hi));
      double z1 = 0.0, z2 = 0.0;
      kd::normals(kd::philox(s.seed, static_cast<std::uint64_t>(s.first + p), s.step, 0), z1, z2);
      x = kd::into_domain(x - dux * ic * s.dt + s.noise * z1, ax.length, ax.periodic);
      y = kd::into_domain(y - duy * ic * s.dt + s.noise * z2, ay.length, ay.periodic);
    }
  }
  std::fill(d.bins.begin(), d.bins.end(), 0);
  for (std::int64_t p = 0; p < s.count; ++p) {
    const kd::Bin bx = kd::bin(d.x[static_cast<std::size_t>(p)], ax.origin, ax.spacing, ax.points,
                               ax.periodic, kOne);
    if (s.dim == 1) {
      d.bins[static_cast<std::size_t>(bx.lo)] += bx.lower;
      d.bins[static_cast<std::size_t>(bx.hi)] += kOne - bx.lower;
      continue;
    }
    const fk::ParticleAxis& ay = s.axis[1];
    const kd::Bin by = kd::bin(d.y[static_cast<std::size_t>(p)], ay.origin, ay.spacing, ay.points,
                               ay.periodic, kOne);
    const double fy = static_cast<double>(by.lower) / static_cast<double>(kOne);
    const std::int64_t xl = bx.lower, xu = kOne - bx.lower;
    const std::int64_t ll = std::llround(static_cast<double>(xl) * fy);
    const std::int64_t ul = std::llround(static_cast<double>(xu) * fy);
    d.bins[static_cast<std::size_t>(by.lo * nxp + bx.lo)] += ll;
    d.bins[static_cast<std::size_t>(by.hi * nxp + bx.lo)] += xl - ll;
    d.bins[static_cast<std::size_t>(by.lo * nxp + bx.hi)] += ul;
    d.bins[static_cast<std::size_t>(by.hi * nxp + bx.hi)] += xu - ul;
  }
}

void kernel_step(Setup& d) {
  fk::particle_step_host(d.s);
}

template <void (*Step)(Setup&)>
void BM_Step(benchmark::State& state) {
  Setup d = make(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Step(d);
    benchmark::DoNotOptimize(d.bins.data());
  }
  state.SetItemsProcessed(state.iterations() * kParticles);  // particles per second
}

void BM_PreviousLoop(benchmark::State& state) {
  BM_Step<previous_step>(state);
}
void BM_Kernel(benchmark::State& state) {
  BM_Step<kernel_step>(state);
}

BENCHMARK(BM_PreviousLoop)->ArgName("dim")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Kernel)->ArgName("dim")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

double seconds(void (*step)(Setup&), Setup& d) {
  const auto t0 = std::chrono::steady_clock::now();
  step(d);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // removes its --benchmark_* flags
  fracmfg::core::EnvironmentOptions opts;
  opts.log_level = fracmfg::core::LogLevel::warn;
  fracmfg::core::Environment env(&argc, &argv, opts);  // MPI, PETSc, Kokkos
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (int dim : {1, 2}) {
    // The same start for both; each then advances its own copy step by step.
    Setup a = make(dim), b = make(dim);
    std::vector<double> before, after;
    for (int round = 0; round < 15; ++round) {
      a.s.step = b.s.step = static_cast<std::uint32_t>(round + 1);
      before.push_back(seconds(previous_step, a));
      after.push_back(seconds(kernel_step, b));
    }
    const bool same = a.x == b.x && a.y == b.y && a.bins == b.bins;
    std::printf(
        "particle step %dD, %lld particles: previous loops %.2f ms, kernel %.2f ms "
        "(median of 15 alternating), ratio previous/kernel %.2f; results %s\n",
        dim, static_cast<long long>(kParticles), 1e3 * median(before), 1e3 * median(after),
        median(before) / median(after), same ? "bit-identical" : "DIFFER");
  }
  return 0;
}
