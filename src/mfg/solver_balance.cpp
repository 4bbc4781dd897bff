#include <mpi.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/dmda_migration.hpp"
#include "fracmfg/mfg/grid.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/petsc_handles.hpp"
#include "mfg/solver_impl.hpp"

// The load balance of the mfg grid (Solver::set_balance, the deck's execution.balance): the
// observation after every `interval` outer iterations and the re-split with its migration of
// the whole state. The policy is exec::RebalancePolicy's (exec/balance_policy.hpp).

namespace fracmfg::mfg {

using detail::fmt;

namespace {

// Outer iterations per observation when BalanceOptions::interval is 0.
constexpr int kDefaultBalanceInterval = 1;

// Moves every level of a State to the DMDA of `move` (same grid, other ownership ranges):
// one scatter per level, built once. Bit-identical values. Collective.
detail::State migrate_state(const exec::DmdaMigration& move, DM to, const detail::State& s) {
  const auto levels = s.u.size();
  detail::State out = detail::make_state(to, static_cast<int>(levels));
  for (std::size_t l = 0; l < levels; ++l) {
    move.apply(s.u[l].get(), out.u[l].get());
    move.apply(s.m[l].get(), out.m[l].get());
  }
  return out;
}

}  // namespace

void Solver::Impl::build_operators() {
  hjb = std::make_unique<HjbSolver>(*model, selector);
  coupling = std::make_unique<Coupling>(*model, selector);
  forward = detail::make_forward_method(*model, selector, log);
  DM dm = model->dm();
  ut = detail::global_vec(dm);
  ut_next = detail::global_vec(dm);
  rhs = detail::global_vec(dm);
  mt = detail::global_vec(dm);
  mt_next = detail::global_vec(dm);
  shift = detail::global_vec(dm);
  replicator.reset();
}

void Solver::set_balance(const core::BalanceOptions& options) {
  Impl& d = *impl_;
  if (options.interval < 0) throw Error("mfg: balance interval must be >= 0 (0: 1 iteration)");
  d.balance_options = options;
  d.rebalancer.reset();
  d.model->set_work_accounting(false);
  if (!options.enabled) return;
  exec::RebalanceOptions ro;
  ro.threshold = options.threshold;
  ro.patience = options.patience;
  ro.min_per_rank = 2;  // the stencil width (1) and the walls' mirrored ghosts
  d.rebalancer =
      std::make_unique<exec::Rebalancer>(d.comm, ro, d.log, exec::dmda_layout(d.model->dm()));
  d.model->set_work_accounting(true);
  d.window_start = exec::sched_sample();
  d.window_work = d.model->work_seconds();
}

int Solver::resplits() const {
  return impl_->resplits;
}

void Solver::Impl::balance(int it) {
  if (!rebalancer) return;
  const int interval = balance_options.interval_or(kDefaultBalanceInterval);
  // No observation after the last iteration: nothing would run on a new split.
  if (converged || it >= problem().iteration.max_iterations || it % interval != 0) return;
  const PetscInt points = model->box().count();
  const exec::SchedSample now = exec::sched_sample();
  const double share = exec::cpu_share(window_start, now);
  const double work = model->work_seconds() - window_work;
  // The rank's own grid work, as wall time at the share of a CPU it got: ranks taking turns
  // on one core show as slower (exec/cpu_share.hpp).
  double seconds = work / share;
  if (balance_options.speed) {
    const double speed = balance_options.speed(rebalancer->rank(), it);
    seconds = static_cast<double>(points) * static_cast<double>(interval) / speed;
  }
  log.debug("mfg: grid work ", work, " s CPU at a CPU share of ", share, " -> ", seconds, " s");
  // The observations still to come, from the convergence rate so far (the history is the
  // same on every rank); unknown while the changes do not contract yet.
  const int left = iterations_left();
  const double horizon = left < 0 ? -1.0 : static_cast<double>(left) / interval;
  const exec::RebalanceDecision& dec = rebalancer->observe(seconds, points, horizon);
  if (dec.resplit) {
    const double t0 = MPI_Wtime();
    resplit(dec.lx, dec.ly, dec.lz);
    const double cost = MPI_Wtime() - t0;
    rebalancer->record_cost(cost);
    std::ostringstream os;
    os << "mfg: grid re-split after iteration " << it << " (" << fmt(cost)
       << " s), points per rank in x:";
    const Grid& g = model->grid();
    for (PetscInt c : dec.lx) os << ' ' << c;
    if (g.dim >= 2) {
      os << "; in y:";
      for (PetscInt c : dec.ly) os << ' ' << c;
    }
    if (g.dim == 3) {
      os << "; in z:";
      for (PetscInt c : dec.lz) os << ' ' << c;
    }
    log.info(os.str());
  }
  window_start = exec::sched_sample();
  window_work = model->work_seconds();
}

void Solver::Impl::resplit(const std::vector<PetscInt>& lx, const std::vector<PetscInt>& ly,
                           const std::vector<PetscInt>& lz) {
  const double t0 = MPI_Wtime();
  auto next = std::make_unique<Model>(comm, problem(), lx, ly, lz);
  next->set_work_accounting(true);  // only the balance re-splits
  DM from = model->dm();
  DM to = next->dm();
  const double t1 = MPI_Wtime();
  const exec::DmdaMigration move(from, to);
  detail::State moved = migrate_state(move, to, x);
  // Anderson: the history (f_prev, g_prev and the differences) moves; x_before and f_cur
  // are rewritten by every iteration, spare states are dropped.
  if (anderson.depth > 0) {
    detail::Anderson& a = anderson;
    auto carry = [&](std::unique_ptr<detail::State>& s) {
      s = std::make_unique<detail::State>(migrate_state(move, to, *s));
    };
    carry(a.f_prev);
    carry(a.g_prev);
    for (detail::State& s : a.d_f) s = migrate_state(move, to, s);
    for (detail::State& s : a.d_g) s = migrate_state(move, to, s);
    a.x_before = std::make_unique<detail::State>(detail::make_state(to, a.levels));
    a.f_cur = std::make_unique<detail::State>(detail::make_state(to, a.levels));
    a.spare.clear();
    a.dm = to;
  }
  // The operators hold the old model: release them before it. Newton's and the two-grid
  // work spaces are built again on the new grid (Newton's cached evaluation is dropped: the
  // next iteration evaluates).
  two_grid.reset();
  newton.reset();
  hjb.reset();
  coupling.reset();
  forward.reset();
  replicator.reset();
  x = std::move(moved);
  const double t2 = MPI_Wtime();
  model = std::move(next);
  build_operators();
  using Method = io::MfgConfig::Iteration::Method;
  if (problem().iteration.method == Method::newton) build_newton();
  if (problem().iteration.method == Method::two_grid) build_two_grid();
  log.debug("mfg: re-split on rank 0: model ", fmt(t1 - t0), " s, state moved ", fmt(t2 - t1),
            " s, operators ", fmt(MPI_Wtime() - t2), " s");
  ++resplits;
  rebalancer->set_layout(exec::dmda_layout(model->dm()));
}

}  // namespace fracmfg::mfg
