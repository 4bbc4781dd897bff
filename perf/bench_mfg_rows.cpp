// The mean field game finite-difference rows on the host: the kernels
// (kernels::mfg_hjb_rows_host, mfg_fp_rows_host: Kokkos loops running the bodies of
// kernels/mfg_rows_item.hpp) against the loops the solvers ran before they were kernels
// (mfg/direct_1d.cpp's peeled 1D walk; mfg/stencil.cpp's hjb_rows over the neighbour walk
// of mfg/stencil.hpp, which exits and obstacles still use), on the same data:
//   hjb_rows_1d   the 1D fast path's fused residual + rows + sum of r^2 (10^4 points,
//                 periodic, quadratic: the call of bench_mfg -problem crowd1d);
//   hjb_res_1d    the residual alone (the other call of each Newton iteration);
//   fp_rows_1d    the 1D Fokker-Planck rows;
//   hjb_rows_2d   the Jacobian rows of a 128 x 128 periodic block from its ghosted box;
//   hjb_res_2d    the residual of that block.
//
//   ./perf/bench_mfg_rows --benchmark_min_time=0.5
//
// After the benchmarks, both are timed alternately (101 rounds, medians) and the ratio is
// printed, so a loaded machine slows both alike; the outputs are compared bit for bit. Last,
// the 1D calls straight to the host kernel against the same calls through the solvers'
// dispatch (mfg::detail::RowKernels with a host-only selector, learning on, as `fracmfg run`
// has it): the selector's cost per call.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "fracmfg/core/environment.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/kernels/mfg_rows.hpp"
#include "kernels/mfg_rows_item.hpp"
#include "mfg/row_kernels.hpp"
#include "mfg/stencil.hpp"

namespace fk = fracmfg::kernels;
namespace kd = fracmfg::kernels::detail;

