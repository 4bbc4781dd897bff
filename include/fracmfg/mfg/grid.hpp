#pragma once
// mfg::Grid: the finite-difference grid of a mean field game on [0, Lx] (x [0, Ly]
// (x [0, Lz])), and the PETSc DMDA that distributes it.
//
// Points. With N points along an axis of length L the spacing is h = L / N and
//   periodic    x_i = i h,          i = 0..N-1   (x_N would be x_0 again);
//   reflecting  x_i = (i + 1/2) h,  i = 0..N-1   (cell centres; the walls x = 0 and x = L are
//                                                 the outer cell faces).
// Both give N cells of size h, so a density m is a mass per cell: the mass is
// sum_i m_i h (2D: sum m_ij hx hy; 3D: sum m_ijk hx hy hz). The reflecting layout is the one
// kernels::kde uses for reflecting axes (walls at origin - h/2 and origin + (N - 1/2) h).
//
// Boundaries, per side (Grid::sides). Periodic axes (both sides periodic) use
// DM_BOUNDARY_PERIODIC (ghost values wrap around) and the point layout x_i = i h; the other
// axes use DM_BOUNDARY_GHOSTED and cell centres. At a reflecting side the solvers read the
// ghost of a boundary point as the point itself (mirror across the cell face: u_{-1} = u_0,
// u_N = u_{N-1}), which is the homogeneous Neumann condition du/dn = 0 at the wall for both
// equations. At an exit side the HJB's ghost is 2 g - u_0 (the face value is the exit cost
// g, a Dirichlet condition at the face) and the Fokker-Planck step, the adjoint, lets the
// flux through the face leave (mfg/fokker_planck.hpp). The solvers never read the ghost
// slots the DMDA leaves at walls and exits. Obstacle points (mfg::Model) are walls inside
// the domain, read by their neighbours as reflecting walls.
//
// The DMDA has one degree of freedom per point, stencil width 1 and a star stencil (the
// 3-point / 5-point / 7-point operators of the solvers). Points are stored x fastest, then y,
// then z. Per-side conditions (exits, mixed axes) and obstacles in 1D, 2D and 3D.

#include <mpi.h>
#include <petscdm.h>
#include <petscdmda.h>

#include <array>
#include <string>
#include <vector>

#include "fracmfg/exec/rebalancer.hpp"
#include "fracmfg/io/config.hpp"

namespace fracmfg::mfg {

enum class Boundary { periodic, reflecting, exit };

struct Grid {
  int dim = 1;                                     ///< 1, 2 or 3
  std::array<PetscInt, 3> points = {3, 1, 1};      ///< N per axis (1 beyond dim)
  std::array<double, 3> length = {1.0, 1.0, 1.0};  ///< L per axis (unused beyond dim)
  /// periodic when every side is periodic, else reflecting (the layout of uniform grids;
  /// the per-side conditions are `sides`).
  Boundary boundary = Boundary::periodic;
  /// The condition of each side, indexed axis * 2 + end (end 0: at 0, 1: at L); periodic
  /// sides come in pairs. Sides beyond 2 dim are unused.
  std::array<Boundary, io::MfgConfig::Domain::kMaxSides> sides{};

  /// The grid of a game's domain (lengths, boundary) and points per axis (mfg::Problem).
  /// Throws Error unless there are 1, 2 or 3 axes, each with >= 3 points and a positive
  /// length.
  static Grid make(const io::MfgConfig::Domain& domain, const io::MfgConfig::Grid& grid);

  /// h = L / N along axis 0, 1 or 2.
  double spacing(int axis) const { return length[axis] / static_cast<double>(points[axis]); }
  /// The condition of side `end` (0: at 0, 1: at L) of an axis.
  Boundary side(int axis, int end) const { return sides[static_cast<std::size_t>(2 * axis + end)]; }
  /// Both sides of the axis periodic.
  bool periodic(int axis) const { return side(axis, 0) == Boundary::periodic; }
  /// Some side of the domain is an exit.
  bool has_exit() const {
    for (int s = 0; s < 2 * dim; ++s) {
      if (sides[static_cast<std::size_t>(s)] == Boundary::exit) return true;
    }
    return false;
  }
  /// Coordinate of point 0: 0 (periodic axis) or h/2 (walls or exits: cell centres).
  double origin(int axis) const { return periodic(axis) ? 0.0 : 0.5 * spacing(axis); }
  /// Coordinate of point i along an axis.
  double coordinate(int axis, PetscInt i) const {
    return origin(axis) + static_cast<double>(i) * spacing(axis);
  }
  /// h (1D), hx hy (2D) or hx hy hz (3D): the measure of one cell.
  double cell_volume() const {
    double v = spacing(0);
    for (int a = 1; a < dim; ++a) v *= spacing(a);
    return v;
  }
  /// Total number of points.
  PetscInt size() const { return points[0] * points[1] * points[2]; }
  /// The points per axis as text: "64", "64 x 32" or "64 x 32 x 16".
  std::string points_text() const;
};

/// Position of coordinate x on an axis of g, for linear interpolation between its points:
/// the lower and upper point index and the weight of the upper one. Periodic axes wrap;
/// reflecting axes hold the outermost values beyond the outermost points. snap: a position
/// within round-off (1e-9 relative) of a point is that point (w = 0, exact there).
struct GridBracket {
  PetscInt lo = 0, hi = 0;
  double w = 0.0;
};
GridBracket bracket(const Grid& g, int axis, double x, bool snap = false);

/// The grid's DMDA (see the header comment). lx (and ly in 2D, lz in 3D) give the ownership
/// ranges as DMDACreate1d/2d/3d take them; empty: PETSc's split. Options prefix "mfg_" (so
/// -mfg_da_processors_x works). Collective on comm.
exec::DmPtr create_dmda(MPI_Comm comm, const Grid& grid, const std::vector<PetscInt>& lx = {},
                        const std::vector<PetscInt>& ly = {}, const std::vector<PetscInt>& lz = {});

/// A DMDA like `da` (same sizes, boundaries, ownership ranges, stencil) with `dof`
/// components per point. Collective.
exec::DmPtr create_dmda_components(DM da, PetscInt dof);

/// The box of grid points this rank owns: i in [xs, xs + xm), j in [ys, ys + ym),
/// l in [zs, zs + zm) (ys = 0, ym = 1 in 1D; zs = 0, zm = 1 below 3D). Local index of
/// (i, j, l) in a global Vec: ((l - zs) ym + (j - ys)) xm + (i - xs).
struct OwnedBox {
  PetscInt xs = 0, ys = 0, xm = 0, ym = 1;
  PetscInt zs = 0, zm = 1;
  PetscInt count() const { return xm * ym * zm; }
};
/// Not collective.
OwnedBox owned_box(DM da);

}  // namespace fracmfg::mfg
