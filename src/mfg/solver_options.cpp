#include "mfg/solver_options.hpp"

#include <petscsys.h>

#include <string>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/petsc_options.hpp"

namespace fracmfg::mfg::detail {

bool direct_option(MPI_Comm comm, const char* prefix) {
  return core::option_bool(comm, prefix, "-direct",
                           {"fracmfg mfg 1D fast path",
                            "1D: the step written straight into the tridiagonal solver (no "
                            "SNES/KSP monitors or views); false: PETSc's objects"},
                           true);
}

int fp_pc_lag_option(MPI_Comm comm) {
  const long long lag = core::option_int(
      comm, "mfg_fp_", "-pc_lag",
      {"fracmfg mfg Fokker-Planck preconditioner",
       "2D/3D, second-order diffusion: build the preconditioner at the time levels n with "
       "n % lag == 0 of a sweep and reuse it up to the next (1: at every level)"},
      4);
  if (lag < 1 || lag > 1000000) {
    // The same option on every rank: every rank leaves here.
    throw core::CollectiveError(
        "-mfg_fp_pc_lag: " + std::to_string(lag) + " is out of range (1 to 1000000)",
        ExitCode::usage, 0);
  }
  return static_cast<int>(lag);
}

double auto_damping_margin_option(MPI_Comm comm) {
  const double margin = core::option_real(
      comm, "mfg_auto_", "-damping_margin",
      {"fracmfg mfg iteration.method auto",
       "with grid sequencing: the finer levels' damping as a fraction of the largest stable "
       "damping of a_min extrapolated from the two coarsest levels"},
      0.9);
  if (!(margin > 0.0 && margin <= 2.0)) {
    throw core::CollectiveError(
        "-mfg_auto_damping_margin: " + std::to_string(margin) + " is out of range (0, 2]",
        ExitCode::usage, 0);
  }
  return margin;
}

bool sweep_views_option(MPI_Comm comm) {
  char* all = nullptr;
  FRACMFG_PETSC_CHECK(PetscOptionsGetAll(nullptr, &all));
  const std::string options = all != nullptr ? all : "";
  FRACMFG_PETSC_CHECK(PetscFree(all));
  const bool given = options.find("view") != std::string::npos ||
                     options.find("converged_reason") != std::string::npos;
  return core::option_bool(comm, "", "-mfg_sweep_views",
                           {"fracmfg mfg sweeps",
                            "Look up PETSc's -*_view and -*_converged_reason options at every "
                            "solve of the sweeps (default: whether such an option is given)"},
                           given);
}

void default_sub_factor_levels(KSP ksp, PetscInt levels, bool* done) {
  if (*done) return;
  *done = true;
  PC pc = nullptr;
  FRACMFG_PETSC_CHECK(KSPGetPC(ksp, &pc));
  PetscBool composite = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(
      PetscObjectTypeCompare(reinterpret_cast<PetscObject>(pc), PCCOMPOSITE, &composite));
  // Fractional diffusion (mfg/fractional_diffusion.hpp): block Jacobi is the composite's first.
  if (composite) FRACMFG_PETSC_CHECK(PCCompositeGetPC(pc, 0, &pc));
  PetscBool bjacobi = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(
      PetscObjectTypeCompare(reinterpret_cast<PetscObject>(pc), PCBJACOBI, &bjacobi));
  if (!bjacobi) return;
  const char* prefix = nullptr;
  FRACMFG_PETSC_CHECK(PCGetOptionsPrefix(pc, &prefix));
  PetscBool given = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(PetscOptionsHasName(nullptr, prefix, "-sub_pc_factor_levels", &given));
  if (given) return;
  FRACMFG_PETSC_CHECK(KSPSetUp(ksp));
  if (composite) FRACMFG_PETSC_CHECK(PCSetUp(pc));  // a composite sets its parts up later
  PetscInt blocks = 0;
  KSP* subs = nullptr;
  FRACMFG_PETSC_CHECK(PCBJacobiGetSubKSP(pc, &blocks, nullptr, &subs));
  for (PetscInt b = 0; b < blocks; ++b) {
    PC sub = nullptr;
    FRACMFG_PETSC_CHECK(KSPGetPC(subs[b], &sub));
    FRACMFG_PETSC_CHECK(PCFactorSetLevels(sub, levels));
  }
}

PetscInt default_factor_levels(int dim) {
  return dim == 3 ? 1 : 3;
}

}  // namespace fracmfg::mfg::detail
