#include "fracmfg/frac/fpde_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "frac/fpde_stepper.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/progress.hpp"
#include "fracmfg/exec/cpu_share.hpp"
#include "fracmfg/exec/dmda_migration.hpp"
#include "fracmfg/exec/rebalancer.hpp"
#include "fracmfg/io/checkpoint.hpp"
#include "fracmfg/la/petsc_handles.hpp"

namespace fracmfg::frac {

namespace {

using Type = FpdeProblem::Type;

// Time steps per load-balance observation when FpdeBalanceOptions::interval is 0.
constexpr int kDefaultBalanceInterval = 10;

using ReadArray = la::VecReadArray;
using WriteArray = la::VecArray;

}  // namespace

struct FpdeSolver::Impl {
  MPI_Comm comm;
  FpdeProblem problem;
  FpdeSolverOptions options;
  FpdeGrid grid;
  FpdeTimeMesh mesh;
  std::int64_t n = 0;
  FpdeStatistics stats;
  la::VecHandle u;
  std::unique_ptr<FpdeStepper> stepper;
  /// The load balance (options.balance.enabled; nullptr otherwise).
  std::unique_ptr<exec::Rebalancer> rebalancer;
  /// This rank's step work since the last observation: wall time and CPU time [s], and the
  /// scheduler's totals at its start.
  double window_seconds = 0.0;
  double window_cpu_seconds = 0.0;
  exec::SchedSample window_start = exec::sched_sample();

  /// The last step of the solve() in progress (-1: none; the lines count to the end).
  std::int64_t target = -1;
  /// Progress lines (options.progress_interval; <= 0: every step at info level).
  core::Progress progress_lines{options.log, std::max(options.progress_interval, 0.0)};

  Impl(MPI_Comm c, const FpdeProblem& p, FpdeSolverOptions opts)
      : comm(c),
        problem(p),
        options(std::move(opts)),
        grid(c, problem.domain, problem.grid),
        mesh(problem.time.horizon, problem.time.steps, problem.time.grading) {
    if (problem.source && problem.nonlinear_source) {
      throw Error("fpde: the problem has both a source and a nonlinear_source; set one");
    }
    if (problem.nonlinear_source_derivative && !problem.nonlinear_source) {
      throw Error("fpde: the problem has a nonlinear_source_derivative but no nonlinear_source");
    }
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(grid.dm(), u.out()));
    {
      WriteArray w(u);
      grid.evaluate(problem.initial, 0.0, w.get());
    }
    make_stepper();
    const FpdeBalanceOptions& b = options.balance;
    if (b.enabled) {
      if (b.interval < 0) throw Error("fpde: balance interval must be >= 0 (0: 10 steps)");
      exec::RebalanceOptions ro;
      ro.threshold = b.threshold;
      ro.patience = b.patience;
      ro.min_per_rank = 2;  // the stencil width (1) and the boundary closures
      rebalancer =
          std::make_unique<exec::Rebalancer>(comm, ro, options.log, exec::dmda_layout(grid.dm()));
    }
  }

  void make_stepper() {
    const FpdeStepContext context{comm, problem, options, grid, mesh, u, stats};
    // The one place a scheme is chosen; a new one adds a case (fpde_stepper.hpp).
    switch (problem.type) {
      case Type::time_fractional: stepper = make_time_fractional_stepper(context); break;
      case Type::space_fractional: stepper = make_space_fractional_stepper(context); break;
    }
  }

  /// Every options.balance.interval steps: the ranks' step work over those steps into the
  /// balance policy, and a re-split when it asks for one. Collective.
  void balance() {
    const int interval = options.balance.interval_or(kDefaultBalanceInterval);
    if (!rebalancer || n % interval != 0 || n >= mesh.steps()) return;
    const auto points = static_cast<PetscInt>(grid.local_size());
    const exec::SchedSample now = exec::sched_sample();
    const double share = exec::cpu_share(window_start, now);
    double seconds = stepper->times_solve_cpu() ? window_cpu_seconds / share : window_seconds;
    if (options.balance.speed) {
      const double speed = options.balance.speed(rebalancer->rank(), n);
      seconds = static_cast<double>(points) * static_cast<double>(interval) / speed;
    }
    options.log.debug("fpde: step work ", window_seconds, " s wall, ", window_cpu_seconds,
                      " s CPU at a CPU share of ", share, " -> ", seconds, " s");
    window_seconds = 0.0;
    window_cpu_seconds = 0.0;
    window_start = now;
    // The observations still to come: the steps left over the interval.
    const double horizon = static_cast<double>(mesh.steps() - n) / interval;
    const exec::RebalanceDecision& d = rebalancer->observe(seconds, points, horizon);
    if (d.resplit) rebalancer->record_cost(resplit(d.lx, d.ly));
  }

