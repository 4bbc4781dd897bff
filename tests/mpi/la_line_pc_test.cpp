// The "fracmfg_line" PC: one application equals a plain reference (dense LU of every x-line
// and y-line system of the rank's block, the residual with the dense block) to round-off,
// for plain, periodic and mixed boundaries and 1 to 3 sweeps, with and without a selector;
// coefficients are read again after new values; a matrix that is not 5-point, or a PC
// without its DMDA, is refused with a message.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscdmda.h>
#include <petscksp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/exec_configs.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/la/line_pc.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "fracmfg/la/tridiag_pc.hpp"
#include "la/dense_lu.hpp"

namespace la = fracmfg::la;

namespace {

// Uniform in [-1, 1), a pure function of (seed, index, stream).
double uniform(std::uint64_t seed, std::uint64_t index, std::uint64_t stream) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + index * 0xBF58476D1CE4E5B9ULL + stream;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

struct Problem {
  la::DmHandle da;
  la::MatHandle a;
  PetscInt xs = 0, ys = 0, xm = 0, ym = 0, mx = 0, my = 0;
  bool px = false, py = false;
};

// A 2D DMDA (star stencil, width 1) and a random 5-point matrix on it with strictly
// diagonally dominant rows of random sign pattern (nonsymmetric); periodic couplings wrap.
Problem make_problem(PetscInt mx, PetscInt my, bool px, bool py, std::uint64_t seed) {
  Problem p;
  p.mx = mx;
  p.my = my;
  p.px = px;
  p.py = py;
  FRACMFG_PETSC_CHECK(DMDACreate2d(PETSC_COMM_WORLD, px ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE,
                                   py ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE, DMDA_STENCIL_STAR,
                                   mx, my, PETSC_DECIDE, PETSC_DECIDE, 1, 1, nullptr, nullptr,
                                   p.da.out()));
  FRACMFG_PETSC_CHECK(DMSetUp(p.da.get()));
  FRACMFG_PETSC_CHECK(DMDAGetCorners(p.da.get(), &p.xs, &p.ys, nullptr, &p.xm, &p.ym, nullptr));
  FRACMFG_PETSC_CHECK(DMSetMatType(p.da.get(), MATAIJ));
  FRACMFG_PETSC_CHECK(DMCreateMatrix(p.da.get(), p.a.out()));
  for (PetscInt j = p.ys; j < p.ys + p.ym; ++j) {
    for (PetscInt i = p.xs; i < p.xs + p.xm; ++i) {
      const auto id = static_cast<std::uint64_t>(j * mx + i);
      MatStencil row{};
      row.i = i;
      row.j = j;
      MatStencil cols[5]{};
      double vals[5] = {};
      int n = 1;
      cols[0] = row;
      double off = 0.0;
      const int di[4] = {-1, 1, 0, 0};
      const int dj[4] = {0, 0, -1, 1};
      for (int q = 0; q < 4; ++q) {
        const PetscInt ci = i + di[q];
        const PetscInt cj = j + dj[q];
        const bool inside_x = px || (ci >= 0 && ci < mx);
        const bool inside_y = py || (cj >= 0 && cj < my);
        if (!inside_x || !inside_y) continue;
        cols[n].i = ci;
        cols[n].j = cj;
        vals[n] = uniform(seed, id, static_cast<std::uint64_t>(q + 1));
        off += std::fabs(vals[n]);
        ++n;
      }
      const double sign = uniform(seed, id, 7) < -0.5 ? -1.0 : 1.0;
      vals[0] = sign * (off + 0.3 + std::fabs(uniform(seed, id, 8)));
      FRACMFG_PETSC_CHECK(MatSetValuesStencil(p.a.get(), 1, &row, n, cols, vals, INSERT_VALUES));
    }
  }
  FRACMFG_PETSC_CHECK(MatAssemblyBegin(p.a.get(), MAT_FINAL_ASSEMBLY));
  FRACMFG_PETSC_CHECK(MatAssemblyEnd(p.a.get(), MAT_FINAL_ASSEMBLY));
  return p;
}

// The rank's block A_r as a dense row-major matrix over the box's points (natural order of
// the box), read entry by entry with MatGetValues.
std::vector<double> dense_block(const Problem& p) {
  PetscInt rstart = 0;
  FRACMFG_PETSC_CHECK(MatGetOwnershipRange(p.a.get(), &rstart, nullptr));
  const PetscInt n = p.xm * p.ym;
  std::vector<double> d(static_cast<std::size_t>(n * n), 0.0);
  for (PetscInt r = 0; r < n; ++r) {
    for (PetscInt c = 0; c < n; ++c) {
      const PetscInt gr = rstart + r;
      const PetscInt gc = rstart + c;
      double v = 0.0;
      FRACMFG_PETSC_CHECK(MatGetValues(p.a.get(), 1, &gr, 1, &gc, &v));
      d[static_cast<std::size_t>(r * n + c)] = v;
    }
  }
  return d;
}

// z += T^{-1} t for the lines of one direction: T = diagonal + the couplings of A_r along
// the lines (dense LU per line).
void line_correction(const Problem& p, const std::vector<double>& block, bool x_lines,
                     const std::vector<double>& t, std::vector<double>& z) {
  const PetscInt n = p.xm * p.ym;
  const PetscInt lines = x_lines ? p.ym : p.xm;
  const PetscInt len = x_lines ? p.xm : p.ym;
  for (PetscInt l = 0; l < lines; ++l) {
    auto index = [&](PetscInt e) { return x_lines ? l * p.xm + e : e * p.xm + l; };
    std::vector<double> m(static_cast<std::size_t>(len * len), 0.0);
    std::vector<double> b(static_cast<std::size_t>(len));
    for (PetscInt e = 0; e < len; ++e) {
      for (PetscInt f = 0; f < len; ++f) {
        m[static_cast<std::size_t>(e * len + f)] =
            block[static_cast<std::size_t>(index(e) * n + index(f))];
      }
      b[static_cast<std::size_t>(e)] = t[static_cast<std::size_t>(index(e))];
    }
    ASSERT_EQ(la::dense_lu_solve(static_cast<std::size_t>(len), m.data(), b.data()), -1);
    for (PetscInt e = 0; e < len; ++e) {
      z[static_cast<std::size_t>(index(e))] += b[static_cast<std::size_t>(e)];
    }
  }
}

// The formula of la/line_pc.hpp with dense algebra.
std::vector<double> reference_apply(const Problem& p, const std::vector<double>& r, int sweeps) {
  const std::vector<double> block = dense_block(p);
  const auto n = static_cast<std::size_t>(p.xm * p.ym);
  std::vector<double> z(n, 0.0);
  for (int s = 1; s <= sweeps; ++s) {
    std::vector<double> t(n);
    for (std::size_t k = 0; k < n; ++k) {
      double az = 0.0;
      for (std::size_t c = 0; c < n; ++c) az += block[k * n + c] * z[c];
      t[k] = r[k] - az;
    }
    line_correction(p, block, s % 2 == 1, t, z);
  }
  return z;
}

struct Applied {
  std::vector<double> z, r;
  la::LinePcInfo info;
};

Applied apply_pc(const Problem& p, int sweeps, fracmfg::exec::Selector* selector,
                 std::uint64_t seed) {
  la::register_petsc_types();
  la::PcHandle pc;
  FRACMFG_PETSC_CHECK(PCCreate(PETSC_COMM_WORLD, pc.out()));
  FRACMFG_PETSC_CHECK(PCSetType(pc.get(), la::line_pc_type));
  FRACMFG_PETSC_CHECK(PCSetDM(pc.get(), p.da.get()));
  FRACMFG_PETSC_CHECK(PCSetOperators(pc.get(), p.a.get(), p.a.get()));
  la::line_pc_set_sweeps(pc.get(), sweeps);
  la::line_pc_set_selector(pc.get(), selector);
  FRACMFG_PETSC_CHECK(PCSetUp(pc.get()));
  la::VecHandle r, z;
  FRACMFG_PETSC_CHECK(DMCreateGlobalVector(p.da.get(), r.out()));
  FRACMFG_PETSC_CHECK(VecDuplicate(r.get(), z.out()));
  PetscInt rstart = 0, rend = 0;
  FRACMFG_PETSC_CHECK(VecGetOwnershipRange(r.get(), &rstart, &rend));
  Applied out;
  {
    la::VecWriteArray w(r.get());
    for (PetscInt k = rstart; k < rend; ++k) {
      w[k - rstart] = uniform(seed, static_cast<std::uint64_t>(k), 9);
      out.r.push_back(w[k - rstart]);
    }
  }
  FRACMFG_PETSC_CHECK(PCApply(pc.get(), r.get(), z.get()));
  {
    la::VecReadArray a(z.get());
    out.z.assign(a.get(), a.get() + (rend - rstart));
  }
  out.info = la::line_pc_info(pc.get());
  return out;
}

double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0.0, size = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    diff = std::max(diff, std::fabs(a[k] - b[k]));
    size = std::max(size, std::fabs(b[k]));
  }
  double both[2] = {diff, size};
  MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return both[0] / std::max(both[1], 1e-300);
}

