// The `fpde` section: time- or space-fractional diffusion in 1D or 2D.
#include <cmath>

#include "fracmfg/core/expression.hpp"
#include "io/deck_schema_sections.hpp"

namespace fracmfg::io::detail {

using namespace schema;

// clang-format off
Field fpde_schema() {
  const std::vector<std::string> xy = {"x", "y"};
  const std::vector<std::string> xyt = {"x", "y", "t"};
  const std::vector<std::string> xytu = {"x", "y", "t", "u"};
  return section("fpde", "Fractional diffusion: D_t^a u = K Laplace u + f, or u_t = -K (-Laplace)^(a/2) u + f.", {
    choice("type", {"time_fractional", "space_fractional"}, "time_fractional: Caputo in time (L1); space_fractional: Riesz in space (Toeplitz)").required(),
    real("order", "order a: in [1e-6, 1) for time_fractional, in (1, 2] for space_fractional").greater_than(0).at_most(2).required(),
    section("domain", "Spatial domain.", {
      reals("length", 1, 2, "side lengths [Lx] or [Lx, Ly]; their count is the dimension").greater_than(0).required(),
      choice("boundary", {"dirichlet", "neumann", "periodic"}, "boundary condition").required(),
    }),
    section("grid", "Finite-difference grid.", {
      integers("points", 1, 2, "grid points per direction, one per domain length").at_least(3).required(),
    }),
    section("time", "Time mesh.", {
      real("horizon", "final time T").greater_than(0).required(),
      integer("steps", "number of time steps").at_least(1).required(),
      real("grading", "grading exponent r of t_n = T (n / steps)^r; 1: uniform; at most 200 / log10(steps), so the first step T steps^-r is at least 1e-200 T").at_least(1).def(1.0),
    }),
    real("diffusivity", "diffusion coefficient K (times diffusivity_profile when given)").greater_than(0).required(),
    expression("diffusivity_profile", xy, "K(x, y) = diffusivity * profile(x, y), positive at the grid's points (and half points for time_fractional); time_fractional: div(K grad u), K at the half points of the 5-point operator (symmetric); space_fractional: K(x, y) (-Laplace)^(a/2) u, K multiplying the Riesz operator at each point").optional("K constant when absent"),
    expression("initial", xy, "initial condition u(0, x, y)").required(),
    expression("source", xytu, "source term f(x, y, t) or f(x, y, t, u); with u each step is solved by Newton's method").def("0"),
    expression("source_derivative", xytu, "df/du of a source that uses u, for the Newton Jacobian").optional("forward differences when absent: (f(u + d) - f(u)) / d, d = 2^-26 max(1, |u|)"),
    expression("boundary_value", xyt, "boundary data: the value (dirichlet) or the outward flux (neumann)").def("0").only_when("fpde.domain.boundary", {"dirichlet", "neumann"}),
    section("history", "Memory of the Caputo derivative.", {
      choice("method", {"direct", "soe"}, "direct: the full L1 sum; soe: sum-of-exponentials approximation").def("soe"),
      real("tolerance", "accuracy of the sum-of-exponentials approximation").at_least(1.0e-14).at_most(1.0e-2).def(1.0e-10),
    }).only_when("fpde.type", {"time_fractional"}),
    section("solver", "Linear solver of each step (further settings through petsc.options).", {
      choice("preconditioner", {"auto", "circulant", "none"}, "auto: by problem type; circulant: Strang circulant; none").def("auto"),
    }),
  });
}
// clang-format on

namespace {
constexpr double kMinTimeOrder = 1e-6;
constexpr double kMinFirstStepDecades = 200.0;
constexpr double kMaxStencilCoefficient = 1e300;

/// The profile must be a positive number at every point of the grid and, for the 5-point
/// operator of time_fractional (which evaluates it at the half points; a positive K keeps it
/// an M-matrix), at every half point too. space_fractional evaluates it at the points.
void check_profile(const Value& profile, const Value& points, const Value& length, bool periodic,
                   bool half_points, const std::string& file) {
  const core::Expression k(profile.text, {"x", "y"});
  const std::size_t dim = length.reals.size();
  long long count[2] = {1, 1};
  double half[2] = {0.0, 0.0};
  for (std::size_t d = 0; d < dim; ++d) {
    const long long n = points.integers[d];
    count[d] = periodic ? 2 * n : 2 * n - 1;
    half[d] = 0.5 * length.reals[d] / static_cast<double>(periodic ? n : n - 1);
  }
  for (long long j = 0; j < count[1]; ++j) {
    for (long long i = 0; i < count[0]; ++i) {
      if (!half_points && (i % 2 != 0 || j % 2 != 0)) continue;
      const double xy[2] = {static_cast<double>(i) * half[0], static_cast<double>(j) * half[1]};
      const double v = k.evaluate(xy);
      if (!(v > 0.0 && std::isfinite(v))) {
        fail(file, profile.pos, profile.path,
             std::string("expected a formula positive at the grid's points") +
                 (half_points ? " and half points" : "") + "; at (x, y) = (" + format_real(xy[0]) +
                 ", " + format_real(xy[1]) + ") it is " + format_real(v));
      }
    }
  }
}
}  // namespace

void check_fpde(const Value& root, const std::string& file) {
  const Value& fpde = root.at("fpde");
  const Value& type = fpde.at("type");
  const Value& order = fpde.at("order");
  const double a = order.real;
  // Below 1e-6 the sum-of-exponentials history has no approximation to offer (its
  // Gauss-Jacobi rules need a - 1 > -1 in floating point) and the L1 weights degenerate.
  if (type.text == "time_fractional" && !(a >= kMinTimeOrder && a < 1.0)) {
    fail(file, order.pos, order.path,
         "expected a real number in [1e-6, 1) for type time_fractional, got " + format_real(a));
  }
  if (type.text == "space_fractional" && !(a > 1.0 && a <= 2.0)) {
    fail(file, order.pos, order.path,
         "expected a real number in (1, 2] for type space_fractional, got " + format_real(a));
  }
  // The graded mesh's first step T steps^-r must stay a normal number the L1 weights and the
  // history can divide by: steps^-r >= 1e-200.
  const Value& steps = fpde.at("time.steps");
  const Value& grading = fpde.at("time.grading");
  if (steps.integer > 1) {
    const double most = kMinFirstStepDecades / std::log10(static_cast<double>(steps.integer));
    if (grading.real > most) {
      fail(file, grading.pos, grading.path,
           "expected a real number in [1, " + format_real(most) + "] for " +
               std::to_string(steps.integer) + " steps (200 / log10(steps): the first step T " +
               "steps^-grading must be at least 1e-200 T), got " + format_real(grading.real));
    }
  }
  const Value& length = fpde.at("domain.length");
  const Value& points = fpde.at("grid.points");
  check_grid_matches_domain(points, length, file);
  // The stencil's coefficients K / h^2 must be numbers the solvers can factor.
  const bool periodic = fpde.at("domain.boundary").text == "periodic";
  const double diffusivity = fpde.at("diffusivity").real;
  for (std::size_t k = 0; k < length.reals.size(); ++k) {
    const auto n = static_cast<double>(points.integers[k]);
    const double h = length.reals[k] / (periodic ? n : n - 1.0);
    if (!(diffusivity / (h * h) <= kMaxStencilCoefficient)) {
      fail(file, length.item(k), item_path(length.path, k),
           "with " + std::to_string(points.integers[k]) + " points and diffusivity " +
               format_real(diffusivity) + ", the grid spacing " + format_real(h) +
               " gives stencil coefficients diffusivity / spacing^2 above 1e300; expected a " +
               "longer side, fewer points or a smaller diffusivity");
    }
  }
  if (const Value* profile = fpde.find("diffusivity_profile")) {
    check_profile(*profile, points, length, periodic, type.text == "time_fractional", file);
  }
  for (const char* key :
       {"initial", "source", "source_derivative", "diffusivity_profile", "boundary_value"}) {
    if (const Value* v = fpde.find(key)) check_no_y_in_1d(*v, length.reals.size(), file);
  }
  // The derivative only means something for a source depending on u.
  const Value& source = fpde.at("source");
  const bool nonlinear = core::Expression(source.text, source.field->variables()).uses("u");
  if (const Value* derivative = fpde.find("source_derivative")) {
    if (!nonlinear) {
      fail(file, derivative->key_pos, derivative->path,
           "given, but fpde.source does not use u; expected it only with a source of u");
    }
  }
}

}  // namespace fracmfg::io::detail
