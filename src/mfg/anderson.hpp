#pragma once
// Type-II Anderson mixing of the mfg fixed point on the whole state x = (U, M) (Walker & Ni,
// SIAM J. Numer. Anal. 49 (2011), eq. (2.1)); the scheme and its weighting are described in
// mfg/solver.hpp. The members are the history a checkpoint stores and restores.
#include <mpi.h>
#include <petscdm.h>

#include <deque>
#include <memory>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "mfg/state.hpp"

namespace fracmfg::mfg::detail {

struct Anderson {
  MPI_Comm comm = MPI_COMM_NULL;
  core::Logger log;
  DM dm = nullptr;
  int levels = 0;
  // x_k before the plain iteration, f_{k-1} = g_{k-1} - x_{k-1}, g_{k-1}, and the
  // differences of the last `depth` iterations (oldest first).
  int depth = 0;
  bool have_prev = false;
  std::unique_ptr<State> x_before, f_prev, g_prev, f_cur;
  std::deque<State> d_f, d_g;
  std::vector<State> spare;

  /// depth 0: off (no state is allocated). Collective.
  void setup(MPI_Comm comm, core::Logger log, DM dm, int levels, int depth);
  /// A state from the spare ones or a new one. Collective when one is created.
  State take_state();
  /// Mixes x (holding g_k = the plain iteration's result; x_before holds x_k) with the
  /// history; false when the plain step is kept. `it` names the iteration in log lines.
  /// Collective.
  bool mix(State& x, int it);
  /// Forgets the differences (kept as spare states).
  void clear_history();
};

}  // namespace fracmfg::mfg::detail
