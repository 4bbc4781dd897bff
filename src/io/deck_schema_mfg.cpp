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
  const std::vector<std::string> xy = {"x", "y"};
  const std::vector<std::string> xyt = {"x", "y", "t"};
  return section("mfg", "Mean field game: HJB backward, Fokker-Planck forward, coupled by a damped fixed point.", {
    section("domain", "Spatial domain.", {
      reals("length", 1, 2, "side lengths [Lx] or [Lx, Ly]; their count is the dimension").greater_than(0).required(),
      choice("boundary", {"periodic", "reflecting"}, "boundary condition of both equations").required(),
    }),
    section("grid", "Finite-difference grid.", {
      integers("points", 1, 2, "grid points per direction, one per domain length").at_least(3).required(),
    }),
    section("time", "Time interval.", {
      real("horizon", "final time T").greater_than(0).required(),
      integer("steps", "number of time steps").at_least(1).required(),
    }),
    real("diffusion_order", "order s of the diffusion nu (-Laplace)^(s/2) in both equations, in (1, 2]: 2 the Laplacian (Brownian agents), below 2 the fractional Laplacian (Levy flights; periodic domains, fokker_planck.method fdm)").greater_than(1).at_most(2).def(2.0),
    real("diffusion", "diffusion coefficient nu of the -nu Laplace terms (0: first-order game)").at_least(0).required(),
    section("hamiltonian", "Hamiltonian H(x, p, m): |p|^2 / (2 c(x)) (from the running cost c(x) |a|^2 / 2), |p|^q / (q c(x)), or the congestion form |p|^2 / (2 c(x) (epsilon + m)^alpha).", {
      choice("type", {"quadratic", "power", "congestion"}, "quadratic: |p|^2 / (2 c); power: |p|^q / (q c), q = exponent; congestion: |p|^2 / (2 c (epsilon + m)^alpha) (Achdou & Porretta 2018)").def("quadratic"),
      expression("control_cost", xy, "control cost c(x, y); must be > 0 on the domain").def("1"),
      real("exponent", "q in |p|^q / (q c); q = 2 is the quadratic Hamiltonian").greater_than(1).def(2.0).only_when("mfg.hamiltonian.type", {"power"}),
      real("epsilon", "epsilon in (epsilon + m)^alpha: keeps the Hamiltonian finite where m = 0").greater_than(0).def(1.0).only_when("mfg.hamiltonian.type", {"congestion"}),
      real("alpha", "congestion exponent alpha; [0, 2) is the range of the uniqueness (monotonicity) condition").at_least(0).less_than(2).def(1.0).only_when("mfg.hamiltonian.type", {"congestion"}),
    }),
    section("coupling", "Running cost F(x, m) = strength f(m) + potential(x).", {
      choice("type", {"log", "power", "nonlocal"}, "f(m): log m, m^exponent, or a Gaussian kernel of width `width` convolved with m").required(),
      real("exponent", "exponent in f(m) = m^exponent").greater_than(0).def(1.0).only_when("mfg.coupling.type", {"power"}),
      real("width", "standard deviation of the Gaussian kernel").greater_than(0).def(0.1).only_when("mfg.coupling.type", {"nonlocal"}),
      real("strength", "factor in front of f(m)").def(1.0),
      expression("potential", xy, "potential V(x, y) added to the running cost").def("0"),
    }),
    expression("initial_density", xy, "initial density m0(x, y); >= 0 and not zero everywhere").required(),
    expression("terminal_cost", xy, "terminal cost G(x, y) in u(T) = G + terminal_coupling m(T)").def("0"),
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
      choice("method", {"fixed_point", "newton"}, "fixed_point: damped fixed point (damping, schedule, anderson); newton: Newton's method on the coupled system, GMRES preconditioned by the backward and forward sweeps, with a line search (fdm, quadratic or power Hamiltonian, diffusion_order 2, anderson 0)").def("fixed_point"),
      real("damping", "weight of the new density in the update (newton: of its fallback step)").greater_than(0).at_most(1).def(0.5),
      choice("schedule", {"fixed", "fictitious_play"}, "fixed: constant damping; fictitious_play: weight 1/(k+1) at iteration k").def("fixed"),
      integer("anderson", "Anderson acceleration depth; 0: off").at_least(0).def(0),
      real("tolerance", "stop when the changes of U and M are below this").greater_than(0).def(1.0e-8),
      integer("max_iterations", "iteration limit").at_least(1).def(200),
      integer("coarse_levels", "grid sequencing: solve first on this many coarser grids (points and time steps halved per level, to tolerance max(tolerance, 1e-3)), start from the interpolated solution; 0: off").at_least(0).at_most(8).def(0),
    }),
  });
}
// clang-format on