  /// Moves u and the scheme's state to a grid with the ownership ranges lx (ly) and builds
  /// the scheme again on it; returns this rank's wall time for it (seconds). Collective.
  double resplit(const std::vector<PetscInt>& lx, const std::vector<PetscInt>& ly) {
    const auto t0 = Clock::now();
    FpdeStepperState state = stepper->export_state(FpdeStepperState::Layout::vector_major);
    const double t_export = seconds_since(t0);
    FpdeGrid next(grid, lx, ly);
    // One scatter of the grid, built once, moves u and every state vector (the history's
    // modes or levels) from their own arrays: no companion DMDA of dof components, no copies.
    const exec::DmdaMigration move(grid.dm(), next.dm());
    la::VecHandle u_next;
    FRACMFG_PETSC_CHECK(DMCreateGlobalVector(next.dm(), u_next.out()));
    move.apply(u, u_next);
    if (state.dof > 0) {
      const std::size_t from_points = grid.local_size();
      const std::size_t to_points = next.local_size();
      std::vector<double> moved(state.dof * to_points);
      la::VecHandle from_vec;
      la::VecHandle to_vec;
      FRACMFG_PETSC_CHECK(VecCreateMPIWithArray(comm, 1, static_cast<PetscInt>(from_points),
                                                PETSC_DETERMINE, nullptr, from_vec.out()));
      FRACMFG_PETSC_CHECK(VecCreateMPIWithArray(comm, 1, static_cast<PetscInt>(to_points),
                                                PETSC_DETERMINE, nullptr, to_vec.out()));
      for (std::size_t k = 0; k < state.dof; ++k) {
        FRACMFG_PETSC_CHECK(VecPlaceArray(from_vec, state.values.data() + k * from_points));
        FRACMFG_PETSC_CHECK(VecPlaceArray(to_vec, moved.data() + k * to_points));
        move.apply(from_vec, to_vec);
        FRACMFG_PETSC_CHECK(VecResetArray(from_vec));
        FRACMFG_PETSC_CHECK(VecResetArray(to_vec));
      }
      state.values = std::move(moved);
    }
    const double t_moved = seconds_since(t0);
    stepper.reset();  // it refers to the grid and u replaced here
    grid = std::move(next);
    u = std::move(u_next);
    make_stepper();
    const double t_built = seconds_since(t0);
    stepper->import_state(state);
    options.log.debug("fpde: re-split on rank 0: state exported ", t_export,
                      " s, grid and state moved ", t_moved - t_export, " s, scheme built ",
                      t_built - t_moved, " s, state imported ", seconds_since(t0) - t_built, " s");
    const double elapsed = seconds_since(t0);
    ++stats.resplits;
    stats.resplit_seconds += elapsed;
    const std::vector<PetscInt> counts = grid.ownership(0);
    std::ostringstream os;
    os << "fpde: grid re-split at step " << n << ", points per rank in x:";
    for (PetscInt c : counts) os << ' ' << c;
    if (grid.dimension() == 2) {
      os << "; in y:";
      for (PetscInt c : grid.ownership(1)) os << ' ' << c;
    }
    options.log.info(os.str());
    return elapsed;
  }

  void advance() {
    if (n >= mesh.steps()) throw Error("fpde: advance() after the last step");
    const auto t0 = Clock::now();
    const double solve_before = stats.solve_seconds;
    const double solve_cpu_before = stats.solve_cpu_seconds;
    const double cpu0 = exec::thread_cpu_seconds();
    stepper->advance(n);
    const double work = seconds_since(t0) - (stats.solve_seconds - solve_before);
    stats.work_seconds += work;
    window_seconds += work;
    window_cpu_seconds +=
        exec::thread_cpu_seconds() - cpu0 - (stats.solve_cpu_seconds - solve_cpu_before);
    ++n;
    ++stats.steps;
    check_finite();
    balance();
    const double step_seconds = seconds_since(t0);
    stats.total_seconds += step_seconds;
    report(step_seconds);
  }

