#pragma once
// The PETSc RAII handles under their la names: the family itself lives in
// core/petsc_handles.hpp (one family for every layer; exec uses it too, and exec sits below
// la). See there for the semantics.

#include "fracmfg/core/petsc_handles.hpp"

namespace fracmfg::la {

using core::Handle;
using core::swap;

using core::DmHandle;
using core::IsHandle;
using core::KspHandle;
using core::MatHandle;
using core::PcHandle;
using core::SnesHandle;
using core::VecHandle;
using core::VecScatterHandle;
using core::ViewerHandle;

using core::VecArray;
using core::VecArrayScope;
using core::VecReadArray;
using core::VecWriteArray;

}  // namespace fracmfg::la
