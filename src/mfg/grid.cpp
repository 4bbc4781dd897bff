#include "fracmfg/mfg/grid.hpp"

#include <algorithm>
#include <cmath>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "la/dmda_setup.hpp"

namespace fracmfg::mfg {

Grid Grid::make(const io::MfgConfig::Domain& domain, const io::MfgConfig::Grid& grid) {
  Grid g;
  g.dim = static_cast<int>(domain.length.size());
  if (g.dim < 1 || g.dim > 3) {
    throw Error("mfg: the domain has " + std::to_string(g.dim) + " lengths; expected 1, 2 or 3");
  }
  if (grid.points.size() != domain.length.size()) {
    throw Error("mfg: grid.points and domain.length differ in size");
  }
  for (int a = 0; a < g.dim; ++a) {
    g.points[a] = grid.points[a];
    g.length[a] = domain.length[a];
    if (g.points[a] < 3 || !(g.length[a] > 0.0)) {
      throw Error("mfg: a grid needs >= 3 points and a positive length per axis");
    }
  }
  using Side = io::MfgConfig::Domain::Boundary;
  bool all_periodic = true;
  for (int s = 0; s < 2 * g.dim; ++s) {
    const Side b = domain.side(s);
    g.sides[static_cast<std::size_t>(s)] = b == Side::periodic     ? Boundary::periodic
                                           : b == Side::reflecting ? Boundary::reflecting
                                                                   : Boundary::exit;
    all_periodic = all_periodic && b == Side::periodic;
  }
  for (int a = 0; a < g.dim; ++a) {
    if ((g.side(a, 0) == Boundary::periodic) != (g.side(a, 1) == Boundary::periodic)) {
      throw Error("mfg: a periodic side needs a periodic opposite side (axis " + std::to_string(a) +
                  ")");
    }
  }
  g.boundary = all_periodic ? Boundary::periodic : Boundary::reflecting;
  return g;
}

std::string Grid::points_text() const {
  std::string s = std::to_string(points[0]);
  for (int a = 1; a < dim; ++a) s += " x " + std::to_string(points[a]);
  return s;
}

exec::DmPtr create_dmda(MPI_Comm comm, const Grid& grid, const std::vector<PetscInt>& lx,
                        const std::vector<PetscInt>& ly, const std::vector<PetscInt>& lz) {
  auto type = [&](int axis) {
    return grid.periodic(axis) ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_GHOSTED;
  };
  DM da = nullptr;
  if (grid.dim == 1) {
    FRACMFG_PETSC_CHECK(
        DMDACreate1d(comm, type(0), grid.points[0], 1, 1, lx.empty() ? nullptr : lx.data(), &da));
  } else if (grid.dim == 2) {
    const PetscInt px = lx.empty() ? PETSC_DECIDE : static_cast<PetscInt>(lx.size());
    const PetscInt py = ly.empty() ? PETSC_DECIDE : static_cast<PetscInt>(ly.size());
    FRACMFG_PETSC_CHECK(DMDACreate2d(comm, type(0), type(1), DMDA_STENCIL_STAR, grid.points[0],
                                     grid.points[1], px, py, 1, 1, lx.empty() ? nullptr : lx.data(),
                                     ly.empty() ? nullptr : ly.data(), &da));
  } else {
    const PetscInt px = lx.empty() ? PETSC_DECIDE : static_cast<PetscInt>(lx.size());
    const PetscInt py = ly.empty() ? PETSC_DECIDE : static_cast<PetscInt>(ly.size());
    const PetscInt pz = lz.empty() ? PETSC_DECIDE : static_cast<PetscInt>(lz.size());
    FRACMFG_PETSC_CHECK(DMDACreate3d(
        comm, type(0), type(1), type(2), DMDA_STENCIL_STAR, grid.points[0], grid.points[1],
        grid.points[2], px, py, pz, 1, 1, lx.empty() ? nullptr : lx.data(),
        ly.empty() ? nullptr : ly.data(), lz.empty() ? nullptr : lz.data(), &da));
  }
  exec::DmPtr owned(da);
  FRACMFG_PETSC_CHECK(DMSetOptionsPrefix(da, "mfg_"));
  FRACMFG_PETSC_CHECK(DMSetFromOptions(da));
  la::set_up_dmda(da, std::vector<PetscInt>(grid.points.begin(), grid.points.begin() + grid.dim),
                  "mfg");
  return owned;
}

exec::DmPtr create_dmda_components(DM da, PetscInt dof) {
  MPI_Comm comm = MPI_COMM_NULL;
  FRACMFG_PETSC_CHECK(PetscObjectGetComm(reinterpret_cast<PetscObject>(da), &comm));
  PetscInt dim = 0, mx = 0, my = 0, mz = 0, px = 0, py = 0, pz = 0, old_dof = 0, sw = 0;
  DMBoundaryType bx = DM_BOUNDARY_NONE, by = DM_BOUNDARY_NONE, bz = DM_BOUNDARY_NONE;
  DMDAStencilType st = DMDA_STENCIL_STAR;
  FRACMFG_PETSC_CHECK(
      DMDAGetInfo(da, &dim, &mx, &my, &mz, &px, &py, &pz, &old_dof, &sw, &bx, &by, &bz, &st));
  const PetscInt *lx = nullptr, *ly = nullptr, *lz = nullptr;
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(da, &lx, &ly, &lz));
  DM out = nullptr;
  if (dim == 1) {
    FRACMFG_PETSC_CHECK(DMDACreate1d(comm, bx, mx, dof, sw, lx, &out));
  } else if (dim == 2) {
    FRACMFG_PETSC_CHECK(DMDACreate2d(comm, bx, by, st, mx, my, px, py, dof, sw, lx, ly, &out));
  } else {
    FRACMFG_PETSC_CHECK(
        DMDACreate3d(comm, bx, by, bz, st, mx, my, mz, px, py, pz, dof, sw, lx, ly, lz, &out));
  }
  exec::DmPtr owned(out);
  FRACMFG_PETSC_CHECK(DMSetUp(out));
  return owned;
}

OwnedBox owned_box(DM da) {
  PetscInt xs = 0, ys = 0, zs = 0, xm = 0, ym = 0, zm = 0;
  FRACMFG_PETSC_CHECK(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  OwnedBox b;
  b.xs = xs;
  b.ys = ys;
  b.xm = xm;
  b.ym = ym;
  b.zs = zs;
  b.zm = zm;
  return b;
}

GridBracket bracket(const Grid& g, int axis, double x, bool snap) {
  const PetscInt n = g.points[axis];
  double s = (x - g.origin(axis)) / g.spacing(axis);
  if (snap) {
    const double nearest = std::round(s);
    if (std::abs(s - nearest) <= 1e-9 * std::max(1.0, std::abs(s))) s = nearest;
  }
  GridBracket b;
  if (g.periodic(axis)) {
    const double f = std::floor(s);
    b.w = s - f;
    b.lo = ((static_cast<PetscInt>(f) % n) + n) % n;
    b.hi = (b.lo + 1) % n;
    return b;
  }
  const double c = std::clamp(s, 0.0, static_cast<double>(n - 1));
  b.lo = std::min(static_cast<PetscInt>(std::floor(c)), n - 1);
  b.hi = std::min(b.lo + 1, n - 1);
  b.w = c - static_cast<double>(b.lo);
  return b;
}

}  // namespace fracmfg::mfg
