#include "fracmfg/exec/dmda_migration.hpp"

#include <petscdmda.h>
#include <petscis.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"

namespace fracmfg::exec {

namespace {

using core::IsHandle;
using ScatterHandle = core::VecScatterHandle;

// What migrate and create_dmda_like need to know of a DMDA (1D: y and z of size 1; 2D: z of
// size 1).
struct DaInfo {
  MPI_Comm comm = MPI_COMM_NULL;
  PetscInt dim = 0;
  PetscInt nx = 0, ny = 1, nz = 1;
  PetscInt px = 1, py = 1, pz = 1;
  PetscInt dof = 1;
  PetscInt stencil_width = 0;
  DMBoundaryType bx = DM_BOUNDARY_NONE, by = DM_BOUNDARY_NONE, bz = DM_BOUNDARY_NONE;
  DMDAStencilType stencil = DMDA_STENCIL_BOX;
  std::vector<PetscInt> lx, ly, lz;
  PetscInt xs = 0, ys = 0, zs = 0, xm = 0, ym = 1, zm = 1;
};

DaInfo info_of(DM da, const char* who) {
  PetscBool is_da = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(da), DMDA, &is_da));
  if (!is_da) throw Error(std::string(who) + ": not a DMDA");
  DaInfo a;
  FRACMFG_PETSC_CHECK(PetscObjectGetComm(reinterpret_cast<PetscObject>(da), &a.comm));
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da, &a.dim, &a.nx, &a.ny, &a.nz, &a.px, &a.py, &a.pz, &a.dof,
                                  &a.stencil_width, &a.bx, &a.by, &a.bz, &a.stencil));
  if (a.dim < 1 || a.dim > 3) {
    throw Error(std::string(who) + ": a DMDA of dimension " + std::to_string(a.dim));
  }
  const PetscInt* lx = nullptr;
  const PetscInt* ly = nullptr;
  const PetscInt* lz = nullptr;
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(da, &lx, &ly, &lz));
  FRACMFG_PETSC_CHECK(DMDAGetCorners(da, &a.xs, &a.ys, &a.zs, &a.xm, &a.ym, &a.zm));
  a.lx.assign(lx, lx + a.px);
  if (a.dim >= 2) {
    a.ly.assign(ly, ly + a.py);
  } else {
    a.ny = 1;
    a.py = 1;
    a.ly.assign(1, 1);
    a.ys = 0;
    a.ym = 1;
  }
  if (a.dim == 3) {
    a.lz.assign(lz, lz + a.pz);
  } else {
    a.nz = 1;
    a.pz = 1;
    a.lz.assign(1, 1);
    a.zs = 0;
    a.zm = 1;
  }
  return a;
}

std::vector<PetscInt> offsets(const std::vector<PetscInt>& sizes) {
  std::vector<PetscInt> off(sizes.size() + 1, 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) off[i + 1] = off[i] + sizes[i];
  return off;
}

// The range (index into off) that holds global index g; empty ranges are skipped.
std::size_t owner(const std::vector<PetscInt>& off, PetscInt g) {
  return static_cast<std::size_t>(std::upper_bound(off.begin(), off.end(), g) - off.begin() - 1);
}

}  // namespace

