#pragma once
// Moving a DMDA's data to new ownership ranges without changing a value: a DMDA like an
// existing one with other ranges (create_dmda_like), the copy of a global vector between
// the two (migrate), and the layout the balance policy needs to know of a DMDA
// (dmda_layout). The ranges come from exec::RebalanceDecision (balance_policy.hpp) or
// exec::partition / partition_2d / partition_grid (partition.hpp).
//
//   exec::DmPtr next = exec::create_dmda_like(da, d.lx, d.ly);   // collective
//   exec::VecPtr u_next = exec::migrate(da, u, next.get());      // collective

#include <petscdm.h>
#include <petscvec.h>

#include <vector>

#include "fracmfg/core/petsc_handles.hpp"
#include "fracmfg/exec/balance_policy.hpp"

namespace fracmfg::exec {

/// The layout of a DMDA: contiguous for 1D, grid_2d for 2D, grid_3d for 3D; Error for a DM
/// that is not a DMDA. Not collective.
RebalanceLayout dmda_layout(DM da);

/// Owning handles (core/petsc_handles.hpp: DMDestroy / VecDestroy, safe after PetscFinalize).
using DmPtr = core::DmHandle;
using VecPtr = core::VecHandle;

/// A DMDA like old_da (communicator, global sizes, dof, stencil type and width, boundary
/// types, process grid, options prefix, field names, coordinates if set, moved exactly)
/// whose ownership ranges are lx (px entries, sum = global x size), for 2D and 3D ly (py
/// entries, sum = global y size) and for 3D lz (pz entries); ranges beyond the DMDA's
/// dimension are ignored. Collective on old_da's communicator. Throws Error for ranges that
/// do not fit; PetscError if PETSc refuses them (e.g. a range shorter than the stencil
/// width).
DmPtr create_dmda_like(DM old_da, const std::vector<PetscInt>& lx,
                       const std::vector<PetscInt>& ly = {}, const std::vector<PetscInt>& lz = {});

/// Copies the global vector old_vec of old_da into the global vector new_vec of new_da,
/// entry by entry in natural (grid) order, so every value arrives bit-identical. The DMDAs
/// must share communicator, dimension, global sizes, dof and process grid; their ownership
/// ranges may differ. One VecScatter built from both DMDAs' corners (no AO). Collective;
/// Error on every rank for mismatched DMDAs or vector sizes.
void migrate(DM old_da, Vec old_vec, DM new_da, Vec new_vec);
/// As above into a new global vector of new_da.
VecPtr migrate(DM old_da, Vec old_vec, DM new_da);

/// migrate() for many vectors of the same two DMDAs (every time level of a solver's state):
/// the scatter is built once, and apply() moves one vector with it. A state of L levels
/// moves as L vectors of the DMDA itself, without a companion DMDA of L components (whose
/// interleaved packing and scatter set-up cost more than the values moved).
///
///   const exec::DmdaMigration move(da, next.get());       // collective
///   for (...) move.apply(u_old[l], u_new[l]);             // collective
class DmdaMigration {
 public:
  /// Same conditions as migrate() (Error on every rank where they fail). Collective.
  DmdaMigration(DM old_da, DM new_da);
  /// new_vec = old_vec in natural order, bit-identical. Error on every rank when a local
  /// size does not match its DMDA. Collective.
  void apply(Vec old_vec, Vec new_vec) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  PetscInt old_local_ = 0, new_local_ = 0;
  core::VecScatterHandle scatter_;
};

}  // namespace fracmfg::exec
