# Finds fracmfg's dependencies, all from Debian's packages, the standard way.
find_package(MPI REQUIRED COMPONENTS C CXX)
find_package(PETSc REQUIRED)        # cmake/FindPETSc.cmake (pkg-config), target PETSc::PETSc
find_package(Kokkos REQUIRED)
# Debian's Trilinos export points Kokkos::kokkos at <prefix>/include, which holds no
# Kokkos headers; the real directory is Kokkos_INCLUDE_DIRS.
get_filename_component(_fracmfg_kokkos_inc "${Kokkos_INCLUDE_DIRS}" REALPATH)
set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_fracmfg_kokkos_inc}")

set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "fracmfg needs a parallel HDF5 (Debian: libhdf5-openmpi-dev); found a serial one")
endif()
find_package(yaml-cpp REQUIRED)
find_package(FFTW3 REQUIRED)        # cmake/FindFFTW3.cmake, target FFTW3::fftw3
find_package(muparser REQUIRED)
find_package(CLI11 REQUIRED)
find_path(RANDOM123_INCLUDE_DIR Random123/philox.h REQUIRED)
find_package(LAPACK REQUIRED)
