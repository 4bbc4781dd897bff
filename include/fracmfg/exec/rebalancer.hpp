#pragma once
// Load rebalancing between outer iterations: decide when the split of work over ranks
// should change (RebalancePolicy, Rebalancer), propose the new split (ownership counts of a
// 1D DMDA or of particle blocks, lx/ly of a 2D DMDA) and move distributed data to it
// without changing a value (migrate, migrate_array).
//
//   exec::Rebalancer rb(comm, {}, log, exec::RebalanceLayout::of(da));
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
// Policy (RebalancePolicy::observe, one call per outer iteration with every rank's step
// time t_r in seconds and work n_r in owned points):
//  1. throughput: s_r = n_r / t_r (points/s) smoothed by an exponential moving average,
//       S_r <- (1 - a) S_r + a s_r,   a = RebalanceOptions::smoothing (default 0.5),
//     the first valid sample initialising S_r; a sample with n_r = 0 or t_r = 0 carries no
//     information and leaves S_r unchanged;
//  2. imbalance of the observation: I = max_r t_r / mean_r t_r - 1 (0 when all t_r = 0 or on
//     one rank);
//  3. cool-down: the `cooldown` observations (default 3) after a re-split never trigger and
//     do not count toward patience (the first steps on a new split may run at unsettled speed);
//  4. trigger: I > threshold (default 0.2, i.e. the slowest rank 20% slower than the mean)
//     for `patience` consecutive observations (default 2);
//  5. proposal: counts proportional to S (exec::partition(S, sum n_r, min_per_rank) for a
//     contiguous layout; exec::partition_2d(S, px, py, nx, ny, min_per_rank) for a 2D DMDA,
//     whose rank r gets lx[i] * ly[j] points, r = i + px j);
//  6. hysteresis: with the model time T_r = c_r / S_r of a layout c, the predicted imbalance
//     of the current layout P_cur = I(n / S) and of the proposal P_new = I(c / S); the split
//     changes only when the proposal differs from the current split and
//     P_new <= P_cur - hysteresis (default 0.05). Otherwise the observation ends with reason
//     no_gain and the next one above threshold asks again.
// A rank that owns nothing has no throughput; until every rank has one, a trigger ends
// with reason no_data. Time the step's work only, not a migration.
// The decision is a pure function of the sequence of (t, n) vectors, so every rank that
// feeds the same vectors takes the same decision.
//
// Rebalancer wraps the policy for a communicator: observe() gathers (t_r, n_r) from every
// rank (MPI_Allgather) and runs the policy on identical data on every rank, then checks
// that all ranks agree. On one rank it never re-splits.

#include <mpi.h>
#include <petscdm.h>
#include <petscvec.h>

#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_handles.hpp"

namespace fracmfg::exec {

/// Knobs of the policy (see the header comment for where each enters). Checked by the
/// RebalancePolicy constructor: an out-of-range value throws Error.
struct RebalanceOptions {
  /// Re-splitting on (off: observe() only measures; reason disabled).
  bool enabled = true;
  /// Imbalance max t / mean t - 1 above which an observation counts as imbalanced (>= 0).
  double threshold = 0.2;
  /// Consecutive imbalanced observations needed to trigger (>= 1).
  int patience = 2;
  /// Observations after a re-split that neither trigger nor count toward patience (>= 0).
  int cooldown = 3;
  /// Minimum predicted improvement of the imbalance for a re-split to happen (>= 0).
  double hysteresis = 0.05;
  /// Weight of the newest throughput sample in the moving average, in (0, 1].
  double smoothing = 0.5;
  /// Minimum points per rank in a proposal (>= 0); for a DMDA at least its stencil width.
  PetscInt min_per_rank = 1;
};

/// What is split: contiguous per-rank blocks in rank order (a 1D DMDA, particle arrays) or
/// the px x py process grid of a 2D DMDA (rank r = i + px j owns lx[i] x ly[j] points).
struct RebalanceLayout {
  int dim = 1;      ///< 1: contiguous blocks; 2: 2D DMDA
  int px = 1;       ///< 2D: process grid
  int py = 1;       ///< 2D: process grid
  PetscInt nx = 0;  ///< 2D: global grid points in x
  PetscInt ny = 0;  ///< 2D: global grid points in y

  static RebalanceLayout contiguous() { return {}; }
  static RebalanceLayout grid_2d(int px, int py, PetscInt nx, PetscInt ny) {
    return {2, px, py, nx, ny};
  }
  /// The layout of a DMDA: contiguous for 1D, grid_2d for 2D; Error for 3D. Not collective.
  static RebalanceLayout of(DM da);
};

/// Why an observation ended as it did.
enum class RebalanceReason : std::uint8_t {
  single_rank,   ///< one rank: nothing to balance
  disabled,      ///< RebalanceOptions::enabled is false
  cooling_down,  ///< within `cooldown` observations of the last re-split
  balanced,      ///< imbalance <= threshold
  waiting,       ///< above threshold for fewer than `patience` observations
  no_data,       ///< above threshold long enough, but some rank has no throughput yet
  no_gain,       ///< proposal equals the current split, would not improve the imbalance
                 ///< by `hysteresis`, or no split meets min_per_rank
  resplit,       ///< the split changes to the proposal
};
/// The enumerator's name, e.g. "no_gain".
const char* to_string(RebalanceReason reason);

/// The outcome of one observation (identical on every rank).
struct RebalanceDecision {
  bool resplit = false;
  RebalanceReason reason = RebalanceReason::balanced;
  std::int64_t observation = 0;  ///< 1-based index of the observation
  double imbalance = 0.0;        ///< measured: max t / mean t - 1
  /// Model imbalance of the current layout and of the proposal (NaN unless a proposal was
  /// evaluated: reasons no_gain and resplit).
  double predicted_current = std::numeric_limits<double>::quiet_NaN();
  double predicted_new = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> seconds;      ///< per rank, as observed [s]
  std::vector<PetscInt> points;     ///< per rank, as observed (the current layout)
  std::vector<double> throughputs;  ///< smoothed points/s per rank (0: no sample yet)
  /// The proposal (empty unless evaluated): points per rank; lx (contiguous: equal to
  /// counts) and ly (2D only) as DMDACreate1d/2d take them.
  std::vector<PetscInt> counts;
  std::vector<PetscInt> lx;
  std::vector<PetscInt> ly;
};

/// max t / mean t - 1 of per-rank times; 0 for fewer than two ranks or a zero mean.
double imbalance(const std::vector<double>& times);

/// The decision logic on per-rank vectors, without communication. Not thread-safe.
class RebalancePolicy {
 public:
  /// Throws Error for options out of range or an invalid layout.
  explicit RebalancePolicy(RebalanceOptions options = {}, RebalanceLayout layout = {});

