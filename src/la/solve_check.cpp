#include "la/solve_check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "fracmfg/la/tridiag_pc.hpp"

namespace fracmfg::la {

namespace {

// Below this a residual is round-off of an exact solve (rtol may ask for less).
constexpr double kResidualFloor = 1e-8;

bool exact_pc(const char* type) {
  if (type == nullptr) return false;
  const std::string t(type);
  constexpr std::array<const char*, 4> exact = {PCLU, PCCHOLESKY, PCSVD, PCQR};
  return std::find(exact.begin(), exact.end(), t) != exact.end() || t == tridiag_pc_type;
}

}  // namespace

bool is_preonly(KSP ksp) {
  KSPType type = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetType(ksp, &type));
  return type != nullptr && std::string(type) == KSPPREONLY;
}

double unchecked_relative_residual(KSP ksp, Vec b, Vec x) {
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  FRACMFG_PETSC_CHECK(KSPGetConvergedReason(ksp, &reason));
  if (reason != KSP_CONVERGED_ITS) return -1.0;
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  PCType pc_type = nullptr;
  FRACMFG_PETSC_CHECK(PCGetType(pc, &pc_type));
  Mat a = nullptr;
  Mat p = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetOperators(ksp, &a, &p));
  // An exact solver of the preconditioning matrix solves the system only when that matrix is
  // the operator itself.
  if (exact_pc(pc_type) && a == p) return -1.0;
  Vec r = nullptr;
  FRACMFG_PETSC_CHECK(VecDuplicate(b, &r));
  const VecHandle residual(r);
  FRACMFG_PETSC_CHECK(MatMult(a, x, r));
  FRACMFG_PETSC_CHECK(VecAYPX(r, -1.0, b));  // r = b - A x
  PetscReal rn = 0.0;
  PetscReal bn = 0.0;
  FRACMFG_PETSC_CHECK(VecNorm(r, NORM_2, &rn));
  FRACMFG_PETSC_CHECK(VecNorm(b, NORM_2, &bn));
  if (bn == 0.0) return rn == 0.0 ? 0.0 : 1.0;
  return static_cast<double>(rn / bn);
}

void require_solved(KSP ksp, Vec b, Vec x, const std::string& what) {
  const double residual = unchecked_relative_residual(ksp, b, x);
  if (residual < 0.0) return;
  PetscReal rtol = 0.0;
  FRACMFG_PETSC_CHECK(KSPGetTolerances(ksp, &rtol, nullptr, nullptr, nullptr));
  const double limit = std::max(static_cast<double>(rtol), kResidualFloor);
  // A residual that is not finite comes from a right-hand side or result that is not: the
  // callers' checks of the solution name it more precisely.
  if (residual <= limit || !std::isfinite(residual)) return;
  KSPType ksp_type = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetType(ksp, &ksp_type));
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  PCType pc_type = nullptr;
  FRACMFG_PETSC_CHECK(PCGetType(pc, &pc_type));
  const char* prefix = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetOptionsPrefix(ksp, &prefix));
  const std::string p = prefix != nullptr ? prefix : "";
  char numbers[96];
  std::snprintf(numbers, sizeof(numbers), "%.3g (above %.3g)", residual, limit);
  const std::string message = what + ": the linear solve (KSP " + (ksp_type ? ksp_type : "?") +
                              ", PC " + (pc_type ? pc_type : "?") +
                              ") stopped without checking its result and left a relative "
                              "residual " +
                              numbers +
                              "; a KSP that stops without measuring its residual solves only "
                              "with an exact preconditioner: use -" +
                              p +
                              "ksp_type gmres (or another Krylov method) "
                              "with this preconditioner, or -" +
                              p + "pc_type lu";
  throw core::CollectiveError(message, ExitCode::numerical, 0);
}

}  // namespace fracmfg::la
