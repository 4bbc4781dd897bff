// kernels::particle_step_host against plain reference loops (a draw from m0, Euler-Maruyama
// moves with interpolated drift, linear fixed-point binning) on 1D and 2D, periodic and
// reflecting grids: positions and bins bit for bit; the input checks; the device path without
// a device refuses with NotCompiled or a CUDA error and leaves nothing resident.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/kernels/particle_step.hpp"
#include "kernels/particle_item.hpp"

namespace {

namespace fk = fracmfg::kernels;
namespace kd = fracmfg::kernels::detail;

constexpr std::int64_t kOne = std::int64_t{1} << 32;

// A grid of nx (x ny) points on [0, 1] x [0, 0.8] with m0, 1/c and a drift field.
struct Case {
  fk::ParticleStep s;
  std::vector<double> cdf, inv_c, dx, dy;

  Case(int dim, bool periodic, std::int64_t nx, std::int64_t ny) {
    s.dim = dim;
    const double lengths[2] = {1.0, 0.8};
    const std::int64_t points[2] = {nx, ny};
    for (int a = 0; a < dim; ++a) {
      fk::ParticleAxis& ax = s.axis[a];
      ax.length = lengths[a];
      ax.points = points[a];
      ax.spacing = ax.length / static_cast<double>(ax.points);
      ax.origin = periodic ? 0.0 : 0.5 * ax.spacing;
      ax.periodic = periodic;
    }
    const std::int64_t n = fk::particle_grid_points(s);
    double c = 0.0;
    for (std::int64_t k = 0; k < n; ++k) {
      c += 1.0 + 0.7 * std::sin(0.37 * static_cast<double>(k));
      cdf.push_back(c);
      inv_c.push_back(1.0 / (1.5 + std::cos(0.11 * static_cast<double>(k))));
    }
    for (std::int64_t k = 0; k < fk::particle_x_faces(s); ++k) {
      dx.push_back(2.0 * std::sin(0.21 * static_cast<double>(k)));
    }
    for (std::int64_t k = 0; k < fk::particle_y_faces(s); ++k) {
      dy.push_back(-1.5 * std::cos(0.17 * static_cast<double>(k)));
    }
    if (!periodic) {  // no flux through the walls
      const std::int64_t fx = fk::particle_faces(s.axis[0]);
      for (std::int64_t j = 0; j < (dim == 2 ? ny : 1); ++j) dx[j * fx] = dx[j * fx + fx - 1] = 0.0;
      if (dim == 2) {
        for (std::int64_t i = 0; i < nx; ++i) dy[i] = dy[ny * nx + i] = 0.0;
      }
    }
    s.seed = 77;
    s.first = 1234;
    s.dt = 0.02;
    s.noise = std::sqrt(2.0 * 0.05 * s.dt);
    s.cdf = cdf.data();
    s.inv_c = inv_c.data();
    s.dx_face = dx.data();
    s.dy_face = dim == 2 ? dy.data() : nullptr;
  }
};

// --- the reference: the loops of the particle method written out plainly -----------------

kd::Lattice nodes(const fk::ParticleAxis& a) {
  return {a.origin, a.spacing, a.points, a.periodic};
}
kd::Lattice faces(const fk::ParticleAxis& a) {
  return a.periodic ? kd::Lattice{0.5 * a.spacing, a.spacing, a.points, true}
                    : kd::Lattice{0.0, a.spacing, a.points + 1, false};
}

void reference_draw(const Case& c, std::vector<double>& x, std::vector<double>& y) {
  const fk::ParticleStep& s = c.s;
  const std::int64_t nx = s.axis[0].points;
  x.resize(static_cast<std::size_t>(s.count));
  y.resize(s.dim == 2 ? x.size() : 0);
  for (std::int64_t p = 0; p < s.count; ++p) {
    const auto id = static_cast<std::uint64_t>(s.first + p);
    const kd::RandomWords r = kd::philox(s.seed, id, 0, 1);
    const double pick = kd::uniform53(r.w[0], r.w[1]) * c.cdf.back();
    auto cell = static_cast<std::int64_t>(std::upper_bound(c.cdf.begin(), c.cdf.end(), pick) -
                                          c.cdf.begin());
    cell = std::min<std::int64_t>(cell, static_cast<std::int64_t>(c.cdf.size()) - 1);
    const double ox = kd::uniform53(r.w[2], r.w[3]) - 0.5;
    const fk::ParticleAxis& ax = s.axis[0];
    x[static_cast<std::size_t>(p)] =
        kd::into_domain(ax.origin + static_cast<double>(cell % nx) * ax.spacing + ox * ax.spacing,
                        ax.length, ax.periodic);
    if (s.dim == 2) {
      const fk::ParticleAxis& ay = s.axis[1];
      const kd::RandomWords r2 = kd::philox(s.seed, id, 0, 2);
      const double oy = kd::uniform53(r2.w[0], r2.w[1]) - 0.5;
      y[static_cast<std::size_t>(p)] =
          kd::into_domain(ay.origin + static_cast<double>(cell / nx) * ay.spacing + oy * ay.spacing,
                          ay.length, ay.periodic);
    }
  }
}

double lerp(const std::vector<double>& v, std::int64_t k0, std::int64_t k1, double f) {
  return (1.0 - f) * v[static_cast<std::size_t>(k0)] + f * v[static_cast<std::size_t>(k1)];
}

void reference_move(const Case& c, std::vector<double>& x, std::vector<double>& y) {
  const fk::ParticleStep& s = c.s;
  const fk::ParticleAxis& ax = s.axis[0];
  const std::int64_t fx = faces(ax).count, nx = ax.points;
  for (std::int64_t p = 0; p < s.count; ++p) {
    double& px = x[static_cast<std::size_t>(p)];
    double z1 = 0.0, z2 = 0.0;
    kd::normals(kd::philox(s.seed, static_cast<std::uint64_t>(s.first + p), s.step, 0), z1, z2);
    const kd::Stencil2 f = kd::locate(faces(ax), px), n = kd::locate(nodes(ax), px);
    if (s.dim == 1) {
      const double du = lerp(c.dx, f.lo, f.hi, f.frac);
      const double ic = lerp(c.inv_c, n.lo, n.hi, n.frac);
      px = kd::into_domain(px - du * ic * s.dt + s.noise * z1, ax.length, ax.periodic);
      continue;
    }
    const fk::ParticleAxis& ay = s.axis[1];
    double& py = y[static_cast<std::size_t>(p)];
    const kd::Stencil2 g = kd::locate(faces(ay), py), m = kd::locate(nodes(ay), py);
    // Bilinear: along x in the rows m.lo and m.hi (g.lo, g.hi for d/dy), then along y.
    const double dux = (1.0 - m.frac) * lerp(c.dx, m.lo * fx + f.lo, m.lo * fx + f.hi, f.frac) +
                       m.frac * lerp(c.dx, m.hi * fx + f.lo, m.hi * fx + f.hi, f.frac);
    const double duy = (1.0 - g.frac) * lerp(c.dy, g.lo * nx + n.lo, g.lo * nx + n.hi, n.frac) +
                       g.frac * lerp(c.dy, g.hi * nx + n.lo, g.hi * nx + n.hi, n.frac);
    const double ic = (1.0 - m.frac) * lerp(c.inv_c, m.lo * nx + n.lo, m.lo * nx + n.hi, n.frac) +
                      m.frac * lerp(c.inv_c, m.hi * nx + n.lo, m.hi * nx + n.hi, n.frac);
    px = kd::into_domain(px - dux * ic * s.dt + s.noise * z1, ax.length, ax.periodic);
    py = kd::into_domain(py - duy * ic * s.dt + s.noise * z2, ay.length, ay.periodic);
  }
}

std::vector<std::int64_t> reference_bins(const Case& c, const std::vector<double>& x,
                                         const std::vector<double>& y) {
  const fk::ParticleStep& s = c.s;
  const fk::ParticleAxis& ax = s.axis[0];
  std::vector<std::int64_t> bins(static_cast<std::size_t>(fk::particle_grid_points(s)), 0);
  for (std::size_t p = 0; p < x.size(); ++p) {
    const kd::Bin bx = kd::bin(x[p], ax.origin, ax.spacing, ax.points, ax.periodic, kOne);
    if (s.dim == 1) {
      bins[static_cast<std::size_t>(bx.lo)] += bx.lower;
      bins[static_cast<std::size_t>(bx.hi)] += kOne - bx.lower;
      continue;
    }
    const fk::ParticleAxis& ay = s.axis[1];
    const kd::Bin by = kd::bin(y[p], ay.origin, ay.spacing, ay.points, ay.periodic, kOne);
    const double fy = static_cast<double>(by.lower) / static_cast<double>(kOne);
    const std::int64_t xl = bx.lower, xu = kOne - bx.lower;
    const std::int64_t ll = std::llround(static_cast<double>(xl) * fy);
    const std::int64_t ul = std::llround(static_cast<double>(xu) * fy);
    const std::int64_t nx = ax.points;
    bins[static_cast<std::size_t>(by.lo * nx + bx.lo)] += ll;
    bins[static_cast<std::size_t>(by.hi * nx + bx.lo)] += xl - ll;
    bins[static_cast<std::size_t>(by.lo * nx + bx.hi)] += ul;
    bins[static_cast<std::size_t>(by.hi * nx + bx.hi)] += xu - ul;
  }
  return bins;
}

// A sweep: a draw with binning, then `steps` moves, each binned; host kernel against the
// reference after every call.
void compare_sweep(int dim, bool periodic, std::int64_t count) {
  Case c(dim, periodic, 23, 17);
  c.s.count = count;
  std::vector<double> x(static_cast<std::size_t>(count), -1.0), y(dim == 2 ? x.size() : 0, -1.0);
  std::vector<double> rx, ry;
  std::vector<std::int64_t> bins(static_cast<std::size_t>(fk::particle_grid_points(c.s)), 5);
  c.s.x = x.data();
  c.s.y = dim == 2 ? y.data() : nullptr;
  c.s.bins = bins.data();
  for (int n = 0; n <= 12; ++n) {
    c.s.draw = n == 0;
    c.s.move = n > 0;
    c.s.step = static_cast<std::uint32_t>(n);
    fk::particle_step_host(c.s);
    if (n == 0) {
      reference_draw(c, rx, ry);
    } else {
      reference_move(c, rx, ry);
    }
    const std::string where = std::to_string(dim) + "D " + (periodic ? "periodic" : "reflecting") +
                              ", call " + std::to_string(n);
    ASSERT_EQ(x, rx) << where;
    ASSERT_EQ(y, ry) << where;
    ASSERT_EQ(bins, reference_bins(c, rx, ry)) << where;
    std::int64_t total = 0;
    for (std::int64_t b : bins) total += b;
    ASSERT_EQ(total, count * kOne) << where;
    const double lx = c.s.axis[0].length;
    for (double v : x) ASSERT_TRUE(v >= 0.0 && v <= lx) << where;
  }
  // Binning alone leaves the positions as they are.
  const std::vector<double> before = x;
  c.s.draw = c.s.move = false;
  fk::particle_step_host(c.s);
  EXPECT_EQ(x, before);
  EXPECT_EQ(bins, reference_bins(c, rx, ry));
}

}  // namespace

