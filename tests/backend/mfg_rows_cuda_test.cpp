// kernels::MfgRowsDevice (the cuda path of mfg_hjb_rows and mfg_fp_rows) against the host
// kernels: the HJB residual and Jacobian rows of 1D (owned values with ghosts, and the
// ghosted box), 2D and 3D blocks, periodic and reflecting, quadratic and power Hamiltonians,
// and the 1D Fokker-Planck rows, to round-off (contracted multiply-adds, the device's pow);
// calls of several sizes through one device object (its arrays grow). Skips with a message
// where the build has no CUDA or the machine no device; the failure modes that need no device
// are checked before.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/kernels/mfg_rows.hpp"

namespace fk = fracmfg::kernels;
namespace fe = fracmfg::exec;

namespace {

std::vector<double> uniform(std::size_t n, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

// A block of the whole grid (periodic: ghosts on every side; reflecting: none beyond the
// walls), or in 1D with owned values and two ghosts.
struct Case {
  fk::HjbRowsCall c;
  std::vector<double> u, coef, u_next, rhs, r, rows, sub, diag, super;

  Case(int dim, std::int64_t side, bool periodic, bool owned, bool power, unsigned seed) {
    fk::MfgBlock& b = c.block;
    b.dim = dim;
    for (int a = 0; a < dim; ++a) {
      b.points[a] = b.size[a] = side + 3 * a;
      b.ghost_start[a] = periodic ? -1 : 0;
      b.ghost_size[a] = b.size[a] + (periodic ? 2 : 0);
      b.mirror[2 * a] = b.mirror[2 * a + 1] = !periodic;
      b.inv_h[a] = static_cast<double>(b.points[a]);
    }
    b.owned_1d = owned;
    const auto n = static_cast<std::size_t>(fk::mfg_block_points(b));
    u = uniform(static_cast<std::size_t>(fk::mfg_block_values(b)), -1.0, 1.0, seed);
    if (owned) {
      b.ghost_west = periodic ? u.back() : u.front();
      b.ghost_east = periodic ? u.front() : u.back();
    }
    coef = uniform(n, 0.5, 1.5, seed + 1);
    u_next = uniform(n, -1.0, 1.0, seed + 2);
    rhs = uniform(n, -1.0, 1.0, seed + 3);
    r.assign(n, 0.0);
    rows.assign(n * static_cast<std::size_t>(fk::mfg_row_width(dim)), 0.0);
    for (auto* v : {&sub, &diag, &super}) v->assign(n, 0.0);
    c.inv_dt = 50.0;
    c.nu = 0.05;
    c.power = power;
    c.exponent = 1.7;
    c.u = u.data();
    c.coef = coef.data();
    c.u_next = u_next.data();
    c.rhs = rhs.data();
    c.residual = r.data();
    if (owned) {
      c.sub = sub.data();
      c.diag = diag.data();
      c.super = super.data();
    } else {
      c.rows = rows.data();
    }
  }
};

void expect_close(const std::vector<double>& a, const std::vector<double>& b,
                  const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t k = 0; k < a.size(); ++k) {
    ASSERT_NEAR(a[k], b[k], 1e-11 * (1.0 + std::fabs(b[k]))) << what << " entry " << k;
  }
}

int device_or_check_failure(std::string& why) {
  const fe::CudaStatus status = fe::probe_cuda();
  Case cs(1, 8, true, true, false, 1);
  fk::MfgRowsDevice dev(0);
  if (!status.compiled) {
    EXPECT_THROW(dev.hjb(cs.c), fracmfg::NotCompiled);
    why = "CUDA backend not compiled in this build";
    return -1;
  }
  if (status.devices.empty()) {
    try {
      dev.hjb(cs.c);
      ADD_FAILURE() << "expected a CUDA error without a device";
    } catch (const fracmfg::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
    }
    why = "no CUDA device on this machine (" + status.status + ")";
    return -1;
  }
  return status.devices.front().id;
}

}  // namespace

TEST(mfg_rows_cuda_test, HjbRowsMatchTheHost) {
  std::string why;
  const int id = device_or_check_failure(why);
  if (id < 0) GTEST_SKIP() << why;
  fk::MfgRowsDevice dev(id);
  unsigned seed = 10;
  for (int dim : {1, 2, 3}) {
    for (bool periodic : {true, false}) {
      for (bool owned : {false, true}) {
        if (owned && dim != 1) continue;
        for (bool power : {false, true}) {
          // Growing sizes through one device object.
          for (std::int64_t side : {std::int64_t{5}, dim == 1 ? std::int64_t{3000} : 40}) {
            if (dim == 3 && side > 5) side = 17;
            const std::string what = std::to_string(dim) + "D" + (periodic ? " periodic" : "") +
                                     (owned ? " owned" : "") + (power ? " power" : "") + " side " +
                                     std::to_string(side);
            Case host(dim, side, periodic, owned, power, seed);
            Case cuda(dim, side, periodic, owned, power, seed);
            ++seed;
            const double hs = fk::mfg_hjb_rows_host(host.c);
            const double cs = dev.hjb(cuda.c);
            EXPECT_NEAR(cs, hs, 1e-11 * hs) << what;
            expect_close(cuda.r, host.r, what + " residual");
            expect_close(cuda.rows, host.rows, what + " rows");
            expect_close(cuda.sub, host.sub, what + " sub");
            expect_close(cuda.diag, host.diag, what + " diag");
            expect_close(cuda.super, host.super, what + " super");
            // The rows alone.
            Case rows_only(dim, side, periodic, owned, power, seed - 1);
            rows_only.c.residual = nullptr;
            EXPECT_EQ(dev.hjb(rows_only.c), 0.0) << what;
            expect_close(rows_only.rows, host.rows, what + " rows alone");
            expect_close(rows_only.diag, host.diag, what + " diag alone");
          }
        }
      }
    }
  }
}

TEST(mfg_rows_cuda_test, FpRowsMatchTheHost) {
  std::string why;
  const int id = device_or_check_failure(why);
  if (id < 0) GTEST_SKIP() << why;
  fk::MfgRowsDevice dev(id);
  for (bool periodic : {true, false}) {
    for (std::int64_t n : {std::int64_t{7}, std::int64_t{5000}}) {
      Case base(1, n, periodic, true, false, 77);
      fk::FpRowsCall f;
      f.block = base.c.block;
      f.inv_dt = base.c.inv_dt;
      f.nu = base.c.nu;
      f.u = base.u.data();
      f.inv_c = base.coef.data();
      f.inv_c_west = periodic ? base.coef.back() : base.coef.front();
      f.inv_c_east = periodic ? base.coef.front() : base.coef.back();
      std::vector<double> hs(base.u.size()), hd(hs.size()), hp(hs.size());
      std::vector<double> cs(hs.size()), cd(hs.size()), cp(hs.size());
      f.sub = hs.data();
      f.diag = hd.data();
      f.super = hp.data();
      fk::mfg_fp_rows_host(f);
      f.sub = cs.data();
      f.diag = cd.data();
      f.super = cp.data();
      dev.fp(f);
      const std::string what =
          std::string(periodic ? "periodic" : "reflecting") + " n " + std::to_string(n);
      expect_close(cs, hs, what + " sub");
      expect_close(cd, hd, what + " diag");
      expect_close(cp, hp, what + " super");
    }
  }
}
