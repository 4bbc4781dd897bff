// kernels::mfg_hjb_rows_host and kernels::mfg_fp_rows_host against plain reference loops over
// a global grid function: the HJB residual and Jacobian rows of an owned block (1D, 2D and
// 3D; periodic, reflecting and mixed sides; quadratic with per-point coefficients, as the
// congestion form, and power Hamiltonians) read from a ghosted box or, in 1D, from the owned
// values with their two ghosts; the 1D Fokker-Planck rows as the transpose of the reference
// Jacobian. To round-off (the same formulas, evaluated in another order). The input checks,
// and the device path without a device (NotCompiled or a CUDA error).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/kernels/mfg_rows.hpp"

namespace {

namespace fk = fracmfg::kernels;

// A smooth grid function with kinks (so that the upwind branches differ from point to point).
double field(std::int64_t i, std::int64_t j, std::int64_t l) {
  const double x = static_cast<double>(i), y = static_cast<double>(j), z = static_cast<double>(l);
  return std::sin(0.7 * x + 0.3) + 0.4 * std::cos(1.3 * y - 0.2 * x) + 0.25 * std::sin(0.9 * z + y);
}

double coefficient(std::int64_t i, std::int64_t j, std::int64_t l) {
  return 0.6 + 0.3 * std::cos(0.5 * static_cast<double>(i + 2 * j + 3 * l));
}

double wrap(std::int64_t i, std::int64_t n) {
  return static_cast<double>(((i % n) + n) % n);
}

struct Config {
  int dim = 1;
  std::array<std::int64_t, 3> points{1, 1, 1}, start{0, 0, 0}, size{1, 1, 1};
  std::array<bool, 3> periodic{true, true, true};
  bool owned_1d = false;
  bool power = false;
  double exponent = 2.0;
};

// The call over the setup's block: u from `field` (ghosted box or owned values with ghosts),
// u_next and rhs from shifted fields, the coefficients from `coefficient`.
struct Case {
  Config st;
  fk::HjbRowsCall c;
  std::vector<double> u, coef, u_next, rhs, r, rows, sub, diag, super;

  explicit Case(const Config& s) : st(s) {
    fk::MfgBlock& b = c.block;
    b.dim = s.dim;
    for (int a = 0; a < 3; ++a) {
      b.points[a] = s.points[a];
      b.start[a] = s.start[a];
      b.size[a] = s.size[a];
      b.inv_h[a] = 1.0 / (0.1 + 0.05 * a);
      b.mirror[2 * a] = b.mirror[2 * a + 1] = a < s.dim && !s.periodic[a];
      // The ghosted box: one point beyond the block, except beyond a wall (DMDA's layout).
      std::int64_t lo = s.start[a], hi = s.start[a] + s.size[a];
      if (a < s.dim) {
        if (s.periodic[a] || lo > 0) --lo;
        if (s.periodic[a] || hi < s.points[a]) ++hi;
      }
      b.ghost_start[a] = lo;
      b.ghost_size[a] = hi - lo;
    }
    b.owned_1d = s.owned_1d;
    const std::int64_t n = fk::mfg_block_points(b);
    if (s.owned_1d) {
      for (std::int64_t i = 0; i < n; ++i) u.push_back(value(s.start[0] + i, 0, 0));
      b.ghost_west = s.start[0] == 0 && !s.periodic[0] ? u.front() : value(s.start[0] - 1, 0, 0);
      b.ghost_east =
          s.start[0] + n == s.points[0] && !s.periodic[0] ? u.back() : value(s.start[0] + n, 0, 0);
    } else {
      for (std::int64_t l = 0; l < b.ghost_size[2]; ++l) {
        for (std::int64_t j = 0; j < b.ghost_size[1]; ++j) {
          for (std::int64_t i = 0; i < b.ghost_size[0]; ++i) {
            u.push_back(value(b.ghost_start[0] + i, b.ghost_start[1] + j, b.ghost_start[2] + l));
          }
        }
      }
    }
    for_owned([&](std::int64_t i, std::int64_t j, std::int64_t l) {
      coef.push_back(coefficient(i, j, l));
      u_next.push_back(value(i + 1, j, l) + 0.1);
      rhs.push_back(0.3 * value(i, j + 1, l));
    });
    r.assign(static_cast<std::size_t>(n), 0.0);
    rows.assign(static_cast<std::size_t>(n * fk::mfg_row_width(s.dim)), 0.0);
    for (auto* v : {&sub, &diag, &super}) v->assign(static_cast<std::size_t>(n), 0.0);
    c.inv_dt = 20.0;
    c.nu = 0.07;
    c.power = s.power;
    c.exponent = s.exponent;
    c.u = u.data();
    c.coef = coef.data();
    c.u_next = u_next.data();
    c.rhs = rhs.data();
    c.residual = r.data();
    if (s.owned_1d) {
      c.sub = sub.data();
      c.diag = diag.data();
      c.super = super.data();
    } else {
      c.rows = rows.data();
    }
  }

