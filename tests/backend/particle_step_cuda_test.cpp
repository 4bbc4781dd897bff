// kernels::particle_step: the device path (positions resident on the device) against the
// host kernel over a sweep of steps, 1D and 2D, periodic and reflecting, with the positions
// moved home and back in the middle (a re-placement) and a refused call leaving the resident
// positions intact. Skips with a message where the build has no CUDA or the machine no
// device; the failure modes that need no device are checked before.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/kernels/particle_step.hpp"

namespace fk = fracmfg::kernels;
namespace fe = fracmfg::exec;

namespace {

constexpr std::int64_t kOne = std::int64_t{1} << 32;

int device_or_check_failure(std::string& why) {
  const fe::CudaStatus status = fe::probe_cuda();
  fk::ParticleAxis a;
  a.points = 8;
  a.spacing = 1.0 / 8;
  std::vector<double> x(4, 0.5), cdf(8, 1.0), ic(8, 1.0);
  fk::ParticleDevice dev(0, 1, a, a);
  if (!status.compiled) {
    EXPECT_THROW(dev.upload(x.data(), nullptr, 4), fracmfg::NotCompiled);
    why = "CUDA backend not compiled in this build";
    return -1;
  }
  if (status.devices.empty()) {
    try {
      dev.set_constants(cdf.data(), ic.data());
      ADD_FAILURE() << "expected a CUDA error without a device";
    } catch (const fracmfg::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
    }
    EXPECT_FALSE(dev.resident());
    why = "no CUDA device on this machine (" + status.status + ")";
    return -1;
  }
  return status.devices.front().id;
}

struct Grid {
  fk::ParticleStep s;
  std::vector<double> cdf, inv_c, dx, dy;
};

Grid make_grid(int dim, bool periodic) {
  Grid g;
  fk::ParticleStep& s = g.s;
  s.dim = dim;
  const std::int64_t points[2] = {96, 64};
  for (int a = 0; a < dim; ++a) {
    fk::ParticleAxis& ax = s.axis[a];
    ax.points = points[a];
    ax.length = 1.0;
    ax.spacing = 1.0 / static_cast<double>(ax.points);
    ax.origin = periodic ? 0.0 : 0.5 * ax.spacing;
    ax.periodic = periodic;
  }
  // Smooth fields (as a solver's grad u and 1/c are): along x the 1D profiles, in 2D
  // modulated by a period in y. A field that jumps from one grid row to the next would make
  // the drift's Lipschitz constant ~1/dy, and 20 steps of dt = 0.01 would then amplify the
  // ulp-level differences of the device's fused multiply-adds and math library past 1e-11
  // (on the host, 1 ulp in every position grew to 8e-7 with such fields, 8e-15 with these).
  const std::int64_t nx = s.axis[0].points;
  const std::int64_t ny = dim == 2 ? s.axis[1].points : 1;
  const double two_pi = 8.0 * std::atan(1.0);
  auto across = [&](std::int64_t row, std::int64_t rows) {
    return dim == 2 ? std::cos(two_pi * static_cast<double>(row) / static_cast<double>(rows)) : 1.0;
  };
  double c = 0.0;
  for (std::int64_t k = 0; k < fk::particle_grid_points(s); ++k) {
    const auto i = static_cast<double>(k % nx);
    c += 1.0 + 0.5 * std::sin(0.05 * static_cast<double>(k));
    g.cdf.push_back(c);
    g.inv_c.push_back(1.0 / (1.2 + std::cos(0.03 * i) * across(k / nx, ny)));
  }
  const std::int64_t fx = fk::particle_x_faces(s) / ny;
  for (std::int64_t k = 0; k < fk::particle_x_faces(s); ++k) {
    g.dx.push_back(std::sin(0.07 * static_cast<double>(k % fx)) * across(k / fx, ny));
  }
  for (std::int64_t k = 0; k < fk::particle_y_faces(s); ++k) {
    g.dy.push_back(std::cos(0.09 * static_cast<double>(k / nx)) * across(k % nx, nx));
  }
  s.seed = 31;
  s.first = 1000;
  s.count = 200003;
  s.dt = 0.01;
  s.noise = std::sqrt(2.0 * 0.02 * s.dt);
  s.cdf = g.cdf.data();
  s.inv_c = g.inv_c.data();
  s.dx_face = g.dx.data();
  s.dy_face = dim == 2 ? g.dy.data() : nullptr;
  return g;
}

// |a - b| on a periodic axis of length 1 (a wrap of round-off size counts as close).
double gap(double a, double b, bool periodic) {
  const double d = std::fabs(a - b);
  return periodic ? std::fmin(d, 1.0 - d) : d;
}

void compare(int dim, bool periodic, int device) {
  Grid g = make_grid(dim, periodic);
  const auto n = static_cast<std::size_t>(g.s.count);
  const auto points = static_cast<std::size_t>(fk::particle_grid_points(g.s));
  std::vector<double> hx(n), hy(dim == 2 ? n : 0), dx(n), dy(hy.size());
  std::vector<std::int64_t> hb(points), db(points);
  fk::ParticleDevice dev(device, dim, g.s.axis[0], g.s.axis[1]);
  dev.set_constants(g.cdf.data(), g.inv_c.data());
  for (int step = 0; step <= 20; ++step) {
    fk::ParticleStep s = g.s;
    s.draw = step == 0;
    s.move = step > 0;
    s.step = static_cast<std::uint32_t>(step);
    s.x = hx.data();
    s.y = dim == 2 ? hy.data() : nullptr;
    s.bins = hb.data();
    fk::particle_step_host(s);
    s.x = s.y = nullptr;
    s.bins = db.data();
    dev.run(s);
    ASSERT_TRUE(dev.resident());
    // Each particle's mass is split exactly, so the totals agree; a bin differs by at most
    // one unit per particle (round-off moving a split point).
    std::int64_t total = 0, off = 0;
    for (std::size_t k = 0; k < points; ++k) {
      total += db[k];
      off += std::llabs(db[k] - hb[k]);
    }
    ASSERT_EQ(total, g.s.count * kOne) << "step " << step;
    ASSERT_LE(off, 4 * g.s.count) << "step " << step;
    if (step == 10 || step == 20) {
      dev.download(dx.data(), dim == 2 ? dy.data() : nullptr);
      for (std::size_t p = 0; p < n; ++p) {
        ASSERT_LE(gap(dx[p], hx[p], periodic), 1e-11) << "particle " << p << " step " << step;
        if (dim == 2) {
          ASSERT_LE(gap(dy[p], hy[p], periodic), 1e-11) << "particle " << p << " step " << step;
        }
      }
    }
    if (step == 10) {
      // Home and back: what a re-placement to the host and to the device again does.
      dev.drop();
      dev.upload(dx.data(), dim == 2 ? dy.data() : nullptr, g.s.count);
    }
  }
  // A call that does not match the resident particles is refused and changes nothing.
  fk::ParticleStep bad = g.s;
  bad.move = true;
  bad.count = g.s.count - 1;
  bad.bins = db.data();
  EXPECT_THROW(dev.run(bad), fracmfg::Error);
  std::vector<double> again(n), again_y(hy.size());
  dev.download(again.data(), dim == 2 ? again_y.data() : nullptr);
  EXPECT_EQ(again, dx);
  EXPECT_EQ(again_y, dy);
}

}  // namespace

TEST(particle_step_cuda_test, DeviceStepsMatchTheHostIn1D) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  compare(1, true, device);
  compare(1, false, device);
}

TEST(particle_step_cuda_test, DeviceStepsMatchTheHostIn2D) {
  std::string why;
  const int device = device_or_check_failure(why);
  if (device < 0) GTEST_SKIP() << why;
  compare(2, true, device);
  compare(2, false, device);
}
