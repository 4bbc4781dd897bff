#include "fracmfg/mfg/problem.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"

namespace fracmfg::mfg {

namespace {

enum class Kind { constant, function, time_function, samples, bulk };

}  // namespace

struct Field::Data {
  Kind kind = Kind::constant;
  double value = 0.0;
  Function function;
  TimeFunction time_function;
  BulkFunction bulk;
  bool bulk_timed = false;
  std::vector<PetscInt> points;
  std::vector<double> values;
};

Field::Field() : Field(std::make_shared<Data>()) {}

Field::Field(std::shared_ptr<const Data> data) : data_(std::move(data)) {}

Field Field::constant(double value) {
  auto d = std::make_shared<Data>();
  d->kind = Kind::constant;
  d->value = value;
  return Field(std::move(d));
}

Field Field::function(Function fn) {
  if (!fn) throw Error("mfg::Field::function: empty function");
  auto d = std::make_shared<Data>();
  d->kind = Kind::function;
  d->function = std::move(fn);
  return Field(std::move(d));
}

Field Field::time_function(TimeFunction fn) {
  if (!fn) throw Error("mfg::Field::time_function: empty function");
  auto d = std::make_shared<Data>();
  d->kind = Kind::time_function;
  d->time_function = std::move(fn);
  return Field(std::move(d));
}

Field Field::samples(std::vector<PetscInt> points, std::vector<double> values) {
  if (points.empty() || points.size() > 3) {
    throw Error("mfg::Field::samples: one, two or three axes expected, got " +
                std::to_string(points.size()));
  }
  std::size_t total = 1;
  for (const PetscInt p : points) {
    if (p < 1) throw Error("mfg::Field::samples: every axis needs at least one point");
    total *= static_cast<std::size_t>(p);
  }
  if (values.size() != total) {
    throw Error("mfg::Field::samples: " + std::to_string(values.size()) + " values for " +
                std::to_string(total) + " points");
  }
  auto d = std::make_shared<Data>();
  d->kind = Kind::samples;
  d->points = std::move(points);
  d->values = std::move(values);
  return Field(std::move(d));
}

Field Field::bulk(BulkFunction fn, bool time_dependent) {
  if (!fn) throw Error("mfg::Field::bulk: empty function");
  auto d = std::make_shared<Data>();
  d->kind = Kind::bulk;
  d->bulk = std::move(fn);
  d->bulk_timed = time_dependent;
  return Field(std::move(d));
}

Field Field::named(std::string name) const {
  Field f = *this;
  f.name_ = std::move(name);
  return f;
}

std::string Field::name_or(const std::string& fallback) const {
  return name_.empty() ? fallback : name_;
}

bool Field::is_zero() const {
  return data_->kind == Kind::constant && data_->value == 0.0;
}

bool Field::time_dependent() const {
  return data_->kind == Kind::time_function || (data_->kind == Kind::bulk && data_->bulk_timed);
}

void Field::evaluate(const Grid& domain, std::size_t count, const double* x, const double* y,
                     const double* z, double t, double* values) const {
  const Data& d = *data_;
  switch (d.kind) {
    case Kind::constant: std::fill(values, values + count, d.value); return;
    case Kind::function:
      for (std::size_t k = 0; k < count; ++k) values[k] = d.function(x[k], y[k]);
      return;
    case Kind::time_function:
      for (std::size_t k = 0; k < count; ++k) values[k] = d.time_function(x[k], y[k], t);
      return;
    case Kind::bulk:
      if (z == nullptr) {
        const std::vector<double> zero(count, 0.0);
        d.bulk(count, x, y, zero.data(), t, values);
      } else {
        d.bulk(count, x, y, z, t, values);
      }
      return;
    case Kind::samples: break;
  }
  if (static_cast<int>(d.points.size()) != domain.dim) {
    throw UsageError(name_or("mfg::Field") + ": samples on " + std::to_string(d.points.size()) +
                     " axes for a domain of dimension " + std::to_string(domain.dim));
  }
  Grid g = domain;
  g.points[0] = d.points[0];
  g.points[1] = domain.dim >= 2 ? d.points[1] : 1;
  g.points[2] = domain.dim == 3 ? d.points[2] : 1;
  const PetscInt nx = g.points[0], ny = g.points[1];
  for (std::size_t k = 0; k < count; ++k) {
    const GridBracket bx = bracket(g, 0, x[k], true);
    const GridBracket by = domain.dim >= 2 ? bracket(g, 1, y[k], true) : GridBracket{};
    const GridBracket bz = domain.dim == 3 ? bracket(g, 2, z[k], true) : GridBracket{};
    auto at = [&](PetscInt i, PetscInt j, PetscInt l) {
      return d.values[static_cast<std::size_t>((l * ny + j) * nx + i)];
    };
    // Exact at a sample point: a zero weight takes one value only (no 0 * neighbour).
    auto along_x = [&](PetscInt j, PetscInt l) {
      return bx.w == 0.0 ? at(bx.lo, j, l) : (1 - bx.w) * at(bx.lo, j, l) + bx.w * at(bx.hi, j, l);
    };
    auto along_y = [&](PetscInt l) {
      return by.w == 0.0 ? along_x(by.lo, l)
                         : (1 - by.w) * along_x(by.lo, l) + by.w * along_x(by.hi, l);
    };
    values[k] = bz.w == 0.0 ? along_y(bz.lo) : (1 - bz.w) * along_y(bz.lo) + bz.w * along_y(bz.hi);
  }
}

namespace {

// Throws the usage error of `member` unless ok.
void require(bool ok, const char* member, const char* range, double value) {
  if (ok) return;
  std::ostringstream os;
  os.precision(6);
  os << "problem." << member << ": must be " << range << ", but is " << value;
  throw core::CollectiveError(os.str(), ExitCode::usage, 0);
}

}  // namespace

void check_problem(const Problem& p) {
  require(std::isfinite(p.diffusion) && p.diffusion >= 0.0, "diffusion", ">= 0", p.diffusion);
  require(p.diffusion_order > 1.0 && p.diffusion_order <= 2.0, "diffusion_order", "in (1, 2]",
          p.diffusion_order);
  using Side = io::MfgConfig::Domain::Boundary;
  bool all_periodic = true, uniform = true, exits = false;
  for (int s = 0; s < 2 * p.dimension() && s < io::MfgConfig::Domain::kMaxSides; ++s) {
    all_periodic = all_periodic && p.domain.side(s) == Side::periodic;
    uniform = uniform && p.domain.side(s) == p.domain.side(0);
    exits = exits || p.domain.side(s) == Side::exit;
    if ((p.domain.side(s) == Side::periodic) != (p.domain.side(s ^ 1) == Side::periodic)) {
      throw core::CollectiveError("problem.domain.sides: periodic sides come in pairs (side " +
                                      std::to_string(s) + " is " + io::to_string(p.domain.side(s)) +
                                      ", its opposite side " + io::to_string(p.domain.side(s ^ 1)) +
                                      ")",
                                  ExitCode::usage, 0);
    }
  }
  const bool obstacle = !p.obstacle.is_zero();
  if (p.diffusion_order < 2.0) {
    require(all_periodic && !obstacle, "diffusion_order",
            "2 on a reflecting domain, with exits or obstacles (fractional diffusion needs "
            "periodic boundaries)",
            p.diffusion_order);
    require(p.fokker_planck.method == io::MfgConfig::FokkerPlanck::Method::fdm, "diffusion_order",
            "2 with the particle method (fractional diffusion needs fokker_planck.method fdm)",
            p.diffusion_order);
  }
  require(std::isfinite(p.terminal_coupling) && p.terminal_coupling >= 0.0, "terminal_coupling",
          ">= 0", p.terminal_coupling);
  const Problem::Coupling& c = p.coupling;
  require(std::isfinite(c.strength), "coupling.strength", "finite", c.strength);
  if (c.type == Problem::Coupling::Type::power) {
    require(std::isfinite(c.exponent) && c.exponent > 0.0, "coupling.exponent", "> 0", c.exponent);
  }
  if (c.type == Problem::Coupling::Type::nonlocal) {
    require(std::isfinite(c.width) && c.width > 0.0, "coupling.width", "> 0", c.width);
  }
  const Problem::Hamiltonian& h = p.hamiltonian;
  if (h.type == Problem::Hamiltonian::Type::power) {
    require(std::isfinite(h.exponent) && h.exponent > 1.0, "hamiltonian.exponent", "> 1",
            h.exponent);
  }
  if (h.type == Problem::Hamiltonian::Type::congestion) {
    require(std::isfinite(h.epsilon) && h.epsilon > 0.0, "hamiltonian.epsilon", "> 0", h.epsilon);
    require(h.alpha >= 0.0 && h.alpha < 2.0, "hamiltonian.alpha", "in [0, 2)", h.alpha);
  }
  const io::MfgConfig::FokkerPlanck& fp = p.fokker_planck;
  if (fp.method == io::MfgConfig::FokkerPlanck::Method::particles) {
    if (h.type != Problem::Hamiltonian::Type::quadratic) {
      throw core::CollectiveError(
          "problem.fokker_planck.method: particles support only the quadratic Hamiltonian "
          "(problem.hamiltonian.type is " +
              std::string(io::to_string(h.type)) + "); use method fdm",
          ExitCode::usage, 0);
    }
    if (exits || obstacle || !uniform) {
      throw core::CollectiveError(
          "problem.fokker_planck.method: particles need one condition (periodic or reflecting) "
          "on every side and no obstacle; use method fdm",
          ExitCode::usage, 0);
    }
    require(fp.particles >= 1 && fp.particles <= 2147483647, "fokker_planck.particles",
            "in [1, 2147483647]", static_cast<double>(fp.particles));
    require(std::isfinite(fp.bandwidth) && fp.bandwidth >= 0.0, "fokker_planck.bandwidth", ">= 0",
            fp.bandwidth);
    require(fp.seed >= 0, "fokker_planck.seed", ">= 0", static_cast<double>(fp.seed));
  }
  if (p.dimension() == 3) {
    // 3D has the finite-difference game only: the kernel density estimates (particles, the
    // nonlocal coupling) and the fractional operators are written for one and two axes.
    auto refuse = [](const char* member, const std::string& what) {
      throw core::CollectiveError(
          "problem." + std::string(member) + ": " + what + " is not available in 3D",
          ExitCode::usage, 0);
    };
    if (fp.method == io::MfgConfig::FokkerPlanck::Method::particles) {
      refuse("fokker_planck.method", "particles (use method fdm)");
    }
    if (p.diffusion_order < 2.0) refuse("diffusion_order", "fractional diffusion (below 2)");
    if (c.type == Problem::Coupling::Type::nonlocal) {
      refuse("coupling.type", "the nonlocal coupling (use log or power)");
    }
  }
  const io::MfgConfig::Iteration& it = p.iteration;
  // An explicit count: the default (-1) starts from coarse levels only under two_grid, which
  // is refused with an obstacle below, by its own message.
  if (obstacle && it.coarse_levels > 0) {
    throw core::CollectiveError(
        "problem.iteration.coarse_levels: grid sequencing does not support an obstacle; use 0",
        ExitCode::usage, 0);
  }
  if (obstacle && it.method == io::MfgConfig::Iteration::Method::two_grid) {
    throw core::CollectiveError(
        "problem.iteration.method: two_grid does not support an obstacle; use fixed_point or "
        "newton",
        ExitCode::usage, 0);
  }
  if (it.method == io::MfgConfig::Iteration::Method::two_grid &&
      (p.grid.points.size() != 1 || p.diffusion_order < 2.0 ||
       p.hamiltonian.type == Problem::Hamiltonian::Type::congestion)) {
    throw core::CollectiveError(
        "problem.iteration.method: two_grid is available in 1D with diffusion_order 2 and a "
        "quadratic or power Hamiltonian; use fixed_point or newton",
        ExitCode::usage, 0);
  }
  require(it.coarse_points == 0 || it.coarse_points >= 4, "iteration.coarse_points",
          "0 (automatic) or >= 4", it.coarse_points);
  require(it.coarse_tolerance >= 0.0 && it.coarse_tolerance <= 0.5, "iteration.coarse_tolerance",
          "in [0, 0.5]", it.coarse_tolerance);
  require(it.damping > 0.0 && it.damping <= 1.0, "iteration.damping", "in (0, 1]", it.damping);
  require(it.anderson >= 0, "iteration.anderson", ">= 0", it.anderson);
  require(std::isfinite(it.tolerance) && it.tolerance > 0.0, "iteration.tolerance", "> 0",
          it.tolerance);
  require(it.max_iterations >= 1, "iteration.max_iterations", ">= 1", it.max_iterations);
  require(it.coarse_levels >= -1 && it.coarse_levels <= 8, "iteration.coarse_levels", "in [-1, 8]",
          it.coarse_levels);
}

bool fixed_point_settings_at_defaults(const io::MfgConfig::Iteration& it) {
  return it.damping == io::MfgConfig::Iteration::kDefaultDamping &&
         it.schedule == io::MfgConfig::Iteration::Schedule::fixed && it.anderson == 0;
}

io::MfgConfig::Iteration::Method resolved_method(const Problem& p) {
  using Method = io::MfgConfig::Iteration::Method;
  const io::MfgConfig::Iteration& it = p.iteration;
  if (it.method != Method::automatic) return it.method;
  // What the deck reader allows two_grid (check_problem above, check_mfg in the schema),
  // and the fixed point's own settings untouched: a deck that tunes the damping, the
  // schedule or Anderson mixing asks for the fixed point.
  const bool applies = p.dimension() == 1 && p.diffusion_order >= 2.0 && p.obstacle.is_zero() &&
                       p.hamiltonian.type != Problem::Hamiltonian::Type::congestion &&
                       p.fokker_planck.method == io::MfgConfig::FokkerPlanck::Method::fdm;
  return applies && fixed_point_settings_at_defaults(it) ? Method::two_grid : Method::fixed_point;
}

int coarse_points(const Problem& p) {
  const auto& it = p.iteration;
  if (it.coarse_points > 0) return it.coarse_points;
  constexpr int kCoarsePoints = 128;
  if (it.coarse_levels == 0) return kCoarsePoints;
  int finest = 0;
  for (const int n : p.grid.points) finest = std::max(finest, n);
  return std::max(kCoarsePoints, finest / 20);
}

namespace {

// Halvings of the grid that keep at least `points` points on every axis, at most 8.
int halvings_keeping(const Problem& p, int points) {
  int levels = 0;
  while (levels < 8 && std::all_of(p.grid.points.begin(), p.grid.points.end(),
                                   [&](int n) { return (n >> (levels + 1)) >= points; })) {
    ++levels;
  }
  return levels;
}

}  // namespace

int coarse_levels(const Problem& p) {
  using Method = io::MfgConfig::Iteration::Method;
  const auto& it = p.iteration;
  if (it.coarse_levels >= 0) return it.coarse_levels;
  const Method method = resolved_method(p);
  if (method == Method::two_grid) return halvings_keeping(p, coarse_points(p));
  // auto's fixed point at its default settings adapts its damping (mfg::Solver): where the
  // game needs a smaller one, the stall that finds out is paid on the coarsest grid.
  constexpr int kFixedPointCoarsest = 16;
  const bool adapting = it.method == Method::automatic && method == Method::fixed_point &&
                        fixed_point_settings_at_defaults(it);
  if (adapting && p.dimension() >= 2 && p.obstacle.is_zero()) {
    return halvings_keeping(p, kFixedPointCoarsest);
  }
  return 0;
}

double coarse_level_tolerance(const Problem& p) {
  const auto& it = p.iteration;
  const double coarse =
      it.coarse_tolerance > 0.0
          ? it.coarse_tolerance
          : (resolved_method(p) == io::MfgConfig::Iteration::Method::two_grid ? 1e-2 : 1e-3);
  return std::max(it.tolerance, coarse);
}

}  // namespace fracmfg::mfg