  // The field at a global point, wrapped on periodic axes.
  double value(std::int64_t i, std::int64_t j, std::int64_t l) const {
    const std::int64_t idx[3] = {i, j, l};
    std::int64_t w[3] = {0, 0, 0};
    for (int a = 0; a < st.dim; ++a) {
      w[a] = st.periodic[a] ? static_cast<std::int64_t>(wrap(idx[a], st.points[a])) : idx[a];
    }
    return field(w[0], w[1], w[2]);
  }

  template <class F>
  void for_owned(F&& f) const {
    for (std::int64_t l = st.start[2]; l < st.start[2] + st.size[2]; ++l) {
      for (std::int64_t j = st.start[1]; j < st.start[1] + st.size[1]; ++j) {
        for (std::int64_t i = st.start[0]; i < st.start[0] + st.size[0]; ++i) f(i, j, l);
      }
    }
  }
};

// The reference: per owned point, the neighbours of the global grid (mirrored at walls), the
// residual and the row [diag, west, east, ...] written out from the formulas.
struct Reference {
  std::vector<double> r, rows;
};

double neg(double d) {
  return d < 0.0 ? d : 0.0;
}
double pos(double d) {
  return d > 0.0 ? d : 0.0;
}

Reference reference(const Case& cs) {
  const Config& s = cs.st;
  const fk::HjbRowsCall& c = cs.c;
  Reference ref;
  std::size_t k = 0;
  cs.for_owned([&](std::int64_t i, std::int64_t j, std::int64_t l) {
    const std::int64_t p[3] = {i, j, l};
    const double up = cs.value(i, j, l);
    double um[3] = {0, 0, 0}, upl[3] = {0, 0, 0};
    bool wm[3] = {false, false, false}, wp[3] = {false, false, false};
    for (int a = 0; a < s.dim; ++a) {
      std::int64_t q[3] = {p[0], p[1], p[2]};
      wm[a] = !s.periodic[a] && p[a] == 0;
      wp[a] = !s.periodic[a] && p[a] == s.points[a] - 1;
      q[a] = p[a] - 1;
      um[a] = wm[a] ? up : cs.value(q[0], q[1], q[2]);
      q[a] = p[a] + 1;
      upl[a] = wp[a] ? up : cs.value(q[0], q[1], q[2]);
    }
    const double coef = cs.coef[k];
    double lap = 0.0, norm2 = 0.0, quad = 0.0;
    for (int a = 0; a < s.dim; ++a) {
      const double ih = c.block.inv_h[a];
      const double dp = (upl[a] - up) * ih, dm = (up - um[a]) * ih;
      lap += (upl[a] - 2.0 * up + um[a]) * ih * ih;
      norm2 += neg(dp) * neg(dp) + pos(dm) * pos(dm);
      quad += 0.5 * coef * (neg(dp) * neg(dp) + pos(dm) * pos(dm));
    }
    const double h = s.power ? coef / s.exponent * std::pow(norm2, 0.5 * s.exponent) : quad;
    ref.r.push_back((up - cs.u_next[k]) * c.inv_dt - c.nu * lap + h - cs.rhs[k]);
    const double ic =
        s.power ? coef * (norm2 > 0.0 ? std::pow(norm2, 0.5 * s.exponent - 1.0) : 0.0) : coef;
    std::vector<double> row(static_cast<std::size_t>(fk::mfg_row_width(s.dim)), 0.0);
    double diag = c.inv_dt;
    for (int a = 0; a < s.dim; ++a) {
      const double ih = c.block.inv_h[a];
      const double lp = c.nu * ih * ih;
      const double ap = ic * neg((upl[a] - up) * ih), am = ic * pos((up - um[a]) * ih);
      double cm = -lp - am * ih, cp = -lp + ap * ih;
      diag += 2.0 * lp + (am - ap) * ih;
      if (wm[a]) {
        diag += cm;
        cm = 0.0;
      }
      if (wp[a]) {
        diag += cp;
        cp = 0.0;
      }
      row[static_cast<std::size_t>(1 + 2 * a)] = cm;
      row[static_cast<std::size_t>(2 + 2 * a)] = cp;
    }
    row[0] = diag;
    ref.rows.insert(ref.rows.end(), row.begin(), row.end());
    ++k;
  });
  return ref;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t k = 0; k < got.size(); ++k) {
    ASSERT_NEAR(got[k], want[k], 1e-12 * (1.0 + std::fabs(want[k]))) << what << " entry " << k;
  }
}

