#include "fracmfg/frac/multi_term_solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "fracmfg/core/error.hpp"

namespace fracmfg::frac {

namespace {

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// One integral of the Volterra form: I^order g, g = f(t, y) (of_rhs) or y - T_k.
struct Integral {
  double order = 0.0;
  double weight = 0.0;  ///< its factor in y = T_Q + sum weight I^order g
  bool of_rhs = false;
  double term_order = 0.0;    ///< a_k of g = y - T_k
  std::size_t value = 0;      ///< the component holding I^order g
  std::size_t integrand = 0;  ///< the component whose derivative is g (== value unless split)
};

/// The data the reduced right-hand side needs (shared by its callables).
struct Reduced {
  std::vector<Integral> integrals;
  std::size_t size = 0;
  double highest = 0.0;
  double y0 = 0.0;
  double y1 = 0.0;
  std::function<double(double, double)> f;
  std::function<double(double, double)> fy;

  /// T_k(t): the Taylor polynomial of y of degree ceil(a) - 1.
  double taylor(double a, double t) const {
    if (a <= 0.0) return 0.0;
    return a <= 1.0 ? y0 : y0 + t * y1;
  }
  double y_of(double t, const double* w) const {
    double y = taylor(highest, t);
    for (const Integral& i : integrals) y += i.weight * w[i.value];
    return y;
  }
  void rhs(double t, const double* w, double* out) const {
    const double y = y_of(t, w);
    for (const Integral& i : integrals) {
      out[i.integrand] = i.of_rhs ? f(t, y) : y - taylor(i.term_order, t);
      if (i.value != i.integrand) out[i.value] = w[i.integrand];
    }
  }
  double derivative(double t, double y) const {
    if (fy) return fy(t, y);
    const double delta =
        std::sqrt(std::numeric_limits<double>::epsilon()) * std::max(1.0, std::fabs(y));
    const double step = (y + delta) - y;
    return (f(t, y + step) - f(t, y)) / step;
  }
  // d y / d w is `weight` at each integral's value component; the rows of the integrands are
  // g'(y) d y / d w, those of the split second components pick their first component.
  void jacobian(double t, const double* w, double* jac) const {
    const std::size_t n = size;
    std::fill(jac, jac + n * n, 0.0);
    const double y = y_of(t, w);
    for (const Integral& i : integrals) {
      const double g = i.of_rhs ? derivative(t, y) : 1.0;
      for (const Integral& j : integrals) jac[i.integrand * n + j.value] += g * j.weight;
      if (i.value != i.integrand) jac[i.value * n + i.integrand] = 1.0;
    }
  }
};

}  // namespace

std::size_t multi_term_initial_count(const std::vector<double>& orders) {
  double highest = 0.0;
  for (double a : orders) highest = std::max(highest, a);
  return highest > 1.0 ? 2 : 1;
}

struct MultiTermSolver::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::shared_ptr<Reduced> reduced;
  std::optional<FodeSolver> system;
  double y = 0.0;
};

namespace {

void check(const MultiTermProblem& p) {
  const auto fail = [](const std::string& what) { throw Error("MultiTermSolver: " + what); };
  if (p.orders.empty()) fail("no terms given");
  if (p.coefficients.size() != p.orders.size()) {
    fail(std::to_string(p.orders.size()) + " orders but " + std::to_string(p.coefficients.size()) +
         " coefficients");
  }
  double highest = 0.0;
  std::size_t q = 0;
  for (std::size_t k = 0; k < p.orders.size(); ++k) {
    const double a = p.orders[k];
    if (!(a >= 0.0 && a <= 2.0)) {
      fail("order " + format_double(a) + " of term " + std::to_string(k + 1) +
           " must lie in [0, 2]");
    }
    if (!std::isfinite(p.coefficients[k])) {
      fail("the coefficient of term " + std::to_string(k + 1) + " is not finite");
    }
    for (std::size_t l = 0; l < k; ++l) {
      if (p.orders[l] == a) {
        fail("terms " + std::to_string(l + 1) + " and " + std::to_string(k + 1) +
             " have the same order " + format_double(a) + "; add their coefficients");
      }
    }
    if (a > highest) {
      highest = a;
      q = k;
    }
  }
  if (!(highest > 0.0)) fail("at least one order must be > 0");
  if (p.coefficients[q] == 0.0) {
    fail("the coefficient of the highest order " + format_double(highest) + " is 0");
  }
  if (!p.rhs) fail("no right-hand side f(t, y) given");
  const std::size_t count = multi_term_initial_count(p.orders);
  if (p.initial.size() != count) {
    fail("expected " + std::to_string(count) +
         (count == 1 ? " initial value (y(0))" : " initial values (y(0), y'(0))") + ", got " +
         std::to_string(p.initial.size()));
  }
}

}  // namespace

