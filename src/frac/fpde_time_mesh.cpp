#include "fracmfg/frac/fpde_time_mesh.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "fracmfg/core/error.hpp"

namespace fracmfg::frac {

FpdeTimeMesh::FpdeTimeMesh(double horizon, std::int64_t steps, double grading)
    : horizon_(horizon), steps_(steps), grading_(grading) {
  if (!(horizon > 0.0) || !std::isfinite(horizon) || steps < 1 || !(grading >= 1.0) ||
      !std::isfinite(grading)) {
    std::ostringstream os;
    os << "time mesh: need horizon > 0, steps >= 1 and grading >= 1 (got " << horizon << ", "
       << steps << ", " << grading << ")";
    throw Error(os.str());
  }
  const auto n_total = static_cast<std::size_t>(steps);
  t_.resize(n_total + 1);
  tau_.assign(n_total + 1, 0.0);
  const double big_n = static_cast<double>(steps);
  for (std::size_t n = 0; n <= n_total; ++n) {
    const double ratio = static_cast<double>(n) / big_n;
    t_[n] =
        n == n_total ? horizon : (uniform() ? horizon * ratio : horizon * std::pow(ratio, grading));
  }
  for (std::size_t n = 1; n <= n_total; ++n) {
    if (uniform()) {
      tau_[n] = horizon / big_n;
    } else {
      // t_n - t_{n-1} = T (n/N)^r (1 - (1 - 1/n)^r), the bracket by expm1/log1p.
      const double x = static_cast<double>(n);
      const double bracket = n == 1 ? 1.0 : -std::expm1(grading * std::log1p(-1.0 / x));
      tau_[n] = horizon * std::pow(x / big_n, grading) * bracket;
    }
  }
}

double FpdeTimeMesh::min_history_lag() const {
  if (steps_ == 1) return tau_[1];
  return *std::min_element(tau_.begin() + 2, tau_.end());
}

}  // namespace fracmfg::frac
