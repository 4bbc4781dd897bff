#pragma once
// Private: the check after a linear solve whose Krylov method did not check its own result.
//
// A KSP that ends with KSP_CONVERGED_ITS stopped after a number of iterations without
// measuring its residual: preonly (one application of the preconditioner), or richardson /
// chebyshev with -ksp_norm_type none. With a preconditioner that solves exactly (lu,
// cholesky, svd, qr, fracmfg_tridiag) that is a solve; with any other (jacobi, ilu,
// bjacobi, fracmfg_line, mg, ...) the result is an approximation of unknown quality, and a
// deck that asked for `-..._ksp_type preonly -..._pc_type jacobi` would get a field that is
// entirely wrong with exit code 0. require_solved() measures ||b - A x|| / ||b|| in those
// cases and refuses a residual above max(rtol, 1e-8).

#include <petscksp.h>

#include <string>

namespace fracmfg::la {

/// True when the KSP's type is preonly (which takes no initial guess).
bool is_preonly(KSP ksp);

/// The relative residual ||b - A x|| / ||b|| of the solve KSPSolve(ksp, b, x) just did when
/// the KSP did not check it (see above); a negative value when it did, or when the
/// preconditioner is an exact solver. Collective on the KSP.
double unchecked_relative_residual(KSP ksp, Vec b, Vec x);

/// Throws core::CollectiveError (exit code numerical, the same on every rank) when
/// unchecked_relative_residual exceeds max(rtol, 1e-8): "<what>: the linear solve
/// (KSP preonly, PC jacobi) left a relative residual 0.3 (above 1e-08) ...", with the
/// options prefix to change. Collective on the KSP.
void require_solved(KSP ksp, Vec b, Vec x, const std::string& what);

}  // namespace fracmfg::la
