#pragma once
// The PETSc preconditioner "fracmfg_tridiag": the exact distributed tridiagonal solve of
// la::TridiagSolver as a registered PC type. With KSPPREONLY it is a direct solver for
// tridiagonal (optionally cyclic) matrices distributed by contiguous rows, the matrices a
// 1D DMDA with dof 1 and stencil width 1 produces (periodic or not).
//
//   la::register_petsc_types();                       // or use la::create_ksp(comm)
//   KSPSetType(ksp, KSPPREONLY);
//   PCSetType(pc, la::tridiag_pc_type);               // or -pc_type fracmfg_tridiag
//   KSPSetOperators(ksp, A, A);  KSPSolve(ksp, b, x); // x = A^{-1} b to round-off
//
// PCSetUp reads the diagonals of the preconditioning matrix (la::extract_tridiagonal:
// value-based band check, periodicity detected from the corner entries) and factors them
// (la::TridiagSolver::setup). PETSc repeats PCSetUp when the matrix values change (Newton
// steps: MatSetValues + assembly, or KSPSetOperators again); re-setup re-uses the memory as
// long as the layout stays. PCApply is TridiagSolver::solve (one MPI_Allgather), and
// PCApplyTranspose (KSPSolveTranspose) is TridiagSolver::solve_transpose.
// Errors inside the callbacks come back to PETSc as error codes whose message reads like the
// fracmfg exception ("matrix is not tridiagonal: row ...", "zero pivot at global row ..."),
// so FRACMFG_PETSC_CHECK(KSPSolve(...)) throws PetscError with that text on every rank.
// -pc_view / KSPView prints N, the ranks, periodicity and the reduced system size.

#include <mpi.h>
#include <petscksp.h>

#include "fracmfg/la/petsc_handles.hpp"
#include "fracmfg/la/tridiag_solver.hpp"

namespace fracmfg::la {

/// The PC type name, for PCSetType and the options database (-pc_type fracmfg_tridiag).
inline constexpr char tridiag_pc_type[] = "fracmfg_tridiag";

/// Registers fracmfg's PETSc types (the PCs "fracmfg_tridiag" and "fracmfg_line",
/// la/line_pc.hpp) with PETSc. Idempotent and cheap: call it before creating any
/// KSP/PC/SNES that may select them (create_ksp and create_snes do). Not collective; needs an
/// initialised PETSc (after PetscFinalize and a new PetscInitialize, call it again). Throws
/// PetscError if PETSc fails.
void register_petsc_types();

/// KSPCreate on comm after register_petsc_types(). Collective on comm.
KspHandle create_ksp(MPI_Comm comm);
/// SNESCreate on comm after register_petsc_types(). Collective on comm.
SnesHandle create_snes(MPI_Comm comm);

/// True when pc's type is fracmfg_tridiag. Not collective.
bool is_tridiag_pc(PC pc);

/// The solver inside a set-up fracmfg_tridiag PC (for its sizes and counters); throws Error
/// if pc is not of that type or not set up. Not collective.
const TridiagSolver& tridiag_pc_solver(PC pc);

}  // namespace fracmfg::la