TEST(kernels_particle_step, HostPathMatchesThePlainLoopsBitForBitIn1D) {
  compare_sweep(1, true, 3001);
  compare_sweep(1, false, 3001);
}

TEST(kernels_particle_step, HostPathMatchesThePlainLoopsBitForBitIn2D) {
  compare_sweep(2, true, 2003);
  compare_sweep(2, false, 2003);
}

TEST(kernels_particle_step, PathsDependOnTheIdsNotOnTheSplit) {
  // Particles 0..999 in one call, or as 0..399 and 400..999: the same positions and bins.
  Case c(2, false, 11, 9);
  std::vector<double> x(1000), y(1000);
  std::vector<std::int64_t> all(99), part(99), sum(99, 0);
  for (int n = 0; n < 3; ++n) {
    c.s.draw = n == 0;
    c.s.move = n > 0;
    c.s.step = static_cast<std::uint32_t>(n);
    c.s.first = 0;
    c.s.count = 1000;
    c.s.x = x.data();
    c.s.y = y.data();
    c.s.bins = all.data();
    fk::particle_step_host(c.s);
  }
  std::vector<double> x2(1000), y2(1000);
  const std::int64_t firsts[2] = {0, 400}, counts[2] = {400, 600};
  for (int k = 0; k < 2; ++k) {
    for (int n = 0; n < 3; ++n) {
      c.s.draw = n == 0;
      c.s.move = n > 0;
      c.s.step = static_cast<std::uint32_t>(n);
      c.s.first = firsts[k];
      c.s.count = counts[k];
      c.s.x = x2.data() + firsts[k];
      c.s.y = y2.data() + firsts[k];
      c.s.bins = part.data();
      fk::particle_step_host(c.s);
    }
    for (std::size_t q = 0; q < part.size(); ++q) sum[q] += part[q];
  }
  EXPECT_EQ(x, x2);
  EXPECT_EQ(y, y2);
  EXPECT_EQ(all, sum);
}