MultiTermSolver::MultiTermSolver(MPI_Comm comm, MultiTermProblem problem, FodeOptions options,
                                 exec::Selector* selector, core::Logger log)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.comm = comm;
  MPI_Comm_rank(comm, &s.rank);
  check(problem);

  auto r = std::make_shared<Reduced>();
  std::size_t q = 0;
  for (std::size_t k = 1; k < problem.orders.size(); ++k) {
    if (problem.orders[k] > problem.orders[q]) q = k;
  }
  r->highest = problem.orders[q];
  const double lead = problem.coefficients[q];
  r->y0 = problem.initial[0];
  r->y1 = problem.initial.size() > 1 ? problem.initial[1] : 0.0;
  r->f = std::move(problem.rhs);
  r->fy = std::move(problem.rhs_derivative);
  std::vector<double> orders;  // of the reduced components
  const auto add = [&](double order, double weight, bool of_rhs, double term_order) {
    Integral i;
    i.order = order;
    i.weight = weight;
    i.of_rhs = of_rhs;
    i.term_order = term_order;
    i.integrand = orders.size();
    if (order < 2.0) {
      orders.push_back(order);
      i.value = i.integrand;
    } else {
      // I^2 g = I^1 (I^1 g): D v = g, D w = v.
      orders.push_back(1.0);
      orders.push_back(1.0);
      i.value = i.integrand + 1;
    }
    r->integrals.push_back(i);
  };
  add(r->highest, 1.0 / lead, true, r->highest);
  for (std::size_t k = 0; k < problem.orders.size(); ++k) {
    if (k == q || problem.coefficients[k] == 0.0) continue;
    add(r->highest - problem.orders[k], -problem.coefficients[k] / lead, false, problem.orders[k]);
  }
  r->size = orders.size();
  s.reduced = r;
  s.y = r->y0;

  FodeProblem fp;
  const auto n = static_cast<PetscInt>(orders.size());
  fp.global_size = n;
  fp.local_size = s.rank == 0 ? n : 0;
  fp.horizon = problem.horizon;
  fp.steps = problem.steps;
  fp.grading = problem.grading;
  fp.order = s.rank == 0 ? orders : std::vector<double>{orders.front()};
  fp.initial = {0.0};
  if (*std::max_element(orders.begin(), orders.end()) > 1.0) fp.initial_derivative = {0.0};
  FodeRhs rhs;
  if (s.rank == 0) {
    rhs.function = [r](double t, const double* w, double* out) { r->rhs(t, w, out); };
    rhs.jacobian = [r](double t, const double* w, double* jac) { r->jacobian(t, w, jac); };
  } else {
    rhs.function = [](double, const double*, double*) {};  // no components on this rank
  }
  options.growth_check = false;
  s.system.emplace(comm, std::move(fp), std::move(rhs), std::move(options), selector, log);
}

MultiTermSolver::~MultiTermSolver() = default;
MultiTermSolver::MultiTermSolver(MultiTermSolver&&) noexcept = default;
MultiTermSolver& MultiTermSolver::operator=(MultiTermSolver&&) noexcept = default;

FodeStats MultiTermSolver::solve(const FodeSolver::Observer& observer, std::int64_t observe_every) {
  Impl& s = *impl_;
  const Reduced& r = *s.reduced;
  FodeSolver::Observer inner;
  if (observer) {
    inner = [&](const FodeStepView& v) {
      double y = 0.0;
      FodeStepView view = v;
      view.local_size = 0;
      view.y = &y;
      if (v.local_size > 0) {
        y = r.y_of(v.time, v.y);
        view.local_size = 1;
      }
      observer(view);
    };
  }
  FodeStats stats = s.system->solve(inner, observe_every);
  double y = 0.0;
  if (s.rank == 0) y = r.y_of(s.system->horizon(), s.system->solution().data());
  MPI_Bcast(&y, 1, MPI_DOUBLE, 0, s.comm);
  s.y = y;
  return stats;
}

double MultiTermSolver::solution() const {
  return impl_->y;
}
double MultiTermSolver::highest_order() const {
  return impl_->reduced->highest;
}
const FodeSolver& MultiTermSolver::system() const {
  return *impl_->system;
}

}  // namespace fracmfg::frac
