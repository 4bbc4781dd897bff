#include "fracmfg/frac/soe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "fracmfg/core/error.hpp"
#include "fracmfg/frac/soe_quadrature.hpp"

namespace fracmfg::frac {

namespace {

constexpr int kReferenceNodes = 48;
constexpr int kMaxNodes = 48;

/// Sample points of x in [d, 1], log-spaced, both ends included.
std::vector<double> log_samples(double d, double hi, int per_decade) {
  std::vector<double> x;
  const double decades = std::log10(hi / d);
  const int count = std::max(2, static_cast<int>(std::ceil(decades * per_decade)) + 1);
  x.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    x.push_back(i + 1 == count ? hi : d * std::pow(10.0, decades * i / (count - 1)));
  }
  if (d == hi) x.assign(1, hi);
  return x;
}

/// Upper bound of the incomplete gamma function Gamma(beta, r) (for r > beta - 1 when
/// beta > 1): r^(beta-1) e^-r (1 - (beta-1)/r)^-1, or r^(beta-1) e^-r for beta <= 1.
double upper_gamma_bound(double beta, double r) {
  const double lead = std::exp((beta - 1.0) * std::log(r) - r);
  if (beta <= 1.0) return lead;
  return lead / (1.0 - (beta - 1.0) / r);
}

/// One piece of the split of [0, p]: [lo, hi] with a Gauss-Jacobi (lo = 0) or
/// Gauss-Legendre rule.
struct Piece {
  double lo = 0.0;
  double hi = 0.0;
  bool jacobi = false;
};

/// Nodes s_k and weights W_k (with 1/Gamma(beta)) of an n-point rule on a piece, for
/// int exp(-x s) s^(beta-1) ds / Gamma(beta).
void piece_rule(const Piece& piece, int n, double beta, std::vector<double>& s,
                std::vector<double>& w) {
  const double half = 0.5 * (piece.hi - piece.lo);
  const double inv_gamma = std::exp(-std::lgamma(beta));
  s.clear();
  w.clear();
  if (piece.jacobi) {
    const GaussRule r = gauss_jacobi(n, 0.0, beta - 1.0);
    const double scale = std::pow(half, beta) * inv_gamma;
    for (int k = 0; k < n; ++k) {
      s.push_back(half * (1.0 + r.nodes[static_cast<std::size_t>(k)]));
      w.push_back(scale * r.weights[static_cast<std::size_t>(k)]);
    }
  } else {
    const GaussRule r = gauss_legendre(n);
    for (int k = 0; k < n; ++k) {
      const double sk = piece.lo + half * (1.0 + r.nodes[static_cast<std::size_t>(k)]);
      s.push_back(sk);
      w.push_back(half * r.weights[static_cast<std::size_t>(k)] * std::pow(sk, beta - 1.0) *
                  inv_gamma);
    }
  }
}

/// sum_k w_k exp(-x s_k) at every sample x.
std::vector<double> evaluate(const std::vector<double>& s, const std::vector<double>& w,
                             const std::vector<double>& x) {
  std::vector<double> v(x.size(), 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    double sum = 0.0;
    for (std::size_t k = 0; k < s.size(); ++k) sum += w[k] * std::exp(-x[i] * s[k]);
    v[i] = sum;
  }
  return v;
}

struct Scaled {
  std::vector<double> s;
  std::vector<double> w;
};

/// The SOE of x^-beta on [d, 1] with the pieces' budget `budget` (relative to x^-beta).
Scaled build(double beta, int m0, int top, double budget, const std::vector<double>& x) {
  std::vector<Piece> pieces;
  pieces.push_back({0.0, std::ldexp(1.0, m0), true});
  for (int j = m0; j < top; ++j) pieces.push_back({std::ldexp(1.0, j), std::ldexp(1.0, j + 1)});
  const double per_piece = budget;
  std::vector<double> scale(x.size());  // 1 / x^-beta
  for (std::size_t i = 0; i < x.size(); ++i) scale[i] = std::pow(x[i], beta);

  Scaled out;
  std::vector<double> s;
  std::vector<double> w;
  for (const Piece& piece : pieces) {
    piece_rule(piece, kReferenceNodes, beta, s, w);
    const std::vector<double> ref = evaluate(s, w, x);
    double size = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) size = std::max(size, ref[i] * scale[i]);
    if (size <= per_piece) continue;  // the whole piece is below the budget
    int n = 1;
    for (; n < kMaxNodes; ++n) {
      piece_rule(piece, n, beta, s, w);
      const std::vector<double> v = evaluate(s, w, x);
      double err = 0.0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        err = std::max(err, std::fabs(v[i] - ref[i]) * scale[i]);
      }
      if (err <= per_piece) break;
    }
    piece_rule(piece, n, beta, s, w);
    out.s.insert(out.s.end(), s.begin(), s.end());
    out.w.insert(out.w.end(), w.begin(), w.end());
  }
  return out;
}

}  // namespace

