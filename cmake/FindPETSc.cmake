# FindPETSc: PETSc through its pkg-config module (Debian: libpetsc-real-dev).
# Provides the imported target PETSc::PETSc and PETSc_VERSION.
# Debian's PETSc.pc lacks the MPI include path, so the target also links MPI (C, or C++ in a C++-only project).
find_package(PkgConfig REQUIRED)
if(NOT TARGET MPI::MPI_C AND NOT TARGET MPI::MPI_CXX)
  get_property(_petsc_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("C" IN_LIST _petsc_langs)
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI REQUIRED COMPONENTS CXX)
  endif()
endif()
if(TARGET MPI::MPI_C)
  set(_petsc_mpi MPI::MPI_C)
else()
  set(_petsc_mpi MPI::MPI_CXX)
endif()
pkg_check_modules(PC_PETSC QUIET PETSc)
if(PC_PETSC_FOUND)
  set(PETSc_VERSION "${PC_PETSC_VERSION}")
  find_path(PETSc_INCLUDE_DIR petsc.h HINTS ${PC_PETSC_INCLUDE_DIRS})
  find_library(PETSc_LIBRARY NAMES ${PC_PETSC_LIBRARIES} HINTS ${PC_PETSC_LIBRARY_DIRS})
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PETSc REQUIRED_VARS PETSc_LIBRARY PETSc_INCLUDE_DIR
                                  VERSION_VAR PETSc_VERSION)
if(PETSc_FOUND AND NOT TARGET PETSc::PETSc)
  add_library(PETSc::PETSc UNKNOWN IMPORTED)
  set_target_properties(PETSc::PETSc PROPERTIES
    IMPORTED_LOCATION "${PETSc_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${PC_PETSC_INCLUDE_DIRS};${PETSc_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES ${_petsc_mpi})
endif()
mark_as_advanced(PETSc_INCLUDE_DIR PETSc_LIBRARY)
