#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/io/checkpoint.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/solver_impl.hpp"

// Checkpoint and restart of the mfg fixed point: every time level of U and M, the
// iteration count, the damping state, the Anderson history, the convergence history and the
// grid's split over the writing ranks (split/x, split/y: the DMDA ownership ranges), on which
// a restart with the grid balance on, on as many ranks in the same process grid, continues.

namespace fracmfg::mfg {

namespace {

using detail::State;

std::string level_name(const char* field, int n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s/%06d", field, n);
  return buf;
}

}  // namespace

void Solver::write_checkpoint(const std::string& path) const {
  const Impl& d = *impl_;
  DM dm = d.model->dm();
  int rank = 0;
  MPI_Comm_rank(d.comm, &rank);
  io::CheckpointWriter ck(d.comm, path, iterations(), 0.0, "mfg");
  auto add_state = [&](const std::string& prefix, const State& s) {
    for (int n = 0; n < d.levels; ++n) {
      ck.add_field(prefix + level_name("u", n), dm, s.u[n].get());
      ck.add_field(prefix + level_name("m", n), dm, s.m[n].get());
    }
  };
  add_state("", d.x);
  io::add_split(ck, dm);
  ck.add_scalar_int64("iteration", iterations());
  ck.add_scalar_int64("time_steps", d.model->steps());
  ck.add_scalar_string("schedule", io::to_string(d.problem().iteration.schedule));
  ck.add_scalar_string("iteration_method", io::to_string(d.problem().iteration.method));
  ck.add_scalar_double("damping", d.problem().iteration.damping);
  ck.add_scalar_int64("cold_start", static_cast<std::int64_t>(d.cold_start));
  ck.add_scalar_int64("warm", d.warm ? 1 : 0);
  ck.add_scalar_double("next_damping", d.theta(iterations()));
  ck.add_scalar_double("best_change", d.best_change);
  ck.add_scalar_int64("converged", d.converged ? 1 : 0);
  const detail::HistoryArrays a = detail::arrays_of(d.history);
  auto add = [&](const char* name, const std::vector<double>& v) {
    ck.add_array(std::string("convergence/") + name, v.data(), rank == 0 ? v.size() : 0);
  };
  add("u", a.change_u);
  add("m", a.change_m);
  add("damping", a.damping);
  add("seconds", a.seconds);
  add("newton", a.newton);
  add("anderson", a.anderson);
  add("newton_tolerance", a.newton_tolerance);
  ck.add_scalar_int64("anderson_depth", d.anderson.depth);
  ck.add_scalar_int64("anderson_have_prev", d.anderson.have_prev ? 1 : 0);
  ck.add_scalar_int64("anderson_history", static_cast<std::int64_t>(d.anderson.d_f.size()));
  if (d.anderson.depth > 0 && d.anderson.have_prev) {
    add_state("anderson/f/", *d.anderson.f_prev);
    add_state("anderson/g/", *d.anderson.g_prev);
    for (std::size_t j = 0; j < d.anderson.d_f.size(); ++j) {
      add_state("anderson/df" + std::to_string(j) + "/", d.anderson.d_f[j]);
      add_state("anderson/dg" + std::to_string(j) + "/", d.anderson.d_g[j]);
    }
  }
  ck.commit();
  d.log.info("mfg: checkpoint of iteration ", iterations(), " written to ", path);
}

void Solver::restart(const std::string& path) {
  Impl& d = *impl_;
  DM dm = d.model->dm();
  std::optional<io::CheckpointReader> rk;
  core::collective(d.comm, [&] { rk.emplace(d.comm, path); });
  auto fail = [&](const std::string& why) {
    throw core::CollectiveError("mfg: cannot restart from '" + path + "': " + why, ExitCode::io, 0);
  };
  const auto problem_steps = rk->scalar_int64("time_steps");
  if (problem_steps != d.model->steps()) {
    fail("it has " + std::to_string(problem_steps) + " time steps, this problem " +
         std::to_string(d.model->steps()));
  }
  const io::FieldShape shape = rk->field_shape(level_name("u", 0));
  const Grid& g = d.model->grid();
  bool same = shape.dim == g.dim;
  for (int a = 0; a < g.dim && same; ++a)
    same = shape.size[static_cast<std::size_t>(a)] == g.points[a];
  if (!same) {
    fail("its grid is " + io::to_string(shape) + ", this problem's differs");
  }
  // With the grid balance on and as many ranks in the same process grid as the writing job,
  // the run continues on the split it had (a re-split before reading: the fields are read
  // into the new layout); otherwise on this job's split, which the balance adjusts.
  if (d.rebalancer) {
    if (const std::optional<io::DmdaSplit> saved = io::split_to_restore(*rk, dm)) {
      d.resplit(saved->x, saved->y, saved->z);
      dm = d.model->dm();
      d.log.info("mfg: restart continues on the checkpoint's split of the grid");
    }
  }
  auto read_state = [&](const std::string& prefix, State& s) {
    for (int n = 0; n < d.levels; ++n) {
      rk->read_field(prefix + level_name("u", n), dm, s.u[n].get());
      rk->read_field(prefix + level_name("m", n), dm, s.m[n].get());
    }
  };
  read_state("", d.x);
  const auto iterations_done = rk->scalar_int64("iteration");
  auto read = [&](const char* name) {
    const std::string a = std::string("convergence/") + name;
    return rk->read_array(a, 0, rk->array_size(a));
  };
  const auto cu = read("u"), cm = read("m"), damping = read("damping"), seconds = read("seconds"),
             newton = read("newton"), anderson = read("anderson"),
             newton_tolerance = read("newton_tolerance");
  if (static_cast<std::int64_t>(cu.size()) != iterations_done) {
    fail("its convergence history has " + std::to_string(cu.size()) + " entries for " +
         std::to_string(iterations_done) + " iterations");
  }
  d.history.clear();
  for (std::size_t i = 0; i < cu.size(); ++i) {
    IterationRecord r;
    r.iteration = static_cast<int>(i) + 1;
    r.change_u = cu[i];
    r.change_m = cm[i];
    r.damping = damping[i];
    r.seconds = seconds[i];
    r.newton_iterations = static_cast<long long>(newton[i]);
    r.anderson = anderson[i] != 0.0;
    r.newton_tolerance = newton_tolerance[i];
    d.history.push_back(r);
  }
  // Under iteration.method auto, a run whose two-grid iteration had fallen back to the
  // fixed point goes on with the fixed point from the restored state.
  if (d.automatic && d.two_grid && rk->has_scalar("iteration_method") &&
      rk->scalar_string("iteration_method") ==
          io::to_string(io::MfgConfig::Iteration::Method::fixed_point)) {
    d.use_fixed_point();
    d.log.info("mfg: the checkpoint's run had fallen back to the fixed point; it continues so");
  }
  // Under auto the damping may have been adapted: it continues as the checkpoint's.
  if (d.adapts_damping()) d.problem_.iteration.damping = rk->scalar_double("damping");
  d.cold_start =
      rk->has_scalar("cold_start") ? static_cast<std::size_t>(rk->scalar_int64("cold_start")) : 0;
  // Whether the state at cold_start was a coarse start (the stall test's first iteration).
  d.warm = rk->has_scalar("warm") && rk->scalar_int64("warm") != 0;
  d.best_change = rk->scalar_double("best_change");
  d.converged = rk->scalar_int64("converged") != 0;
  // Newton's method evaluates the sweeps at the restored density first.
  if (d.newton) d.newton->cached = false;
  d.anderson.clear_history();
  d.anderson.have_prev = false;
  const auto depth = rk->scalar_int64("anderson_depth");
  if (d.anderson.depth > 0 && depth == d.anderson.depth &&
      rk->scalar_int64("anderson_have_prev") != 0) {
    read_state("anderson/f/", *d.anderson.f_prev);
    read_state("anderson/g/", *d.anderson.g_prev);
    const auto count = rk->scalar_int64("anderson_history");
    for (std::int64_t j = 0; j < count; ++j) {
      State df = d.anderson.take_state(), dg = d.anderson.take_state();
      read_state("anderson/df" + std::to_string(j) + "/", df);
      read_state("anderson/dg" + std::to_string(j) + "/", dg);
      d.anderson.d_f.push_back(std::move(df));
      d.anderson.d_g.push_back(std::move(dg));
    }
    d.anderson.have_prev = true;
  } else if (d.anderson.depth > 0 && depth != d.anderson.depth) {
    d.log.warn("mfg: checkpoint has Anderson depth ", depth, ", this problem ", d.anderson.depth,
               "; the Anderson history starts afresh");
  }
  d.outflow_current = false;  // the outflow belongs to a sweep of this process
  d.log.info("mfg: restarted from ", path, " at iteration ", iterations_done, " (written on ",
             rk->written_by_ranks(), " rank(s))");
}

}  // namespace fracmfg::mfg
