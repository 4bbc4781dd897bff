// exec::Rebalancer on a communicator, and the migration of DMDA vectors and particle arrays
// between splits. Speeds are injected through the measured times: rank r takes (r+1) times
// longer per point than rank 0.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscdmda.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "common/mpi_support.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/partition.hpp"
#include "fracmfg/exec/rebalancer.hpp"

namespace fe = fracmfg::exec;
using Reason = fe::RebalanceReason;
using fracmfg::test::same_on_all_ranks;

namespace {

int comm_rank() {
  return fracmfg::test::rank_of(PETSC_COMM_WORLD);
}
int comm_size() {
  return fracmfg::test::size_of(PETSC_COMM_WORLD);
}
fracmfg::core::Logger quiet_log() {
  return fracmfg::test::quiet_logger(PETSC_COMM_WORLD);
}

// Seconds per point of this rank: rank r is (r+1) times slower than rank 0.
double cost_of(int rank) {
  return 1e-6 * (rank + 1);
}

std::vector<PetscInt> even(PetscInt n) {
  return fe::partition(std::vector<double>(static_cast<std::size_t>(comm_size()), 1.0), n);
}

std::vector<double> speeds() {
  std::vector<double> s(static_cast<std::size_t>(comm_size()));
  for (int r = 0; r < comm_size(); ++r) s[static_cast<std::size_t>(r)] = 1.0 / cost_of(r);
  return s;
}

std::uint64_t bits(double x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// The known field: a value per natural index (grid point * dof + component) whose bits
// change with every index.
double field(std::int64_t natural) {
  const auto g = static_cast<double>(natural);
  return std::sin(0.37 * g) * 1e3 + g / 7.0 + 1e-9 * g * g;
}

DMBoundaryType boundary_for(int variant) {
  return variant % 2 == 0 ? DM_BOUNDARY_NONE : DM_BOUNDARY_PERIODIC;
}

fe::DmPtr make_1d(PetscInt n, PetscInt dof, PetscInt width, DMBoundaryType bx, const PetscInt* lx) {
  DM raw = nullptr;
  FRACMFG_PETSC_CHECK(DMDACreate1d(PETSC_COMM_WORLD, bx, n, dof, width, lx, &raw));
  fe::DmPtr da(raw);
  FRACMFG_PETSC_CHECK(DMSetUp(raw));
  return da;
}

fe::DmPtr make_2d(PetscInt nx, PetscInt ny, PetscInt dof, DMBoundaryType bx, DMBoundaryType by,
                  DMDAStencilType st, PetscInt width) {
  DM raw = nullptr;
  FRACMFG_PETSC_CHECK(DMDACreate2d(PETSC_COMM_WORLD, bx, by, st, nx, ny, PETSC_DECIDE, PETSC_DECIDE,
                                   dof, width, nullptr, nullptr, &raw));
  fe::DmPtr da(raw);
  FRACMFG_PETSC_CHECK(DMSetUp(raw));
  return da;
}

fe::DmPtr make_3d(PetscInt nx, PetscInt ny, PetscInt nz, PetscInt dof, DMBoundaryType b,
                  DMDAStencilType st) {
  DM raw = nullptr;
  FRACMFG_PETSC_CHECK(DMDACreate3d(PETSC_COMM_WORLD, b, DM_BOUNDARY_NONE, b, st, nx, ny, nz,
                                   PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, 1, nullptr,
                                   nullptr, nullptr, &raw));
  fe::DmPtr da(raw);
  FRACMFG_PETSC_CHECK(DMSetUp(raw));
  return da;
}

struct Box {
  PetscInt xs = 0, ys = 0, zs = 0, xm = 0, ym = 1, zm = 1, nx = 0, ny = 1, dof = 1, dim = 1;
};

Box box_of(DM da) {
  Box b;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da, &b.dim, &b.nx, &b.ny, nullptr, nullptr, nullptr, nullptr,
                                  &b.dof, nullptr, nullptr, nullptr, nullptr, nullptr));
  FRACMFG_PETSC_CHECK(DMDAGetCorners(da, &b.xs, &b.ys, &b.zs, &b.xm, &b.ym, &b.zm));
  if (b.dim == 1) {
    b.ys = 0;
    b.ym = 1;
  }
  return b;
}