void check_case(const Config& s, const std::string& what) {
  Case cs(s);
  const Reference ref = reference(cs);
  const double sum = fk::mfg_hjb_rows_host(cs.c);
  expect_close(cs.r, ref.r, what + " residual");
  double want = 0.0;
  for (double v : ref.r) want += v * v;
  EXPECT_NEAR(sum, want, 1e-12 * want) << what;
  if (s.owned_1d) {
    std::vector<double> rows;
    for (std::size_t k = 0; k < cs.diag.size(); ++k) {
      rows.insert(rows.end(), {cs.diag[k], cs.sub[k], cs.super[k]});
    }
    expect_close(rows, ref.rows, what + " rows");
  } else {
    expect_close(cs.rows, ref.rows, what + " rows");
  }
  // The residual alone and the rows alone give the same values.
  Case alone(s);
  alone.c.sub = alone.c.diag = alone.c.super = alone.c.rows = nullptr;
  EXPECT_EQ(fk::mfg_hjb_rows_host(alone.c), sum) << what;
  EXPECT_EQ(alone.r, cs.r) << what;
  Case rows_only(s);
  rows_only.c.residual = nullptr;
  EXPECT_EQ(fk::mfg_hjb_rows_host(rows_only.c), 0.0) << what;
  EXPECT_EQ(rows_only.rows, cs.rows) << what;
  EXPECT_EQ(rows_only.diag, cs.diag) << what;
}

Config config(int dim, std::array<std::int64_t, 3> points, std::array<std::int64_t, 3> start,
              std::array<std::int64_t, 3> size, std::array<bool, 3> periodic) {
  Config s;
  s.dim = dim;
  s.points = points;
  s.start = start;
  s.size = size;
  s.periodic = periodic;
  return s;
}

}  // namespace

TEST(KernelsMfgRows, HjbRowsMatchTheReferenceIn1D) {
  for (bool periodic : {true, false}) {
    for (bool owned : {true, false}) {
      for (bool power : {false, true}) {
        // The whole grid, a block at the west wall, one inside, one at the east wall, and
        // blocks of one and two points.
        for (auto [start, size] : std::vector<std::array<std::int64_t, 2>>{
                 {0, 40}, {0, 13}, {9, 17}, {27, 13}, {5, 1}, {38, 2}}) {
          Config s = config(1, {40, 1, 1}, {start, 0, 0}, {size, 1, 1}, {periodic, true, true});
          s.owned_1d = owned;
          s.power = power;
          s.exponent = 1.5;
          check_case(s, std::string(periodic ? "periodic" : "reflecting") +
                            (owned ? " owned" : " ghosted") + (power ? " power" : " quadratic") +
                            " block " + std::to_string(start) + "+" + std::to_string(size));
        }
      }
    }
  }
}

TEST(KernelsMfgRows, HjbRowsMatchTheReferenceIn2DAnd3D) {
  for (bool power : {false, true}) {
    for (std::array<bool, 3> periodic :
         {std::array<bool, 3>{true, true, true}, std::array<bool, 3>{false, false, false},
          std::array<bool, 3>{true, false, true}}) {
      for (auto [sx, sy, mx, my] : std::vector<std::array<std::int64_t, 4>>{
               {0, 0, 24, 18}, {0, 0, 11, 7}, {6, 5, 10, 9}, {13, 11, 11, 7}}) {
        Config s = config(2, {24, 18, 1}, {sx, sy, 0}, {mx, my, 1}, periodic);
        s.power = power;
        s.exponent = 3.0;
        check_case(s, "2D " + std::to_string(periodic[0]) + std::to_string(periodic[1]) +
                          (power ? " power" : "") + " block " + std::to_string(sx) + "," +
                          std::to_string(sy));
      }
      Config s = config(3, {9, 8, 7}, {2, 0, 3}, {5, 8, 4}, periodic);
      s.power = power;
      s.exponent = 2.5;
      check_case(s, "3D " + std::to_string(periodic[0]) + std::to_string(periodic[1]));
    }
  }
}