  /// Collective. A NaN can stay in one rank's block (a point-wise preconditioner, a source
  /// that is NaN there only), and VecNorm's maximum may drop it: every rank checks its points
  /// and all agree, naming the first point of the lowest rank that has one.
  void check_finite() const {
    core::collective(comm, [&] {
      ReadArray ua(u);
      for (std::size_t p = 0; p < grid.local_size(); ++p) {
        const double v = ua.get()[p];
        if (std::isfinite(v)) continue;
        std::ostringstream os;
        os << "fpde: the solution is not finite (";
        if (std::isnan(v)) {
          os << "NaN";
        } else {
          os << v;
        }
        os << ") at step " << n << " (t = " << mesh.time(n) << "), x = " << grid.x()[p];
        if (grid.dimension() == 2) os << ", y = " << grid.y()[p];
        throw NumericalError(os.str());
      }
    });
  }

  // One line per step: at info level for the first step, the last one (of the solve() in
  // progress, else of the mesh) and at most one per progress interval (core::Progress), at
  // debug level otherwise. No communication (only the logger's ranks write).
  void report(double step_seconds) {
    const std::int64_t last = target >= 0 ? target : mesh.steps();
    const core::LogLevel level = progress_lines.step(n >= last, step_seconds);
    if (!progress_lines.enabled(level)) return;
    std::ostringstream os;
    os.precision(4);
    os << "fpde: step " << n << "/" << mesh.steps() << ", t = " << mesh.time(n) << ", "
       << stats.last_linear_iterations << " linear iterations, "
       << progress_lines.mean_step_seconds() * 1e3 << " ms/step; elapsed "
       << core::format_duration(progress_lines.elapsed()) << ", ETA "
       << core::format_duration(progress_lines.eta_steps(last - n));
    progress_lines.write(level, os.str());
  }

  /// Max and L2 norms of u - exact, given the exact values at the owned points.
  FpdeErrorNorms error_norms(const std::vector<double>& ex) const {
    double local[2] = {0.0, 0.0};
    {
      ReadArray ua(u);
      for (std::size_t p = 0; p < ex.size(); ++p) {
        const double e = std::fabs(ua.get()[p] - ex[p]);
        local[0] = std::max(local[0], e);
        local[1] += e * e;
      }
    }
    double global[2] = {0.0, 0.0};
    MPI_Allreduce(&local[0], &global[0], 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&local[1], &global[1], 1, MPI_DOUBLE, MPI_SUM, comm);
    double cell = grid.spacing(0);
    if (grid.dimension() == 2) cell *= grid.spacing(1);
    return {global[0], std::sqrt(cell * global[1])};
  }
};

FpdeSolver::FpdeSolver(MPI_Comm comm, const FpdeProblem& problem, FpdeSolverOptions options)
    : impl_(std::make_unique<Impl>(comm, problem, std::move(options))) {}

FpdeSolver::~FpdeSolver() = default;

const FpdeProblem& FpdeSolver::problem() const {
  return impl_->problem;
}
MPI_Comm FpdeSolver::comm() const {
  return impl_->comm;
}
const FpdeGrid& FpdeSolver::grid() const {
  return impl_->grid;
}
const FpdeTimeMesh& FpdeSolver::mesh() const {
  return impl_->mesh;
}
DM FpdeSolver::dm() const {
  return impl_->grid.dm();
}
Vec FpdeSolver::solution() const {
  return impl_->u;
}
std::vector<PetscInt> FpdeSolver::ownership(int direction) const {
  return impl_->grid.ownership(direction);
}
std::int64_t FpdeSolver::step() const {
  return impl_->n;
}
std::int64_t FpdeSolver::steps() const {
  return impl_->mesh.steps();
}
double FpdeSolver::time() const {
  return impl_->mesh.time(impl_->n);
}
const FpdeStatistics& FpdeSolver::statistics() const {
  return impl_->stats;
}
const L1History* FpdeSolver::history() const {
  return impl_->stepper->history();
}
KSP FpdeSolver::ksp() const {
  return impl_->stepper->ksp();
}

void FpdeSolver::advance() {
  impl_->advance();
}

void FpdeSolver::run_until(std::int64_t last,
                           const std::function<void(const FpdeSolver&)>& after_step) {
  const std::int64_t end = std::min(last, steps());
  while (step() < end) {
    advance();
    if (after_step) after_step(*this);
  }
}