// Visits every owned (natural index, value slot) of a global vector of a DMDA.
template <class Fn>
void for_each_owned(DM da, Vec v, Fn&& fn) {
  const Box b = box_of(da);
  if (b.dim == 1) {
    PetscScalar** a = nullptr;
    FRACMFG_PETSC_CHECK(DMDAVecGetArrayDOF(da, v, &a));
    for (PetscInt i = b.xs; i < b.xs + b.xm; ++i) {
      for (PetscInt c = 0; c < b.dof; ++c) fn(std::int64_t{i} * b.dof + c, a[i][c]);
    }
    FRACMFG_PETSC_CHECK(DMDAVecRestoreArrayDOF(da, v, &a));
  } else if (b.dim == 3) {
    PetscScalar**** a = nullptr;
    FRACMFG_PETSC_CHECK(DMDAVecGetArrayDOF(da, v, &a));
    for (PetscInt k = b.zs; k < b.zs + b.zm; ++k) {
      for (PetscInt j = b.ys; j < b.ys + b.ym; ++j) {
        for (PetscInt i = b.xs; i < b.xs + b.xm; ++i) {
          for (PetscInt c = 0; c < b.dof; ++c) {
            fn(((std::int64_t{k} * b.ny + j) * b.nx + i) * b.dof + c, a[k][j][i][c]);
          }
        }
      }
    }
    FRACMFG_PETSC_CHECK(DMDAVecRestoreArrayDOF(da, v, &a));
  } else {
    PetscScalar*** a = nullptr;
    FRACMFG_PETSC_CHECK(DMDAVecGetArrayDOF(da, v, &a));
    for (PetscInt j = b.ys; j < b.ys + b.ym; ++j) {
      for (PetscInt i = b.xs; i < b.xs + b.xm; ++i) {
        for (PetscInt c = 0; c < b.dof; ++c) {
          fn((std::int64_t{j} * b.nx + i) * b.dof + c, a[j][i][c]);
        }
      }
    }
    FRACMFG_PETSC_CHECK(DMDAVecRestoreArrayDOF(da, v, &a));
  }
}

void fill(DM da, Vec v) {
  for_each_owned(da, v, [](std::int64_t g, PetscScalar& x) { x = field(g); });
}

// Number of owned entries whose bits differ from the known field (0 means bit-identical).
long mismatches(DM da, Vec v) {
  long bad = 0;
  for_each_owned(da, v, [&](std::int64_t g, PetscScalar& x) {
    if (bits(x) != bits(field(g))) ++bad;
  });
  long all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD);
  return all;
}

std::vector<PetscInt> ranges_x(DM da) {
  PetscInt px = 0;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da, nullptr, nullptr, nullptr, nullptr, &px, nullptr, nullptr,
                                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
  const PetscInt* lx = nullptr;
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(da, &lx, nullptr, nullptr));
  return std::vector<PetscInt>(lx, lx + px);
}

std::vector<PetscInt> ranges_y(DM da) {
  PetscInt py = 0;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da, nullptr, nullptr, nullptr, nullptr, nullptr, &py, nullptr,
                                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
  const PetscInt* ly = nullptr;
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(da, nullptr, &ly, nullptr));
  return std::vector<PetscInt>(ly, ly + py);
}

std::vector<PetscInt> ranges_z(DM da) {
  PetscInt pz = 0;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &pz,
                                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr));
  const PetscInt* lz = nullptr;
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(da, nullptr, nullptr, &lz));
  return std::vector<PetscInt>(lz, lz + pz);
}

struct Particle {
  std::int64_t id;
  double x;
  double weight;
};

double particle_x(std::int64_t id) {
  return std::cos(0.013 * static_cast<double>(id)) + 0.5;
}

}  // namespace

// --- the decision ------------------------------------------------------------------------

