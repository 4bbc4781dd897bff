#pragma once
// Owning handles for the PETSc objects of the mfg solvers (Mat, KSP, SNES, VecScatter);
// Vec and DM use exec::VecPtr / exec::DmPtr. Destruction ignores PETSc's error code: a
// destructor must not throw.
#include <petscdmda.h>
#include <petscksp.h>
#include <petscmat.h>
#include <petscsnes.h>
#include <petscvec.h>

#include <memory>
#include <type_traits>
#include <vector>

#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/rebalancer.hpp"
#include "fracmfg/la/petsc_handles.hpp"

namespace fracmfg::mfg::detail {

struct MatDestroyer {
  void operator()(Mat m) const noexcept { MatDestroy(&m); }
};
struct KspDestroyer {
  void operator()(KSP k) const noexcept { KSPDestroy(&k); }
};
struct SnesDestroyer {
  void operator()(SNES s) const noexcept { SNESDestroy(&s); }
};
struct ScatterDestroyer {
  void operator()(VecScatter s) const noexcept { VecScatterDestroy(&s); }
};

using MatPtr = std::unique_ptr<std::remove_pointer_t<Mat>, MatDestroyer>;
using KspPtr = std::unique_ptr<std::remove_pointer_t<KSP>, KspDestroyer>;
using SnesPtr = std::unique_ptr<std::remove_pointer_t<SNES>, SnesDestroyer>;
using ScatterPtr = std::unique_ptr<std::remove_pointer_t<VecScatter>, ScatterDestroyer>;
using exec::DmPtr;
using exec::VecPtr;

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

/// Scoped access to a Vec's local array (la/petsc_handles.hpp): read only, read-write.
using ReadArray = la::VecReadArray;
using WriteArray = la::VecArray;

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
