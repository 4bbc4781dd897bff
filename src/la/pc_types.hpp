#pragma once
// The creation routines of fracmfg's PC types, for la::register_petsc_types()
// (tridiag_pc.cpp), which registers them all in one place.
#include <petscpc.h>

namespace fracmfg::la::detail {

/// PCCreate_ routine of "fracmfg_line" (line_pc.cpp).
PetscErrorCode line_pc_create(PC pc);

}  // namespace fracmfg::la::detail