TEST(mpi_exec_rebalance, InjectedSpeedsResplitTowardTheFasterRanks) {
  const int p = comm_size();
  const int me = comm_rank();
  const PetscInt n = 600;
  fe::Rebalancer rb(PETSC_COMM_WORLD, {}, quiet_log());
  std::vector<PetscInt> counts = even(n);
  int resplit_at = -1;
  std::vector<PetscInt> proposal;
  std::vector<double> throughputs;
  for (int k = 1; k <= 12; ++k) {
    const PetscInt mine = counts[static_cast<std::size_t>(me)];
    const fe::RebalanceDecision& d = rb.observe(static_cast<double>(mine) * cost_of(me), mine);
    EXPECT_EQ(d.observation, k);
    EXPECT_EQ(d.points, counts);
    if (p == 1) {
      EXPECT_EQ(d.reason, Reason::single_rank);
      EXPECT_FALSE(d.resplit);
      continue;
    }
    if (d.resplit) {
      EXPECT_EQ(resplit_at, -1) << "a second re-split at observation " << k;
      resplit_at = k;
      proposal = d.counts;
      throughputs = d.throughputs;
      EXPECT_TRUE(same_on_all_ranks(d.counts, PETSC_COMM_WORLD));
      counts = d.counts;
    } else if (resplit_at > 0) {
      EXPECT_LT(d.imbalance, 0.05) << "observation " << k;
    }
  }
  if (p == 1) {
    EXPECT_EQ(rb.policy().resplits(), 0);
    return;
  }
  EXPECT_EQ(resplit_at, rb.policy().options().patience);
  EXPECT_EQ(rb.policy().resplits(), 1);
  ASSERT_EQ(proposal.size(), static_cast<std::size_t>(p));
  EXPECT_EQ(std::accumulate(proposal.begin(), proposal.end(), PetscInt{0}), n);
  const double total = std::accumulate(throughputs.begin(), throughputs.end(), 0.0);
  for (int r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_NEAR(throughputs[i], 1.0 / cost_of(r), 1e-9 / cost_of(r));
    EXPECT_LT(std::abs(static_cast<double>(proposal[i]) - n * throughputs[i] / total), 1.0);
    if (r > 0) {
      EXPECT_GT(proposal[i - 1], proposal[i]) << "rank " << r;
    }
  }
}

TEST(mpi_exec_rebalance, BalancedLoadNeverTriggers) {
  const int me = comm_rank();
  fe::Rebalancer rb(PETSC_COMM_WORLD, {}, quiet_log());
  const std::vector<PetscInt> counts = even(301);
  const PetscInt mine = counts[static_cast<std::size_t>(me)];
  for (int k = 0; k < 25; ++k) {
    const fe::RebalanceDecision& d = rb.observe(static_cast<double>(mine) * 3e-6, mine);
    EXPECT_FALSE(d.resplit);
    EXPECT_EQ(d.reason, comm_size() == 1 ? Reason::single_rank : Reason::balanced);
  }
  EXPECT_EQ(rb.policy().resplits(), 0);
}

TEST(mpi_exec_rebalance, FluctuationsAroundBalanceDoNotResplitAgain) {
  // After the first re-split the times wobble by up to 3% around balance; with a trigger
  // threshold of 0.02 the imbalance often exceeds it, and hysteresis keeps the split.
  const int me = comm_rank();
  fe::RebalanceOptions o;
  o.threshold = 0.02;
  o.patience = 1;
  fe::Rebalancer rb(PETSC_COMM_WORLD, o, quiet_log());
  std::vector<PetscInt> counts = even(9000);
  int no_gain = 0;
  for (int k = 0; k < 60; ++k) {
    const PetscInt mine = counts[static_cast<std::size_t>(me)];
    const double wobble = k < 1 ? 1.0 : 1.0 + 0.03 * std::sin(1.3 * k + 2.1 * me);
    const fe::RebalanceDecision& d =
        rb.observe(static_cast<double>(mine) * cost_of(me) * wobble, mine);
    if (d.resplit) counts = d.counts;
    if (d.reason == Reason::no_gain) ++no_gain;
  }
  EXPECT_TRUE(same_on_all_ranks(counts, PETSC_COMM_WORLD));
  if (comm_size() == 1) {
    EXPECT_EQ(rb.policy().resplits(), 0);
  } else {
    EXPECT_EQ(rb.policy().resplits(), 1);
    EXPECT_GT(no_gain, 5);
  }
}

TEST(mpi_exec_rebalance, InvalidTimeOnOneRankThrowsOnEveryRank) {
  fe::Rebalancer rb(PETSC_COMM_WORLD, {}, quiet_log());
  const double t = comm_rank() == comm_size() - 1 ? -1.0 : 1.0;
  EXPECT_THROW(rb.observe(t, 10), fracmfg::Error);
  // Still usable afterwards, and still in step on every rank.
  EXPECT_NO_THROW(rb.observe(1.0, 10));
  EXPECT_EQ(rb.policy().observations(), 1);
}

