// The `fode` section: a system of fractional ODEs D^a y = f(t, y) (Caputo, 0 < a < 2).
#include "io/deck_schema_sections.hpp"

namespace fracmfg::io::detail {

using namespace schema;

// The most components a deck's system may have: as many items as any list in a deck (the
// reader refuses longer lists before storing them).
constexpr std::size_t kMaxComponents = 100000;

// clang-format off
Field fode_schema() {
  return section("fode", "Fractional ODE system D^a y_i = f_i(t, y1..yd), i = 1..d (Caputo), on [0, T].", {
    reals("order", 1, kMaxComponents, "orders a in (0, 2): one for all components or one per component").greater_than(0).less_than(2).required(),
    real("horizon", "final time T").greater_than(0).required(),
    integer("steps", "number of time steps").at_least(1).required(),
    choice("method", {"abm", "trapezoidal"}, "abm: Adams-Bashforth-Moulton predictor-corrector; trapezoidal: implicit, by Newton").def("abm"),
    integer("corrector_iterations", "corrector passes per step").at_least(1).def(1).only_when("fode.method", {"abm"}),
    choice("history", {"auto", "direct", "fft"}, "history sum: direct O(N^2), fft O(N log^2 N), auto: by size").def("auto"),
    section("newton", "Newton iteration of the implicit method.", {
      real("tolerance", "stop when the update norm is below this").greater_than(0).def(1.0e-12),
      integer("max_iterations", "iteration limit per step").at_least(1).def(20),
      choice("jacobian", {"finite_difference"}, "how the Jacobian of f is formed").def("finite_difference"),
    }).only_when("fode.method", {"trapezoidal"}),
    expressions("rhs", {"t"}, "y", 1, kMaxComponents, "right-hand sides f_i, one per component; their count is d").required(),
    reals("initial", 1, kMaxComponents, "y(0), one value per component").required(),
    reals("initial_derivative", 1, kMaxComponents, "y'(0), one value per component").optional("required when some order > 1"),
  });
}
// clang-format on

void check_fode(const Value& root, const std::string& file) {
  const Value& fode = root.at("fode");
  const Value& rhs = fode.at("rhs");
  const std::size_t d = rhs.texts.size();
  const std::string per_component = " (one per component of " + rhs.path + ")";
  const auto count = [](std::size_t n) {
    return std::to_string(n) + (n == 1 ? " value" : " values");
  };

  const Value& order = fode.at("order");
  if (order.reals.size() != 1 && order.reals.size() != d) {
    fail(file, order.pos, order.path,
         "expected 1 value (for all components) or " + count(d) + per_component + ", got " +
             std::to_string(order.reals.size()));
  }
  const Value& initial = fode.at("initial");
  if (initial.reals.size() != d) {
    fail(file, initial.pos, initial.path,
         "expected " + count(d) + per_component + ", got " + std::to_string(initial.reals.size()));
  }

  // y'(0) is part of the initial data exactly when some order exceeds 1.
  std::size_t above_one = order.reals.size();
  for (std::size_t i = 0; i < order.reals.size(); ++i) {
    if (order.reals[i] > 1.0) {
      above_one = i;
      break;
    }
  }
  const Value* derivative = fode.find("initial_derivative");
  if (above_one < order.reals.size() && derivative == nullptr) {
    fail(file, fode.key_pos, fode.path + ".initial_derivative",
         "missing required key (" + count(d) + "): needed because " +
             item_path(order.path, above_one) + " = " + format_real(order.reals[above_one]) +
             " > 1");
  }
  if (above_one == order.reals.size() && derivative != nullptr) {
    fail(file, derivative->key_pos, derivative->path,
         "only used when some order is > 1 (every item of " + order.path + " is <= 1)");
  }
  if (derivative != nullptr && derivative->reals.size() != d) {
    fail(file, derivative->pos, derivative->path,
         "expected " + count(d) + per_component + ", got " +
             std::to_string(derivative->reals.size()));
  }
}

}  // namespace fracmfg::io::detail
