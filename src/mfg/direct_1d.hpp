#pragma once
// The 1D fast path of the mfg solvers: the HJB Newton step and the Fokker-Planck step
// written straight into la::TridiagSolver, with no SNES, KSP or assembled matrix between
// the stencil and the tridiagonal solve. The arithmetic is that of the PETSc path (the same
// residual, the same Jacobian, the same exact distributed tridiagonal solve and, for HJB,
// the same convergence tests), only the per-step bookkeeping of SNES (option lookups,
// Vec/Mat objects, the AIJ -> tridiagonal copy of the preconditioner, the ghost update
// through a DMDA scatter) is gone, which on a 51-point grid is most of a time step and on
// 10^4 points about half of it.
//
// Chosen by the registered options -mfg_hjb_direct and -mfg_fp_direct (default true; false:
// PETSc's objects, with their monitors and views; mfg/solver_options.hpp), and only while
// the solver types are the defaults (another -mfg_hjb_snes_type, line search, -ksp_type or
// -pc_type is PETSc's path). The tolerances (-mfg_hjb_snes_rtol, ...) apply to both.
#include <mpi.h>
#include <petscksp.h>
#include <petscsys.h>

#include <utility>

#include "fracmfg/mfg/model.hpp"
#include "mfg/stencil.hpp"

namespace fracmfg::mfg::detail {

/// True when ksp is preonly with the fracmfg_tridiag PC (the exact tridiagonal solve that the
/// fast path replaces). Not collective.
bool is_preonly_tridiag(KSP ksp);

/// The two values a rank's block of a 1D grid needs beyond its own: west of its first and
/// east of its last point, from the neighbouring ranks (one round of messages both ways),
/// wrapped around when periodic, the point's own value at a reflecting wall (mirror).
class Halo1d {
 public:
  /// From the model's DMDA (1D: rank r owns the r-th block). Not collective.
  explicit Halo1d(const Model& model);
  /// {west ghost, east ghost} of the owned values (count() of them). Collective.
  std::pair<double, double> exchange(const double* owned) const;
  /// The ghosts after every rank moved its values by x <- x - delta: `before` are the ghosts
  /// of the old values, `neighbour_delta` the neighbours' delta at the two points next to
  /// this block (la::TridiagSolver::neighbour_solution() of the solve that gave delta),
  /// owned_new the new owned values. Equal to exchange(owned_new), bit for bit, with no
  /// communication. Not collective.
  std::pair<double, double> after_step(std::pair<double, double> before,
                                       std::pair<double, double> neighbour_delta,
                                       const double* owned_new) const;
  PetscInt count() const { return n_; }

 private:
  MPI_Comm comm_;
  int west_ = MPI_PROC_NULL, east_ = MPI_PROC_NULL;
  PetscInt n_ = 0;
  bool wall_w_ = false, wall_e_ = false;
};

/// One pass over the owned points of a 1D grid: the HJB residual r (as hjb_residual) and the
/// rows of J(u) as three arrays sub, diag, super (global row i: sub x[i-1] + diag x[i] +
/// super x[i+1]; at a reflecting wall the mirrored coefficient is folded into diag and the
/// outer one is 0; periodic rows wrap). u, u_next, rhs, r are owned arrays, ghosts from
/// Halo1d::exchange(u). Returns the local sum of r^2. The kernel mfg_hjb_rows
/// (kernels/mfg_rows.hpp) where rk places it (null: the host kernel).
double hjb_residual_rows_1d(const Model& model, const UpwindHamiltonian& ham, const double* u,
                            std::pair<double, double> ghosts, const double* u_next,
                            const double* rhs, double* r, double* sub, double* diag, double* super,
                            RowKernels* rk = nullptr);

/// The HJB residual alone; returns the local sum of r^2.
double hjb_residual_1d(const Model& model, const UpwindHamiltonian& ham, const double* u,
                       std::pair<double, double> ghosts, const double* u_next, const double* rhs,
                       double* r, RowKernels* rk = nullptr);

/// coef[k] = ham.linear(k, s_k): the coefficient of the linearised Hamiltonian at the owned
/// points (1/c for the quadratic form; s_k the squared upwind norm of u there).
void linear_coefficients_1d(const Model& model, const UpwindHamiltonian& ham, const double* u,
                            std::pair<double, double> ghosts, double* coef);

/// The rows of J(u)^T (the implicit Fokker-Planck operator) at the owned points of a 1D grid:
/// row q holds J(q-1, q), J(q, q), J(q+1, q). inv_c is the coefficient of the linearised
/// Hamiltonian (1/c(x) for the quadratic form; linear_coefficients_1d) at the owned points
/// with its ghosts as for u (Halo1d), so that the neighbours' rows need no exchange of rows.
/// The kernel mfg_fp_rows where rk places it (null: the host kernel).
void fp_rows_1d(const Model& model, const double* u, std::pair<double, double> ghosts,
                const double* inv_c, std::pair<double, double> inv_c_ghosts, double* sub,
                double* diag, double* super, RowKernels* rk = nullptr);

}  // namespace fracmfg::mfg::detail
