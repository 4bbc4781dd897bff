#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/mfg/solver.hpp"
#include "mfg/newton.hpp"
#include "mfg/petsc_handles.hpp"
#include "mfg/solver_impl.hpp"
#include "mfg/solver_options.hpp"

// Grid sequencing of the mfg fixed point (iteration.coarse_levels; mfg/solver.hpp):
// start_coarse() solves the game on coarser grids, start_from() interpolates a solved
// coarse game onto this solver's grid and time levels.

namespace fracmfg::mfg {

using detail::fmt;

namespace {

// One time level of a field of a solver at a time, in natural (x fastest) order, on every
// rank; the last two levels asked for per field are kept (start_from walks the coarse time
// levels in order), so a rank holds at most four coarse fields. Collective.
class CoarseLevels {
 public:
  explicit CoarseLevels(const Solver& from) : from_(from), replicator_(from.model().dm()) {}

  const std::vector<double>& get(bool density, int level) {
    Cache& c = cache_[density ? 1 : 0];
    for (int k = 0; k < 2; ++k) {
      if (c.level[k] == level) {
        c.last = k;
        return c.data[k];
      }
    }
    // Replace the level not asked for last (the caller holds references to both).
    const int slot = 1 - c.last;
    c.last = slot;
    c.level[slot] = level;
    replicator_.gather(density ? from_.m(level) : from_.u(level), c.data[slot]);
    return c.data[slot];
  }