namespace {

constexpr double kMaxBandwidthSpacings = 1e7;

std::string point_text(const std::vector<double>& p) {
  std::ostringstream os;
  os << "x = " << format_real(p[0]);
  if (p.size() > 1 && p[1] != 0.0) os << ", y = " << format_real(p[1]);
  return os.str();
}

// Visits a grid of 33 (x 33) points on the closed domain; f returns false to stop.
template <class F>
void sample_domain(const std::vector<double>& length, F&& f) {
  constexpr int n = 33;
  const int ny = length.size() > 1 ? n : 1;
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i < n; ++i) {
      std::vector<double> p = {length[0] * i / (n - 1),
                               length.size() > 1 ? length[1] * j / (n - 1) : 0.0};
      if (!f(p)) return;
    }
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

void check_mfg(const Value& root, const std::string& file) {
  const Value& mfg = root.at("mfg");
  const Value& length = mfg.at("domain.length");
  check_grid_matches_domain(mfg.at("grid.points"), length, file);
  const std::size_t dim = length.reals.size();
  for (const char* key : {"hamiltonian.control_cost", "coupling.potential", "initial_density",
                          "terminal_cost", "sources.hjb", "sources.fp"}) {
    check_no_y_in_1d(mfg.at(key), dim, file);
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
  const core::Expression c(cost.text, {"x", "y"});
  sample_domain(length.reals, [&](const std::vector<double>& p) {
    const double v = c(p);
    if (!(v > 0.0)) {
      fail(file, cost.pos, cost.path,
           "must be > 0 on the domain, but is " + format_real(v) + " at " + point_text(p));
    }
    return true;
  });
  const Value& rho = mfg.at("initial_density");
  const core::Expression m0(rho.text, {"x", "y"});
  bool positive_somewhere = false;
  sample_domain(length.reals, [&](const std::vector<double>& p) {
    const double v = m0(p);
    if (!(v >= 0.0) || !std::isfinite(v)) {
      fail(file, rho.pos, rho.path,
           "must be finite and >= 0 on the domain, but is " + format_real(v) + " at " +
               point_text(p));
    }
    positive_somewhere = positive_somewhere || v > 0.0;
    return true;
  });
  if (!positive_somewhere) {
    fail(file, rho.pos, rho.path, "is zero everywhere on the domain; there is no mass to move");
  }

  // Newton's method linearises the finite-difference scheme: the Fokker-Planck step must be
  // the adjoint of the HJB linearisation (fdm), the Jacobian needs the second derivative of
  // H in u only (not congestion, whose H depends on m) and the local (tridiagonal / 5-point)
  // HJB operator (not s < 2); Anderson mixing is the fixed point's.
  const Value& iteration_method = mfg.at("iteration.method");
  if (iteration_method.text == "newton") {
    auto refuse = [&](const char* key, const std::string& got, const std::string& need) {
      fail(file, iteration_method.pos, iteration_method.path,
           "newton needs " + need + ", but mfg." + key + " is " + got +
               "; use mfg.iteration.method: fixed_point");
    };
    if (method.text != "fdm")
      refuse("fokker_planck.method", method.text, "fokker_planck.method fdm");
    if (hamiltonian.text == "congestion") {
      refuse("hamiltonian.type", hamiltonian.text, "a quadratic or power Hamiltonian");
    }
    if (mfg.at("diffusion_order").real < 2.0) {
      refuse("diffusion_order", format_real(mfg.at("diffusion_order").real), "diffusion_order 2");
    }
    if (mfg.at("iteration.anderson").integer > 0) {
      refuse("iteration.anderson", std::to_string(mfg.at("iteration.anderson").integer),
             "iteration.anderson 0 (Anderson mixing belongs to the fixed point)");
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