  /// Changes what is split (for example after the process grid changed); keeps the
  /// throughputs and counters.
  void set_layout(const RebalanceLayout& layout);

  /// One observation: seconds[r] >= 0 (finite) and points[r] >= 0 for each rank r; the
  /// number of ranks must not change between calls, and for a 2D layout sum points must be
  /// nx * ny. Throws Error otherwise (leaving the state unchanged). The reference stays
  /// valid until the next call.
  const RebalanceDecision& observe(const std::vector<double>& seconds,
                                   const std::vector<PetscInt>& points);

  const RebalanceDecision& last() const { return last_; }
  const RebalanceOptions& options() const { return options_; }
  const RebalanceLayout& layout() const { return layout_; }
  /// Smoothed points/s per rank (0: no valid sample yet); empty before the first call.
  const std::vector<double>& throughputs() const { return throughput_; }
  std::int64_t observations() const { return observations_; }
  std::int64_t resplits() const { return resplits_; }
  /// Consecutive imbalanced observations counted so far.
  int streak() const { return streak_; }
  /// Observations of cool-down still ahead.
  int cooldown_left() const { return cooldown_left_; }
  /// Forgets all observations (throughputs, counters).
  void reset();

 private:
  void propose(RebalanceDecision& d) const;

  RebalanceOptions options_;
  RebalanceLayout layout_;
  std::vector<double> throughput_;
  std::int64_t observations_ = 0;
  std::int64_t resplits_ = 0;
  int streak_ = 0;
  int cooldown_left_ = 0;
  RebalanceDecision last_;
};

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
  /// re-split is logged at info, every observation at debug.
  const RebalanceDecision& observe(double my_seconds, PetscInt my_points);

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

// --- migration ---------------------------------------------------------------------------

/// Owning handles (core/petsc_handles.hpp: DMDestroy / VecDestroy, safe after PetscFinalize).
using DmPtr = core::DmHandle;
using VecPtr = core::VecHandle;

/// A DMDA like old_da (communicator, global sizes, dof, stencil type and width, boundary
/// types, process grid, options prefix, field names, coordinates if set, moved exactly)
/// whose ownership ranges are lx (px entries, sum = global x size) and, for 2D, ly (py
/// entries, sum = global y size; ignored for 1D). Collective on old_da's communicator.
/// Throws Error for a 3D DMDA or ranges that do not fit; PetscError if PETSc refuses them
/// (e.g. a range shorter than the stencil width).
DmPtr create_dmda_like(DM old_da, const std::vector<PetscInt>& lx,
                       const std::vector<PetscInt>& ly = {});

/// Copies the global vector old_vec of old_da into the global vector new_vec of new_da,
/// entry by entry in natural (grid) order, so every value arrives bit-identical. The DMDAs
/// must share communicator, dimension (1 or 2), global sizes and dof; their ownership
/// ranges may differ. One VecScatter built from both DMDAs' corners (no AO). Collective;
/// Error on every rank for mismatched DMDAs or vector sizes.
void migrate(DM old_da, Vec old_vec, DM new_da, Vec new_vec);
/// As above into a new global vector of new_da.
VecPtr migrate(DM old_da, Vec old_vec, DM new_da);

/// Moves a globally contiguous array of items, rank r holding the items from the sum of the
/// lower ranks' counts on (rank order), to the split new_counts (one entry per rank, same
/// total), keeping the order. send_items is this rank's old count; recv must hold
/// new_counts[rank] items of item_bytes bytes. MPI_Alltoallv, exact. Collective on comm;
/// Error on every rank when the totals differ or new_counts has the wrong size.
void migrate_bytes(MPI_Comm comm, const void* send, std::int64_t send_items, void* recv,
                   const std::vector<PetscInt>& new_counts, std::size_t item_bytes);

/// migrate_bytes for a vector of trivially copyable items (e.g. particle records).
template <class T>
std::vector<T> migrate_array(MPI_Comm comm, const std::vector<T>& mine,
                             const std::vector<PetscInt>& new_counts) {
  static_assert(std::is_trivially_copyable_v<T>, "migrate_array moves bytes");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const auto r = static_cast<std::size_t>(rank);
  const bool known = r < new_counts.size() && new_counts[r] > 0;
  std::vector<T> out(known ? static_cast<std::size_t>(new_counts[r]) : 0);
  migrate_bytes(comm, mine.data(), static_cast<std::int64_t>(mine.size()), out.data(), new_counts,
                sizeof(T));
  return out;
}

}  // namespace fracmfg::exec