TEST(mpi_exec_rebalance, TheSlowestRanksResplitCostIsRecordedAndWeighed) {
  const int p = comm_size();
  const int me = comm_rank();
  fe::RebalanceOptions o;
  o.patience = 1;
  fe::Rebalancer rb(PETSC_COMM_WORLD, o, quiet_log());
  // Each rank took a different time; the policy holds the largest on every rank.
  rb.record_cost(0.25 + 0.5 * me);
  EXPECT_DOUBLE_EQ(rb.policy().cost(), 0.25 + 0.5 * (p - 1));
  // A NaN or a negative time on one rank throws on every rank and keeps the recorded cost.
  EXPECT_THROW(rb.record_cost(me == p - 1 ? std::nan("") : 1.0), fracmfg::Error);
  EXPECT_THROW(rb.record_cost(me == 0 ? -1.0 : 1.0), fracmfg::Error);
  EXPECT_DOUBLE_EQ(rb.policy().cost(), 0.25 + 0.5 * (p - 1));
  if (p == 1) return;
  // Rank r is r + 1 times slower: a saving of a good fraction of the slowest rank's time per
  // observation. Over no further observation a known cost is never worth paying; over many
  // it is.
  const std::vector<PetscInt> counts = even(600);
  const PetscInt mine = counts[static_cast<std::size_t>(me)];
  const double seconds = static_cast<double>(mine) * cost_of(me);
  const fe::RebalanceDecision& none = rb.observe(seconds, mine, 0.0);
  EXPECT_EQ(none.reason, Reason::not_worth);
  EXPECT_GT(none.predicted_saving, 0.0);
  const double pays_after = rb.policy().cost() / none.predicted_saving;
  const fe::RebalanceDecision& enough = rb.observe(seconds, mine, 2.0 * pays_after);
  EXPECT_EQ(enough.reason, Reason::resplit);
  EXPECT_TRUE(enough.resplit);
}

// --- DMDA migration ----------------------------------------------------------------------

TEST(mpi_exec_rebalance, Migration1dKeepsEveryValueBitIdentical) {
  const PetscInt n = 47;
  for (PetscInt dof : {1, 2}) {
    for (int variant = 0; variant < 2; ++variant) {
      const PetscInt width = variant == 0 ? 1 : 2;
      fe::DmPtr da = make_1d(n, dof, width, boundary_for(variant), nullptr);
      fe::VecPtr u;
      {
        Vec raw = nullptr;
        FRACMFG_PETSC_CHECK(DMCreateGlobalVector(da.get(), &raw));
        u.reset(raw);
      }
      fill(da.get(), u.get());
      const std::vector<PetscInt> weighted = fe::partition(speeds(), n, width);
      fe::DmPtr next = fe::create_dmda_like(da.get(), weighted);
      EXPECT_EQ(ranges_x(next.get()), weighted);
      fe::VecPtr v = fe::migrate(da.get(), u.get(), next.get());
      EXPECT_EQ(mismatches(next.get(), v.get()), 0) << "dof " << dof << " variant " << variant;

      // And back to the even split, into a fresh vector of the original DMDA.
      fe::VecPtr back;
      {
        Vec raw = nullptr;
        FRACMFG_PETSC_CHECK(DMCreateGlobalVector(da.get(), &raw));
        back.reset(raw);
      }
      fe::migrate(next.get(), v.get(), da.get(), back.get());
      EXPECT_EQ(mismatches(da.get(), back.get()), 0);
      PetscBool same = PETSC_FALSE;
      FRACMFG_PETSC_CHECK(VecEqual(u.get(), back.get(), &same));
      EXPECT_TRUE(same);
    }
  }
}

