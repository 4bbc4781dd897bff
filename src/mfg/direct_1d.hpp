#pragma once
// The 1D fast path of the mfg solvers: the HJB Newton step and the Fokker-Planck step
// written straight into la::TridiagSolver, with no SNES, KSP or assembled matrix between
// the stencil and the tridiagonal solve. The arithmetic is that of the PETSc path (the same
// residual, the same Jacobian, the same exact distributed tridiagonal solve and, for HJB,
// the same convergence tests), only the per-step bookkeeping of SNES (option lookups,
// Vec/Mat objects, the AIJ -> tridiagonal copy of the preconditioner) is gone, which on a
// 51-point grid is most of a time step and on 10^4 points about a third.
//
// The PETSc path stays in use whenever the user's options ask for anything the fast path
// does not do (a monitor, another Krylov method or preconditioner, a line search, a view):
// direct_1d_allowed() accepts a solver only when every option under its prefix is in a
// short list of settings the fast path honours.
#include <petscsys.h>

#include <initializer_list>

#include "mfg/stencil.hpp"

namespace fracmfg::mfg::detail {

/// True when every option in the PETSc options database that starts with "-<prefix>" is
/// "-<prefix><name>" for one of `names`. Not collective (the database is the same on every
/// rank when it was filled from the same command line and deck).
bool only_options_among(const char* prefix, std::initializer_list<const char*> names);

/// One pass over the owned points of a 1D grid: the HJB residual r (as hjb_residual) and the
/// rows of J(u) as three arrays sub, diag, super (global row i: sub x[i-1] + diag x[i] +
/// super x[i+1]; at a reflecting wall the mirrored coefficient is folded into diag and the
/// outer one is 0; periodic rows wrap). u is ghosted; the others are owned arrays.
/// Returns the local sum of r^2.
double hjb_residual_rows_1d(const Model& model, const GhostBox& gb, const double* u,
                            const double* u_next, const double* rhs, double* r, double* sub,
                            double* diag, double* super);

/// The HJB residual alone (as hjb_residual, 1D); returns the local sum of r^2.
double hjb_residual_1d(const Model& model, const GhostBox& gb, const double* u,
                       const double* u_next, const double* rhs, double* r);

/// The rows of J(u)^T (the implicit Fokker-Planck operator) at the owned points of a 1D grid:
/// row q holds J(q-1, q), J(q, q), J(q+1, q). u and inv_c (1/c(x)) are ghosted arrays of the
/// same layout, so that the rows of the neighbouring points need no exchange of rows.
void fp_rows_1d(const Model& model, const GhostBox& gb, const double* u, const double* inv_c,
                double* sub, double* diag, double* super);

}  // namespace fracmfg::mfg::detail
