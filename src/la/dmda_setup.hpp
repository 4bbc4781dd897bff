#pragma once
// Private: DMSetUp of a distributed grid, with the one error a user causes by the job's size
// (more ranks than grid points along a direction) stated as such instead of PETSc's
// "More processes than data points!".

#include <petscdm.h>

#include <string>
#include <vector>

namespace fracmfg::la {

/// DMSetUp(da) for a grid of `points` per direction. When PETSc cannot give every rank a
/// point along each direction, throws core::CollectiveError (exit code 2, the same on every
/// rank) naming `what`, the grid, the ranks and what to change; else whatever
/// FRACMFG_PETSC_CHECK throws. Collective on da.
void set_up_dmda(DM da, const std::vector<PetscInt>& points, const std::string& what);

}  // namespace fracmfg::la