TEST(mpi_exec_rebalance, Migration2dKeepsEveryValueBitIdentical) {
  const PetscInt nx = 31;
  const PetscInt ny = 17;
  for (PetscInt dof : {1, 2}) {
    for (int variant = 0; variant < 2; ++variant) {
      fe::DmPtr da = make_2d(nx, ny, dof, boundary_for(variant), boundary_for(variant + 1),
                             variant == 0 ? DMDA_STENCIL_STAR : DMDA_STENCIL_BOX, 1);
      const std::vector<PetscInt> lx0 = ranges_x(da.get());
      const std::vector<PetscInt> ly0 = ranges_y(da.get());
      const int px = static_cast<int>(lx0.size());
      const int py = static_cast<int>(ly0.size());
      fe::VecPtr u;
      {
        Vec raw = nullptr;
        FRACMFG_PETSC_CHECK(DMCreateGlobalVector(da.get(), &raw));
        u.reset(raw);
      }
      fill(da.get(), u.get());
      const fe::Partition2d q = fe::partition_2d(speeds(), px, py, nx, ny);
      fe::DmPtr next = fe::create_dmda_like(da.get(), q.lx, q.ly);
      EXPECT_EQ(ranges_x(next.get()), q.lx);
      EXPECT_EQ(ranges_y(next.get()), q.ly);
      fe::VecPtr v = fe::migrate(da.get(), u.get(), next.get());
      EXPECT_EQ(mismatches(next.get(), v.get()), 0) << "dof " << dof << " variant " << variant;

      // Back to the original ranges through a second created DMDA.
      fe::DmPtr again = fe::create_dmda_like(next.get(), lx0, ly0);
      fe::VecPtr w = fe::migrate(next.get(), v.get(), again.get());
      EXPECT_EQ(mismatches(again.get(), w.get()), 0);
      PetscBool same = PETSC_FALSE;
      FRACMFG_PETSC_CHECK(VecEqual(u.get(), w.get(), &same));  // same layout as u
      EXPECT_TRUE(same);
    }
  }
}

// One DmdaMigration moves many vectors (the time levels of a state) exactly as migrate()
// moves each, and refuses a vector of another layout on every rank.
TEST(mpi_exec_rebalance, Migration3dKeepsEveryValueBitIdentical) {
  const PetscInt nx = 13, ny = 7, nz = 11;
  for (PetscInt dof : {1, 3}) {
    for (int variant = 0; variant < 2; ++variant) {
      fe::DmPtr da = make_3d(nx, ny, nz, dof, boundary_for(variant),
                             variant == 0 ? DMDA_STENCIL_STAR : DMDA_STENCIL_BOX);
      const std::vector<PetscInt> lx0 = ranges_x(da.get());
      const std::vector<PetscInt> ly0 = ranges_y(da.get());
      const std::vector<PetscInt> lz0 = ranges_z(da.get());
      const fe::RebalanceLayout layout = fe::dmda_layout(da.get());
      EXPECT_EQ(layout.dim, 3);
      EXPECT_EQ(layout.px * layout.py * layout.pz, comm_size());
      EXPECT_EQ(layout.nz, nz);
      fe::VecPtr u;
      {
        Vec raw = nullptr;
        FRACMFG_PETSC_CHECK(DMCreateGlobalVector(da.get(), &raw));
        u.reset(raw);
      }
      fill(da.get(), u.get());
      const auto l = fe::partition_grid(speeds(), {layout.px, layout.py, layout.pz}, {nx, ny, nz});
      fe::DmPtr next = fe::create_dmda_like(da.get(), l[0], l[1], l[2]);
      EXPECT_EQ(ranges_x(next.get()), l[0]);
      EXPECT_EQ(ranges_y(next.get()), l[1]);
      EXPECT_EQ(ranges_z(next.get()), l[2]);
      if (comm_size() > 1) {
        EXPECT_NE(std::vector<std::vector<PetscInt>>({lx0, ly0, lz0}), l) << "the split moved";
      }
      fe::VecPtr v = fe::migrate(da.get(), u.get(), next.get());
      EXPECT_EQ(mismatches(next.get(), v.get()), 0) << "dof " << dof << " variant " << variant;
      fe::DmPtr again = fe::create_dmda_like(next.get(), lx0, ly0, lz0);
      fe::VecPtr w = fe::migrate(next.get(), v.get(), again.get());
      PetscBool same = PETSC_FALSE;
      FRACMFG_PETSC_CHECK(VecEqual(u.get(), w.get(), &same));
      EXPECT_TRUE(same);
      EXPECT_THROW(fe::create_dmda_like(da.get(), lx0, ly0, {nz + 1}), fracmfg::Error);
    }
  }
}

