// GoogleTest main without MPI, for the kernel-only build (cmake/kernels_only): Kokkos is
// initialised around the whole run, as core::Environment does in the full build.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