struct Case {
  PetscInt mx, my;
  bool px, py;
};

class LinePcApply : public ::testing::TestWithParam<Case> {};

TEST_P(LinePcApply, EqualsDenseLineSolvesOfTheRankBlock) {
  const Case c = GetParam();
  const Problem p = make_problem(c.mx, c.my, c.px, c.py, 17);
  for (const int sweeps : {1, 2, 3, 8}) {
    const Applied got = apply_pc(p, sweeps, nullptr, 5);
    EXPECT_EQ(got.info.xm, p.xm);
    EXPECT_EQ(got.info.ym, p.ym);
    EXPECT_EQ(got.info.cyclic_x, c.px && p.xm == c.mx);
    EXPECT_EQ(got.info.cyclic_y, c.py && p.ym == c.my);
    EXPECT_EQ(got.info.setups, 1);
    EXPECT_EQ(got.info.applies, 1);
    const std::vector<double> want = reference_apply(p, got.r, sweeps);
    EXPECT_LT(max_relative_difference(got.z, want), 1e-12) << "sweeps " << sweeps;
  }
}

TEST_P(LinePcApply, ASelectorGivesTheHostResult) {
  const Case c = GetParam();
  const Problem p = make_problem(c.mx, c.my, c.px, c.py, 23);
  fracmfg::exec::Selector selector(fracmfg::exec::Hardware::probe(PETSC_COMM_WORLD),
                                   fracmfg::test::host_selector_config());
  const Applied host = apply_pc(p, 3, nullptr, 3);
  const Applied via = apply_pc(p, 3, &selector, 3);
  EXPECT_EQ(max_relative_difference(via.z, host.z), 0.0);
}