TEST(mpi_exec_rebalance, ReusedMigrationMovesEveryVectorAsMigrateDoes) {
  const PetscInt nx = 29;
  const PetscInt ny = 13;
  fe::DmPtr da = make_2d(nx, ny, 2, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 1);
  const fe::Partition2d q = fe::partition_2d(speeds(), static_cast<int>(ranges_x(da.get()).size()),
                                             static_cast<int>(ranges_y(da.get()).size()), nx, ny);
  fe::DmPtr next = fe::create_dmda_like(da.get(), q.lx, q.ly);
  const fe::DmdaMigration move(da.get(), next.get());
  auto global = [](DM dm) {
    Vec raw = nullptr;
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(dm, &raw));
    return fe::VecPtr(raw);
  };
  for (int level = 0; level < 4; ++level) {
    fe::VecPtr u = global(da.get());
    fill(da.get(), u.get());
    FRACMFG_PETSC_CHECK(VecScale(u.get(), 1.0 + level));  // a different vector per level
    fe::VecPtr moved = global(next.get());
    move.apply(u.get(), moved.get());
    fe::VecPtr reference = fe::migrate(da.get(), u.get(), next.get());
    PetscBool same = PETSC_FALSE;
    FRACMFG_PETSC_CHECK(VecEqual(moved.get(), reference.get(), &same));
    EXPECT_TRUE(same) << "level " << level;
  }
  if (comm_size() > 1) {
    // The old layout's vector as the destination: its local size differs on some rank.
    fe::VecPtr u = global(da.get());
    fe::VecPtr wrong = global(da.get());
    EXPECT_THROW(move.apply(u.get(), wrong.get()), fracmfg::Error);
  }
}

TEST(mpi_exec_rebalance, CreatedDmdaKeepsShapeFieldNamesAndCoordinates) {
  fe::DmPtr da = make_2d(24, 10, 2, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_GHOSTED, DMDA_STENCIL_BOX, 2);
  FRACMFG_PETSC_CHECK(DMDASetFieldName(da.get(), 0, "u"));
  FRACMFG_PETSC_CHECK(DMDASetFieldName(da.get(), 1, "m"));
  FRACMFG_PETSC_CHECK(DMDASetUniformCoordinates(da.get(), -1.0, 2.0, 0.0, 0.5, 0.0, 0.0));
  const std::vector<PetscInt> lx0 = ranges_x(da.get());
  const std::vector<PetscInt> ly0 = ranges_y(da.get());
  const fe::Partition2d q = fe::partition_2d(speeds(), static_cast<int>(lx0.size()),
                                             static_cast<int>(ly0.size()), 24, 10, 2);
  fe::DmPtr next = fe::create_dmda_like(da.get(), q.lx, q.ly);

  PetscInt info_a[9];
  PetscInt info_b[9];
  DMBoundaryType bd_a[3];
  DMBoundaryType bd_b[3];
  DMDAStencilType st_a;
  DMDAStencilType st_b;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da.get(), &info_a[0], &info_a[1], &info_a[2], &info_a[3],
                                  &info_a[4], &info_a[5], &info_a[6], &info_a[7], &info_a[8],
                                  &bd_a[0], &bd_a[1], &bd_a[2], &st_a));
  FRACMFG_PETSC_CHECK(DMDAGetInfo(next.get(), &info_b[0], &info_b[1], &info_b[2], &info_b[3],
                                  &info_b[4], &info_b[5], &info_b[6], &info_b[7], &info_b[8],
                                  &bd_b[0], &bd_b[1], &bd_b[2], &st_b));
  for (int i = 0; i < 9; ++i) EXPECT_EQ(info_a[i], info_b[i]) << "DMDAGetInfo entry " << i;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bd_a[i], bd_b[i]);
  EXPECT_EQ(st_a, st_b);
  const char* name = nullptr;
  FRACMFG_PETSC_CHECK(DMDAGetFieldName(next.get(), 1, &name));
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(std::string(name), "m");

  // Coordinates moved exactly: equal to uniform coordinates set on the new DMDA directly.
  fe::DmPtr fresh = fe::create_dmda_like(da.get(), q.lx, q.ly);
  FRACMFG_PETSC_CHECK(DMDASetUniformCoordinates(fresh.get(), -1.0, 2.0, 0.0, 0.5, 0.0, 0.0));
  Vec moved = nullptr;
  Vec expected = nullptr;
  FRACMFG_PETSC_CHECK(DMGetCoordinates(next.get(), &moved));
  FRACMFG_PETSC_CHECK(DMGetCoordinates(fresh.get(), &expected));
  ASSERT_NE(moved, nullptr);
  PetscBool same = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(VecEqual(moved, expected, &same));
  EXPECT_TRUE(same);

  // The new DMDA works: a ghost update of a migrated field succeeds.
  fe::VecPtr u;
  {
    Vec raw = nullptr;
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(da.get(), &raw));
    u.reset(raw);
  }
  fill(da.get(), u.get());
  fe::VecPtr v = fe::migrate(da.get(), u.get(), next.get());
  Vec local = nullptr;
  FRACMFG_PETSC_CHECK(DMGetLocalVector(next.get(), &local));
  FRACMFG_PETSC_CHECK(DMGlobalToLocal(next.get(), v.get(), INSERT_VALUES, local));
  PetscScalar*** a = nullptr;
  FRACMFG_PETSC_CHECK(DMDAVecGetArrayDOFRead(next.get(), local, &a));
  const Box b = box_of(next.get());
  // The periodic neighbour to the left of the first owned column.
  const PetscInt left = (b.xs - 1 + 24) % 24;
  long bad = 0;
  for (PetscInt j = b.ys; j < b.ys + b.ym; ++j) {
    for (PetscInt c = 0; c < 2; ++c) {
      if (bits(a[j][b.xs - 1][c]) != bits(field((std::int64_t{j} * 24 + left) * 2 + c))) ++bad;
    }
  }
  FRACMFG_PETSC_CHECK(DMDAVecRestoreArrayDOFRead(next.get(), local, &a));
  FRACMFG_PETSC_CHECK(DMRestoreLocalVector(next.get(), &local));
  EXPECT_EQ(bad, 0);
}

