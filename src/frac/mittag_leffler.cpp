#include "fracmfg/frac/mittag_leffler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "fracmfg/core/error.hpp"

namespace fracmfg::frac {

namespace {

using cplx = std::complex<double>;

constexpr double kPi = 3.14159265358979323846;
// log of the unit round-off 2^-52, as in Garrappa's error analysis.
const double kLogEps = std::log(std::numeric_limits<double>::epsilon());
// Target accuracy 1e-15, as in Garrappa's ml.m.
const double kLogTarget = std::log(1.0e-15);
constexpr double kInf = std::numeric_limits<double>::infinity();

// 1 / Gamma(x), zero at the poles of Gamma (x = 0, -1, -2, ...).
double reciprocal_gamma(double x) {
  if (x <= 0.0 && x == std::floor(x)) return 0.0;
  return 1.0 / std::tgamma(x);
}

void require_parameters(double alpha, double beta) {
  if (!(alpha > 0.0) || !std::isfinite(alpha) || !std::isfinite(beta)) {
    std::ostringstream os;
    os << "frac::mittag_leffler: need alpha > 0 and finite beta (got alpha = " << alpha
       << ", beta = " << beta << ")";
    throw Error(os.str());
  }
}

// Parameters of the parabolic contour z(u) = mu (i u + 1)^2 and of the trapezoidal rule
// with step h on u in [-n h, n h]; n = inf marks a region that cannot be used.
struct ContourParameters {
  double mu = 0.0;
  double h = 0.0;
  double n = kInf;
};

// Optimal parameters in a region bounded on the right, between the singularities with
// phi = phi_j and phi_j1, where phi(s) = (Re s + |s|)/2 and p_j, q_j are the strengths of the
// singularities at its ends (Garrappa 2015: the error balance for a right-bounded region).
ContourParameters optimal_parameters_bounded(double t, double phi_j, double phi_j1, double p_j,
                                             double q_j, double log_epsilon) {
  constexpr double kFac = 1.01;
  const double f_max = std::exp(log_epsilon - kLogEps);
  const double sq_phi_j = std::sqrt(phi_j);
  const double threshold = 2.0 * std::sqrt((log_epsilon - kLogEps) / t);
  const double sq_phi_j1 = std::min(std::sqrt(phi_j1), threshold - sq_phi_j);

  double sq_bar_j = sq_phi_j;
  double sq_bar_j1 = sq_phi_j1;
  double f_bar = 1.0;
  bool admissible = true;
  const bool p_zero = p_j < 1.0e-14;
  const bool q_zero = q_j < 1.0e-14;
  if (p_zero && !q_zero) {
    const double f_min =
        sq_phi_j > 0.0 ? kFac * std::pow(sq_phi_j / (sq_phi_j1 - sq_phi_j), q_j) : kFac;
    if (f_min < f_max) {
      f_bar = f_min + f_min / f_max * (f_max - f_min);
      const double fq = std::pow(f_bar, -1.0 / q_j);
      sq_bar_j1 = (2.0 * sq_phi_j1 - fq * sq_phi_j) / (2.0 + fq);
    } else {
      admissible = false;
    }
  } else if (!p_zero && q_zero) {
    const double f_min = kFac * std::pow(sq_phi_j1 / (sq_phi_j1 - sq_phi_j), p_j);
    if (f_min < f_max) {
      f_bar = f_min + f_min / f_max * (f_max - f_min);
      const double fp = std::pow(f_bar, -1.0 / p_j);
      sq_bar_j = (2.0 * sq_phi_j + fp * sq_phi_j1) / (2.0 - fp);
    } else {
      admissible = false;
    }
  } else if (!p_zero && !q_zero) {
    double f_min =
        kFac * (sq_phi_j + sq_phi_j1) / std::pow(sq_phi_j1 - sq_phi_j, std::max(p_j, q_j));
    if (f_min < f_max) {
      f_min = std::max(f_min, 1.5);
      f_bar = f_min + f_min / f_max * (f_max - f_min);
      const double fp = std::pow(f_bar, -1.0 / p_j);
      const double fq = std::pow(f_bar, -1.0 / q_j);
      const double w = -phi_j1 * t / log_epsilon;
      const double den = 2.0 + w - (1.0 + w) * fp + fq;
      sq_bar_j = ((2.0 + w + fq) * sq_phi_j + fp * sq_phi_j1) / den;
      sq_bar_j1 = (-(1.0 + w) * fq * sq_phi_j + (2.0 + w - (1.0 + w) * fp) * sq_phi_j1) / den;
    } else {
      admissible = false;
    }
  }
  if (!admissible) return {};

  const double log_eps_region = log_epsilon - std::log(f_bar);
  const double w = -sq_bar_j1 * sq_bar_j1 * t / log_eps_region;
  ContourParameters c;
  const double mid = ((1.0 + w) * sq_bar_j + sq_bar_j1) / (2.0 + w);
  c.mu = mid * mid;
  c.h = -2.0 * kPi / log_eps_region * (sq_bar_j1 - sq_bar_j) / ((1.0 + w) * sq_bar_j + sq_bar_j1);
  c.n = std::ceil(std::sqrt(1.0 - log_eps_region / t / c.mu) / c.h);
  return c;
}

// Optimal parameters in the region unbounded on the right, beyond the singularity with
// phi = phi_j of strength p_j (Garrappa 2015: the right-unbounded region).
ContourParameters optimal_parameters_unbounded(double t, double phi_j, double p_j,
                                               double log_epsilon) {
  const double sq_phi_j = std::sqrt(phi_j);
  double phi_bar = phi_j > 0.0 ? phi_j * 1.01 : 0.01;
  double sq_phi_bar = std::sqrt(phi_bar);
  constexpr double kFMin = 1.0;
  constexpr double kFMax = 10.0;
  constexpr double kFTarget = 5.0;

  double n = 0.0;
  double a = 0.0;
  double sq_mu = 0.0;
  for (int iteration = 0; iteration < 100; ++iteration) {
    const double phi_t = phi_bar * t;
    const double log_eps_phi_t = log_epsilon / phi_t;
    n = std::ceil(phi_t / kPi * (1.0 - 1.5 * log_eps_phi_t + std::sqrt(1.0 - 2.0 * log_eps_phi_t)));
    a = kPi * n / phi_t;
    sq_mu = sq_phi_bar * std::fabs(4.0 - a) / std::fabs(7.0 - std::sqrt(1.0 + 12.0 * a));
    const double f_bar = std::pow((sq_phi_bar - sq_phi_j) / sq_mu, -p_j);
    if (p_j < 1.0e-14 || (kFMin < f_bar && f_bar < kFMax)) break;
    sq_phi_bar = std::pow(kFTarget, -1.0 / p_j) * sq_mu + sq_phi_j;
    phi_bar = sq_phi_bar * sq_phi_bar;
  }
  ContourParameters c;
  c.mu = sq_mu * sq_mu;
  c.h = (-3.0 * a - 2.0 + 2.0 * std::sqrt(1.0 + 12.0 * a)) / (4.0 - a) / n;
  c.n = n;

  // Keep the round-off amplification exp(mu t) below the target over the unit round-off.
  const double threshold = (log_epsilon - kLogEps) / t;
  if (c.mu > threshold) {
    const double q = std::fabs(p_j) < 1.0e-14 ? 0.0 : std::pow(kFTarget, -1.0 / p_j) * sq_mu;
    const double phi_bar_new = (q + sq_phi_j) * (q + sq_phi_j);
    if (phi_bar_new < threshold) {
      const double w = std::sqrt(kLogEps / (kLogEps - log_epsilon));
      const double u = std::sqrt(-phi_bar_new * t / kLogEps);
      c.mu = threshold;
      c.n = std::ceil(w * log_epsilon / 2.0 / kPi / (u * w - 1.0));
      c.h = w / c.n;
    } else {
      c.n = kInf;
      c.h = 0.0;
    }
  }
  return c;
}

// E_{alpha,beta}(lambda) by Laplace-transform inversion at t = 1 (Garrappa 2015, the OPC
// algorithm of ml.m: pick the region between singularities that needs the fewest nodes).
cplx laplace_inversion(cplx lambda, double alpha, double beta) {
  const double t = 1.0;
  // Poles of s^{alpha-beta}/(s^alpha - lambda) on the principal sheet |arg s| < pi.
  const double theta = std::arg(lambda);
  const double k_min = std::ceil(-alpha / 2.0 - theta / (2.0 * kPi));
  const double k_max = std::floor(alpha / 2.0 - theta / (2.0 * kPi));
  const double radius = std::pow(std::abs(lambda), 1.0 / alpha);
  struct Singularity {
    cplx s;
    double phi;
    double k;  // branch index of the pole
  };
  std::vector<Singularity> sing;
  for (double k = k_min; k <= k_max; k += 1.0) {
    const cplx s = std::polar(radius, (theta + 2.0 * kPi * k) / alpha);
    const double phi = (s.real() + std::abs(s)) / 2.0;
    // Poles on the branch cut (phi = 0) are not poles of the principal branch.
    if (phi > 1.0e-15) sing.push_back({s, phi, k});
  }
  std::stable_sort(sing.begin(), sing.end(),
                   [](const Singularity& x, const Singularity& y) { return x.phi < y.phi; });
  sing.insert(sing.begin(), Singularity{cplx(0.0, 0.0), 0.0, 0.0});  // the branch point s = 0

  const std::size_t count = sing.size();  // J + 1 in Garrappa's notation
  std::vector<double> phi(count + 1);
  std::vector<double> p(count, 1.0);
  std::vector<double> q(count, 1.0);
  for (std::size_t j = 0; j < count; ++j) phi[j] = sing[j].phi;
  phi[count] = kInf;
  p[0] = std::max(0.0, -2.0 * (alpha - beta + 1.0));
  q[count - 1] = kInf;

  // Regions whose left end keeps the round-off amplification acceptable.
  std::vector<std::size_t> regions;
  for (std::size_t j = 0; j < count; ++j) {
    if (phi[j] < (kLogTarget - kLogEps) / t && phi[j] < phi[j + 1]) regions.push_back(j);
  }

  std::vector<ContourParameters> params(count);
  std::size_t best = 0;
  double log_epsilon = kLogTarget;
  for (int relax = 0;; ++relax) {
    double n_min = kInf;
    for (std::size_t j : regions) {
      params[j] = j + 1 < count
                      ? optimal_parameters_bounded(t, phi[j], phi[j + 1], p[j], q[j], log_epsilon)
                      : optimal_parameters_unbounded(t, phi[j], p[j], log_epsilon);
      if (params[j].n < n_min) {
        n_min = params[j].n;
        best = j;
      }
    }
    if (n_min <= 200.0) break;
    // Too many nodes everywhere: ask for one digit less (Garrappa's ml.m does the same).
    if (relax == 12) throw NumericalError("frac::mittag_leffler: no admissible contour found");
    log_epsilon += std::log(10.0);
  }

  const ContourParameters& c = params[best];
  const int n = static_cast<int>(c.n);
  auto node = [&](int k) {
    const double u = c.h * k;
    const cplx iu1(1.0, u);
    const cplx z = c.mu * iu1 * iu1;
    const cplx dz = cplx(-2.0 * c.mu * u, 2.0 * c.mu);
    const cplx f = std::pow(z, alpha - beta) / (std::pow(z, alpha) - lambda) * dz;
    return std::exp(z * t) * f;
  };
  cplx sum = node(0);
  for (int k = 1; k <= n; ++k) sum += node(k) + node(-k);
  // The truncation point u = n h assumes a bounded transform; s^{alpha-beta}/(s^alpha -
  // lambda) grows like |s|^{-beta} along the contour, so for beta < 0 the tail beyond n h is
  // not negligible. Continue until the terms are below the target.
  const double scale = c.h / (2.0 * kPi);
  for (int k = n + 1; k <= 20 * n + 100; ++k) {
    const cplx tail = node(k) + node(-k);
    sum += tail;
    if (scale * std::abs(tail) <= 1e-17 * (1.0 + scale * std::abs(sum))) break;
  }
  const cplx integral = c.h * sum / cplx(0.0, 2.0 * kPi);

  // Residues of the poles to the right of the contour, (1/alpha) s^{1-beta} exp(s t). A pole
  // far out (|s| = |z|^{1/alpha} up to thousands) needs s to about |s| u absolute accuracy
  // for exp(s) to be right to u relative, so the poles are recomputed in long double from
  // the exact components of z; the product is formed as one exponential (no inf * 0) and
  // rounded to double at the end.
  using lcplx = std::complex<long double>;
  const long double pi_l = 3.141592653589793238462643383279502884L;
  const lcplx lambda_l(lambda.real(), lambda.imag());
  const long double radius_l = std::pow(std::abs(lambda_l), 1.0L / alpha);
  const long double theta_l = std::arg(lambda_l);
  lcplx residues(0.0L, 0.0L);
  for (std::size_t j = best + 1; j < count; ++j) {
    const lcplx s = std::polar(radius_l, (theta_l + 2.0L * pi_l * sing[j].k) / alpha);
    residues += std::exp((1.0L - beta) * std::log(s) + s * static_cast<long double>(t)) /
                static_cast<long double>(alpha);
  }
  return integral +
         cplx(static_cast<double>(residues.real()), static_cast<double>(residues.imag()));
}

// Taylor series sum_k z^k / Gamma(alpha k + beta) for |z| <= 1. Returns false when it
// cancels too much (sum of |terms| > 10 (1 + |sum|)) or converges too slowly (small alpha);
// the caller then uses the contour integral.
bool taylor_series(cplx z, double alpha, double beta, cplx& result) {
  cplx sum(0.0, 0.0);
  double magnitude = 0.0;
  cplx power(1.0, 0.0);
  for (int k = 0; k < 2000; ++k) {
    const double x = alpha * k + beta;
    const cplx term = power * reciprocal_gamma(x);
    sum += term;
    magnitude += std::abs(term);
    power *= z;
    // Beyond x > 2, 1/Gamma decreases faster than any geometric sequence: the tail is
    // below the next term times a small factor.
    if (x > 2.0 && std::abs(power) * reciprocal_gamma(x + alpha) <= 1e-17 * std::abs(sum)) {
      result = sum;
      return magnitude <= 10.0 * (1.0 + std::abs(sum));
    }
  }
  return false;
}

// The beta window where the contour integral keeps its accuracy (probed for 0 < alpha <= 2
// against series and asymptotic expansions: it degrades for beta > 2 when alpha is small
// and for beta < -1 at |z| ~ 1).
constexpr double kBetaHigh = 2.0;
constexpr double kBetaLow = -1.0;

cplx evaluate(cplx z, double alpha, double beta) {
  const double r = std::abs(z);
  if (r < 1.0e-15) return {reciprocal_gamma(beta), 0.0};
  if (r <= 1.0) {
    cplx series;
    if (taylor_series(z, alpha, beta, series)) return series;
  }
  if (alpha > 2.0) {
    // E_{a,b}(z) = (1/m) sum_{j<m} E_{a/m,b}(z^{1/m} e^{2 pi i j/m}): the sum over the m-th
    // roots of unity keeps the powers of z divisible by m. With a/m <= 2 each term is in the
    // range where the contour method was validated.
    const int m = static_cast<int>(std::ceil(alpha / 2.0));
    const cplx root = std::pow(z, 1.0 / m);
    cplx sum(0.0, 0.0);
    for (int j = 0; j < m; ++j) {
      sum += evaluate(root * std::polar(1.0, 2.0 * kPi * j / m), alpha / m, beta);
    }
    return sum / static_cast<double>(m);
  }
  if (beta > kBetaHigh && r > 1.0) {
    // E_{a,b}(z) = z^{-m} E_{a,b-m a}(z) - sum_{j=1}^{m} z^{-j} / Gamma(b - j a), from
    // E_{a,b-a}(z) = 1/Gamma(b-a) + z E_{a,b}(z); for |z| > 1 it damps the error of the
    // base value, and the two parts are pieces of the same expansion (no cancellation
    // beyond |z| ~ 1).
    int m = static_cast<int>(std::ceil((beta - kBetaHigh) / alpha));
    if (beta - m * alpha < kBetaLow) --m;
    if (m > 0) {
      cplx sum(0.0, 0.0);
      cplx inv_power(1.0, 0.0);
      for (int j = 1; j <= m; ++j) {
        inv_power /= z;
        sum += inv_power * reciprocal_gamma(beta - j * alpha);
      }
      const cplx lowered = laplace_inversion(z, alpha, beta - m * alpha) * std::pow(z, -m) - sum;
      // Where E grows exponentially the base value may overflow although E_{a,b} does not.
      if (std::isfinite(lowered.real()) && std::isfinite(lowered.imag())) return lowered;
    }
  }
  if (beta < kBetaLow && r <= 4.0) {
    // E_{a,b}(z) = sum_{j<m} z^j / Gamma(b + j a) + z^m E_{a,b+m a}(z); amplifies the base
    // error by |z|^m, so only while that stays below 64.
    const int m = static_cast<int>(std::ceil((kBetaLow - beta) / alpha));
    if (m * std::log(r) <= std::log(64.0)) {
      cplx sum(0.0, 0.0);
      cplx power(1.0, 0.0);
      for (int j = 0; j < m; ++j) {
        sum += power * reciprocal_gamma(beta + j * alpha);
        power *= z;
      }
      return sum + power * laplace_inversion(z, alpha, beta + m * alpha);
    }
  }
  return laplace_inversion(z, alpha, beta);
}

cplx derivative_series(cplx z, double alpha, double beta) {
  // |z| <= 1/2: once alpha k + beta > 2, 1/Gamma(alpha k + beta) < 1 decreases and the tail
  // after term k is below 2 (k + 1) |z|^k.
  cplx sum(0.0, 0.0);
  cplx power(1.0, 0.0);  // z^{k-1}
  for (int k = 1; k < 400; ++k) {
    sum += static_cast<double>(k) * power * reciprocal_gamma(alpha * k + beta);
    power *= z;
    if (alpha * k + beta > 2.0 && 2.0 * (k + 1) * std::abs(power) <= 1e-17 * std::abs(sum)) {
      break;
    }
  }
  return sum;
}

}  // namespace

cplx mittag_leffler(cplx z, double alpha, double beta) {
  require_parameters(alpha, beta);
  if (std::isnan(z.real()) || std::isnan(z.imag())) return {std::nan(""), std::nan("")};
  return evaluate(z, alpha, beta);
}

double mittag_leffler(double x, double alpha, double beta) {
  return mittag_leffler(cplx(x, 0.0), alpha, beta).real();
}

cplx mittag_leffler_derivative(cplx z, double alpha, double beta) {
  require_parameters(alpha, beta);
  if (std::abs(z) <= 0.5) return derivative_series(z, alpha, beta);
  return (mittag_leffler(z, alpha, beta - 1.0) - (beta - 1.0) * mittag_leffler(z, alpha, beta)) /
         (alpha * z);
}

double mittag_leffler_derivative(double x, double alpha, double beta) {
  return mittag_leffler_derivative(cplx(x, 0.0), alpha, beta).real();
}

}  // namespace fracmfg::frac
