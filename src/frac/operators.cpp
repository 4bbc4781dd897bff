#include "fracmfg/frac/operators.hpp"

#include <cmath>
#include <sstream>
#include <utility>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/weights.hpp"

namespace fracmfg::frac {

namespace {

void require_samples(const std::vector<double>& f, double h, const char* name) {
  if (f.empty()) {
    std::ostringstream os;
    os << "frac::" << name << ": no samples";
    throw Error(os.str());
  }
  if (!(h > 0.0) || !std::isfinite(h)) {
    std::ostringstream os;
    os << "frac::" << name << ": step h must be > 0 (got " << h << ")";
    throw Error(os.str());
  }
}

// out[n] = scale * sum_{k=0}^{n} w_k g_{n-k}, n = 0..g.size()-1.
std::vector<double> scaled_causal_convolution(std::vector<double> w, const std::vector<double>& g,
                                              double scale, ConvolutionMethod method) {
  const std::size_t n = g.size();
  Convolution conv(std::move(w), n, method);
  std::vector<double> out = conv.apply(g);
  for (double& v : out) v *= scale;
  return out;
}

}  // namespace

std::vector<double> riemann_liouville_integral(const std::vector<double>& f, double h, double alpha,
                                               ProductRule rule, ConvolutionMethod method) {
  require_samples(f, h, "riemann_liouville_integral");
  const std::size_t n_points = f.size();
  std::vector<double> out(n_points, 0.0);
  if (n_points == 1) {
    rl_rectangle_weights(alpha, h, 0);  // validates alpha
    return out;
  }
  if (rule == ProductRule::rectangle) {
    // I(t_n) = sum_{j=0}^{n-1} b_{n-1-j} f_j: the causal convolution of b with f_0..f_{N-1},
    // shifted by one step.
    std::vector<double> head(f.begin(), f.end() - 1);
    Convolution conv(rl_rectangle_weights(alpha, h, n_points - 1), n_points - 1, method);
    conv.apply(head.data(), out.data() + 1);
    return out;
  }
  // Trapezoid: I(t_n) = start_n f_0 + sum_{k=0}^{n-1} t_k f_{n-k}; the k = n term is
  // replaced by the start weight, so f_0 is taken out of the convolution.
  std::vector<double> g(f);
  g[0] = 0.0;
  out = scaled_causal_convolution(rl_trapezoid_weights(alpha, h, n_points), g, 1.0, method);
  for (std::size_t n = 1; n < n_points; ++n) {
    out[n] += rl_trapezoid_start_weight(alpha, h, n) * f[0];
  }
  out[0] = 0.0;
  return out;
}

std::vector<double> caputo_derivative_l1(const std::vector<double>& u, double h, double alpha,
                                         ConvolutionMethod method) {
  require_samples(u, h, "caputo_derivative_l1");
  const double scale = l1_scale(alpha, h);
  std::vector<double> g(u.size(), 0.0);
  for (std::size_t j = 1; j < u.size(); ++j) g[j] = u[j] - u[j - 1];
  std::vector<double> out =
      scaled_causal_convolution(l1_weights(alpha, u.size()), g, scale, method);
  out[0] = 0.0;  // the empty sum (the FFT leaves round-off there)
  return out;
}

std::vector<double> caputo_derivative_l2(const std::vector<double>& u, double h, double alpha,
                                         double du0, ConvolutionMethod method) {
  require_samples(u, h, "caputo_derivative_l2");
  const double scale = l2_scale(alpha, h);
  std::vector<double> g(u.size(), 0.0);
  if (u.size() > 1) {
    const double ghost = u[0] - h * du0;  // u_{-1}: matches u'(0) to first order
    g[1] = u[1] - 2.0 * u[0] + ghost;
    for (std::size_t j = 2; j < u.size(); ++j) g[j] = u[j] - 2.0 * u[j - 1] + u[j - 2];
  }
  std::vector<double> out =
      scaled_causal_convolution(l2_weights(alpha, u.size()), g, scale, method);
  out[0] = 0.0;
  return out;
}

std::vector<double> grunwald_letnikov_derivative(const std::vector<double>& f, double h,
                                                 double alpha, ConvolutionMethod method) {
  require_samples(f, h, "grunwald_letnikov_derivative");
  if (!(alpha > 0.0) || !std::isfinite(alpha)) {
    std::ostringstream os;
    os << "frac::grunwald_letnikov_derivative: order must be > 0 (got " << alpha << ")";
    throw Error(os.str());
  }
  return scaled_causal_convolution(gl_weights(alpha, f.size()), f, std::pow(h, -alpha), method);
}

}  // namespace fracmfg::frac