FpdeSolveResult FpdeSolver::solve(const core::CheckpointOptions& checkpoint, std::int64_t last,
                                  const std::function<void(const FpdeSolver&)>& after_step) {
  Impl& m = *impl_;
  FpdeSolveResult result;
  result.first_step = step();
  const std::int64_t end = last < 0 ? steps() : std::min(last, steps());
  const bool writes = !checkpoint.file.empty();
  auto save = [&] {
    write_checkpoint(checkpoint.file);
    result.checkpoint = checkpoint.file;
    ++result.checkpoints;
  };
  struct Target {  // the progress lines count to `end` while solve() runs
    Impl& m;
    ~Target() { m.target = -1; }
  } target{m};
  m.target = end;
  bool regular = false;  // a regular checkpoint at the current step
  while (step() < end) {
    advance();
    if (after_step) after_step(*this);
    regular = writes && checkpoint.every > 0 && step() % checkpoint.every == 0;
    if (regular) save();
    // A stop request (a batch system's signal): checkpoint, leave; restart() continues.
    if (step() < end && core::stop_requested(m.comm)) {
      if (writes && !regular) save();
      throw core::Interrupted(step(), checkpoint.file);
    }
  }
  // Ended early on request (last < steps()): a checkpoint to continue from.
  if (writes && !done() && !regular && step() > result.first_step) save();
  result.last_step = step();
  return result;
}

void FpdeSolver::write_checkpoint(const std::string& path) const {
  const Impl& m = *impl_;
  io::CheckpointWriter ck(m.comm, path, m.n, time(), "fpde");
  ck.add_scalar_string("type", io::to_string(m.problem.type));
  ck.add_scalar_double("order", m.problem.order);
  ck.add_scalar_int64("steps", m.mesh.steps());
  ck.add_field("u", dm(), m.u);
  m.stepper->write_state(ck);
  io::add_split(ck, dm());  // on which a balanced restart continues
  ck.commit();
}

void FpdeSolver::restart(const std::string& path) {
  Impl& m = *impl_;
  io::CheckpointReader rk(m.comm, path);
  auto mismatch = [&](const std::string& what) {
    throw Error("fpde: the checkpoint " + path + " is for another problem (" + what + ")");
  };
  if (rk.scalar_string("type") != io::to_string(m.problem.type)) mismatch("type");
  if (rk.scalar_double("order") != m.problem.order) mismatch("order");
  if (rk.scalar_int64("steps") != m.mesh.steps()) mismatch("time steps");
  const io::FieldShape shape = rk.field_shape("u");
  if (shape.dim != m.grid.dimension() || shape.size[0] != m.grid.points(0) ||
      (m.grid.dimension() == 2 && shape.size[1] != m.grid.points(1))) {
    mismatch("grid " + io::to_string(shape));
  }
  const std::int64_t step = rk.step();
  if (step < 0 || step > m.mesh.steps()) mismatch("step " + std::to_string(step));
  // With the balance on and as many ranks in the same process grid as the writing job, the
  // run continues on the checkpoint's split (a re-split before reading, so that u and the
  // scheme's state are read into it); otherwise on this job's split.
  if (m.rebalancer) {
    if (const std::optional<io::DmdaSplit> saved = io::split_to_restore(rk, dm())) {
      m.resplit(saved->x, saved->y);
      m.options.log.info("fpde: restart continues on the checkpoint's split of the grid");
    }
  }
  rk.read_field("u", dm(), m.u);
  m.stepper->read_state(rk, mismatch);
  m.n = step;
  m.window_seconds = 0.0;
  m.window_cpu_seconds = 0.0;
  m.window_start = exec::sched_sample();
}

FpdeErrorNorms FpdeSolver::error_against(const FpdeFunction& exact) const {
  const Impl& m = *impl_;
  std::vector<double> ex(m.grid.local_size());
  m.grid.evaluate(exact, time(), ex.data());
  return m.error_norms(ex);
}

FpdeErrorNorms FpdeSolver::error_against(const core::Expression& exact) const {
  const Impl& m = *impl_;
  std::vector<double> ex(m.grid.local_size());
  m.grid.evaluate(exact, time(), nullptr, ex.data());
  return m.error_norms(ex);
}

FpdeErrorNorms FpdeSolver::error_against() const {
  if (!impl_->problem.exact)
    throw Error("fpde: error_against(): the problem has no exact solution");
  return error_against(impl_->problem.exact);
}

}  // namespace fracmfg::frac
