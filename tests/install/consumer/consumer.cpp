// Uses an installed fracmfg: environment start-up, logging and a distributed PETSc vector
// whose entry on rank r is r + 1, so the sum is size (size + 1) / 2.
#include <petscvec.h>

#include <cstdio>
#include <fracmfg/config.hpp>
#include <fracmfg/core/environment.hpp>
#include <fracmfg/core/petsc_check.hpp>

int main(int argc, char** argv) {
  fracmfg::core::Environment env(&argc, &argv);
  env.log().info("consumer started");
  Vec v = nullptr;
  FRACMFG_PETSC_CHECK(VecCreateMPI(env.comm(), 1, PETSC_DETERMINE, &v));
  FRACMFG_PETSC_CHECK(VecSet(v, static_cast<PetscScalar>(env.rank() + 1)));
  PetscScalar sum = 0;
  FRACMFG_PETSC_CHECK(VecSum(v, &sum));
  FRACMFG_PETSC_CHECK(VecDestroy(&v));
  if (env.rank() == 0) {
    std::printf("consumer: %d ranks, sum %g, fracmfg %s\n", env.size(), static_cast<double>(sum),
                FRACMFG_VERSION_STRING);
  }
  return 0;
}
