#pragma once
// The PETSc preconditioner "fracmfg_line": alternating line relaxation for 5-point operators
// on a 2D DMDA (one degree of freedom, the DMDA's global ordering: the matrices of
// mfg::HjbSolver and mfg::FokkerPlanckFdm), block Jacobi over the ranks, every line solve
// a batch of tridiagonal systems through kernels::tridiag_batched, so the work can run on
// a GPU through the rank's exec::Selector.
//
//   la::register_petsc_types();                        // or use la::create_ksp(comm)
//   KSPSetDM(ksp, da);  KSPSetDMActive(ksp, PETSC_FALSE);   // the grid the matrix lives on
//   KSPSetType(ksp, KSPGMRES);
//   PCSetType(pc, la::line_pc_type);                   // or -pc_type fracmfg_line
//   la::line_pc_set_selector(pc, &selector);           // optional: host without one
//   KSPSetOperators(ksp, A, A);  KSPSolve(ksp, b, x);
//
// The formula. Let A_r be the rank's diagonal block of the preconditioning matrix (rows and
// columns of the points the rank owns; couplings to other ranks' points are dropped: block
// Jacobi), split into its diagonal and its couplings along x and along y,
//
//   A_r = D + X + Y,   T_x = D + X (one tridiagonal system per x-line of the rank's box),
//                      T_y = D + Y (one per y-line).
//
// A line is cut where the rank's box ends; it is cyclic (periodic) when the grid is periodic
// along it and the rank owns the whole line (the kernel's cyclic solve, Sherman-Morrison).
// PCApply computes z = P^{-1} r by s sweeps that alternate between the two directions:
//
//   z_1 = T_x^{-1} r,
//   z_k = z_{k-1} + T_y^{-1} (r - A_r z_{k-1})   (k even),
//   z_k = z_{k-1} + T_x^{-1} (r - A_r z_{k-1})   (k odd, k > 1),     z = z_s.
//
// Each sweep is one batched tridiagonal solve (line Jacobi in one direction, corrected by the
// residual of the whole block), i.e. alternating-direction line relaxation without shifts
// (Peaceman & Rachford 1955 with zero parameters; Saad, Iterative Methods for Sparse Linear
// Systems, 2nd ed., sec. 4.1 and 12.3). More sweeps cut the Krylov iterations at a cost
// linear in s: on the 2D crowd game's Newton systems the default s = 8 took about the fewest
// seconds (docs/performance.md, "Line preconditioner (`fracmfg_line`) against block ILU(3)").
// -pc_fracmfg_line_sweeps s (1 <= s <= 16) or line_pc_set_sweeps() changes it. P is not
// symmetric: use a Krylov method for nonsymmetric systems (GMRES, the mfg default).
//
// PCSetUp reads the five coefficients per row of the diagonal block (MatGetDiagonalBlock,
// one MatGetRow per owned row: O(n), repeated when PETSc sees new values, e.g. every Newton
// step) and checks the pattern: a coupling that is neither the point itself nor its x- or
// y-neighbour (or, on a cyclic line, the neighbour across the periodic boundary) is an error
// naming the row. The coefficients are kept as the kernel reads them: the x-lines in the
// natural (strided) order of the rank's box, the y-lines transposed, so both batches are
// strided and the transposition is fused into the residual loop. The solves need
// nonzero pivots of Thomas' algorithm: fine for diagonally dominant rows or columns (the
// M-matrix J of the HJB step and its transpose); a zero pivot is reported as a PETSc error
// carrying the kernel's message.
//
// The DMDA comes from PCGetDM (KSPSetDM passes it on; a SNES passes its own): dimension 2,
// dof 1, and the rank's box must have as many points as the matrix has owned rows;
// anything else is an error at PCSetUp. Reflecting walls (folded into the diagonal) and
// periodic boundaries are both handled.
//
// Errors inside the callbacks come back to PETSc as error codes with the fracmfg message, so
// FRACMFG_PETSC_CHECK(KSPSolve(...)) throws PetscError with that text. -pc_view prints the
// rank's box, the cyclic directions, the sweeps and whether a selector is attached.
// Collectivity: PCSetUp and PCApply are collective only through PETSc's own calls; the line
// solves are local to the rank.

#include <petscksp.h>

#include <cstdint>

#include "fracmfg/exec/selector.hpp"

namespace fracmfg::la {

/// The PC type name, for PCSetType and the options database (-pc_type fracmfg_line).
/// Registered by la::register_petsc_types() (fracmfg/la/tridiag_pc.hpp).
inline constexpr char line_pc_type[] = "fracmfg_line";

/// True when pc's type is fracmfg_line. Not collective.
bool is_line_pc(PC pc);

/// The selector through which the PC's tridiagonal batches run (kernel
/// exec::kernel_names::tridiag_batched); null: the host kernel directly. The selector must
/// outlive the PC's use. Does nothing when pc is of another type (so a caller may set it
/// after the options chose the type). Not collective.
void line_pc_set_selector(PC pc, exec::Selector* selector);

/// Sweeps of the alternating relaxation (see the header comment), 1..16; throws Error
/// outside that range or when pc is not a fracmfg_line PC. Not collective.
void line_pc_set_sweeps(PC pc, int sweeps);

/// What a fracmfg_line PC holds after set-up (for tests and views).
struct LinePcInfo {
  std::int64_t xm = 0, ym = 0;  ///< the rank's box (points along x and y)
  bool cyclic_x = false;        ///< x-lines are cyclic (periodic in x, whole line owned)
  bool cyclic_y = false;
  int sweeps = 8;
  long setups = 0;   ///< PCSetUp calls that read new coefficients
  long applies = 0;  ///< PCApply calls
};

/// The state of a fracmfg_line PC; throws Error for another type. Not collective.
LinePcInfo line_pc_info(PC pc);

}  // namespace fracmfg::la