 private:
  struct Cache {
    int level[2] = {-1, -1};
    std::vector<double> data[2];
    int last = 1;
  };
  const Solver& from_;
  detail::Replicator replicator_;
  Cache cache_[2];
};

}  // namespace

void Solver::start_from(const Solver& coarse) {
  Impl& d = *impl_;
  if (!d.history.empty()) throw Error("mfg: start_from() needs a solver that has not iterated");
  const Grid& gf = d.model->grid();
  const Grid& gc = coarse.model().grid();
  if (gf.dim != gc.dim || gf.sides != gc.sides || gf.length != gc.length) {
    throw Error("mfg: start_from() needs the same domain");
  }
  // A damping that auto lowered on the coarser grid (the game's largest stable damping
  // changes little with the grid: docs/performance.md, "The damped fixed point's rate and its
  // largest damping") is where the finer one starts.
  const Impl& c = *coarse.impl_;
  if (d.adapts_damping() && c.adapts_damping()) {
    d.problem_.iteration.damping =
        std::min(d.problem_.iteration.damping, c.problem_.iteration.damping);
    d.stalled_damping = std::min(d.stalled_damping, c.stalled_damping);
  }
  d.interpolate_from(coarse);
}

void Solver::Impl::interpolate_from(const Solver& coarse) {
  Impl& d = *this;
  const Grid& gf = d.model->grid();
  const Grid& gc = coarse.model().grid();
  CoarseLevels coarse_fields(coarse);
  const OwnedBox& box = d.model->box();
  const int ntc = coarse.steps(), ntf = d.model->steps();
  const double mass0 = d.model->mass(d.model->initial_density());
  // The coarse brackets of this rank's fine coordinates, per axis (the same for every time
  // level and field); an axis beyond the dimension has the single bracket {0, 0, 0}.
  auto axis_brackets = [&](int axis, PetscInt start, PetscInt count) {
    std::vector<GridBracket> b(static_cast<std::size_t>(count));
    if (axis < gf.dim) {
      for (PetscInt i = 0; i < count; ++i) {
        b[static_cast<std::size_t>(i)] = bracket(gc, axis, gf.coordinate(axis, start + i));
      }
    }
    return b;
  };
  const std::vector<GridBracket> bxs = axis_brackets(0, box.xs, box.xm);
  const std::vector<GridBracket> bys = axis_brackets(1, box.ys, box.ym);
  const std::vector<GridBracket> bzs = axis_brackets(2, box.zs, box.zm);
  const auto nx = static_cast<std::size_t>(gc.points[0]);
  const auto ny = static_cast<std::size_t>(gc.points[1]);
  for (int n = 0; n <= ntf; ++n) {
    const double s = static_cast<double>(n) * ntc / ntf;
    const int l0 = std::min(static_cast<int>(std::floor(s)), ntc);
    const int l1 = std::min(l0 + 1, ntc);
    const double wt = s - l0;
    for (int field = 0; field < 2; ++field) {
      Vec v = field == 0 ? d.x.u[static_cast<std::size_t>(n)].get()
                         : d.x.m[static_cast<std::size_t>(n)].get();
      if (field == 1 && n == 0) {
        FRACMFG_PETSC_CHECK(VecCopy(d.model->initial_density(), v));
        continue;
      }
      // Both coarse levels first (collective), then the local interpolation.
      const std::vector<double>& c0 = coarse_fields.get(field == 1, l0);
      const std::vector<double>& c1 = coarse_fields.get(field == 1, l1);
      detail::WriteArray a(v);
      std::size_t k = 0;
      for (const GridBracket& bz : bzs) {
        for (const GridBracket& by : bys) {
          // The four coarse rows (y lo/hi, z lo/hi) this fine row interpolates between.
          const auto lo = static_cast<std::size_t>(bz.lo) * ny,
                     hi = static_cast<std::size_t>(bz.hi) * ny;
          const std::size_t r00 = (lo + static_cast<std::size_t>(by.lo)) * nx;
          const std::size_t r01 = (lo + static_cast<std::size_t>(by.hi)) * nx;
          const std::size_t r10 = (hi + static_cast<std::size_t>(by.lo)) * nx;
          const std::size_t r11 = (hi + static_cast<std::size_t>(by.hi)) * nx;
          for (const GridBracket& bx : bxs) {
            // (Tri)linear: along x, then y, then z (weights 0 beyond the dimension).
            const auto xl = static_cast<std::size_t>(bx.lo), xh = static_cast<std::size_t>(bx.hi);
            auto at = [&](const std::vector<double>& f) {
              auto row = [&](std::size_t r) { return (1 - bx.w) * f[r + xl] + bx.w * f[r + xh]; };
              const double p0 = (1 - by.w) * row(r00) + by.w * row(r01);
              const double p1 = (1 - by.w) * row(r10) + by.w * row(r11);
              return (1 - bz.w) * p0 + bz.w * p1;
            };
            a[static_cast<PetscInt>(k++)] = (1 - wt) * at(c0) + wt * at(c1);
          }
        }
      }
    }
    if (n == 0) continue;
    Vec m = d.x.m[static_cast<std::size_t>(n)].get();
    const double mass = d.model->mass(m);
    if (mass > 0.0) FRACMFG_PETSC_CHECK(VecScale(m, mass0 / mass));
  }
  d.warm = true;
}

namespace {

// The game of `fine` with the points per axis and the time steps divided by 2^level, solved
// to coarse_level_tolerance(fine) with the finite-difference Fokker-Planck equation; its
// method is auto again where the fine solve's was.
Problem coarse_problem(const Problem& fine, int level, bool automatic) {
  Problem c = fine;
  // Under iteration.method auto each level resolves (and may fall back) on its own.
  if (automatic) c.iteration.method = io::MfgConfig::Iteration::Method::automatic;
  for (auto& p : c.grid.points) p >>= level;
  c.time.steps = std::max(1, fine.time.steps >> level);
  c.iteration.tolerance = coarse_level_tolerance(fine);
  c.iteration.coarse_levels = 0;
  c.iteration.coarse_points = coarse_points(fine);
  c.fokker_planck.method = io::MfgConfig::FokkerPlanck::Method::fdm;
  return c;
}

// The linearised game's eigenvalue of largest modulus at `solved`'s solution (U = Psi(U) to
// the coarse tolerance), by kPowerSteps steps of the power iteration (mfg/newton.hpp): a_min
// where the Rayleigh quotient is negative and within 1 % of the norm (a real negative
// eigenvalue); none otherwise, or when a sweep's solve failed (collective, every rank alike).
// The norm grows towards |a_min| from below; on the 2D and 3D crowd games kPowerSteps steps
// bring it close enough to its converged value that theta* moves well inside the damping's
// margin (docs/performance.md, "The damped fixed point's rate and its largest damping").
constexpr int kPowerSteps = 20;
std::optional<double> most_negative_eigenvalue(const Solver& solved) {
  std::vector<detail::VecPtr> u, m;
  detail::copy_solution(solved, u, m);
  detail::LinearizedGame game(solved.model());
  game.linearise(&u, &u, &m);
  // Sweeps to 1e-4 with ILU(1): a_min the same to the 3 digits the damping keeps as with
  // Newton's 1e-8 and ILU(3), in much less time on the 3D crowd game.
  game.set_sweep_accuracy(1e-4, 1);
  detail::PowerStep last;
  try {
    last = detail::power_iteration(game, solved.model(), kPowerSteps);
  } catch (const core::CollectiveError&) {
    return std::nullopt;
  }
  const bool real_negative = std::isfinite(last.norm) && std::isfinite(last.rayleigh) &&
                             last.rayleigh < 0.0 && -last.rayleigh >= 0.99 * last.norm;
  if (!real_negative) return std::nullopt;
  return last.rayleigh;
}

// Coarse levels that keep at least 4 points per axis.
int usable_coarse_levels(const Problem& fine) {
  int levels = 0;
  while (levels < coarse_levels(fine) &&
         std::all_of(fine.grid.points.begin(), fine.grid.points.end(),
                     [&](int p) { return (p >> (levels + 1)) >= 4; })) {
    ++levels;
  }
  return levels;
}

}  // namespace

void Solver::Impl::damp_from_spectrum(const std::vector<std::pair<int, double>>& measured,
                                      int level, double margin) {
  if (!adapts_damping()) return;
  const double was = problem_.iteration.damping;
  const detail::SequencedDamping s =
      detail::sequenced_damping(measured, level, margin, stalled_damping, kMinDamping);
  problem_.iteration.damping = s.damping;
  const std::string from = measured.size() > 1
                               ? "extrapolated from " + fmt(measured[0].second) + ", " +
                                     fmt(measured[1].second) + " on the two coarsest levels"
                               : "as on the coarsest level";
  log.info("mfg: damping ", fmt(s.damping),
           level > 0 ? " on this coarse level" : " on the fine grid", " (", fmt(margin),
           " x the largest stable damping ", fmt(detail::largest_stable_damping(s.a_min)),
           " of a_min ", fmt(s.a_min), ", ", from, "; the coarser level ended at ", fmt(was), ")");
}

void Solver::start_coarse(bool again) {
  Impl& d = *impl_;
  const Problem& fine = d.problem();
  const int levels = usable_coarse_levels(fine);
  if (levels < coarse_levels(fine)) {
    d.log.info("mfg: coarse start with ", levels, " of the ", coarse_levels(fine),
               " coarse levels asked for (a coarser grid would have fewer than 4 points per axis)");
  }
  if (levels == 0) {
    if (again) d.restart_from_initial_state();
    return;
  }
  // The coarse solvers' own lines only at debug level.
  core::Logger quiet = d.log;
  if (quiet.level() != core::LogLevel::debug) {
    quiet.set_level(std::min(quiet.level(), core::LogLevel::warn));
  }
  std::unique_ptr<Solver> previous;
  // Under auto's adapting fixed point: a_min of the linearised game at the solutions of the
  // two coarsest levels (level, a_min), from which every finer level takes its damping.
  std::vector<std::pair<int, double>> spectrum;
  const double margin = d.adapts_damping() ? detail::auto_damping_margin_option(d.comm) : 0.0;
  for (int level = levels; level >= 1; --level) {
    const Problem c = coarse_problem(fine, level, d.automatic);
    auto next = std::make_unique<Solver>(d.comm, c, d.selector, quiet);
    if (previous) next->start_from(*previous);
    if (!spectrum.empty()) next->impl_->damp_from_spectrum(spectrum, level, margin);
    const double t0 = MPI_Wtime();
    SolveResult r;
    try {
      r = next->solve();
    } catch (const core::Interrupted&) {
      // A stop request during a coarse solve: nothing of the fine solve to checkpoint yet
      // (a restart repeats the coarse start). Again after a stall: the fine solve's last
      // checkpoint (checkpoint_every) is the one to resume from.
      d.log.info("mfg: stopped by a signal during the coarse start (level ", level, ")");
      throw core::Interrupted(0, "");
    } catch (const core::CollectiveError& e) {
      // Collective: every rank leaves here; the fine solve starts from the default state.
      d.log.warn("mfg: coarse start level ", level, " failed (", e.what(),
                 "); starting from u = 0, m(t) = m0");
      if (again) d.restart_from_initial_state();
      return;
    }
    const Grid& g = next->model().grid();
    d.log.info("mfg: coarse start level ", level, ": ", g.points_text(), " points, ", next->steps(),
               " steps, ", r.iterations, " iterations to ", fmt(c.iteration.tolerance),
               r.converged ? "" : " (not converged)", " in ", fmt(MPI_Wtime() - t0), " s");
    if (spectrum.size() < 2 && r.converged && next->impl_->adapts_damping() && d.adapts_damping()) {
      const double t1 = MPI_Wtime();
      if (const std::optional<double> a = most_negative_eigenvalue(*next)) {
        spectrum.emplace_back(level, *a);
        d.log.info("mfg: coarse start level ", level, ": a_min ", fmt(*a),
                   " (largest stable damping ", fmt(detail::largest_stable_damping(*a)), "; ",
                   kPowerSteps, " power iterations in ", fmt(MPI_Wtime() - t1), " s)");
      } else {
        d.log.info("mfg: coarse start level ", level,
                   ": the power iteration found no negative real a_min; the damping stays");
      }
    }
    previous = std::move(next);
  }
  if (again) {
    // The stall's halved damping and the history stay; the state is the coarse start again.
    d.interpolate_from(*previous);
    d.restart_from_coarse_start();
    return;
  }
  start_from(*previous);
  if (!spectrum.empty()) d.damp_from_spectrum(spectrum, 0, margin);
}

}  // namespace fracmfg::mfg