double SoeApproximation::operator()(double t) const {
  double sum = 0.0;
  for (std::size_t j = 0; j < nodes.size(); ++j) sum += weights[j] * std::exp(-nodes[j] * t);
  return sum;
}

SoeApproximation soe_approximation(double beta, double delta, double horizon, double tolerance) {
  if (!(beta > 0.0) || !std::isfinite(beta) || !(delta > 0.0) || !(horizon >= delta) ||
      !std::isfinite(horizon) || !(tolerance >= 1e-14) || !(tolerance <= 0.1)) {
    std::ostringstream os;
    os << "soe_approximation: need beta > 0, 0 < delta <= horizon and 1e-14 <= tolerance <= 0.1"
       << " (got beta = " << beta << ", delta = " << delta << ", horizon = " << horizon
       << ", tolerance = " << tolerance << ")";
    throw Error(os.str());
  }
  const double d = delta / horizon;
  // 1. Truncation of the Laplace integral: Gamma(beta, p x) / Gamma(beta) <= tolerance / 4
  //    for every x >= d.
  const double gamma_beta = std::exp(std::lgamma(beta));
  double r = std::max(1.0, 2.0 * beta);
  while (upper_gamma_bound(beta, r) > 0.25 * tolerance * gamma_beta) r += 0.05;
  const double p = r / d;
  const int top = static_cast<int>(std::ceil(std::log2(p)));

  const std::vector<double> coarse = log_samples(d, 1.0, 40);
  const std::vector<double> fine = log_samples(d, 1.0, 200);
  SoeApproximation soe;
  soe.beta = beta;
  soe.delta = delta;
  soe.horizon = horizon;
  soe.tolerance = tolerance;

  double budget = 0.5 * tolerance;
  for (int attempt = 0; attempt < 16; ++attempt, budget *= 0.5) {
    // 2-3. Pieces and per-piece node counts; the split point 2^m0 with the fewest terms.
    Scaled best;
    bool have = false;
    for (int m0 = 0; m0 <= 3; ++m0) {
      Scaled cand = build(beta, m0, std::max(top, m0), budget, coarse);
      if (!have || cand.s.size() < best.s.size()) {
        best = std::move(cand);
        have = true;
      }
    }
    // Back to time units: t^-beta = horizon^-beta x^-beta, exp(-s x) = exp(-(s/horizon) t).
    const double wscale = std::pow(horizon, -beta);
    soe.nodes.resize(best.s.size());
    soe.weights.resize(best.s.size());
    std::vector<std::size_t> order(best.s.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return best.s[a] < best.s[b]; });
    for (std::size_t j = 0; j < order.size(); ++j) {
      soe.nodes[j] = best.s[order[j]] / horizon;
      soe.weights[j] = best.w[order[j]] * wscale;
    }
    // Check on the finer sample (scaled variable: the same relative error).
    double err = 0.0;
    for (double xi : fine) {
      double sum = 0.0;
      for (std::size_t j = 0; j < best.s.size(); ++j) sum += best.w[j] * std::exp(-xi * best.s[j]);
      err = std::max(err, std::fabs(sum * std::pow(xi, beta) - 1.0));
    }
    if (err <= 0.9 * tolerance) return soe;
  }
  std::ostringstream os;
  os << "soe_approximation: could not reach the relative tolerance " << tolerance
     << " for beta = " << beta << " on [" << delta << ", " << horizon << "]";
  throw NumericalError(os.str());
}

double soe_relative_error(const SoeApproximation& soe, int points_per_decade) {
  double err = 0.0;
  for (double t : log_samples(soe.delta, soe.horizon, std::max(1, points_per_decade))) {
    err = std::max(err, std::fabs(soe(t) * std::pow(t, soe.beta) - 1.0));
  }
  return err;
}

}  // namespace fracmfg::frac
