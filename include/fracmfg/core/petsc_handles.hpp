#pragma once
// core::Handle: a move-only owner of one PETSc object (Vec, Mat, KSP, SNES, DM, IS, VecScatter,
// PC, PetscViewer), destroyed exactly once with its PETSc Destroy routine. The one
// PETSc RAII family of the project: every layer from exec up (exec::DmPtr / exec::VecPtr,
// the mfg and frac solvers) uses these instead of its own deleters or XxxDestroy calls.
// la/petsc_handles.hpp names the same types in namespace la.
//
//   core::VecHandle x;
//   FRACMFG_PETSC_CHECK(DMCreateGlobalVector(da, x.out()));   // x owns the new Vec
//   FRACMFG_PETSC_CHECK(VecSet(x, 1.0));                      // converts to Vec
//   la::KspHandle ksp = la::create_ksp(comm);                 // see tridiag_pc.hpp
//   Vec raw = x.release();                                    // caller owns raw now
//
// Semantics (like std::unique_ptr):
//  - a default or moved-from handle holds nothing (get() == nullptr);
//  - the destructor, reset() and out() destroy the held object if there is one (PETSc's
//    reference counting applies: Destroy drops one reference, the object dies with the
//    last one); destroying nothing calls nothing;
//  - a handle that outlives PetscFinalize() does not call PETSc (PETSc freed the object);
//  - reset() and out() throw PetscError when Destroy fails; the destructor cannot throw and
//    ignores a failing Destroy.
// Destroying a PETSc object is collective on its communicator when PETSc says so (VecDestroy
// of a parallel Vec, for example): let every rank's handles go out of scope together.
//
// A handle adopts the object of a std::unique_ptr with a Destroy deleter by move
// (DmHandle h(std::move(owner))) and hands its object back with release().

#include <petscdm.h>
#include <petscis.h>
#include <petscksp.h>
#include <petscmat.h>
#include <petscsnes.h>
#include <petscvec.h>
#include <petscviewer.h>

#include <memory>
#include <type_traits>
#include <utility>

#include "fracmfg/core/petsc_check.hpp"

namespace fracmfg::core {

/// Owner of one PETSc object of handle type T (a pointer type such as Vec), released with
/// Destroy (such as VecDestroy). Not thread-safe; move-only.
template <class T, PetscErrorCode (*Destroy)(T*)>
class Handle {
  static_assert(std::is_pointer_v<T>, "PETSc handle types are pointers");

 public:
  using handle_type = T;

  Handle() noexcept = default;
  /// Takes ownership of `object` (one reference; nullptr: holds nothing).
  explicit Handle(T object) noexcept : object_(object) {}
  /// Adopts the object of a std::unique_ptr whose deleter calls the same Destroy; `owner` is
  /// left empty.
  template <class Deleter>
  explicit Handle(std::unique_ptr<std::remove_pointer_t<T>, Deleter>&& owner) noexcept
      : object_(owner.release()) {}

  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  /// Destroys the held object (errors ignored) and takes other's.
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      destroy_quietly();
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  ~Handle() { destroy_quietly(); }

  /// The held object (nullptr if none); ownership stays here.
  T get() const noexcept { return object_; }
  /// Lets a handle be passed wherever PETSc expects T.
  operator T() const noexcept { return object_; }  // NOLINT(google-explicit-constructor)
  /// Gives up ownership without destroying; returns the object (nullptr if none).
  [[nodiscard]] T release() noexcept { return std::exchange(object_, nullptr); }
  /// Destroys the held object (if any; throws PetscError if Destroy fails) and takes
  /// ownership of `object`.
  void reset(T object = nullptr) {
    if (object_ != nullptr) {
      T old = std::exchange(object_, nullptr);
      FRACMFG_PETSC_CHECK(Destroy(&old));
    }
    object_ = object;
  }
  /// Destroys the held object (as reset()) and returns the address a PETSc creation routine
  /// writes the new object into: VecCreate(comm, v.out()).
  T* out() {
    reset();
    return &object_;
  }
  void swap(Handle& other) noexcept { std::swap(object_, other.object_); }

 private:
  void destroy_quietly() noexcept {
    if (object_ == nullptr) return;
    PetscBool finalized = PETSC_FALSE;
    if (PetscFinalized(&finalized) == 0 && !finalized) (void)Destroy(&object_);
    object_ = nullptr;
  }

  T object_ = nullptr;
};

template <class T, PetscErrorCode (*Destroy)(T*)>
void swap(Handle<T, Destroy>& a, Handle<T, Destroy>& b) noexcept {
  a.swap(b);
}

using VecHandle = Handle<Vec, VecDestroy>;
using MatHandle = Handle<Mat, MatDestroy>;
using KspHandle = Handle<KSP, KSPDestroy>;
using PcHandle = Handle<PC, PCDestroy>;
using SnesHandle = Handle<SNES, SNESDestroy>;
using DmHandle = Handle<DM, DMDestroy>;
using IsHandle = Handle<IS, ISDestroy>;
using VecScatterHandle = Handle<VecScatter, VecScatterDestroy>;
using ViewerHandle = Handle<PetscViewer, PetscViewerDestroy>;

/// Access to a Vec's local array for the lifetime of the object, given back (Restore) also
/// when the scope is left by an exception. Not collective; one access per Vec at a time.
///
///   core::VecReadArray r(x);       // VecGetArrayRead:  const values, r[i] or r.get()
///   core::VecArray a(y);           // VecGetArray:      read and write
///   core::VecWriteArray w(z);      // VecGetArrayWrite: write only (old values undefined)
template <class P, PetscErrorCode (*Get)(Vec, P*), PetscErrorCode (*Restore)(Vec, P*)>
class VecArrayScope {
 public:
  explicit VecArrayScope(Vec v) : v_(v) { FRACMFG_PETSC_CHECK(Get(v_, &a_)); }
  ~VecArrayScope() { (void)Restore(v_, &a_); }
  VecArrayScope(const VecArrayScope&) = delete;
  VecArrayScope& operator=(const VecArrayScope&) = delete;
  P get() const { return a_; }
  auto& operator[](PetscInt i) const { return a_[i]; }

 private:
  Vec v_;
  P a_ = nullptr;
};

using VecReadArray = VecArrayScope<const PetscScalar*, VecGetArrayRead, VecRestoreArrayRead>;
using VecArray = VecArrayScope<PetscScalar*, VecGetArray, VecRestoreArray>;
using VecWriteArray = VecArrayScope<PetscScalar*, VecGetArrayWrite, VecRestoreArrayWrite>;

}  // namespace fracmfg::core
