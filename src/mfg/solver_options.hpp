#pragma once
// The mfg solvers' own PETSc options, registered with PetscOptionsBegin so that `-help`
// lists them with their defaults, and the defaults they set on PETSc objects without
// writing into the global options database.
//
//   -mfg_hjb_direct <bool>   1D: the HJB Newton step written straight into the tridiagonal
//                            solver (mfg/direct_1d.hpp); false: PETSc's SNES/KSP objects
//                            (their monitors and views). Default true. Takes effect when the
//                            solver types are the defaults (newtonls, basic line search,
//                            preonly, fracmfg_tridiag); another type chosen by an option is
//                            PETSc's path.
//   -mfg_fp_direct <bool>    the same for the Fokker-Planck step (preonly, fracmfg_tridiag).
//   -mfg_fp_pc_lag <int>     2D and 3D, second-order diffusion (s = 2): the Fokker-Planck
//                            preconditioner is built at the time levels n with n % lag == 0
//                            of a sweep and reused for the levels up to the next (the matrix
//                            moves little over a few time steps). Default 4; 1 builds it at
//                            every level.
//   -mfg_auto_damping_margin <real>  iteration.method auto with grid sequencing: the finer
//                            levels' damping is this fraction of the largest stable damping
//                            of the linearised game's a_min extrapolated from the two
//                            coarsest levels (mfg::detail::sequenced_damping). Default 0.9;
//                            in (0, 2] (above 1 the stall test has to catch it).
//   -mfg_sweep_views <bool>  PETSc's -*_view and -*_converged_reason options are looked up
//                            at every solve of the sweeps; false switches those lookups off
//                            (PetscOptionsPushGetViewerOff), a measurable share of a small
//                            time step. Default: true when an option whose name contains
//                            "view" or "converged_reason" is given, else false.
#include <mpi.h>
#include <petscksp.h>

namespace fracmfg::mfg::detail {

/// -<prefix>direct (registered). Collective on comm.
bool direct_option(MPI_Comm comm, const char* prefix);

/// -mfg_fp_pc_lag (registered; >= 1). Collective on comm.
int fp_pc_lag_option(MPI_Comm comm);

/// -mfg_auto_damping_margin (registered; in (0, 2]). Collective on comm.
double auto_damping_margin_option(MPI_Comm comm);

/// -mfg_sweep_views (registered). Collective on comm.
bool sweep_views_option(MPI_Comm comm);

/// ILU(levels) blocks for a block-Jacobi preconditioner of ksp (the 2D default ILU(3): on
/// the crowd game fewer Krylov iterations per HJB solve than ILU(1)), unless the user gave
/// -<prefix>sub_pc_factor_levels. The blocks exist only after set-up: call after the
/// operators are set (and assembled), before the first solve; sets up ksp. A composite PC
/// whose first part is block Jacobi (fractional diffusion) gets the same for that part
/// (-<prefix>sub_0_sub_pc_factor_levels). Does nothing for another preconditioner, or when
/// *done is true; sets *done. Collective on ksp.
void default_sub_factor_levels(KSP ksp, PetscInt levels, bool* done);

/// The default ILU level of the blocks on a grid of dimension dim (default_sub_factor_levels):
/// 3 in 1D and 2D (the 5-point crowd game), 1 in 3D, where a 7-point row fills faster
/// (docs/performance.md, "3D games").
PetscInt default_factor_levels(int dim);

}  // namespace fracmfg::mfg::detail
