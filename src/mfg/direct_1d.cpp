#include "mfg/direct_1d.hpp"

#include <string>

#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/tridiag_pc.hpp"
#include "fracmfg/mfg/hamiltonian.hpp"
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

// The HJB residual at a point (as hjb_residual); s: the squared upwind norm (Power only).
template <bool Power>
inline double point_residual(double uw, double up, double ue, double u_next, double rhs,
                             double inv_dt, double nu, double ih, double ic, double q, double s) {
  const double lap_u = (ue - 2.0 * up + uw) * ih * ih;
  double h = 0.0;
  if constexpr (Power) {
    h = power_hamiltonian(s, ic, q);
  } else {
    h = upwind_hamiltonian((ue - up) * ih, (up - uw) * ih, ic);
  }
  return (up - u_next) * inv_dt - nu * lap_u + h - rhs;
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

namespace {

// The HJB residual r (returns sum r^2) and, when Rows, the Jacobian rows in the same pass.
// Power: the power form (the others are the quadratic form with coefficient ham.coef), a
// template argument so that the quadratic loop is the same arithmetic with no branch.
template <bool Rows, bool Power>
double hjb_residual_walk(const Model& model, const UpwindHamiltonian& ham, const double* u,
                         std::pair<double, double> ghosts, const double* u_next, const double* rhs,
                         double* r, double* sub, double* diag, double* super) {
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const double ih = 1.0 / model.grid().spacing(0);
  const double* coef = ham.coef;
  const double q = ham.exponent;
  double sum = 0.0;
  walk_1d(model.box().count(), u, ghosts, walls_1d(model),
          [&](PetscInt k, double uw, double up, double ue, bool wall_w, bool wall_e) {
            double s = 0.0;
            if constexpr (Power) s = upwind_norm2((ue - up) * ih, (up - uw) * ih);
            const double res =
                point_residual<Power>(uw, up, ue, u_next[k], rhs[k], inv_dt, nu, ih, coef[k], q, s);
            r[k] = res;
            sum += res * res;
            if constexpr (Rows) {
              double ic = coef[k];
              if constexpr (Power) ic *= power_weight(s, q);
              double cplus = 0.0, cminus = 0.0, d = inv_dt, outflow = 0.0;
              upwind_axis_row(up, uw, ue, ih, nu, ic, wall_w ? Fold::mirror : Fold::none,
                              wall_e ? Fold::mirror : Fold::none, d, cminus, cplus, outflow);
              sub[k] = cminus;
              diag[k] = d;
              super[k] = cplus;
            }
          });
  return sum;
}

template <bool Rows>
double hjb_residual_walk(const Model& model, const UpwindHamiltonian& ham, const double* u,
                         std::pair<double, double> ghosts, const double* u_next, const double* rhs,
                         double* r, double* sub, double* diag, double* super) {
  if (ham.power) {
    return hjb_residual_walk<Rows, true>(model, ham, u, ghosts, u_next, rhs, r, sub, diag, super);
  }
  return hjb_residual_walk<Rows, false>(model, ham, u, ghosts, u_next, rhs, r, sub, diag, super);
}

}  // namespace

double hjb_residual_rows_1d(const Model& model, const UpwindHamiltonian& ham, const double* u,
                            std::pair<double, double> ghosts, const double* u_next,
                            const double* rhs, double* r, double* sub, double* diag,
                            double* super) {
  const WorkScope work(model);
  return hjb_residual_walk<true>(model, ham, u, ghosts, u_next, rhs, r, sub, diag, super);
}

double hjb_residual_1d(const Model& model, const UpwindHamiltonian& ham, const double* u,
                       std::pair<double, double> ghosts, const double* u_next, const double* rhs,
                       double* r) {
  const WorkScope work(model);
  return hjb_residual_walk<false>(model, ham, u, ghosts, u_next, rhs, r, nullptr, nullptr, nullptr);
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
                double* diag, double* super) {
  const WorkScope work(model);
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const double ih = 1.0 / model.grid().spacing(0);
  const double lap = nu * ih * ih;
  const PetscInt n = model.box().count();
  walk_1d(n, u, ghosts, walls_1d(model),
          [&](PetscInt k, double uw, double up, double ue, bool wall_w, bool wall_e) {
            const double dplus = (ue - up) * ih, dminus = (up - uw) * ih;
            const double ic_w = k > 0 ? inv_c[k - 1] : inv_c_ghosts.first;
            const double ic_e = k + 1 < n ? inv_c[k + 1] : inv_c_ghosts.second;
            // J(q, q), with the mirrored neighbours folded in (their a+/a- vanish: zero
            // difference).
            const double ap = upwind_a_plus(dplus, inv_c[k]);
            const double am = upwind_a_minus(dminus, inv_c[k]);
            double d = inv_dt + 2.0 * lap + (am - ap) * ih;
            if (wall_w) d -= lap;
            if (wall_e) d -= lap;
            diag[k] = d;
            // J(q-1, q): the east coefficient of row q-1, whose D+ is this point's D-.
            sub[k] = wall_w ? 0.0 : -lap + upwind_a_plus(dminus, ic_w) * ih;
            // J(q+1, q): the west coefficient of row q+1, whose D- is this point's D+.
            super[k] = wall_e ? 0.0 : -lap - upwind_a_minus(dplus, ic_e) * ih;
          });
}

}  // namespace fracmfg::mfg::detail
