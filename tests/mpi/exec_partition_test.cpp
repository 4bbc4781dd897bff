// exec::partition against PETSc's DMDA: the even split equals PETSc's own, and weighted
// lx/ly are accepted by DMDACreate1d/2d and become the ownership ranges.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscdmda.h>

#include <vector>

#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/partition.hpp"

namespace fe = fracmfg::exec;

namespace {

// RAII for a DM.
class Dm {
 public:
  Dm() = default;
  Dm(const Dm&) = delete;
  Dm& operator=(const Dm&) = delete;
  ~Dm() {
    if (dm_ != nullptr) DMDestroy(&dm_);
  }
  DM* out() { return &dm_; }
  DM get() const { return dm_; }

 private:
  DM dm_ = nullptr;
};

std::vector<PetscInt> ownership_1d(DM da) {
  const PetscInt* lx = nullptr;
  PetscMPIInt size = 0;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(da, &lx, nullptr, nullptr));
  return std::vector<PetscInt>(lx, lx + size);
}

}  // namespace

TEST(mpi_exec_partition, EvenSplitEqualsPetscsOwnDecomposition) {
  PetscMPIInt size = 0;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  for (PetscInt n : {17, 64, 101}) {
    Dm da;
    FRACMFG_PETSC_CHECK(
        DMDACreate1d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, n, 1, 1, nullptr, da.out()));
    FRACMFG_PETSC_CHECK(DMSetUp(da.get()));
    const auto mine = fe::partition(std::vector<double>(static_cast<std::size_t>(size), 1.0), n);
    EXPECT_EQ(mine, ownership_1d(da.get())) << "n=" << n;
  }
}

TEST(mpi_exec_partition, WeightedCountsBecomeTheOwnershipRanges) {
  PetscMPIInt size = 0;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  std::vector<double> speed(static_cast<std::size_t>(size));
  for (PetscMPIInt r = 0; r < size; ++r) speed[static_cast<std::size_t>(r)] = 1.0 + 2.0 * r;
  const PetscInt n = 1000;
  const auto lx = fe::partition(speed, n, 2);
  Dm da;
  FRACMFG_PETSC_CHECK(
      DMDACreate1d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, n, 1, 1, lx.data(), da.out()));
  FRACMFG_PETSC_CHECK(DMSetUp(da.get()));
  EXPECT_EQ(ownership_1d(da.get()), lx);
  PetscInt xs = 0;
  PetscInt xm = 0;
  FRACMFG_PETSC_CHECK(DMDAGetCorners(da.get(), &xs, nullptr, nullptr, &xm, nullptr, nullptr));
  PetscMPIInt rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  EXPECT_EQ(xm, lx[static_cast<std::size_t>(rank)]);
}

TEST(mpi_exec_partition, TwoDimensionalSplitFitsDmdaCreate2d) {
  PetscMPIInt size = 0;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  const int px = size;  // a px x 1 process grid works at any rank count
  const int py = 1;
  std::vector<double> speed(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) speed[static_cast<std::size_t>(r)] = r == 0 ? 0.5 : 1.0;
  const PetscInt nx = 60;
  const PetscInt ny = 20;
  const fe::Partition2d p = fe::partition_2d(speed, px, py, nx, ny);
  Dm da;
  FRACMFG_PETSC_CHECK(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE,
                                   DMDA_STENCIL_STAR, nx, ny, px, py, 1, 1, p.lx.data(),
                                   p.ly.data(), da.out()));
  FRACMFG_PETSC_CHECK(DMSetUp(da.get()));
  const PetscInt* lx = nullptr;
  const PetscInt* ly = nullptr;
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(da.get(), &lx, &ly, nullptr));
  EXPECT_EQ(std::vector<PetscInt>(lx, lx + px), p.lx);
  EXPECT_EQ(std::vector<PetscInt>(ly, ly + py), p.ly);
  if (size > 1) {
    EXPECT_LT(p.lx[0], p.lx[1]);  // the slow rank owns less
  }
}
