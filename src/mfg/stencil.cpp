#include "mfg/stencil.hpp"

#include <algorithm>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/mfg/hamiltonian.hpp"
#include "mfg/row_kernels.hpp"
#include "mfg/work_scope.hpp"

namespace fracmfg::mfg::detail {

namespace {

const unsigned char* wall_mask(const Model& model) {
  return model.has_obstacle() ? model.wall_ghosted().data() : nullptr;
}

}  // namespace

ExitFaces ExitFaces::of(const Model& model, int n) {
  ExitFaces f;
  for (int s = 0; s < 2 * model.grid().dim; ++s) {
    f.side[static_cast<std::size_t>(s)] = model.exit_cost(s, n);
  }
  return f;
}

GhostBox ghost_box(DM da) {
  PetscInt gxs = 0, gys = 0, gzs = 0, gxm = 0, gym = 0, gzm = 0;
  FRACMFG_PETSC_CHECK(DMDAGetGhostCorners(da, &gxs, &gys, &gzs, &gxm, &gym, &gzm));
  GhostBox g;
  g.gxs = gxs;
  g.gys = gys;
  g.gxm = gxm;
  g.gym = gym;
  g.gzs = gzs;
  g.gzm = gzm;
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
  for_each_point(model.grid(), model.box(), gb, wall_mask(model),
                 [&](PetscInt k, const Neighbours& nb, PetscInt, PetscInt) {
                   PetscInt* l = local.data() + w * k;
                   l[kDiag] = nb.self;
                   if (nb.west != nb.self) l[kWest] = nb.west;
                   if (nb.east != nb.self) l[kEast] = nb.east;
                   if (w >= 5 && nb.south != nb.self) l[kSouth] = nb.south;
                   if (w >= 5 && nb.north != nb.self) l[kNorth] = nb.north;
                   if (w == 7 && nb.down != nb.self) l[kDown] = nb.down;
                   if (w == 7 && nb.up != nb.self) l[kUp] = nb.up;
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

HamiltonianAtDensity::HamiltonianAtDensity(const Model& model)
    : model_(model), type_(model.problem().hamiltonian.type) {}

void HamiltonianAtDensity::set_density(Vec m) {
  if (type_ != Problem::Hamiltonian::Type::congestion) return;
  const Problem::Hamiltonian& h = model_.problem().hamiltonian;
  const std::vector<double>& inv_c = model_.inverse_control_cost();
  coef_.resize(inv_c.size());
  ReadArray a(m);
  for (std::size_t k = 0; k < coef_.size(); ++k) {
    // A mixed (Anderson) iterate may hold round-off below 0: counted as 0.
    const double mk = std::max(a[static_cast<PetscInt>(k)], 0.0);
    coef_[k] = inv_c[k] * congestion_factor(mk, h.epsilon, h.alpha);
  }
  density_set_ = true;
}

UpwindHamiltonian HamiltonianAtDensity::stencil() const {
  UpwindHamiltonian h;
  h.coef = model_.inverse_control_cost().data();
  if (type_ == Problem::Hamiltonian::Type::power) {
    h.power = true;
    h.exponent = model_.problem().hamiltonian.exponent;
  } else if (type_ == Problem::Hamiltonian::Type::congestion) {
    if (!density_set_) {
      throw Error("mfg: the congestion Hamiltonian needs the density (set_density) before a step");
    }
    h.coef = coef_.data();
  }
  return h;
}

void hjb_residual(const Model& model, const UpwindHamiltonian& ham, const GhostBox& gb,
                  const double* u, const double* u_next, const double* rhs, double* r,
                  const ExitFaces& exits, RowKernels* rk) {
  const WorkScope work(model);
  if (rows_kernel_covers(model)) {
    kernels::HjbRowsCall c = hjb_call(model, ham, row_block(model, gb));
    c.u = u;
    c.u_next = u_next;
    c.rhs = rhs;
    c.residual = r;
    hjb_rows_call(rk, c);
    return;
  }
  // Exits and obstacles: the walk over the points with their folded neighbours.
  const Grid& g = model.grid();
  const OwnedBox& b = model.box();
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const double ihx = 1.0 / g.spacing(0);
  const double ihy = g.dim >= 2 ? 1.0 / g.spacing(1) : 0.0;
  const double ihz = g.dim == 3 ? 1.0 / g.spacing(2) : 0.0;
  const double* inv_c = ham.coef;
  const bool two_d = g.dim >= 2;
  const bool three_d = g.dim == 3;
  for_each_point(g, b, gb, wall_mask(model),
                 [&](PetscInt k, const Neighbours& nb, PetscInt i, PetscInt j) {
                   const double up = u[nb.self];
                   if (nb.wall) {
                     r[k] = up * inv_dt;
                     return;
                   }
                   double ue = u[nb.east], uw = u[nb.west];
                   if (nb.exits != 0) {
                     if (nb.exits & kExitWest) uw = exits.ghost(0, b, i, j, up);
                     if (nb.exits & kExitEast) ue = exits.ghost(1, b, i, j, up);
                   }
                   double lap = (ue - 2.0 * up + uw) * ihx * ihx;
                   double h = 0.0;
                   double un = 0.0, us = 0.0, uu = 0.0, ud = 0.0;
                   if (two_d) {
                     un = u[nb.north];
                     us = u[nb.south];
                     if (nb.exits & kExitSouth) us = exits.ghost(2, b, i, j, up);
                     if (nb.exits & kExitNorth) un = exits.ghost(3, b, i, j, up);
                     lap += (un - 2.0 * up + us) * ihy * ihy;
                   }
                   if (three_d) {
                     uu = u[nb.up];
                     ud = u[nb.down];
                     lap += (uu - 2.0 * up + ud) * ihz * ihz;
                   }
                   if (ham.power) {
                     double dyp = 0.0, dym = 0.0, dzp = 0.0, dzm = 0.0;
                     if (two_d) {
                       dyp = (un - up) * ihy;
                       dym = (up - us) * ihy;
                     }
                     if (three_d) {
                       dzp = (uu - up) * ihz;
                       dzm = (up - ud) * ihz;
                     }
                     h = ham.value(k, (ue - up) * ihx, (up - uw) * ihx, dyp, dym, dzp, dzm);
                   } else {
                     h = upwind_hamiltonian((ue - up) * ihx, (up - uw) * ihx, inv_c[k]);
                     if (two_d) h += upwind_hamiltonian((un - up) * ihy, (up - us) * ihy, inv_c[k]);
                     if (three_d)
                       h += upwind_hamiltonian((uu - up) * ihz, (up - ud) * ihz, inv_c[k]);
                   }
                   r[k] = (up - u_next[k]) * inv_dt - nu * lap + h - rhs[k];
                 });
}

void hjb_rows(const Model& model, const UpwindHamiltonian& ham, const GhostBox& gb, const double* u,
              double* rows, const ExitFaces& exits, double* outflow, RowKernels* rk) {
  const WorkScope work(model);
  if (rows_kernel_covers(model)) {
    kernels::HjbRowsCall c = hjb_call(model, ham, row_block(model, gb));
    c.u = u;
    c.rows = rows;
    hjb_rows_call(rk, c);
    if (outflow != nullptr) std::fill(outflow, outflow + model.box().count(), 0.0);
    return;
  }
  // Exits and obstacles: the walk over the points with their folded neighbours.
  const Grid& g = model.grid();
  const OwnedBox& b = model.box();
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const int nc = row_components(g.dim);
  const bool two_d = g.dim >= 2;
  const bool three_d = g.dim == 3;
  const double ihx = 1.0 / g.spacing(0);
  const double ihy = two_d ? 1.0 / g.spacing(1) : 0.0;
  const double ihz = three_d ? 1.0 / g.spacing(2) : 0.0;
  auto fold = [](const Neighbours& nb, PetscInt n, unsigned bit) {
    if (nb.exits & bit) return Fold::exit;
    return n == nb.self ? Fold::mirror : Fold::none;
  };
  for_each_point(
      g, b, gb, wall_mask(model), [&](PetscInt k, const Neighbours& nb, PetscInt i, PetscInt j) {
        double* row = rows + k * nc;
        double rate = 0.0;
        if (nb.wall) {
          for (int c = 0; c < nc; ++c) row[c] = 0.0;
          row[kDiag] = inv_dt;
          if (outflow != nullptr) outflow[k] = 0.0;
          return;
        }
        const double up = u[nb.self];
        double uw = u[nb.west], ue = u[nb.east], us = 0.0, un = 0.0, ud = 0.0, uu = 0.0;
        if (nb.exits & kExitWest) uw = exits.ghost(0, b, i, j, up);
        if (nb.exits & kExitEast) ue = exits.ghost(1, b, i, j, up);
        if (two_d) {
          us = u[nb.south];
          un = u[nb.north];
          if (nb.exits & kExitSouth) us = exits.ghost(2, b, i, j, up);
          if (nb.exits & kExitNorth) un = exits.ghost(3, b, i, j, up);
        }
        if (three_d) {
          ud = u[nb.down];
          uu = u[nb.up];
        }
        double s = 0.0;  // the squared upwind norm (power form)
        if (ham.power) {
          s = upwind_norm2((ue - up) * ihx, (up - uw) * ihx);
          if (two_d) s += upwind_norm2((un - up) * ihy, (up - us) * ihy);
          if (three_d) s += upwind_norm2((uu - up) * ihz, (up - ud) * ihz);
        }
        const double ic = ham.linear(k, s);
        double diag = inv_dt;
        upwind_axis_row(up, uw, ue, ihx, nu, ic, fold(nb, nb.west, kExitWest),
                        fold(nb, nb.east, kExitEast), diag, row[kWest], row[kEast], rate);
        if (two_d) {
          upwind_axis_row(up, us, un, ihy, nu, ic, fold(nb, nb.south, kExitSouth),
                          fold(nb, nb.north, kExitNorth), diag, row[kSouth], row[kNorth], rate);
        }
        if (three_d) {
          upwind_axis_row(up, ud, uu, ihz, nu, ic, fold(nb, nb.down, kExitDown),
                          fold(nb, nb.up, kExitUp), diag, row[kDown], row[kUp], rate);
        }
        row[kDiag] = diag;
        if (outflow != nullptr) outflow[k] = rate;
      });
}

}  // namespace fracmfg::mfg::detail
