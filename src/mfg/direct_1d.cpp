#include "mfg/direct_1d.hpp"

#include <string>

#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/tridiag_pc.hpp"
#include "fracmfg/mfg/hamiltonian.hpp"
#include "mfg/row_kernels.hpp"
#include "mfg/stencil.hpp"
#include "mfg/work_scope.hpp"

namespace fracmfg::mfg::detail {

bool is_preonly_tridiag(KSP ksp) {
  PetscBool preonly = PETSC_FALSE, tri = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(
      PetscObjectTypeCompare(reinterpret_cast<PetscObject>(ksp), KSPPREONLY, &preonly));
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  FRACMFG_PETSC_CHECK(
      PetscObjectTypeCompare(reinterpret_cast<PetscObject>(pc), la::tridiag_pc_type, &tri));
  return preonly && tri;
}

Halo1d::Halo1d(const Model& model) : comm_(model.comm()), n_(model.box().count()) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  const bool periodic = model.grid().boundary == Boundary::periodic;
  if (rank > 0) west_ = rank - 1;
  if (rank + 1 < size) east_ = rank + 1;
  if (periodic) {
    west_ = (rank + size - 1) % size;
    east_ = (rank + 1) % size;
  }
  wall_w_ = !periodic && model.box().xs == 0;
  wall_e_ = !periodic && model.box().xs + n_ == model.grid().points[0];
}

std::pair<double, double> Halo1d::exchange(const double* owned) const {
  double west = 0.0, east = 0.0;
  const double first = n_ > 0 ? owned[0] : 0.0;
  const double last = n_ > 0 ? owned[n_ - 1] : 0.0;
  if (west_ == MPI_PROC_NULL && east_ == MPI_PROC_NULL) {
    // Nothing to exchange (one rank, walls).
  } else if (west_ == east_ && east_ != MPI_PROC_NULL) {
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    if (west_ == rank) {
      // One rank, periodic: the block wraps onto itself.
      west = last;
      east = first;
    } else {
      // Two ranks, periodic: both ghosts come from the other rank.
      double send[2] = {first, last}, recv[2] = {0.0, 0.0};
      MPI_Sendrecv(send, 2, MPI_DOUBLE, east_, 7, recv, 2, MPI_DOUBLE, west_, 7, comm_,
                   MPI_STATUS_IGNORE);
      west = recv[1];
      east = recv[0];
    }
  } else {
    // East ghost: the east neighbour's first value; west ghost: the west neighbour's last.
    // Both ways at once (one round of messages, not two in a row).
    MPI_Request req[4];
    MPI_Irecv(&east, 1, MPI_DOUBLE, east_, 5, comm_, &req[0]);
    MPI_Irecv(&west, 1, MPI_DOUBLE, west_, 6, comm_, &req[1]);
    MPI_Isend(&first, 1, MPI_DOUBLE, west_, 5, comm_, &req[2]);
    MPI_Isend(&last, 1, MPI_DOUBLE, east_, 6, comm_, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
  }
  if (wall_w_) west = first;
  if (wall_e_) east = last;
  return {west, east};
}

std::pair<double, double> Halo1d::after_step(std::pair<double, double> before,
                                             std::pair<double, double> neighbour_delta,
                                             const double* owned_new) const {
  if (n_ == 0) return before;
  // A mirror ghost is the point's own (new) value; any other is the neighbour's value before
  // the step minus the neighbour's step there (the same subtraction the neighbour did).
  const double west = wall_w_ ? owned_new[0] : before.first - neighbour_delta.first;
  const double east = wall_e_ ? owned_new[n_ - 1] : before.second - neighbour_delta.second;
  return {west, east};
}

namespace {

struct Walls {
  bool west, east;  // the block's first / last point is at a reflecting wall
};

Walls walls_1d(const Model& model) {
  const bool mirror = model.grid().boundary == Boundary::reflecting;
  const OwnedBox& b = model.box();
  return {mirror && b.xs == 0, mirror && b.xs + b.xm == model.grid().points[0]};
}

// Calls f(k, u_west, u_k, u_east, wall_w, wall_e) for every owned point, the first and the
// last one peeled off so that the interior loop has no ghost or wall tests.
template <class F>
void walk_1d(PetscInt n, const double* u, std::pair<double, double> g, Walls w, F&& f) {
  if (n == 0) return;
  if (n == 1) {
    f(0, g.first, u[0], g.second, w.west, w.east);
    return;
  }
  f(0, g.first, u[0], u[1], w.west, false);
  for (PetscInt k = 1; k + 1 < n; ++k) f(k, u[k - 1], u[k], u[k + 1], false, false);
  f(n - 1, u[n - 2], u[n - 1], g.second, false, w.east);
}

}  // namespace

double hjb_residual_rows_1d(const Model& model, const UpwindHamiltonian& ham, const double* u,
                            std::pair<double, double> ghosts, const double* u_next,
                            const double* rhs, double* r, double* sub, double* diag, double* super,
                            RowKernels* rk) {
  const WorkScope work(model);
  kernels::HjbRowsCall c = hjb_call(model, ham, row_block_1d(model, ghosts));
  c.u = u;
  c.u_next = u_next;
  c.rhs = rhs;
  c.residual = r;
  c.sub = sub;
  c.diag = diag;
  c.super = super;
  return hjb_rows_call(rk, c);
}

double hjb_residual_1d(const Model& model, const UpwindHamiltonian& ham, const double* u,
                       std::pair<double, double> ghosts, const double* u_next, const double* rhs,
                       double* r, RowKernels* rk) {
  const WorkScope work(model);
  kernels::HjbRowsCall c = hjb_call(model, ham, row_block_1d(model, ghosts));
  c.u = u;
  c.u_next = u_next;
  c.rhs = rhs;
  c.residual = r;
  return hjb_rows_call(rk, c);
}

void linear_coefficients_1d(const Model& model, const UpwindHamiltonian& ham, const double* u,
                            std::pair<double, double> ghosts, double* coef) {
  const double ih = 1.0 / model.grid().spacing(0);
  walk_1d(model.box().count(), u, ghosts, walls_1d(model),
          [&](PetscInt k, double uw, double up, double ue, bool, bool) {
            const double s = ham.power ? upwind_norm2((ue - up) * ih, (up - uw) * ih) : 0.0;
            coef[k] = ham.linear(k, s);
          });
}

void fp_rows_1d(const Model& model, const double* u, std::pair<double, double> ghosts,
                const double* inv_c, std::pair<double, double> inv_c_ghosts, double* sub,
                double* diag, double* super, RowKernels* rk) {
  const WorkScope work(model);
  kernels::FpRowsCall c;
  c.block = row_block_1d(model, ghosts);
  c.inv_dt = 1.0 / model.dt();
  c.nu = model.diffusion();
  c.u = u;
  c.inv_c = inv_c;
  c.inv_c_west = inv_c_ghosts.first;
  c.inv_c_east = inv_c_ghosts.second;
  c.sub = sub;
  c.diag = diag;
  c.super = super;
  fp_rows_call(rk, c);
}

}  // namespace fracmfg::mfg::detail
