// The `fode` section: a system of fractional ODEs D^a y = f(t, y) (Caputo, 0 < a < 2), or
// with `terms` a multi-term equation sum_k c_k D^{a_k} y = f(t, y) for one unknown.
#include <cmath>

#include "io/deck_schema_sections.hpp"

namespace fracmfg::io::detail {

using namespace schema;

// The most components a deck's system may have: as many items as any list in a deck (the
// reader refuses longer lists before storing them).
constexpr std::size_t kMaxComponents = 100000;
// The most terms of a multi-term equation (each adds a history; distinct orders in [0, 2]).
constexpr std::size_t kMaxTerms = 16;

// clang-format off
Field fode_schema() {
  return section("fode", "Fractional ODE system D^a y_i = f_i(t, y1..yd), i = 1..d (Caputo), or with `terms` one multi-term equation sum_k c_k D^{a_k} y = f(t, y), on [0, T].", {
    reals("order", 1, kMaxComponents, "orders a in (0, 2): one for all components or one per component").greater_than(0).less_than(2).optional("required unless fode.terms is given"),
    section("terms", "A multi-term equation sum_k c_k D^{a_k} y = f(t, y) for one unknown y (written y or y1 in fode.rhs, which then holds one formula); fode.initial holds y(0), and y'(0) when the highest order is > 1. Instead of fode.order.", {
      reals("order", 1, kMaxTerms, "orders a_k in [0, 2] (D^0 y = y), distinct, at least one > 0").at_least(0).at_most(2).optional("required in fode.terms"),
      reals("coefficient", 1, kMaxTerms, "coefficients c_k, one per order; the highest order's must not be 0").optional("required in fode.terms"),
    }),
    real("horizon", "final time T").greater_than(0).required(),
    integer("steps", "number of time steps").at_least(1).required(),
    real("grading", "grading exponent r of t_n = T (n / steps)^r (steps concentrate near t = 0, where solutions behave like t^a; r = 1/a restores the full order); 1: uniform; r > 1 sums the history directly, O(N^2); at most 200 / log10(steps)").at_least(1).def(1.0),
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

namespace {

std::string count(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " value" : " values");
}

// fode.terms: the multi-term equation's orders and coefficients, one formula, and the initial
// values its highest order needs.
void check_terms(const Value& fode, const Value& terms, const std::string& file) {
  if (const Value* order = fode.find("order"); order != nullptr && order->given) {
    fail(file, order->key_pos, order->path,
         "not used with " + terms.path + " (the orders are " + terms.path + ".order)");
  }
  const Value* order = terms.find("order");
  const Value* coefficient = terms.find("coefficient");
  for (const auto& [v, name] : {std::pair{order, "order"}, std::pair{coefficient, "coefficient"}}) {
    if (v == nullptr || !v->given) {
      fail(file, terms.key_pos, terms.path + "." + name, "missing required key");
    }
  }
  if (coefficient->reals.size() != order->reals.size()) {
    fail(file, coefficient->pos, coefficient->path,
         "expected " + count(order->reals.size()) + " (one per item of " + order->path + "), got " +
             std::to_string(coefficient->reals.size()));
  }
  std::size_t highest = 0;
  for (std::size_t i = 0; i < order->reals.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (order->reals[j] == order->reals[i]) {
        fail(file, order->item(i), item_path(order->path, i),
             "the order " + format_real(order->reals[i]) + " is also " + item_path(order->path, j) +
                 "; give each order once (add the coefficients)");
      }
    }
    if (order->reals[i] > order->reals[highest]) highest = i;
  }
  const double top = order->reals[highest];
  if (!(top > 0.0)) {
    fail(file, order->pos, order->path, "at least one order must be > 0 (all are 0)");
  }
  if (coefficient->reals[highest] == 0.0) {
    fail(file, coefficient->item(highest), item_path(coefficient->path, highest),
         "the coefficient of the highest order " + format_real(top) + " must not be 0");
  }
  const Value& rhs = fode.at("rhs");
  if (rhs.texts.size() != 1) {
    fail(file, rhs.pos, rhs.path,
         "expected 1 formula f(t, y) with " + terms.path + " (one unknown), got " +
             std::to_string(rhs.texts.size()));
  }
  const std::size_t needed = top > 1.0 ? 2 : 1;
  const Value& initial = fode.at("initial");
  if (initial.reals.size() != needed) {
    fail(file, initial.pos, initial.path,
         "expected " + count(needed) + (needed == 1 ? " (y(0))" : " (y(0), y'(0))") +
             " for the highest order " + format_real(top) + " of " + order->path + ", got " +
             std::to_string(initial.reals.size()));
  }
  if (const Value* derivative = fode.find("initial_derivative"); derivative != nullptr) {
    fail(file, derivative->key_pos, derivative->path,
         "not used with " + terms.path + " (y'(0) is the second item of " + initial.path + ")");
  }
}

}  // namespace

// The graded mesh's first step T steps^-r must stay a normal number (as for fpde), and the
// FFT history needs uniform steps.
void check_grading(const Value& fode, const std::string& file) {
  const Value& grading = fode.at("grading");
  const Value& steps = fode.at("steps");
  if (steps.integer > 1) {
    const double most = 200.0 / std::log10(static_cast<double>(steps.integer));
    if (grading.real > most) {
      fail(file, grading.pos, grading.path,
           "expected a real number in [1, " + format_real(most) + "] for " +
               std::to_string(steps.integer) + " steps (200 / log10(steps): the first step T " +
               "steps^-grading must be at least 1e-200 T), got " + format_real(grading.real));
    }
  }
  const Value& history = fode.at("history");
  if (grading.real > 1.0 && history.text == "fft") {
    fail(file, history.pos, history.path,
         "fft needs uniform steps; with " + grading.path + " = " + format_real(grading.real) +
             " the history is summed directly (use auto or direct)");
  }
}

void check_fode(const Value& root, const std::string& file) {
  const Value& fode = root.at("fode");
  check_grading(fode, file);
  if (const Value* terms = fode.find("terms"); terms != nullptr && terms->given) {
    check_terms(fode, *terms, file);
    return;
  }
  const Value* given_order = fode.find("order");
  if (given_order == nullptr || !given_order->given) {
    fail(file, fode.key_pos, fode.path + ".order",
         "missing required key (or give " + fode.path + ".terms)");
  }
  const Value& rhs = fode.at("rhs");
  const std::size_t d = rhs.texts.size();
  const std::string per_component = " (one per component of " + rhs.path + ")";

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