TEST(kernels_particle_step, BadCallsAreRefused) {
  Case c(1, true, 10, 1);
  std::vector<double> x(4);
  c.s.count = 4;
  c.s.x = x.data();
  c.s.move = true;
  fk::ParticleStep s = c.s;
  s.dx_face = nullptr;
  EXPECT_THROW(fk::particle_step_host(s), fracmfg::Error);
  s = c.s;
  s.x = nullptr;
  EXPECT_THROW(fk::particle_step_host(s), fracmfg::Error);
  s = c.s;
  s.dim = 3;
  EXPECT_THROW(fk::particle_step_host(s), fracmfg::Error);
  s = c.s;
  s.count = -1;
  EXPECT_THROW(fk::particle_step_host(s), fracmfg::Error);
  s = c.s;
  s.draw = true;
  s.cdf = nullptr;
  EXPECT_THROW(fk::particle_step_host(s), fracmfg::Error);
  s = c.s;
  s.noise = std::nan("");
  EXPECT_THROW(fk::particle_step_host(s), fracmfg::Error);
}

TEST(kernels_particle_step, DevicePathWithoutADeviceLeavesNothingResident) {
  Case c(1, true, 10, 1);
  fk::ParticleDevice dev(0, 1, c.s.axis[0], c.s.axis[1]);
  std::vector<double> x(4, 0.5);
  c.s.count = 4;
  c.s.move = true;
  // Nothing placed yet: a call that does not draw is refused before touching the device.
  EXPECT_THROW(dev.run(c.s), fracmfg::Error);
  EXPECT_THROW(dev.download(x.data(), nullptr), fracmfg::Error);
  EXPECT_THROW(fk::ParticleDevice(0, 3, c.s.axis[0], c.s.axis[1]), fracmfg::Error);
  const fracmfg::exec::CudaStatus status = fracmfg::exec::probe_cuda();
  if (!status.devices.empty()) return;  // tests/backend runs the device
  if (!status.compiled) {
    EXPECT_THROW(dev.set_constants(c.cdf.data(), c.inv_c.data()), fracmfg::NotCompiled);
    EXPECT_THROW(dev.upload(x.data(), nullptr, 4), fracmfg::NotCompiled);
  } else {
    EXPECT_THROW(dev.upload(x.data(), nullptr, 4), fracmfg::Error);
  }
  EXPECT_FALSE(dev.resident());
  EXPECT_FALSE(dev.has_constants());
}
