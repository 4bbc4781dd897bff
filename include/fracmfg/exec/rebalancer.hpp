#pragma once
// Load rebalancing between outer iterations over a communicator: Rebalancer gathers every
// rank's step time and work and runs the balance policy (balance_policy.hpp: when the split
// changes and what to) on identical data on every rank; the data then move without changing
// a value (dmda_migration.hpp: create_dmda_like, migrate; array_migration.hpp:
// migrate_array). This header includes all three, so one include serves a solver.
//
//   exec::Rebalancer rb(comm, {}, log, exec::dmda_layout(da));
//   for (outer iterations) {
//     const double t0 = MPI_Wtime();  ...the step's work on the xm*ym owned points...
//     const exec::RebalanceDecision& d = rb.observe(MPI_Wtime() - t0, xm * ym);  // collective
//     if (d.resplit) {
//       exec::DmPtr next = exec::create_dmda_like(da, d.lx, d.ly);                // collective
//       exec::VecPtr u_next = exec::migrate(da, u, next.get());                   // collective
//       ...swap da/u for next/u_next...
//     }
//   }
//
// observe() gathers (t_r, n_r) from every rank (MPI_Allgather), runs the policy and checks
// that all ranks reached the same decision. On one rank it never re-splits.

#include <mpi.h>
#include <petscsystypes.h>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/array_migration.hpp"
#include "fracmfg/exec/balance_policy.hpp"
#include "fracmfg/exec/dmda_migration.hpp"

namespace fracmfg::exec {

/// RebalancePolicy over a communicator. comm must outlive the object.
class Rebalancer {
 public:
  /// Not collective. Throws Error as RebalancePolicy does. Pass the environment's logger
  /// (env.log()): a default Logger takes every rank for rank 0.
  Rebalancer(MPI_Comm comm, RebalanceOptions options = {}, core::Logger log = {},
             RebalanceLayout layout = {});

  /// Collective on comm: every rank passes its own step time [s] and owned points (grid
  /// points, not grid points x dof; particles for a particle array). All ranks return the
  /// same decision; invalid values on any rank throw the same Error on every rank. A
  /// re-split is logged at info, every observation at debug. horizon: the observations the
  /// run still expects (RebalancePolicy::observe), the same on every rank; < 0: unknown.
  const RebalanceDecision& observe(double my_seconds, PetscInt my_points, double horizon = -1.0);

  /// Collective on comm: every rank passes the wall time its part of the last re-split took;
  /// the slowest rank's becomes the cost later re-splits must pay for
  /// (RebalancePolicy::record_cost).
  void record_cost(double my_seconds);

  /// Not collective.
  void set_layout(const RebalanceLayout& layout) { policy_.set_layout(layout); }
  const RebalanceDecision& last() const { return policy_.last(); }
  const RebalancePolicy& policy() const { return policy_; }
  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  core::Logger log_;
  RebalancePolicy policy_;
};

}  // namespace fracmfg::exec