namespace {

constexpr std::int64_t kPoints1d = 10000;
constexpr std::int64_t kSide2d = 128;

std::vector<double> uniform(std::size_t n, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

struct Data {
  int dim = 1;
  fk::HjbRowsCall c;
  fk::FpRowsCall f;
  std::vector<double> u, coef, u_next, rhs, r, rows, sub, diag, super;
  double sum = 0.0;
};

Data make(int dim) {
  Data d;
  d.dim = dim;
  fk::MfgBlock& b = d.c.block;
  b.dim = dim;
  const std::int64_t side = dim == 1 ? kPoints1d : kSide2d;
  for (int a = 0; a < dim; ++a) {
    b.points[a] = b.size[a] = side;
    b.inv_h[a] = static_cast<double>(side);
    b.ghost_start[a] = -1;
    b.ghost_size[a] = side + 2;
  }
  b.owned_1d = dim == 1;
  const auto n = static_cast<std::size_t>(fk::mfg_block_points(b));
  // A smooth u (the upwind branches change sign in long runs, as in a solve) with noise.
  d.u = uniform(static_cast<std::size_t>(fk::mfg_block_values(b)), -1e-3, 1e-3, 1);
  for (std::size_t k = 0; k < d.u.size(); ++k) {
    d.u[k] += std::sin(6.283185307179586 * 3.0 * static_cast<double>(k) /
                       static_cast<double>(d.u.size()));
  }
  if (dim == 1) {
    b.ghost_west = d.u.back();
    b.ghost_east = d.u.front();
  }
  d.coef = uniform(n, 0.5, 1.5, 2);
  d.u_next = uniform(n, -1.0, 1.0, 3);
  d.rhs = uniform(n, -1.0, 1.0, 4);
  d.r.assign(n, 0.0);
  d.rows.assign(n * static_cast<std::size_t>(fk::mfg_row_width(dim)), 0.0);
  for (auto* v : {&d.sub, &d.diag, &d.super}) v->assign(n, 0.0);
  d.c.inv_dt = 1000.0;
  d.c.nu = 0.01;
  d.c.u = d.u.data();
  d.c.coef = d.coef.data();
  d.c.u_next = d.u_next.data();
  d.c.rhs = d.rhs.data();
  d.f.block = b;
  d.f.inv_dt = d.c.inv_dt;
  d.f.nu = d.c.nu;
  d.f.u = d.u.data();
  d.f.inv_c = d.coef.data();
  d.f.inv_c_west = d.coef.back();
  d.f.inv_c_east = d.coef.front();
  d.f.sub = d.sub.data();
  d.f.diag = d.diag.data();
  d.f.super = d.super.data();
  return d;
}

// --- the previous loops (mfg/direct_1d.cpp and mfg/stencil.cpp before the kernels) --------

template <class F>
void walk_1d(std::int64_t n, const double* u, double gw, double ge, F&& f) {
  f(0, gw, u[0], u[1]);
  for (std::int64_t k = 1; k + 1 < n; ++k) f(k, u[k - 1], u[k], u[k + 1]);
  f(n - 1, u[n - 2], u[n - 1], ge);
}

template <bool Rows>
double previous_hjb_1d(Data& d) {
  const fk::HjbRowsCall& c = d.c;
  const double inv_dt = c.inv_dt, nu = c.nu, ih = c.block.inv_h[0];
  const double* coef = c.coef;
  const double* u_next = c.u_next;
  const double* rhs = c.rhs;
  double* r = d.r.data();
  double *sub = d.sub.data(), *diag = d.diag.data(), *super = d.super.data();
  double sum = 0.0;
  walk_1d(kPoints1d, c.u, c.block.ghost_west, c.block.ghost_east,
          [&](std::int64_t k, double uw, double up, double ue) {
            const double lap_u = (ue - 2.0 * up + uw) * ih * ih;
            const double h = fk::upwind_hamiltonian((ue - up) * ih, (up - uw) * ih, coef[k]);
            const double res = (up - u_next[k]) * inv_dt - nu * lap_u + h - rhs[k];
            r[k] = res;
            sum += res * res;
            if constexpr (Rows) {
              double cplus = 0.0, cminus = 0.0, dd = inv_dt, outflow = 0.0;
              kd::upwind_axis_row(up, uw, ue, ih, nu, coef[k], kd::Fold::none, kd::Fold::none, dd,
                                  cminus, cplus, outflow);
              sub[k] = cminus;
              diag[k] = dd;
              super[k] = cplus;
            }
          });
  return sum;
}

void previous_fp_1d(Data& d) {
  const fk::FpRowsCall& c = d.f;
  const double inv_dt = c.inv_dt, ih = c.block.inv_h[0];
  const double lap = c.nu * ih * ih;
  const double* inv_c = c.inv_c;
  const std::int64_t n = kPoints1d;
  walk_1d(n, c.u, c.block.ghost_west, c.block.ghost_east,
          [&](std::int64_t k, double uw, double up, double ue) {
            const double dplus = (ue - up) * ih, dminus = (up - uw) * ih;
            const double ic_w = k > 0 ? inv_c[k - 1] : c.inv_c_west;
            const double ic_e = k + 1 < n ? inv_c[k + 1] : c.inv_c_east;
            const double ap = fk::upwind_a_plus(dplus, inv_c[k]);
            const double am = fk::upwind_a_minus(dminus, inv_c[k]);
            c.diag[k] = inv_dt + 2.0 * lap + (am - ap) * ih;
            c.sub[k] = -lap + fk::upwind_a_plus(dminus, ic_w) * ih;
            c.super[k] = -lap - fk::upwind_a_minus(dplus, ic_e) * ih;
          });
}

// mfg/stencil.cpp's hjb_rows as it was (its body, with the model's numbers passed in), on
// a periodic 2D block: the neighbour walk of mfg/stencil.hpp, then the rows.
void previous_rows_2d(Data& d) {
  namespace md = fracmfg::mfg::detail;
  const fk::HjbRowsCall& c = d.c;
  fracmfg::mfg::Grid g;
  g.dim = 2;
  g.points = {kSide2d, kSide2d, 1};
  g.boundary = fracmfg::mfg::Boundary::periodic;
  g.sides.fill(fracmfg::mfg::Boundary::periodic);
  fracmfg::mfg::OwnedBox b;
  b.xm = b.ym = kSide2d;
  md::GhostBox gb;
  gb.gxs = gb.gys = -1;
  gb.gxm = gb.gym = kSide2d + 2;
  md::UpwindHamiltonian ham;
  ham.coef = c.coef;
  const double inv_dt = c.inv_dt, nu = c.nu;
  const int nc = 5;
  const bool two_d = true, three_d = false;
  const double ihx = c.block.inv_h[0], ihy = c.block.inv_h[1], ihz = 0.0;
  const double* u = c.u;
  double* rows = d.rows.data();
  double* outflow = nullptr;
  const md::ExitFaces exits{};
  auto fold = [](const md::Neighbours& nb, PetscInt n, unsigned bit) {
    if (nb.exits & bit) return md::Fold::exit;
    return n == nb.self ? md::Fold::mirror : md::Fold::none;
  };
  md::for_each_point(
      g, b, gb, nullptr, [&](PetscInt k, const md::Neighbours& nb, PetscInt, PetscInt) {
        double* row = rows + k * nc;
        double rate = 0.0;
        if (nb.wall) {
          for (int q = 0; q < nc; ++q) row[q] = 0.0;
          row[md::kDiag] = inv_dt;
          if (outflow != nullptr) outflow[k] = 0.0;
          return;
        }
        const double up = u[nb.self];
        double uw = u[nb.west], ue = u[nb.east], us = 0.0, un = 0.0, ud = 0.0, uu = 0.0;
        if (nb.exits & md::kExitWest) uw = exits.ghost(0, b, k, up);
        if (nb.exits & md::kExitEast) ue = exits.ghost(1, b, k, up);
        if (two_d) {
          us = u[nb.south];
          un = u[nb.north];
          if (nb.exits & md::kExitSouth) us = exits.ghost(2, b, k, up);
          if (nb.exits & md::kExitNorth) un = exits.ghost(3, b, k, up);
        }
        if (three_d) {
          ud = u[nb.down];
          uu = u[nb.up];
        }
        double s = 0.0;
        if (ham.power) {
          s = fk::upwind_norm2((ue - up) * ihx, (up - uw) * ihx);
          if (two_d) s += fk::upwind_norm2((un - up) * ihy, (up - us) * ihy);
          if (three_d) s += fk::upwind_norm2((uu - up) * ihz, (up - ud) * ihz);
        }
        const double ic = ham.linear(k, s);
        double diag = inv_dt;
        md::upwind_axis_row(up, uw, ue, ihx, nu, ic, fold(nb, nb.west, md::kExitWest),
                            fold(nb, nb.east, md::kExitEast), diag, row[md::kWest], row[md::kEast],
                            rate);
        if (two_d) {
          md::upwind_axis_row(up, us, un, ihy, nu, ic, fold(nb, nb.south, md::kExitSouth),
                              fold(nb, nb.north, md::kExitNorth), diag, row[md::kSouth],
                              row[md::kNorth], rate);
        }
        row[md::kDiag] = diag;
        if (outflow != nullptr) outflow[k] = rate;
      });
}

// mfg/stencil.cpp's hjb_residual as it was, on the same periodic 2D block.
void previous_residual_2d(Data& d) {
  namespace md = fracmfg::mfg::detail;
  const fk::HjbRowsCall& c = d.c;
  fracmfg::mfg::Grid g;
  g.dim = 2;
  g.points = {kSide2d, kSide2d, 1};
  g.boundary = fracmfg::mfg::Boundary::periodic;
  g.sides.fill(fracmfg::mfg::Boundary::periodic);
  fracmfg::mfg::OwnedBox b;
  b.xm = b.ym = kSide2d;
  md::GhostBox gb;
  gb.gxs = gb.gys = -1;
  gb.gxm = gb.gym = kSide2d + 2;
  md::UpwindHamiltonian ham;
  ham.coef = c.coef;
  const double inv_dt = c.inv_dt, nu = c.nu;
  const double ihx = c.block.inv_h[0], ihy = c.block.inv_h[1], ihz = 0.0;
  const double* inv_c = ham.coef;
  const bool two_d = true, three_d = false;
  const double* u = c.u;
  const double* u_next = c.u_next;
  const double* rhs = c.rhs;
  double* r = d.r.data();
  const md::ExitFaces exits{};
  md::for_each_point(g, b, gb, nullptr,
                     [&](PetscInt k, const md::Neighbours& nb, PetscInt, PetscInt) {
                       const double up = u[nb.self];
                       if (nb.wall) {
                         r[k] = up * inv_dt;
                         return;
                       }
                       double ue = u[nb.east], uw = u[nb.west];
                       if (nb.exits != 0) {
                         if (nb.exits & md::kExitWest) uw = exits.ghost(0, b, k, up);
                         if (nb.exits & md::kExitEast) ue = exits.ghost(1, b, k, up);
                       }
                       double lap = (ue - 2.0 * up + uw) * ihx * ihx;
                       double h = 0.0;
                       double un = 0.0, us = 0.0, uu = 0.0, ud = 0.0;
                       if (two_d) {
                         un = u[nb.north];
                         us = u[nb.south];
                         if (nb.exits & md::kExitSouth) us = exits.ghost(2, b, k, up);
                         if (nb.exits & md::kExitNorth) un = exits.ghost(3, b, k, up);
                         lap += (un - 2.0 * up + us) * ihy * ihy;
                       }
                       if (three_d) {
                         uu = u[nb.up];
                         ud = u[nb.down];
                         lap += (uu - 2.0 * up + ud) * ihz * ihz;
                       }
                       if (ham.power) {
                         double dyp = 0.0, dym = 0.0, dzp = 0.0, dzm = 0.0;
                         if (two_d) {
                           dyp = (un - up) * ihy;
                           dym = (up - us) * ihy;
                         }
                         if (three_d) {
                           dzp = (uu - up) * ihz;
                           dzm = (up - ud) * ihz;
                         }
                         h = ham.value(k, (ue - up) * ihx, (up - uw) * ihx, dyp, dym, dzp, dzm);
                       } else {
                         h = fk::upwind_hamiltonian((ue - up) * ihx, (up - uw) * ihx, inv_c[k]);
                         if (two_d)
                           h += fk::upwind_hamiltonian((un - up) * ihy, (up - us) * ihy, inv_c[k]);
                         if (three_d)
                           h += fk::upwind_hamiltonian((uu - up) * ihz, (up - ud) * ihz, inv_c[k]);
                       }
                       r[k] = (up - u_next[k]) * inv_dt - nu * lap + h - rhs[k];
                     });
}

// --- the cases ---------------------------------------------------------------------------

void previous_call(Data& d, int which) {
  switch (which) {
    case 0: d.sum = previous_hjb_1d<true>(d); break;
    case 1: d.sum = previous_hjb_1d<false>(d); break;
    case 2: previous_fp_1d(d); break;
    case 3: previous_rows_2d(d); break;
    default: previous_residual_2d(d);
  }
}

void kernel_call(Data& d, int which) {
  fk::HjbRowsCall c = d.c;
  switch (which) {
    case 0:
      c.residual = d.r.data();
      c.sub = d.sub.data();
      c.diag = d.diag.data();
      c.super = d.super.data();
      d.sum = fk::mfg_hjb_rows_host(c);
      break;
    case 1:
      c.residual = d.r.data();
      d.sum = fk::mfg_hjb_rows_host(c);
      break;
    case 2: fk::mfg_fp_rows_host(d.f); break;
    case 3:
      c.rows = d.rows.data();
      fk::mfg_hjb_rows_host(c);
      break;
    default:
      c.residual = d.r.data();
      d.sum = 0.0;  // the previous loop returns no sum
      fk::mfg_hjb_rows_host(c);
  }
}

constexpr const char* kNames[] = {"hjb_rows_1d", "hjb_res_1d", "fp_rows_1d", "hjb_rows_2d",
                                  "hjb_res_2d"};
constexpr int kCases = 5;

int dim_of(int which) {
  return which >= 3 ? 2 : 1;
}

template <void (*Call)(Data&, int)>
void BM_Call(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  Data d = make(dim_of(which));
  for (auto _ : state) {
    Call(d, which);
    benchmark::DoNotOptimize(d.sum);
    benchmark::DoNotOptimize(d.r.data());
    benchmark::DoNotOptimize(d.rows.data());
    benchmark::DoNotOptimize(d.diag.data());
  }
  state.SetItemsProcessed(state.iterations() * (which >= 3 ? kSide2d * kSide2d : kPoints1d));
  state.SetLabel(kNames[which]);
}

void BM_PreviousLoop(benchmark::State& state) {
  BM_Call<previous_call>(state);
}
void BM_Kernel(benchmark::State& state) {
  BM_Call<kernel_call>(state);
}

BENCHMARK(BM_PreviousLoop)
    ->ArgName("case")
    ->DenseRange(0, kCases - 1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Kernel)->ArgName("case")->DenseRange(0, kCases - 1)->Unit(benchmark::kMicrosecond);

double seconds(void (*call)(Data&, int), Data& d, int which) {
  const auto t0 = std::chrono::steady_clock::now();
  call(d, which);
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
  for (int which = 0; which < kCases; ++which) {
    Data a = make(dim_of(which)), b = make(dim_of(which));
    std::vector<double> before, after;
    for (int round = 0; round < 101; ++round) {
      before.push_back(seconds(previous_call, a, which));
      after.push_back(seconds(kernel_call, b, which));
    }
    const bool same = a.sum == b.sum && a.r == b.r && a.rows == b.rows && a.sub == b.sub &&
                      a.diag == b.diag && a.super == b.super;
    std::printf(
        "%-12s previous loop %8.2f us, kernel %8.2f us (median of 101 alternating), "
        "ratio previous/kernel %.2f; results %s\n",
        kNames[which], 1e6 * median(before), 1e6 * median(after), median(before) / median(after),
        same ? "bit-identical" : "DIFFER");
  }
  // The selector's cost per call: 1000 calls of each 1D case, 21 alternating rounds.
  fracmfg::exec::SelectorConfig sc;
  sc.use_environment = false;
  sc.persist = false;
  sc.activate_device = false;
  fracmfg::exec::Selector selector(
      fracmfg::exec::Hardware::from_yaml("host_name: cpu-node\nhost_cores: 2\n", "cpu.yaml"), sc,
      fracmfg::core::Logger(0, fracmfg::core::LogLevel::error, false));
  fracmfg::mfg::detail::RowKernels dispatch(&selector);
  for (int which = 0; which < 3; ++which) {
    Data d = make(1);
    auto batch = [&](bool through) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int k = 0; k < 1000; ++k) {
        fk::HjbRowsCall c = d.c;
        c.residual = d.r.data();
        if (which == 0) {
          c.sub = d.sub.data();
          c.diag = d.diag.data();
          c.super = d.super.data();
        }
        if (which == 2) {
          through ? dispatch.fp(d.f) : fk::mfg_fp_rows_host(d.f);
        } else {
          d.sum += through ? dispatch.hjb(c) : fk::mfg_hjb_rows_host(c);
        }
      }
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1000;
    };
    std::vector<double> direct, through;
    for (int round = 0; round < 21; ++round) {
      direct.push_back(batch(false));
      through.push_back(batch(true));
    }
    std::printf(
        "%-12s host kernel %8.3f us, through the selector %8.3f us per call (median of 21 "
        "alternating rounds of 1000 calls)\n",
        kNames[which], 1e6 * median(direct), 1e6 * median(through));
  }
  return 0;
}
