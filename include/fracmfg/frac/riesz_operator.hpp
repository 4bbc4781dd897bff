#pragma once
// The Riesz fractional Laplacian (-Laplace)^(s/2), 1 < s <= 2, discretised by the
// fractional centred difference of Ortigueira (Int. J. Math. Math. Sci. 2006) and Celik &
// Duman (J. Comput. Phys. 231 (2012) 1743-1750, eq. (2.3) and Theorem 2.4):
//
//   -d^s u / d|x|^s (x) = h^-s sum_{k in Z} g_k u(x - k h) + O(h^2),
//   g_k = (-1)^k Gamma(s + 1) / (Gamma(s/2 - k + 1) Gamma(s/2 + k + 1)),
//
// g_0 > 0, g_k = g_-k < 0 for k != 0, sum_k g_k = 0 (generating function |2 sin(t/2)|^s). In
// 2D the operator is the tensor sum A = h_x^-s T_x (x) I + h_y^-s I (x) T_y (Riesz
// derivatives in x and in y).
//
// frac::RieszOperator works on one whole grid held by the calling process (natural order,
// x fastest, N_x N_y values), node-local:
//  - Dirichlet grid (x_i = i h, i = 0..N-1, boundary points i = 0 and N - 1): the unknowns
//    are the interior points; outside the domain u is continued by the boundary values
//    (constant extension along each grid line: u(x_i) = u(x_0) for i <= 0, u(x_{N-1}) for
//    i >= N - 1; zero boundary data is the usual extension by zero). A = T + E where
//    T_ij = h^-s g_|i-j| is the dense symmetric positive definite Toeplitz matrix on the
//    interior points and E the exterior contribution h^-s (u_0 S(i) + u_{N-1} S(N-1-i)),
//    S(m) = sum_{k >= m} g_k = -g_0/2 - sum_{k=1}^{m-1} g_k;
//  - periodic grid (x_i = i L / N): A is the circulant of the periodised g, diagonal in the
//    discrete Fourier basis with eigenvalues h^-s |2 sin(pi k / N)|^s (per direction,
//    summed).
// T is never assembled: apply() embeds it in a circulant of length L >= 2m - 1 (m interior
// points; L with prime factors 2, 3, 5, 7) and multiplies by real FFTs (FFTW, estimated
// plans, so results are bit-identical from run to run and on every rank): O(N log N).
//
// The circulant preconditioner of sigma I + kappa T (R. H. Chan and M. K. Ng, SIAM Review
// 38 (1996) 427-482, Sec. 3): per direction a circulant C built from T's first column t,
//   Strang:  c_k = t_k for k <= m/2, t_{m-k} otherwise;
//   T. Chan: c_k = ((m - k) t_k + k t_{m-k}) / m      (the Frobenius-optimal circulant),
// and (sigma I + kappa (C_x (+) C_y))^-1 applied by FFT. For the periodic grid the
// "circulant" is the operator itself (an exact solve).
//
// Not thread-safe (work arrays and FFTW plans inside); not collective. FFTW plan creation
// is not thread-safe: construct and destroy from one thread at a time.

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace fracmfg::exec {
class Selector;
}

namespace fracmfg::frac {

/// The circulant approximation of a Toeplitz matrix used as preconditioner.
enum class CirculantKind { strang, tchan };
/// "strang" | "tchan".
const char* to_string(CirculantKind kind);

/// g_0..g_{n-1} of the fractional centred difference of order s (0 < s <= 2), by
/// g_0 = Gamma(s+1) / Gamma(s/2+1)^2, g_{k+1} = g_k (k - s/2) / (k + s/2 + 1).
std::vector<double> riesz_weights(double order, std::size_t n);

class RieszOperator {
 public:
  /// order s in (1, 2]; dim 1 or 2; points N_d >= 3 and spacing h_d > 0 per direction
  /// (entries beyond dim ignored); periodic or Dirichlet. Throws fracmfg::Error.
  RieszOperator(double order, int dim, std::array<std::size_t, 2> points,
                std::array<double, 2> spacing, bool periodic);
  ~RieszOperator();
  RieszOperator(RieszOperator&&) noexcept;
  RieszOperator& operator=(RieszOperator&&) noexcept;
  RieszOperator(const RieszOperator&) = delete;
  RieszOperator& operator=(const RieszOperator&) = delete;

  double order() const;
  int dimension() const;
  bool periodic() const;
  /// N_x N_y: the length of the arrays apply() takes.
  std::size_t size() const;
  /// Unknowns: (N_x - 2)(N_y - 2) (Dirichlet) or N_x N_y (periodic).
  std::size_t interior_size() const;
  /// True when grid point (i, j) is an unknown (not a Dirichlet boundary point).
  bool is_interior(std::size_t i, std::size_t j) const;

  /// Runs the FFT products through the rank's selector (kernels/circulant.hpp, host FFTW or
  /// device cuFFT, plans cached per rank), under three kernel names whose costs differ in
  /// shape: fpde_riesz_product (apply()'s Toeplitz products as batches of lines, and the 1D
  /// periodic operator), fpde_circulant_pc (the 1D circulant inverse, one line) and
  /// fpde_circulant_2d (in 2D the periodic operator of apply() and every circulant inverse:
  /// one real 2D transform pair each). null (the default): the host kernels. The selector
  /// must outlive this object or be replaced first.
  void set_selector(exec::Selector* selector);

  /// y = sigma x + kappa T x_int + kappa_exterior E(x_boundary) at the unknowns and y = x at
  /// the boundary points (x, y: full grid, natural order; y may not alias x). With
  /// kappa_exterior = 0 this is the symmetric positive definite system matrix
  /// [I 0; 0 sigma I + kappa T] (sigma, kappa >= 0, not both 0).
  void apply(const double* x, double* y, double sigma, double kappa, double kappa_exterior);

  /// y = (sigma I + kappa C)^-1 x at the unknowns (C: the circulant of `kind`; the exact
  /// operator when periodic) and y = x at the boundary points (y may not alias x). Eigenvalues of
  /// sigma + kappa C below sigma (a Strang circulant may have small negative ones) are raised to
  /// sigma, so the preconditioner stays positive definite.
  void apply_circulant_inverse(CirculantKind kind, const double* x, double* y, double sigma,
                               double kappa);

  /// The operator A on the unknowns as a dense row-major matrix (interior_size()^2 values,
  /// unknowns in natural order): for tests and benchmarks at small sizes.
  std::vector<double> dense() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::frac
