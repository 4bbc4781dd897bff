#pragma once
// The mfg solvers' names for the project's PETSc handles (core/petsc_handles.hpp) and small
// helpers that create Vecs of a DMDA.
#include <petscdmda.h>
#include <petscksp.h>
#include <petscmat.h>
#include <petscsnes.h>
#include <petscvec.h>

#include <vector>

#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/petsc_handles.hpp"

namespace fracmfg::mfg::detail {

using MatPtr = core::MatHandle;
using KspPtr = core::KspHandle;
using SnesPtr = core::SnesHandle;
using ScatterPtr = core::VecScatterHandle;
using DmPtr = core::DmHandle;
using VecPtr = core::VecHandle;

/// A new global vector of da.
inline VecPtr global_vec(DM da) {
  Vec v = nullptr;
  FRACMFG_PETSC_CHECK(DMCreateGlobalVector(da, &v));
  return VecPtr(v);
}
/// A new local (ghosted) vector of da.
inline VecPtr local_vec(DM da) {
  Vec v = nullptr;
  FRACMFG_PETSC_CHECK(DMCreateLocalVector(da, &v));
  return VecPtr(v);
}
/// A copy of v (same layout and values).
inline VecPtr copy_vec(Vec v) {
  Vec w = nullptr;
  FRACMFG_PETSC_CHECK(VecDuplicate(v, &w));
  FRACMFG_PETSC_CHECK(VecCopy(v, w));
  return VecPtr(w);
}

/// Scoped access to a Vec's local array (core/petsc_handles.hpp): read only, read-write.
using ReadArray = core::VecReadArray;
using WriteArray = core::VecArray;

/// Global Vecs of a DMDA replicated on every rank in natural order (x fastest): the
/// natural vector and the scatter to all ranks are made once. Collective.
class Replicator {
 public:
  explicit Replicator(DM da) : da_(da) {
    Vec natural = nullptr, all = nullptr;
    VecScatter to_all = nullptr;
    FRACMFG_PETSC_CHECK(DMDACreateNaturalVector(da, &natural));
    natural_.reset(natural);
    FRACMFG_PETSC_CHECK(VecScatterCreateToAll(natural, &to_all, &all));
    to_all_.reset(to_all);
    all_.reset(all);
  }
  /// v on every rank, in the Vec returned (owned by the replicator, valid until the next
  /// call). Collective.
  Vec gather(Vec v) {
    FRACMFG_PETSC_CHECK(DMDAGlobalToNaturalBegin(da_, v, INSERT_VALUES, natural_.get()));
    FRACMFG_PETSC_CHECK(DMDAGlobalToNaturalEnd(da_, v, INSERT_VALUES, natural_.get()));
    FRACMFG_PETSC_CHECK(
        VecScatterBegin(to_all_.get(), natural_.get(), all_.get(), INSERT_VALUES, SCATTER_FORWARD));
    FRACMFG_PETSC_CHECK(
        VecScatterEnd(to_all_.get(), natural_.get(), all_.get(), INSERT_VALUES, SCATTER_FORWARD));
    return all_.get();
  }
  /// v on every rank, copied into out (resized to the global size). Collective.
  void gather(Vec v, std::vector<double>& out) {
    Vec all = gather(v);
    PetscInt n = 0;
    FRACMFG_PETSC_CHECK(VecGetSize(all, &n));
    ReadArray a(all);
    out.assign(a.get(), a.get() + n);
  }

 private:
  DM da_;
  VecPtr natural_, all_;
  ScatterPtr to_all_;
};

}  // namespace fracmfg::mfg::detail
