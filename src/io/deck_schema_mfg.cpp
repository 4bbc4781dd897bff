// The `mfg` section: a mean field game (backward HJB, forward Fokker-Planck, fixed point).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "fracmfg/core/expression.hpp"
#include "io/deck_schema_sections.hpp"

namespace fracmfg::io::detail {

using namespace schema;

// clang-format off
Field mfg_schema() {
  const std::vector<std::string> xy = {"x", "y", "z"};
  const std::vector<std::string> xyt = {"x", "y", "z", "t"};
  return section("mfg", "Mean field game: HJB backward, Fokker-Planck forward, coupled by a damped fixed point.", {
    section("domain", "Spatial domain.", {
      reals("length", 1, 3, "side lengths [Lx], [Lx, Ly] or [Lx, Ly, Lz]; their count is the dimension (3D: fokker_planck.method fdm, diffusion_order 2, coupling log or power)").greater_than(0).required(),
      choice("boundary", {"periodic", "reflecting"}, "boundary condition of both equations on every side that `sides` does not set").required(),
      section("sides", "Per-side boundary conditions; a side left out takes `boundary`. reflecting: a wall (no flux); periodic: joined to the opposite side (both sides of the axis periodic); exit: the HJB takes the exit cost on the side, agents that reach it leave (the mass that left is in the output).", {
        choice("x_min", {"reflecting", "periodic", "exit"}, "side x = 0").optional("`boundary`"),
        choice("x_max", {"reflecting", "periodic", "exit"}, "side x = Lx").optional("`boundary`"),
        choice("y_min", {"reflecting", "periodic", "exit"}, "side y = 0 (2D, 3D)").optional("`boundary`"),
        choice("y_max", {"reflecting", "periodic", "exit"}, "side y = Ly (2D, 3D)").optional("`boundary`"),
        choice("z_min", {"reflecting", "periodic", "exit"}, "side z = 0 (3D)").optional("`boundary`"),
        choice("z_max", {"reflecting", "periodic", "exit"}, "side z = Lz (3D)").optional("`boundary`"),
      }),
      expression("exit_cost", xyt, "exit cost g(x, y, z, t): the value u = g of the HJB on the exit faces (cell-centred grid: the ghost value beyond a face is 2 g - u, so the face value is g)").optional("required when a side is an exit"),
      expression("obstacle", xy, "obstacle O(x, y, z): grid points where O > 0 are walls inside the domain: no agents (m = 0), no flux into them, the HJB decoupled there (fokker_planck.method fdm, diffusion_order 2)").optional("no obstacle"),
    }),
    section("grid", "Finite-difference grid.", {
      integers("points", 1, 3, "grid points per direction, one per domain length").at_least(3).required(),
    }),
    section("time", "Time interval.", {
      real("horizon", "final time T").greater_than(0).required(),
      integer("steps", "number of time steps").at_least(1).required(),
    }),
    real("diffusion_order", "order s of the diffusion nu (-Laplace)^(s/2) in both equations, in (1, 2]: 2 the Laplacian (Brownian agents), below 2 the fractional Laplacian (Levy flights; periodic domains, fokker_planck.method fdm)").greater_than(1).at_most(2).def(2.0),
    real("diffusion", "diffusion coefficient nu of the -nu Laplace terms (0: first-order game)").at_least(0).required(),
    section("hamiltonian", "Hamiltonian H(x, p, m): |p|^2 / (2 c(x)) (from the running cost c(x) |a|^2 / 2), |p|^q / (q c(x)), or the congestion form |p|^2 / (2 c(x) (epsilon + m)^alpha).", {
      choice("type", {"quadratic", "power", "congestion"}, "quadratic: |p|^2 / (2 c); power: |p|^q / (q c), q = exponent; congestion: |p|^2 / (2 c (epsilon + m)^alpha) (Achdou & Porretta 2018)").def("quadratic"),
      expression("control_cost", xy, "control cost c(x, y, z); must be > 0 on the domain").def("1"),
      real("exponent", "q in |p|^q / (q c); q = 2 is the quadratic Hamiltonian").greater_than(1).def(2.0).only_when("mfg.hamiltonian.type", {"power"}),
      real("epsilon", "epsilon in (epsilon + m)^alpha: keeps the Hamiltonian finite where m = 0").greater_than(0).def(1.0).only_when("mfg.hamiltonian.type", {"congestion"}),
      real("alpha", "congestion exponent alpha; [0, 2) is the range of the uniqueness (monotonicity) condition").at_least(0).less_than(2).def(1.0).only_when("mfg.hamiltonian.type", {"congestion"}),
    }),
    section("coupling", "Running cost F(x, m, t) = strength f(m) + potential(x, t).", {
      choice("type", {"log", "power", "nonlocal"}, "f(m): log m, m^exponent, or a Gaussian kernel of width `width` convolved with m").required(),
      real("exponent", "exponent in f(m) = m^exponent").greater_than(0).def(1.0).only_when("mfg.coupling.type", {"power"}),
      real("width", "standard deviation of the Gaussian kernel").greater_than(0).def(0.1).only_when("mfg.coupling.type", {"nonlocal"}),
      real("strength", "factor in front of f(m)").def(1.0),
      expression("potential", xyt, "potential V(x, y, z, t) added to the running cost (the HJB at time level n takes V(t_n))").def("0"),
    }),
    expression("initial_density", xy, "initial density m0(x, y, z); >= 0 and not zero everywhere").required(),
    expression("terminal_cost", xy, "terminal cost G(x, y, z) in u(T) = G + terminal_coupling m(T)").def("0"),
    real("terminal_coupling", "g in u(T) = G + g m(T)").at_least(0).def(0.0),
    section("sources", "Source terms added to the right-hand sides.", {
      expression("hjb", xyt, "source of the HJB equation").def("0"),
      expression("fp", xyt, "source of the Fokker-Planck equation").def("0"),
    }),
    section("fokker_planck", "Discretisation of the forward equation.", {
      choice("method", {"fdm", "particles"}, "fdm: adjoint of the linearised HJB (exact mass); particles: kernel density estimate").def("fdm"),
      integer("particles", "number of particles over all ranks (the density sums 2^32 per particle in 64 bits)").at_least(1).at_most(2147483647).wide().def(100000).only_when("mfg.fokker_planck.method", {"particles"}),
      real("bandwidth", "kernel density bandwidth; 0: Silverman's rule; at most 1e7 grid spacings").at_least(0).def(0.0).only_when("mfg.fokker_planck.method", {"particles"}),
      integer("seed", "seed of the counter-based random numbers").at_least(0).wide().def(1).only_when("mfg.fokker_planck.method", {"particles"}),
    }),
    section("iteration", "Iteration between the two equations.", {
      choice("method", {"auto", "fixed_point", "newton", "two_grid"}, "auto: two_grid where it applies and damping, schedule and anderson are at their defaults, else fixed_point; falls back to fixed_point (from the initial state, with a warning) where two_grid fails or its change falls by less than 0.7 per iteration over 5 iterations (after 10); its fixed point at default settings halves the damping and starts again where the change stalls (not 10 % lower in 10 iterations), and with grid sequencing runs the finer levels at 0.9 x the largest stable damping of the linearised game's a_min extrapolated from the two coarsest levels (power iterations there; `-mfg_auto_damping_margin`), a stall there starting the level again from the coarse levels; fixed_point: damped fixed point (damping, schedule, anderson); newton: Newton's method on the coupled system, GMRES preconditioned by the backward and forward sweeps, with a line search; two_grid: the undamped iteration with a coarse-grid correction of its slow modes (coarse_points; 1D, diffusion_order 2, no obstacle, not congestion, fokker_planck fdm); newton and two_grid need fdm and anderson 0").def("auto"),
      real("damping", "weight of the new u and m in the update: the fixed point contracts at 1 - damping, up to the game's largest stable damping (user guide, Choosing the damping; newton: the weight of its fallback step)").greater_than(0).at_most(1).def(0.5),
      choice("schedule", {"fixed", "fictitious_play"}, "fixed: constant damping; fictitious_play: weight 1/(k+1) at iteration k").def("fixed"),
      integer("anderson", "Anderson acceleration depth; 0: off").at_least(0).def(0),
      real("tolerance", "stop when the changes of U and M are below this").greater_than(0).def(1.0e-8),
      integer("max_iterations", "iteration limit").at_least(1).def(200),
      integer("coarse_levels", "grid sequencing: solve first on this many coarser grids (points and time steps halved per level, to tolerance max(tolerance, coarse_tolerance)), start from the interpolated solution; 0: off; -1: the method's default, 0 (fixed_point, newton) or two_grid's levels down to its coarse grid (each keeping at least coarse_points points per axis; also for auto where it resolves to two_grid); under auto in 2D and 3D, where the fixed point runs at its default settings and there is no obstacle, the halvings that keep at least 16 points per axis (a stall that halves the damping is paid on the coarsest grid, and the two coarsest levels' spectra set the finer levels' damping)").at_least(-1).at_most(8).def(-1),
      real("coarse_tolerance", "grid sequencing: tolerance of the coarse levels (at least tolerance); 0: the method's default, 1e-3 (fixed_point, newton) or 1e-2 (two_grid, and auto where it resolves to two_grid)").at_least(0).at_most(0.5).def(0.0),
      integer("coarse_points", "two_grid (and auto): points per axis of the coarse grid (fewer if the grid has fewer), 0 or at least 4; 0: automatic, 128, or under grid sequencing (coarse_levels not 0) the larger of 128 and points / 20").at_least(0).at_most(1000000).def(0).only_when("mfg.iteration.method", {"auto", "two_grid"}),
    }),
  });
}
// clang-format on

namespace {

constexpr double kMaxBandwidthSpacings = 1e7;

// The coordinates of a sample point of a domain of dimension dim.
std::string point_text(const std::vector<double>& p, std::size_t dim) {
  std::ostringstream os;
  os << "x = " << format_real(p[0]);
  if (dim > 1) os << ", y = " << format_real(p[1]);
  if (dim > 2) os << ", z = " << format_real(p[2]);
  return os.str();
}

// Visits a grid of 33 (x 33) points (17 x 17 x 17 in 3D) on the closed domain as (x, y, z)
// (0 beyond the dimension); f returns false to stop.
template <class F>
void sample_domain(const std::vector<double>& length, F&& f) {
  const int n = length.size() > 2 ? 17 : 33;
  const int ny = length.size() > 1 ? n : 1;
  const int nz = length.size() > 2 ? n : 1;
  for (int l = 0; l < nz; ++l) {
    for (int j = 0; j < ny; ++j) {
      for (int i = 0; i < n; ++i) {
        std::vector<double> p = {length[0] * i / (n - 1),
                                 length.size() > 1 ? length[1] * j / (n - 1) : 0.0,
                                 length.size() > 2 ? length[2] * l / (n - 1) : 0.0};
        if (!f(p)) return;
      }
    }
  }
}

// A formula may use the coordinates of the domain's axes only: y from 2D, z in 3D.
void check_axes_in_dimension(const Value& value, std::size_t dimension, const std::string& file) {
  const core::Expression f(value.text, value.field->variables());
  if (dimension < 2 && f.uses("y")) {
    fail(file, value.pos, value.path, "uses y, but the domain is one-dimensional");
  }
  if (dimension < 3 && f.uses("z")) {
    fail(file, value.pos, value.path,
         "uses z, but the domain is " +
             std::string(dimension == 1 ? "one-dimensional" : "two-dimensional"));
  }
}

}  // namespace

void check_grid_matches_domain(const Value& points, const Value& length, const std::string& file) {
  const std::size_t want = length.reals.size();
  if (points.integers.size() != want) {
    fail(file, points.pos, points.path,
         "expected " + std::to_string(want) + (want == 1 ? " value" : " values") + " (one per " +
             length.path + " item), got " + std::to_string(points.integers.size()));
  }
}

void check_no_y_in_1d(const Value& value, std::size_t dimension, const std::string& file) {
  if (dimension != 1) return;
  const core::Expression f(value.text, value.field->variables());
  if (f.uses("y")) {
    fail(file, value.pos, value.path, "uses y, but the domain is one-dimensional");
  }
}

namespace {

constexpr const char* kSideNames[] = {"x_min", "x_max", "y_min", "y_max", "z_min", "z_max"};

// The per-side conditions, the exit cost and the obstacle (mfg.domain): sides of the
// domain's axes only, periodic sides paired, an exit cost exactly when there is an exit,
// an obstacle that leaves free grid points, and the methods that support them.
void check_mfg_boundaries(const Value& mfg, const std::string& file) {
  const Value& domain = mfg.at("domain");
  const std::size_t dim = mfg.at("domain.length").reals.size();
  const std::string shorthand = mfg.at("domain.boundary").text;
  std::vector<std::string> side(2 * dim, shorthand);
  std::vector<const Value*> given(2 * dim, nullptr);
  for (std::size_t s = 0; s < std::size(kSideNames); ++s) {
    const Value* v = mfg.find(std::string("domain.sides.") + kSideNames[s]);
    if (v == nullptr) continue;
    if (s >= 2 * dim) {
      fail(file, v->key_pos, v->path,
           dim == 1 ? "the domain is one-dimensional (sides x_min, x_max only)"
                    : "the domain is two-dimensional (sides x_min, x_max, y_min, y_max only)");
    }
    side[s] = v->text;
    given[s] = v;
  }
  for (std::size_t a = 0; a < dim; ++a) {
    const bool lo = side[2 * a] == "periodic", hi = side[2 * a + 1] == "periodic";
    if (lo == hi) continue;
    const std::size_t s = given[2 * a] != nullptr ? 2 * a : 2 * a + 1;
    const std::size_t other = s ^ 1U;
    fail(file, given[s]->pos, given[s]->path,
         "periodic sides come in pairs: " + std::string(kSideNames[s]) + " is " + side[s] +
             " but " + kSideNames[other] + " is " + side[other] +
             " (set both sides of the axis periodic, or neither)");
  }
  std::string exit_side;
  bool uniform = true;
  for (std::size_t s = 0; s < side.size(); ++s) {
    if (side[s] == "exit" && exit_side.empty()) exit_side = kSideNames[s];
    uniform = uniform && side[s] == shorthand;
  }
  const Value* cost = mfg.find("domain.exit_cost");
  if (!exit_side.empty() && cost == nullptr) {
    fail(file, domain.key_pos, domain.path + ".exit_cost",
         std::string("missing required key (an expression of ") +
             (dim == 1   ? "x, t"
              : dim == 2 ? "x, y, t"
                         : "x, y, z, t") +
             "): needed because " + domain.path + ".sides." + exit_side + " is exit");
  }
  if (exit_side.empty() && cost != nullptr) {
    fail(file, cost->key_pos, cost->path, "only used when a side is exit (no side is)");
  }
  const Value* obstacle = mfg.find("domain.obstacle");
  const Value& method = mfg.at("fokker_planck.method");
  const Value& order = mfg.at("diffusion_order");
  const char* feature = !exit_side.empty() ? "exits" : obstacle != nullptr ? "obstacles" : nullptr;
  if (feature != nullptr && method.text != "fdm") {
    fail(file, method.pos, method.path,
         std::string("particles do not support ") + feature + " (mfg.domain); use method fdm");
  }
  if (!uniform && method.text != "fdm") {
    fail(file, method.pos, method.path,
         "particles need one condition on every side (mfg.domain.sides differs from "
         "mfg.domain.boundary); use method fdm");
  }
  if (order.real < 2.0) {
    // A non-periodic `boundary` is reported by check_mfg (the shorthand's own message).
    for (std::size_t s = 0; s < side.size(); ++s) {
      if (given[s] != nullptr && side[s] != "periodic") {
        fail(file, order.pos, order.path,
             "below 2 (fractional diffusion) needs periodic sides, but mfg.domain.sides." +
                 std::string(kSideNames[s]) + " is " + side[s]);
      }
    }
    if (obstacle != nullptr) {
      fail(file, order.pos, order.path,
           "below 2 (fractional diffusion) does not support mfg.domain.obstacle");
    }
  }
  if (obstacle == nullptr) return;
  const Value& levels = mfg.at("iteration.coarse_levels");
  if (levels.integer > 0) {  // -1 (the default) means 0 for every method an obstacle allows
    fail(file, levels.pos, levels.path,
         "grid sequencing does not support mfg.domain.obstacle (the coarse grids would not "
         "resolve it); use 0");
  }
  const Value& iteration = mfg.at("iteration.method");
  if (iteration.text == "two_grid") {
    fail(file, iteration.pos, iteration.path,
         "two_grid does not support mfg.domain.obstacle (the coarse grid would not resolve it); "
         "use fixed_point or newton");
  }
  // The obstacle on the grid's points (as mfg::Grid places them): some must stay free.
  const Value& length = mfg.at("domain.length");
  const Value& points = mfg.at("grid.points");
  // z is declared so that a formula using it reaches the axes check (check_mfg) unharmed.
  const core::Expression o(obstacle->text, {"x", "y", "z"});
  const long long nx = points.integers[0];
  const long long ny = dim > 1 ? points.integers[1] : 1;
  const long long nz = dim > 2 ? points.integers[2] : 1;
  auto coordinate = [&](std::size_t a, long long i) {
    const double h = length.reals[a] / static_cast<double>(points.integers[a]);
    const bool periodic = side[2 * a] == "periodic";
    return (static_cast<double>(i) + (periodic ? 0.0 : 0.5)) * h;
  };
  for (long long l = 0; l < nz; ++l) {
    for (long long j = 0; j < ny; ++j) {
      for (long long i = 0; i < nx; ++i) {
        const std::vector<double> p = {coordinate(0, i), dim > 1 ? coordinate(1, j) : 0.0,
                                       dim > 2 ? coordinate(2, l) : 0.0};
        const double v = o(p);
        if (std::isnan(v)) {
          fail(file, obstacle->pos, obstacle->path, "is not a number at " + point_text(p, dim));
        }
        if (!(v > 0.0)) return;
      }
    }
  }
  fail(file, obstacle->pos, obstacle->path,
       "covers every grid point (it is > 0 at all of them); nothing is left of the domain");
}

}  // namespace

void check_mfg(const Value& root, const std::string& file) {
  const Value& mfg = root.at("mfg");
  const Value& length = mfg.at("domain.length");
  check_grid_matches_domain(mfg.at("grid.points"), length, file);
  const std::size_t dim = length.reals.size();
  check_mfg_boundaries(mfg, file);
  for (const char* key : {"hamiltonian.control_cost", "coupling.potential", "initial_density",
                          "terminal_cost", "sources.hjb", "sources.fp"}) {
    check_axes_in_dimension(mfg.at(key), dim, file);
  }
  for (const char* key : {"domain.exit_cost", "domain.obstacle"}) {
    if (const Value* v = mfg.find(key)) check_axes_in_dimension(*v, dim, file);
  }

  // 3D: the finite-difference game only (the kernel density estimates and the fractional
  // operators are written for one and two axes).
  if (dim == 3) {
    const Value& fp = mfg.at("fokker_planck.method");
    if (fp.text != "fdm") {
      fail(file, fp.pos, fp.path, "particles are not available in 3D; use method fdm");
    }
    const Value& order = mfg.at("diffusion_order");
    if (order.real < 2.0) {
      fail(file, order.pos, order.path,
           "below 2 (fractional diffusion) is not available in 3D, got " + format_real(order.real));
    }
    const Value& coupling = mfg.at("coupling.type");
    if (coupling.text == "nonlocal") {
      fail(file, coupling.pos, coupling.path, "nonlocal is not available in 3D; use log or power");
    }
  }

  // The particles move with the drift grad u / c of the quadratic Hamiltonian.
  const Value& method = mfg.at("fokker_planck.method");
  const Value& hamiltonian = mfg.at("hamiltonian.type");
  if (method.text == "particles" && hamiltonian.text != "quadratic") {
    fail(file, method.pos, method.path,
         "particles support only the quadratic Hamiltonian (mfg.hamiltonian.type is " +
             hamiltonian.text + "); use method fdm");
  }

  // The kernel density estimate spans 2 bandwidth / spacing + 1 grid offsets; the kernels
  // take at most 1e7 spacings.
  if (const Value* bandwidth = mfg.find("fokker_planck.bandwidth")) {
    const Value& points = mfg.at("grid.points");
    double spacing = length.reals[0] / static_cast<double>(points.integers[0]);
    for (std::size_t a = 1; a < dim; ++a) {
      spacing = std::min(spacing, length.reals[a] / static_cast<double>(points.integers[a]));
    }
    const double most = kMaxBandwidthSpacings * spacing;
    if (bandwidth->real > most) {
      fail(file, bandwidth->pos, bandwidth->path,
           "expected a real number in [0, " + format_real(most) + "] (1e7 grid spacings of " +
               format_real(spacing) + "), got " + format_real(bandwidth->real));
    }
  }

  // Formulas with a sign condition: checked on a sample of the domain, so a wrong sign or a
  // NaN (log of a negative number) is reported before the solve starts.
  const Value& cost = mfg.at("hamiltonian.control_cost");
  const core::Expression c(cost.text, {"x", "y", "z"});
  sample_domain(length.reals, [&](const std::vector<double>& p) {
    const double v = c(p);
    if (!(v > 0.0)) {
      fail(file, cost.pos, cost.path,
           "must be > 0 on the domain, but is " + format_real(v) + " at " + point_text(p, dim));
    }
    return true;
  });
  const Value& rho = mfg.at("initial_density");
  const core::Expression m0(rho.text, {"x", "y", "z"});
  bool positive_somewhere = false;
  sample_domain(length.reals, [&](const std::vector<double>& p) {
    const double v = m0(p);
    if (!(v >= 0.0) || !std::isfinite(v)) {
      fail(file, rho.pos, rho.path,
           "must be finite and >= 0 on the domain, but is " + format_real(v) + " at " +
               point_text(p, dim));
    }
    positive_somewhere = positive_somewhere || v > 0.0;
    return true;
  });
  if (!positive_somewhere) {
    fail(file, rho.pos, rho.path, "is zero everywhere on the domain; there is no mass to move");
  }

  // Newton's method linearises the finite-difference scheme: the Fokker-Planck step must be
  // the adjoint of the HJB linearisation (fdm); Anderson mixing is the fixed point's.
  const Value& iteration_method = mfg.at("iteration.method");
  if (iteration_method.text == "newton" || iteration_method.text == "two_grid") {
    auto refuse = [&](const char* key, const std::string& got, const std::string& need) {
      fail(file, iteration_method.pos, iteration_method.path,
           iteration_method.text + " needs " + need + ", but mfg." + key + " is " + got +
               "; use mfg.iteration.method: fixed_point");
    };
    if (method.text != "fdm")
      refuse("fokker_planck.method", method.text, "fokker_planck.method fdm");
    if (mfg.at("iteration.anderson").integer > 0) {
      refuse("iteration.anderson", std::to_string(mfg.at("iteration.anderson").integer),
             "iteration.anderson 0 (Anderson mixing belongs to the fixed point)");
    }
    // The two-grid correction is verified in 1D with the Laplacian only: on the small 2D
    // and 3D games measured its coarse grid did not resolve the slow modes
    // (docs/performance.md, "The two-grid iteration"), and with fractional diffusion the
    // undamped iteration diverges.
    if (iteration_method.text == "two_grid") {
      const Value& coarse = mfg.at("iteration.coarse_points");
      if (coarse.integer > 0 && coarse.integer < 4) {
        fail(file, coarse.pos, coarse.path,
             "expected 0 (automatic) or an integer in [4, 1000000], got " +
                 std::to_string(coarse.integer));
      }
      // On a 1D corridor game with the congestion Hamiltonian even a coarse grid of half the
      // points left the coarse GMRES unconverged and the change of u did not fall; with the
      // quadratic Hamiltonian the same game converged.
      if (hamiltonian.text == "congestion") {
        refuse("hamiltonian.type", hamiltonian.text, "a quadratic or power Hamiltonian");
      }
      const Value& order = mfg.at("diffusion_order");
      if (order.real < 2.0) {
        refuse("diffusion_order", format_real(order.real), "diffusion_order 2");
      }
      const std::size_t axes = mfg.at("domain.length").reals.size();
      if (axes != 1) {
        fail(file, iteration_method.pos, iteration_method.path,
             "two_grid is available in 1D; this domain has " + std::to_string(axes) +
                 " axes; use mfg.iteration.method: fixed_point or newton");
      }
    }
  }

  // Fractional diffusion: the discrete operator is the periodic circulant of the fractional
  // centred difference (mfg/fractional_diffusion.hpp); a reflecting wall would need the
  // regional (censored) operator, and the particle method Levy flights.
  const Value& order = mfg.at("diffusion_order");
  if (order.real < 2.0) {
    if (mfg.at("domain.boundary").text != "periodic") {
      fail(file, order.pos, order.path,
           "below 2 (fractional diffusion) needs mfg.domain.boundary: periodic, got " +
               mfg.at("domain.boundary").text);
    }
    if (mfg.at("fokker_planck.method").text != "fdm") {
      fail(file, order.pos, order.path,
           "below 2 (fractional diffusion) needs mfg.fokker_planck.method: fdm, got " +
               mfg.at("fokker_planck.method").text);
    }
  }
}

}  // namespace fracmfg::io::detail