TEST(mpi_exec_rebalance, MismatchedDmdasAreRejectedOnEveryRank) {
  fe::DmPtr a = make_1d(40, 1, 1, DM_BOUNDARY_NONE, nullptr);
  fe::DmPtr b = make_1d(41, 1, 1, DM_BOUNDARY_NONE, nullptr);
  Vec ua = nullptr;
  FRACMFG_PETSC_CHECK(DMCreateGlobalVector(a.get(), &ua));
  fe::VecPtr hold(ua);
  EXPECT_THROW(fe::migrate(a.get(), ua, b.get()), fracmfg::Error);
  EXPECT_THROW(fe::create_dmda_like(
                   a.get(), std::vector<PetscInt>(static_cast<std::size_t>(comm_size()), 1)),
               fracmfg::Error);
}

TEST(mpi_exec_rebalance, RebalancerDrivesTheMigrationOfA2dField) {
  // The whole loop: measure, decide, build the new DMDA, move the field, measure again.
  fe::DmPtr da = make_2d(36, 12, 1, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 1);
  fe::VecPtr u;
  {
    Vec raw = nullptr;
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(da.get(), &raw));
    u.reset(raw);
  }
  fill(da.get(), u.get());
  fe::Rebalancer rb(PETSC_COMM_WORLD, {}, quiet_log(), fe::dmda_layout(da.get()));
  const std::vector<PetscInt> ly0 = ranges_y(da.get());
  const int px = static_cast<int>(ranges_x(da.get()).size());
  // Speeds by process column (rank = i + px j): a pattern a tensor-product split can follow.
  const double cost = cost_of(comm_rank() % px);
  double first_imbalance = -1.0;
  double last_imbalance = -1.0;
  for (int k = 0; k < 8; ++k) {
    const Box b = box_of(da.get());
    const PetscInt mine = b.xm * b.ym;
    const fe::RebalanceDecision& d = rb.observe(static_cast<double>(mine) * cost, mine);
    if (k == 0) first_imbalance = d.imbalance;
    last_imbalance = d.imbalance;
    if (d.resplit) {
      fe::DmPtr next = fe::create_dmda_like(da.get(), d.lx, d.ly);
      fe::VecPtr v = fe::migrate(da.get(), u.get(), next.get());
      da = std::move(next);
      u = std::move(v);
    }
    EXPECT_EQ(mismatches(da.get(), u.get()), 0) << "observation " << k;
  }
  if (px == 1) {  // one rank, or a 1 x py grid: every rank equally fast
    EXPECT_EQ(rb.policy().resplits(), 0);
    return;
  }
  EXPECT_EQ(rb.policy().resplits(), 1);
  EXPECT_GT(first_imbalance, 0.2);
  EXPECT_LT(last_imbalance, 0.1);
  EXPECT_EQ(ranges_y(da.get()), ly0);
  const std::vector<PetscInt> lx = ranges_x(da.get());
  for (std::size_t i = 1; i < lx.size(); ++i) {
    EXPECT_GT(lx[i - 1], lx[i]);
  }
}

// --- particle arrays ---------------------------------------------------------------------