// Wide and tall grids: with 2 or 3 ranks PETSc cuts one of the two directions, so a rank
// holds whole (cyclic) lines in one direction and cut lines in the other.
INSTANTIATE_TEST_SUITE_P(Grids, LinePcApply,
                         ::testing::Values(Case{13, 11, false, false}, Case{13, 11, true, true},
                                           Case{7, 19, true, false}, Case{19, 7, false, true},
                                           Case{24, 5, true, true}));

TEST(LinePc, NewValuesAreReadAtTheNextSetUp) {
  const Problem p = make_problem(9, 10, true, false, 31);
  la::register_petsc_types();
  la::KspHandle ksp = la::create_ksp(PETSC_COMM_WORLD);
  FRACMFG_PETSC_CHECK(KSPSetDM(ksp.get(), p.da.get()));
  FRACMFG_PETSC_CHECK(KSPSetDMActive(ksp.get(), PETSC_FALSE));
  FRACMFG_PETSC_CHECK(KSPSetType(ksp.get(), KSPGMRES));
  FRACMFG_PETSC_CHECK(KSPSetTolerances(ksp.get(), 1e-12, 1e-50, PETSC_DEFAULT, 500));
  // Right preconditioning: the tolerance is on the true residual.
  FRACMFG_PETSC_CHECK(KSPSetPCSide(ksp.get(), PC_RIGHT));
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp.get(), &pc));
  FRACMFG_PETSC_CHECK(PCSetType(pc, la::line_pc_type));
  FRACMFG_PETSC_CHECK(KSPSetOperators(ksp.get(), p.a.get(), p.a.get()));
  la::VecHandle b, x, check;
  FRACMFG_PETSC_CHECK(DMCreateGlobalVector(p.da.get(), b.out()));
  FRACMFG_PETSC_CHECK(VecDuplicate(b.get(), x.out()));
  FRACMFG_PETSC_CHECK(VecDuplicate(b.get(), check.out()));
  FRACMFG_PETSC_CHECK(VecSet(b.get(), 1.0));
  for (int round = 0; round < 2; ++round) {
    if (round == 1) FRACMFG_PETSC_CHECK(MatShift(p.a.get(), 2.5));  // new values
    FRACMFG_PETSC_CHECK(KSPSolve(ksp.get(), b.get(), x.get()));
    FRACMFG_PETSC_CHECK(MatMult(p.a.get(), x.get(), check.get()));
    FRACMFG_PETSC_CHECK(VecAXPY(check.get(), -1.0, b.get()));
    PetscReal res = 0.0;
    FRACMFG_PETSC_CHECK(VecNorm(check.get(), NORM_INFINITY, &res));
    EXPECT_LT(res, 1e-9) << "round " << round;
    EXPECT_EQ(la::line_pc_info(pc).setups, round + 1);
  }
}