TEST(KernelsMfgRows, FpRowsAreTheTransposeOfTheReferenceJacobianIn1D) {
  for (bool periodic : {true, false}) {
    // The whole grid's reference rows (quadratic, the coefficient per point), transposed.
    Config whole = config(1, {30, 1, 1}, {0, 0, 0}, {30, 1, 1}, {periodic, true, true});
    Case all(whole);
    const Reference ref = reference(all);
    const std::int64_t n = 30;
    auto row = [&](std::int64_t p, int c) { return ref.rows[static_cast<std::size_t>(3 * p + c)]; };
    for (auto [start, size] :
         std::vector<std::array<std::int64_t, 2>>{{0, 30}, {0, 8}, {8, 14}, {22, 8}, {29, 1}}) {
      Config s = config(1, {n, 1, 1}, {start, 0, 0}, {size, 1, 1}, {periodic, true, true});
      s.owned_1d = true;
      Case cs(s);
      fk::FpRowsCall f;
      f.block = cs.c.block;
      f.inv_dt = cs.c.inv_dt;
      f.nu = cs.c.nu;
      f.u = cs.u.data();
      f.inv_c = cs.coef.data();
      const bool wall_w = !periodic && start == 0, wall_e = !periodic && start + size == n;
      f.inv_c_west = wall_w ? cs.coef.front()
                            : coefficient(static_cast<std::int64_t>(wrap(start - 1, n)), 0, 0);
      f.inv_c_east = wall_e ? cs.coef.back()
                            : coefficient(static_cast<std::int64_t>(wrap(start + size, n)), 0, 0);
      f.sub = cs.sub.data();
      f.diag = cs.diag.data();
      f.super = cs.super.data();
      fk::mfg_fp_rows_host(f);
      std::vector<double> got, want;
      for (std::int64_t k = 0; k < size; ++k) {
        const std::int64_t q = start + k;
        const auto west = static_cast<std::int64_t>(wrap(q - 1, n));
        const auto east = static_cast<std::int64_t>(wrap(q + 1, n));
        // J(q-1, q): row q-1's east entry; J(q+1, q): row q+1's west entry (0 across a wall).
        want.push_back(!periodic && q == 0 ? 0.0 : row(west, 2));
        want.push_back(row(q, 0));
        want.push_back(!periodic && q == n - 1 ? 0.0 : row(east, 1));
        got.insert(got.end(),
                   {cs.sub[static_cast<std::size_t>(k)], cs.diag[static_cast<std::size_t>(k)],
                    cs.super[static_cast<std::size_t>(k)]});
      }
      expect_close(
          got, want,
          std::string(periodic ? "periodic" : "reflecting") + " block " + std::to_string(start));
    }
  }
}

TEST(KernelsMfgRows, ChecksTheCall) {
  Case cs(config(2, {8, 8, 1}, {0, 0, 0}, {8, 8, 1}, {true, true, true}));
  fk::HjbRowsCall c = cs.c;
  c.residual = nullptr;
  c.rows = nullptr;
  EXPECT_THROW(fk::mfg_hjb_rows_host(c), fracmfg::Error);  // nothing asked
  c = cs.c;
  c.block.start[0] = 4;  // the block leaves the grid
  EXPECT_THROW(fk::mfg_hjb_rows_host(c), fracmfg::Error);
  c = cs.c;
  c.sub = cs.sub.data();  // three arrays on a ghosted 2D box
  EXPECT_THROW(fk::mfg_hjb_rows_host(c), fracmfg::Error);
  c = cs.c;
  c.u_next = nullptr;
  EXPECT_THROW(fk::mfg_hjb_rows_host(c), fracmfg::Error);
  fk::FpRowsCall f;
  f.block = c.block;  // 2D
  EXPECT_THROW(fk::mfg_fp_rows_host(f), fracmfg::Error);
}

TEST(KernelsMfgRows, TheDevicePathWithoutADeviceRefuses) {
  const fracmfg::exec::CudaStatus status = fracmfg::exec::probe_cuda();
  if (!status.devices.empty()) GTEST_SKIP() << "a CUDA device is present (tests/backend)";
  Case cs(config(1, {16, 1, 1}, {0, 0, 0}, {16, 1, 1}, {true, true, true}));
  fk::MfgRowsDevice device(0);
  if (!status.compiled) {
    EXPECT_THROW(device.hjb(cs.c), fracmfg::NotCompiled);
    return;
  }
  try {
    device.hjb(cs.c);
    ADD_FAILURE() << "expected a CUDA error without a device";
  } catch (const fracmfg::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("CUDA", 0), 0u) << e.what();
  }
}