TEST(mpi_exec_rebalance, ParticleMigrationKeepsEveryParticleExactlyOnce) {
  const int p = comm_size();
  const int me = comm_rank();
  // Uneven start: rank r holds 50 + 37 r particles, ids contiguous in rank order.
  std::vector<std::int64_t> old_counts(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) old_counts[static_cast<std::size_t>(r)] = 50 + 37 * r;
  const std::int64_t total = std::accumulate(old_counts.begin(), old_counts.end(), std::int64_t{0});
  const std::int64_t first =
      std::accumulate(old_counts.begin(), old_counts.begin() + me, std::int64_t{0});
  std::vector<Particle> mine(static_cast<std::size_t>(old_counts[static_cast<std::size_t>(me)]));
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const std::int64_t id = first + static_cast<std::int64_t>(k);
    mine[k] = {id, particle_x(id), 1.0 / static_cast<double>(id + 1)};
  }
  const std::vector<PetscInt> weighted = fe::partition(speeds(), static_cast<PetscInt>(total));

  const std::vector<Particle> moved = fe::migrate_array(PETSC_COMM_WORLD, mine, weighted);
  ASSERT_EQ(moved.size(), static_cast<std::size_t>(weighted[static_cast<std::size_t>(me)]));
  const std::int64_t new_first =
      std::accumulate(weighted.begin(), weighted.begin() + me, std::int64_t{0});
  long bad = 0;
  for (std::size_t k = 0; k < moved.size(); ++k) {
    const Particle& q = moved[k];
    if (q.id != new_first + static_cast<std::int64_t>(k)) ++bad;  // order kept
    if (bits(q.x) != bits(particle_x(q.id))) ++bad;
    if (bits(q.weight) != bits(1.0 / static_cast<double>(q.id + 1))) ++bad;
  }
  EXPECT_EQ(bad, 0);

  // Every id exactly once over all ranks: sums, and the sorted list on rank 0.
  std::int64_t id_sum = 0;
  for (const Particle& q : moved) id_sum += q.id;
  MPI_Allreduce(MPI_IN_PLACE, &id_sum, 1, MPI_INT64_T, MPI_SUM, PETSC_COMM_WORLD);
  EXPECT_EQ(id_sum, total * (total - 1) / 2);
  std::vector<std::int64_t> ids;
  for (const Particle& q : moved) ids.push_back(q.id);
  std::vector<int> recv_counts(static_cast<std::size_t>(p));
  std::vector<int> displs(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    recv_counts[static_cast<std::size_t>(r)] =
        static_cast<int>(weighted[static_cast<std::size_t>(r)]);
    displs[static_cast<std::size_t>(r)] = r == 0 ? 0
                                                 : displs[static_cast<std::size_t>(r - 1)] +
                                                       recv_counts[static_cast<std::size_t>(r - 1)];
  }
  std::vector<std::int64_t> all(me == 0 ? static_cast<std::size_t>(total) : 0);
  MPI_Gatherv(ids.data(), static_cast<int>(ids.size()), MPI_INT64_T, all.data(), recv_counts.data(),
              displs.data(), MPI_INT64_T, 0, PETSC_COMM_WORLD);
  if (me == 0) {
    std::sort(all.begin(), all.end());
    for (std::int64_t k = 0; k < total; ++k) {
      ASSERT_EQ(all[static_cast<std::size_t>(k)], k);
    }
  }

  // And back to the original counts: identical to the start.
  std::vector<PetscInt> back_counts(old_counts.begin(), old_counts.end());
  const std::vector<Particle> back = fe::migrate_array(PETSC_COMM_WORLD, moved, back_counts);
  ASSERT_EQ(back.size(), mine.size());
  EXPECT_EQ(std::memcmp(back.data(), mine.data(), back.size() * sizeof(Particle)), 0);
}

TEST(mpi_exec_rebalance, ParticleMigrationWithWrongTotalThrowsOnEveryRank) {
  std::vector<double> mine(10, 1.0);
  std::vector<PetscInt> counts(static_cast<std::size_t>(comm_size()), 10);
  counts.back() += 1;
  EXPECT_THROW(fe::migrate_array(PETSC_COMM_WORLD, mine, counts), fracmfg::Error);
  counts.pop_back();
  EXPECT_THROW(fe::migrate_array(PETSC_COMM_WORLD, mine, counts), fracmfg::Error);
}
