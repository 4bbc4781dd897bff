#pragma once
// The load-balance policy: given every rank's measured step time and work, decide when the
// split of work over ranks should change and what it changes to. Pure functions of their
// inputs: no communication and no PETSc objects (PetscInt is the type of the counts that
// DMDACreate1d/2d take). exec::Rebalancer (rebalancer.hpp) runs this policy on data gathered
// from a communicator; the data are moved by dmda_migration.hpp and array_migration.hpp.
//
//   exec::RebalancePolicy policy({}, exec::RebalanceLayout::contiguous());
//   const exec::RebalanceDecision& d = policy.observe(seconds, points);  // one entry per rank
//   if (d.resplit) { ...move the data to d.counts (d.lx, d.ly for a DMDA)... }
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
//     contiguous layout; exec::partition_grid(S, {px, py(, pz)}, {nx, ny(, nz)}, min_per_rank)
//     for a 2D or 3D DMDA, whose rank r gets lx[i] * ly[j] (* lz[k]) points,
//     r = i + px (j + py k));
//  6. hysteresis: with the model time T_r = c_r / S_r of a layout c, the predicted imbalance
//     of the current layout P_cur = I(n / S) and of the proposal P_new = I(c / S); the split
//     changes only when the proposal differs from the current split and
//     P_new <= P_cur - hysteresis (default 0.05). Otherwise the observation ends with reason
//     no_gain and the next one above threshold asks again;
//  7. cost: once a re-split's wall time C has been recorded (record_cost(), the last one's),
//     and when the caller says how many observations the run still expects (the horizon H,
//     observe()'s third argument), the split changes only when the predicted saving pays for
//     it: H (max_r T_r(current) - max_r T_r(proposal)) > C, the slowest rank's model time
//     being what the others wait for in every observation. Otherwise the reason is
//     not_worth. Without a recorded cost (the first re-split) or a horizon (a run of unknown
//     length) this step is skipped. The saving is that of the timed work only (the callers
//     time the part of a step outside the solves, which wait for the slowest rank and shrink
//     with it), so the rule errs toward keeping the split.
// A rank that owns nothing has no throughput; until every rank has one, a trigger ends
// with reason no_data. Time the step's work only, not a migration.
// The decision is a pure function of the sequence of (t, n) vectors, so every rank that
// feeds the same vectors takes the same decision.

#include <petscsystypes.h>

#include <cstdint>
#include <limits>
#include <vector>

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

/// What is split: contiguous per-rank blocks in rank order (a 1D DMDA, particle arrays),
/// the px x py process grid of a 2D DMDA (rank r = i + px j owns lx[i] x ly[j] points) or
/// the px x py x pz grid of a 3D one (rank r = i + px (j + py k) owns lx[i] ly[j] lz[k]).
struct RebalanceLayout {
  int dim = 1;      ///< 1: contiguous blocks; 2: 2D DMDA; 3: 3D DMDA
  int px = 1;       ///< 2D, 3D: process grid
  int py = 1;       ///< 2D, 3D: process grid
  PetscInt nx = 0;  ///< 2D, 3D: global grid points in x
  PetscInt ny = 0;  ///< 2D, 3D: global grid points in y
  int pz = 1;       ///< 3D: process grid
  PetscInt nz = 1;  ///< 3D: global grid points in z

  static RebalanceLayout contiguous() { return {}; }
  static RebalanceLayout grid_2d(int px, int py, PetscInt nx, PetscInt ny) {
    return {2, px, py, nx, ny, 1, 1};
  }
  static RebalanceLayout grid_3d(int px, int py, int pz, PetscInt nx, PetscInt ny, PetscInt nz) {
    return {3, px, py, nx, ny, pz, nz};
  }
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
  not_worth,     ///< the predicted saving over the horizon does not pay the re-split's cost
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
  /// evaluated: reasons no_gain, not_worth and resplit).
  double predicted_current = std::numeric_limits<double>::quiet_NaN();
  double predicted_new = std::numeric_limits<double>::quiet_NaN();
  /// Predicted seconds saved per observation by the proposal (max_r T_r of the current
  /// layout minus that of the proposal), the observations the run still expects (< 0:
  /// unknown) and the recorded cost of a re-split [s] (< 0: none yet); the saving is NaN
  /// unless a proposal was evaluated.
  double predicted_saving = std::numeric_limits<double>::quiet_NaN();
  double horizon = -1.0;
  double expected_cost = -1.0;
  std::vector<double> seconds;      ///< per rank, as observed [s]
  std::vector<PetscInt> points;     ///< per rank, as observed (the current layout)
  std::vector<double> throughputs;  ///< smoothed points/s per rank (0: no sample yet)
  /// The proposal (empty unless evaluated): points per rank; lx (contiguous: equal to
  /// counts), ly (2D, 3D) and lz (3D) as DMDACreate1d/2d/3d take them.
  std::vector<PetscInt> counts;
  std::vector<PetscInt> lx;
  std::vector<PetscInt> ly;
  std::vector<PetscInt> lz;
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
  /// number of ranks must not change between calls, and for a 2D (3D) layout sum points
  /// must be nx * ny (* nz). horizon: the observations the run still expects after this one (steps
  /// left / interval; an estimate is fine), < 0 when unknown (then a re-split's cost is not
  /// weighed). Throws Error otherwise (leaving the state unchanged). The reference stays
  /// valid until the next call.
  const RebalanceDecision& observe(const std::vector<double>& seconds,
                                   const std::vector<PetscInt>& points, double horizon = -1.0);

  /// The wall time [s] the last re-split took (finite, >= 0; the slowest rank's, including
  /// what it rebuilt): the cost that later proposals must pay for (step 7). Throws Error
  /// for a negative or non-finite value.
  void record_cost(double seconds);
  /// The recorded cost (< 0: none yet).
  double cost() const { return cost_; }

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
  double cost_ = -1.0;
  RebalanceDecision last_;
};

}  // namespace fracmfg::exec
