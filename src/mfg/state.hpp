#pragma once
// The state of the mfg fixed point: every time level of U and M as global Vecs of the
// model's DMDA, and the level-by-level operations on it that the solver and Anderson mixing
// share.
#include <petscdm.h>

#include <cstddef>
#include <vector>

#include "fracmfg/core/petsc_check.hpp"
#include "mfg/petsc_handles.hpp"

namespace fracmfg::mfg::detail {

/// All time levels of U and M.
struct State {
  std::vector<VecPtr> u, m;
};

/// `levels` new (unset) levels of U and M on dm. Collective.
inline State make_state(DM dm, int levels) {
  State s;
  for (int n = 0; n < levels; ++n) {
    s.u.push_back(global_vec(dm));
    s.m.push_back(global_vec(dm));
  }
  return s;
}

/// to <- from, level by level. Not collective.
inline void copy_state(const State& from, State& to) {
  for (std::size_t n = 0; n < from.u.size(); ++n) {
    FRACMFG_PETSC_CHECK(VecCopy(from.u[n].get(), to.u[n].get()));
    FRACMFG_PETSC_CHECK(VecCopy(from.m[n].get(), to.m[n].get()));
  }
}

/// to <- from, level by level, for one field (U or M). Not collective.
inline void copy_levels(const std::vector<VecPtr>& from, std::vector<VecPtr>& to) {
  for (std::size_t n = 0; n < from.size(); ++n) {
    FRACMFG_PETSC_CHECK(VecCopy(from[n].get(), to[n].get()));
  }
}

/// out = a - b, level by level. Not collective.
inline void difference(const State& a, const State& b, State& out) {
  for (std::size_t n = 0; n < a.u.size(); ++n) {
    FRACMFG_PETSC_CHECK(VecWAXPY(out.u[n].get(), -1.0, b.u[n].get(), a.u[n].get()));
    FRACMFG_PETSC_CHECK(VecWAXPY(out.m[n].get(), -1.0, b.m[n].get(), a.m[n].get()));
  }
}

}  // namespace fracmfg::mfg::detail
