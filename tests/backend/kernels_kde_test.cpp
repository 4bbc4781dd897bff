// kernels::kde: the CUDA backend against the host backend (double, 1e-12 relative to the
// largest value), binned and exact, 1D and 2D, every boundary, with weights. Skips with a
// message where the build has no CUDA or the machine no device; the failure modes that need
// no device are checked before skipping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/kernels/kde.hpp"

namespace fk = fracmfg::kernels;
namespace fe = fracmfg::exec;

namespace {

fk::KdeAxis cell_axis(std::int64_t g, double h, fk::KdeBoundary boundary) {
  fk::KdeAxis a;
  a.spacing = 1.0 / static_cast<double>(g);
  a.origin = 0.5 * a.spacing;
  a.points = g;
  a.boundary = boundary;
  a.bandwidth = h;
  return a;
}

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0.0;
  double den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return den > 0.0 ? num / den : num;
}

int device_or_check_failure(std::string& why) {
  const fe::CudaStatus s = fe::probe_cuda();
  const double x = 0.5;
  fk::KdeSamples one;
  one.count = 1;
  one.x = &x;
  std::vector<double> f(16);
  const fk::KdeGrid grid = fk::kde_grid_1d(cell_axis(16, 0.1, fk::KdeBoundary::periodic));
  if (!s.compiled) {
    EXPECT_THROW(fk::kde_binned_cuda(grid, one, f.data(), {}), fracmfg::NotCompiled);
    EXPECT_THROW(fk::kde_exact_cuda(grid, one, f.data(), {}), fracmfg::NotCompiled);
    why = "CUDA backend not compiled in this build";
    return -1;
  }
  if (s.devices.empty()) {
    for (fk::KdeFn* fn : {&fk::kde_binned_cuda, &fk::kde_exact_cuda}) {
      try {
        fn(grid, one, f.data(), {});
        ADD_FAILURE() << "expected a CUDA error without a device";
      } catch (const fracmfg::Error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
      }
    }
    why = "no CUDA device on this machine (" + s.status + ")";
    return -1;
  }
  return s.devices.front().id;
}

}  // namespace

TEST(kernels_kde_test, CudaMatchesHostInOneAndTwoDimensions) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  std::mt19937_64 rng(17);
  std::normal_distribution<double> nd(0.5, 0.2);
  std::uniform_real_distribution<double> wd(0.0, 2.0);
  const std::size_t n = 20000;
  std::vector<double> x(n), y(n), w(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = nd(rng);
    y[i] = nd(rng);
    w[i] = wd(rng);
  }
  fk::KdeOptions opt;
  opt.cuda_device = device;
  for (const auto b :
       {fk::KdeBoundary::open, fk::KdeBoundary::reflecting, fk::KdeBoundary::periodic}) {
    for (const bool weighted : {false, true}) {
      fk::KdeSamples s;
      s.count = static_cast<std::int64_t>(n);
      s.x = x.data();
      s.y = y.data();
      s.weight = weighted ? w.data() : nullptr;
      const fk::KdeAxis ax = cell_axis(1000, 0.01, b);
      const fk::KdeAxis ay = cell_axis(96, 0.03, b);
      for (const fk::KdeGrid& grid : {fk::kde_grid_1d(ax), fk::kde_grid_2d(ax, ay)}) {
        SCOPED_TRACE("boundary " + std::to_string(static_cast<int>(b)) + " dim " +
                     std::to_string(grid.dim) + " weighted " + std::to_string(weighted));
        const std::size_t size = static_cast<std::size_t>(grid.size());
        std::vector<double> host(size), dev(size);
        fk::kde_binned_host(grid, s, host.data(), opt);
        fk::kde_binned_cuda(grid, s, dev.data(), opt);
        EXPECT_LE(rel_diff(dev, host), 1e-12);
        // The samples in pieces (the selector's Decision::chunks): the same estimate.
        fk::KdeOptions pieces = opt;
        pieces.sample_chunks = 7;
        fk::kde_binned_cuda(grid, s, dev.data(), pieces);
        EXPECT_LE(rel_diff(dev, host), 1e-12);
      }
      // The exact sum is O(samples x points) on the host (about 70 s a call for these 2e4
      // samples on the 2D grid, two cores): a tenth of the samples and, in 2D, a fifth of the
      // x points.
      fk::KdeSamples few = s;
      few.count = static_cast<std::int64_t>(n / 10);
      const fk::KdeAxis ax_exact = cell_axis(200, 0.01, b);
      for (const fk::KdeGrid& grid : {fk::kde_grid_1d(ax), fk::kde_grid_2d(ax_exact, ay)}) {
        SCOPED_TRACE("exact, boundary " + std::to_string(static_cast<int>(b)) + " dim " +
                     std::to_string(grid.dim) + " weighted " + std::to_string(weighted));
        const std::size_t size = static_cast<std::size_t>(grid.size());
        std::vector<double> host(size), dev(size);
        fk::kde_exact_host(grid, few, host.data(), opt);
        fk::kde_exact_cuda(grid, few, dev.data(), opt);
        EXPECT_LE(rel_diff(dev, host), 1e-12);
      }
    }
  }
}
