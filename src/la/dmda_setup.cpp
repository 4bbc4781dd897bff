#include "la/dmda_setup.hpp"

#include <petscdmda.h>

#include <string>

#include "core/text.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"

namespace fracmfg::la {

void set_up_dmda(DM da, const std::vector<PetscInt>& points, const std::string& what) {
  try {
    FRACMFG_PETSC_CHECK(DMSetUp(da));
  } catch (const PetscError& e) {
    // PETSc's words for it: 1D "More processes than data points", 2D and 3D "Partition in
    // y direction is too fine".
    const std::string text = e.what();
    if (e.code() != PETSC_ERR_ARG_OUTOFRANGE ||
        (text.find("More processes than data points") == std::string::npos &&
         text.find("direction is too fine") == std::string::npos)) {
      throw;
    }
    MPI_Comm comm = MPI_COMM_NULL;
    FRACMFG_PETSC_CHECK(PetscObjectGetComm(reinterpret_cast<PetscObject>(da), &comm));
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    PetscInt fewest = 0;
    for (const PetscInt n : points) {
      if (fewest == 0 || n < fewest) fewest = n;
    }
    // Raised alike on every rank (it follows from the sizes alone): reported once.
    throw core::CollectiveError(
        what + ": the grid of " + detail::format_extents(points) + " points cannot be split over " +
            std::to_string(ranks) +
            " ranks (each rank needs at least one point along each direction" +
            (points.size() == 1 ? ", so at most " + std::to_string(fewest) + " ranks" : "") +
            "): run on fewer ranks, or use a finer grid",
        ExitCode::usage, 0);
  }
}

}  // namespace fracmfg::la