// The message of the PetscError that PCSetUp raises (empty when it succeeds).
std::string setup_error(PC pc) {
  try {
    FRACMFG_PETSC_CHECK(PCSetUp(pc));
  } catch (const fracmfg::PetscError& e) {
    return e.what();
  }
  ADD_FAILURE() << "PCSetUp accepted the PC";
  return "";
}

TEST(LinePc, RefusesAMatrixThatIsNotFivePointAndAPcWithoutItsGrid) {
  la::register_petsc_types();
  {
    // Every rank's first owned row couples to its diagonal neighbour (a 9-point entry).
    const Problem p = make_problem(12, 12, false, false, 41);
    la::MatHandle a;
    FRACMFG_PETSC_CHECK(MatDuplicate(p.a.get(), MAT_COPY_VALUES, a.out()));
    FRACMFG_PETSC_CHECK(MatSetOption(a.get(), MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscInt rstart = 0;
    FRACMFG_PETSC_CHECK(MatGetOwnershipRange(a.get(), &rstart, nullptr));
    const PetscInt col = rstart + p.xm + 1;  // (xs + 1, ys + 1) in the rank's block
    FRACMFG_PETSC_CHECK(MatSetValue(a.get(), rstart, col, 0.5, INSERT_VALUES));
    FRACMFG_PETSC_CHECK(MatAssemblyBegin(a.get(), MAT_FINAL_ASSEMBLY));
    FRACMFG_PETSC_CHECK(MatAssemblyEnd(a.get(), MAT_FINAL_ASSEMBLY));
    la::PcHandle pc;
    FRACMFG_PETSC_CHECK(PCCreate(PETSC_COMM_WORLD, pc.out()));
    FRACMFG_PETSC_CHECK(PCSetType(pc.get(), la::line_pc_type));
    FRACMFG_PETSC_CHECK(PCSetDM(pc.get(), p.da.get()));
    FRACMFG_PETSC_CHECK(PCSetOperators(pc.get(), a.get(), a.get()));
    EXPECT_NE(setup_error(pc.get()).find("not a 5-point operator"), std::string::npos);
  }
  {
    const Problem p = make_problem(8, 8, false, false, 43);
    la::PcHandle pc;
    FRACMFG_PETSC_CHECK(PCCreate(PETSC_COMM_WORLD, pc.out()));
    FRACMFG_PETSC_CHECK(PCSetType(pc.get(), la::line_pc_type));
    FRACMFG_PETSC_CHECK(PCSetOperators(pc.get(), p.a.get(), p.a.get()));
    EXPECT_NE(setup_error(pc.get()).find("needs the 2D DMDA"), std::string::npos);
  }
  {
    la::PcHandle pc;
    FRACMFG_PETSC_CHECK(PCCreate(PETSC_COMM_WORLD, pc.out()));
    FRACMFG_PETSC_CHECK(PCSetType(pc.get(), PCJACOBI));
    EXPECT_THROW(la::line_pc_set_sweeps(pc.get(), 2), fracmfg::Error);
    la::line_pc_set_selector(pc.get(), nullptr);  // another type: nothing happens
    EXPECT_FALSE(la::is_line_pc(pc.get()));
  }
}

}  // namespace