DmPtr create_dmda_like(DM old_da, const std::vector<PetscInt>& lx, const std::vector<PetscInt>& ly,
                       const std::vector<PetscInt>& lz) {
  const DaInfo a = info_of(old_da, "create_dmda_like");
  auto check = [](const std::vector<PetscInt>& l, PetscInt parts, PetscInt n, const char* name) {
    if (static_cast<PetscInt>(l.size()) != parts) {
      throw Error(std::string("create_dmda_like: ") + name + " has " + std::to_string(l.size()) +
                  " entries for " + std::to_string(parts) + " ranks");
    }
    const std::int64_t sum = std::accumulate(l.begin(), l.end(), std::int64_t{0});
    if (sum != n || std::any_of(l.begin(), l.end(), [](PetscInt c) { return c < 0; })) {
      throw Error(std::string("create_dmda_like: ") + name + " must be >= 0 and sum to " +
                  std::to_string(n) + " (got " + std::to_string(sum) + ")");
    }
  };
  check(lx, a.px, a.nx, "lx");
  if (a.dim >= 2) check(ly, a.py, a.ny, "ly");
  if (a.dim == 3) check(lz, a.pz, a.nz, "lz");

  DM raw = nullptr;
  if (a.dim == 1) {
    FRACMFG_PETSC_CHECK(DMDACreate1d(a.comm, a.bx, a.nx, a.dof, a.stencil_width, lx.data(), &raw));
  } else if (a.dim == 2) {
    FRACMFG_PETSC_CHECK(DMDACreate2d(a.comm, a.bx, a.by, a.stencil, a.nx, a.ny, a.px, a.py, a.dof,
                                     a.stencil_width, lx.data(), ly.data(), &raw));
  } else {
    FRACMFG_PETSC_CHECK(DMDACreate3d(a.comm, a.bx, a.by, a.bz, a.stencil, a.nx, a.ny, a.nz, a.px,
                                     a.py, a.pz, a.dof, a.stencil_width, lx.data(), ly.data(),
                                     lz.data(), &raw));
  }
  DmPtr da(raw);
  const char* prefix = nullptr;
  FRACMFG_PETSC_CHECK(PetscObjectGetOptionsPrefix(reinterpret_cast<PetscObject>(old_da), &prefix));
  if (prefix != nullptr) {
    FRACMFG_PETSC_CHECK(PetscObjectSetOptionsPrefix(reinterpret_cast<PetscObject>(raw), prefix));
  }
  FRACMFG_PETSC_CHECK(DMSetUp(raw));
  for (PetscInt c = 0; c < a.dof; ++c) {
    const char* name = nullptr;
    FRACMFG_PETSC_CHECK(DMDAGetFieldName(old_da, c, &name));
    if (name != nullptr) FRACMFG_PETSC_CHECK(DMDASetFieldName(raw, c, name));
  }
  Vec old_coords = nullptr;
  FRACMFG_PETSC_CHECK(DMGetCoordinates(old_da, &old_coords));
  if (old_coords != nullptr) {
    DM old_cdm = nullptr;
    DM new_cdm = nullptr;
    FRACMFG_PETSC_CHECK(DMGetCoordinateDM(old_da, &old_cdm));
    FRACMFG_PETSC_CHECK(DMGetCoordinateDM(raw, &new_cdm));
    VecPtr coords = migrate(old_cdm, old_coords, new_cdm);
    FRACMFG_PETSC_CHECK(DMSetCoordinates(raw, coords.get()));  // takes its own reference
  }
  return da;
}

