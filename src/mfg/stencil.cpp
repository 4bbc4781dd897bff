#include "mfg/stencil.hpp"

#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/mfg/hamiltonian.hpp"

namespace fracmfg::mfg::detail {

GhostBox ghost_box(DM da) {
  PetscInt gxs = 0, gys = 0, gzs = 0, gxm = 0, gym = 0, gzm = 0;
  FRACMFG_PETSC_CHECK(DMDAGetGhostCorners(da, &gxs, &gys, &gzs, &gxm, &gym, &gzm));
  GhostBox g;
  g.gxs = gxs;
  g.gys = gys;
  g.gxm = gxm;
  g.gym = gym;
  return g;
}

RowIndices::RowIndices(const Model& model, const GhostBox& gb)
    : width_(row_components(model.grid().dim)) {
  ISLocalToGlobalMapping map = nullptr;
  FRACMFG_PETSC_CHECK(DMGetLocalToGlobalMapping(model.dm(), &map));
  const PetscInt n = model.box().count();
  const PetscInt w = width_;
  rows_.resize(static_cast<std::size_t>(w * n));
  cols_.assign(static_cast<std::size_t>(w * n), -1);
  nbs_.resize(static_cast<std::size_t>(n));
  std::vector<PetscInt> local(static_cast<std::size_t>(w * n), -1);
  for_each_point(model.grid(), model.box(), gb,
                 [&](PetscInt k, const Neighbours& nb, PetscInt, PetscInt) {
                   PetscInt* l = local.data() + w * k;
                   l[kDiag] = nb.self;
                   if (nb.west != nb.self) l[kWest] = nb.west;
                   if (nb.east != nb.self) l[kEast] = nb.east;
                   if (w == 5 && nb.south != nb.self) l[kSouth] = nb.south;
                   if (w == 5 && nb.north != nb.self) l[kNorth] = nb.north;
                   nbs_[static_cast<std::size_t>(k)] = nb;
                 });
  // Negative local indices map to negative global ones.
  FRACMFG_PETSC_CHECK(ISLocalToGlobalMappingApply(map, w * n, local.data(), cols_.data()));
  for (PetscInt k = 0; k < n; ++k) {
    for (PetscInt c = 0; c < w; ++c) {
      rows_[static_cast<std::size_t>(w * k + c)] = cols_[static_cast<std::size_t>(w * k)];
    }
  }
}

MatPtr RowIndices::create_matrix(MPI_Comm comm) const {
  Mat a = nullptr;
  FRACMFG_PETSC_CHECK(MatCreate(comm, &a));
  MatPtr owned(a);
  const auto n = static_cast<PetscInt>(nbs_.size());
  FRACMFG_PETSC_CHECK(MatSetSizes(a, n, n, PETSC_DETERMINE, PETSC_DETERMINE));
  FRACMFG_PETSC_CHECK(MatSetType(a, MATAIJ));
  // PETSc may reorder the index arrays it is given: pass copies.
  std::vector<PetscInt> i = rows_, j = cols_;
  FRACMFG_PETSC_CHECK(
      MatSetPreallocationCOO(a, static_cast<PetscCount>(i.size()), i.data(), j.data()));
  return owned;
}

void hjb_residual(const Model& model, const GhostBox& gb, const double* u, const double* u_next,
                  const double* rhs, double* r) {
  const Grid& g = model.grid();
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const double ihx = 1.0 / g.spacing(0);
  const double ihy = g.dim == 2 ? 1.0 / g.spacing(1) : 0.0;
  const double* inv_c = model.inverse_control_cost().data();
  const bool two_d = g.dim == 2;
  for_each_point(g, model.box(), gb, [&](PetscInt k, const Neighbours& nb, PetscInt, PetscInt) {
    const double up = u[nb.self];
    const double ue = u[nb.east], uw = u[nb.west];
    double lap = (ue - 2.0 * up + uw) * ihx * ihx;
    double h = upwind_hamiltonian((ue - up) * ihx, (up - uw) * ihx, inv_c[k]);
    if (two_d) {
      const double un = u[nb.north], us = u[nb.south];
      lap += (un - 2.0 * up + us) * ihy * ihy;
      h += upwind_hamiltonian((un - up) * ihy, (up - us) * ihy, inv_c[k]);
    }
    r[k] = (up - u_next[k]) * inv_dt - nu * lap + h - rhs[k];
  });
}

void hjb_rows(const Model& model, const GhostBox& gb, const double* u, double* rows) {
  const Grid& g = model.grid();
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const double* inv_c = model.inverse_control_cost().data();
  const int nc = row_components(g.dim);
  const bool two_d = g.dim == 2;
  const double ihx = 1.0 / g.spacing(0);
  const double ihy = two_d ? 1.0 / g.spacing(1) : 0.0;
  for_each_point(g, model.box(), gb, [&](PetscInt k, const Neighbours& nb, PetscInt, PetscInt) {
    double* row = rows + k * nc;
    const double up = u[nb.self];
    double diag = inv_dt;
    upwind_axis_row(up, u[nb.west], u[nb.east], ihx, nu, inv_c[k], nb.west == nb.self,
                    nb.east == nb.self, diag, row[kWest], row[kEast]);
    if (two_d) {
      upwind_axis_row(up, u[nb.south], u[nb.north], ihy, nu, inv_c[k], nb.south == nb.self,
                      nb.north == nb.self, diag, row[kSouth], row[kNorth]);
    }
    row[kDiag] = diag;
  });
}

}  // namespace fracmfg::mfg::detail