DmdaMigration::DmdaMigration(DM old_da, DM new_da) {
  const DaInfo a = info_of(old_da, "migrate");
  const DaInfo b = info_of(new_da, "migrate");
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(a.comm, b.comm, &cmp);
  if (cmp != MPI_IDENT && cmp != MPI_CONGRUENT) {
    throw Error("migrate: the DMDAs live on different communicators");
  }
  if (a.dim != b.dim || a.nx != b.nx || a.ny != b.ny || a.nz != b.nz || a.dof != b.dof ||
      a.px != b.px || a.py != b.py || a.pz != b.pz) {
    throw Error("migrate: the DMDAs differ in dimension, global size, dof or process grid");
  }
  comm_ = a.comm;
  old_local_ = a.xm * a.ym * a.zm * a.dof;
  new_local_ = b.xm * b.ym * b.zm * b.dof;

  // PETSc's global order of a DMDA: ranks r = i + px (j + py k) in order, each rank's box in
  // natural order inside (x fastest, dof innermost). For every point this rank owns in the
  // new layout, find its index in the old layout from the old ownership ranges.
  const std::vector<PetscInt> xoff = offsets(a.lx);
  const std::vector<PetscInt> yoff = offsets(a.ly);
  const std::vector<PetscInt> zoff = offsets(a.lz);
  const auto px = static_cast<std::size_t>(a.px);
  const auto py = static_cast<std::size_t>(a.py);
  std::vector<PetscInt> rank_start(px * py * a.lz.size(), 0);
  PetscInt start = 0;  // in points
  for (std::size_t k = 0; k < a.lz.size(); ++k) {
    for (std::size_t j = 0; j < py; ++j) {
      for (std::size_t i = 0; i < px; ++i) {
        rank_start[i + px * (j + py * k)] = start;
        start += a.lx[i] * a.ly[j] * a.lz[k];
      }
    }
  }
  // One index per grid point, in blocks of dof entries (ISCreateBlock): the scatter's setup
  // sorts points, not entries, which matters for many components (an L1 history state).
  std::vector<std::size_t> col(static_cast<std::size_t>(b.xm));
  for (PetscInt i = 0; i < b.xm; ++i) col[static_cast<std::size_t>(i)] = owner(xoff, b.xs + i);
  std::vector<PetscInt> from;
  from.reserve(static_cast<std::size_t>(b.xm * b.ym * b.zm));
  for (PetscInt k = b.zs; k < b.zs + b.zm; ++k) {
    const std::size_t pk = owner(zoff, k);
    for (PetscInt j = b.ys; j < b.ys + b.ym; ++j) {
      const std::size_t pj = owner(yoff, j);
      for (PetscInt i = b.xs; i < b.xs + b.xm; ++i) {
        const std::size_t pi = col[static_cast<std::size_t>(i - b.xs)];
        from.push_back(rank_start[pi + px * (pj + py * pk)] +
                       ((k - zoff[pk]) * a.ly[pj] + (j - yoff[pj])) * a.lx[pi] + (i - xoff[pi]));
      }
    }
  }
  // The scatter needs the two layouts only: vectors without storage stand for them.
  const PetscInt total = a.nx * a.ny * a.nz * a.dof;
  VecPtr old_layout;
  VecPtr new_layout;
  FRACMFG_PETSC_CHECK(
      VecCreateMPIWithArray(comm_, a.dof, old_local_, total, nullptr, old_layout.out()));
  FRACMFG_PETSC_CHECK(
      VecCreateMPIWithArray(comm_, b.dof, new_local_, total, nullptr, new_layout.out()));
  PetscInt lo = 0;
  PetscInt hi = 0;
  FRACMFG_PETSC_CHECK(VecGetOwnershipRange(new_layout.get(), &lo, &hi));
  std::vector<PetscInt> to(from.size());
  std::iota(to.begin(), to.end(), lo / a.dof);
  const auto points = static_cast<PetscInt>(from.size());
  IsHandle is_from;
  IsHandle is_to;
  FRACMFG_PETSC_CHECK(
      ISCreateBlock(PETSC_COMM_SELF, a.dof, points, from.data(), PETSC_COPY_VALUES, is_from.out()));
  FRACMFG_PETSC_CHECK(
      ISCreateBlock(PETSC_COMM_SELF, a.dof, points, to.data(), PETSC_COPY_VALUES, is_to.out()));
  FRACMFG_PETSC_CHECK(VecScatterCreate(old_layout.get(), is_from.get(), new_layout.get(),
                                       is_to.get(), scatter_.out()));
}

void DmdaMigration::apply(Vec old_vec, Vec new_vec) const {
  // Vector sizes are local facts; agree on them before the collective scatter.
  PetscInt old_local = 0;
  PetscInt new_local = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(old_vec, &old_local));
  FRACMFG_PETSC_CHECK(VecGetLocalSize(new_vec, &new_local));
  int bad = old_local != old_local_ || new_local != new_local_ ? 1 : 0;
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, comm_);
  if (any_bad != 0) {
    throw Error("migrate: on some rank a vector's local size does not match its DMDA");
  }
  FRACMFG_PETSC_CHECK(
      VecScatterBegin(scatter_.get(), old_vec, new_vec, INSERT_VALUES, SCATTER_FORWARD));
  FRACMFG_PETSC_CHECK(
      VecScatterEnd(scatter_.get(), old_vec, new_vec, INSERT_VALUES, SCATTER_FORWARD));
}

void migrate(DM old_da, Vec old_vec, DM new_da, Vec new_vec) {
  const DmdaMigration move(old_da, new_da);
  move.apply(old_vec, new_vec);
}

VecPtr migrate(DM old_da, Vec old_vec, DM new_da) {
  Vec raw = nullptr;
  FRACMFG_PETSC_CHECK(DMCreateGlobalVector(new_da, &raw));
  VecPtr out(raw);
  migrate(old_da, old_vec, new_da, raw);
  return out;
}

RebalanceLayout dmda_layout(DM da) {
  const DaInfo a = info_of(da, "dmda_layout");
  if (a.dim == 1) return RebalanceLayout::contiguous();
  if (a.dim == 2) {
    return RebalanceLayout::grid_2d(static_cast<int>(a.px), static_cast<int>(a.py), a.nx, a.ny);
  }
  return RebalanceLayout::grid_3d(static_cast<int>(a.px), static_cast<int>(a.py),
                                  static_cast<int>(a.pz), a.nx, a.ny, a.nz);
}

}  // namespace fracmfg::exec
