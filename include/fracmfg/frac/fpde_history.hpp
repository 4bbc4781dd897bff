#pragma once
// frac::L1History: the memory term of the L1 discretisation of the Caputo derivative of a
// vector-valued function u(t) (one value per grid point) on an FpdeTimeMesh.
//
// The L1 scheme replaces u on each [t_{k-1}, t_k] by its linear interpolant (Lin & Xu,
// J. Comput. Phys. 225 (2007) 1533-1552 on uniform meshes; Stynes, O'Riordan & Gracia,
// SIAM J. Numer. Anal. 55 (2017) 1057-1079, eq. (3.1), on graded ones):
//
//   D^a u(t_n) ~ c_n (u^n - u^{n-1}) + h^n,           c_n = tau_n^-a / Gamma(2 - a),
//   h^n = sum_{k=1}^{n-1} du^k / tau_k * 1/Gamma(1-a) int_{t_{k-1}}^{t_k} (t_n - s)^-a ds
//       = sum_{k=1}^{n-1} du^k [(t_n - t_{k-1})^{1-a} - (t_n - t_k)^{1-a}] / (tau_k Gamma(2-a)),
//
// du^k = u^k - u^{k-1}, 0 < a < 1, error O(tau^{2-a}) for smooth u. The history h^n is
// evaluated either
//  - directly (Method::direct): every increment du^k is kept; memory O(N_x n), work
//    O(N_x n) at step n, O(N_x N^2) for a run. On a uniform mesh the weights are
//    l1_scale(a, tau) * l1_weights(a, .) of weights.hpp;
//  - by the sum-of-exponentials kernel (Method::soe, the fast L1 scheme of Jiang, Zhang,
//    Zhang & Zhang, Commun. Comput. Phys. 21 (2017) 650-678, with the kernel t^-a of the
//    formula above in place of their t^{-1-a}): (t_n - s)^-a ~ sum_j w_j exp(-s_j (t_n - s))
//    on [min_history_lag, T] (soe.hpp, relative accuracy `tolerance`), so that
//      h^n ~ 1/Gamma(1-a) sum_j w_j H_j^n,
//      H_j^{n+1} = e_j H_j^n + e_j (1 - exp(-s_j tau_n)) / (s_j tau_n) du^n,
//      e_j = exp(-s_j tau_{n+1}),  H_j^1 = 0;
//    memory O(N_x N_exp), work O(N_x N_exp) per step. Since the kernel's relative error is
//    at most `tolerance` at every lag, |h_soe^n - h_direct^n| <= tolerance * |h|^n, where
//    |h|^n is the direct sum with |du^k| in place of du^k (checked in
//    tests/unit/fpde_history_test.cpp).
//
//   frac::L1History hist(frac::L1History::Method::soe, 0.5, mesh, local_points, 1e-10);
//   for (n = 1..N) {
//     // solve c_n u^n + (spatial terms) = c_n u^{n-1} - hist.history() + f^n, then:
//     hist.push(du);        // du = u^n - u^{n-1}; prepares history() for step n + 1
//   }
//
// The update of each push is a kernel (kernels/l1_history.hpp) with a host and a CUDA path,
// placed per step by the rank's selector when one is set (set_selector).
//
// Node-local (one rank's points), not collective, not thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fracmfg/frac/fpde_time_mesh.hpp"
#include "fracmfg/frac/soe.hpp"

namespace fracmfg::exec {
class Selector;
}

namespace fracmfg::frac {

class L1History {
 public:
  enum class Method { direct, soe };

  /// alpha in (0, 1); points >= 0 values per level; tolerance: the SOE's relative accuracy
  /// (ignored by direct). Throws fracmfg::Error for alpha out of range.
  L1History(Method method, double alpha, FpdeTimeMesh mesh, std::size_t points,
            double tolerance = 1e-10);
  ~L1History();
  L1History(L1History&&) noexcept;
  L1History& operator=(L1History&&) noexcept;
  L1History(const L1History&) = delete;
  L1History& operator=(const L1History&) = delete;

  Method method() const;
  double alpha() const;
  const FpdeTimeMesh& mesh() const;
  std::size_t points() const;
  /// Increments recorded so far; history() belongs to step levels() + 1.
  std::int64_t levels() const;

  /// c_n = tau_n^-a / Gamma(2 - a), the weight of u^n - u^{n-1} at step n (1 <= n <= N).
  double diagonal(std::int64_t n) const;
  /// h^{levels()+1}, points() values (zero before the first push).
  const std::vector<double>& history() const;
  /// Records du = u^n - u^{n-1} for n = levels() + 1 (points() values) and computes the
  /// history of step n + 1. At most mesh().steps() pushes.
  void push(const double* du);

  /// Runs each push's kernel (kernels/l1_history.hpp: the soe update or the direct sum)
  /// through the rank's selector, under the names fpde_soe_history / fpde_l1_history: on
  /// the host, or on the rank's device with the state (modes or past increments) resident
  /// there between steps; a step placed on the other backend first moves the state, and
  /// save_state() brings it home. Per step only the increment and the history cross. null
  /// (the default): the host kernel, no selector. The selector must outlive this object or
  /// be replaced first.
  void set_selector(exec::Selector* selector);

  /// The SOE kernel (nullptr for the direct method).
  const SoeApproximation* soe() const;
  /// Vectors of points() values held: levels() increments (direct) or N_exp (soe), plus the
  /// current history.
  std::size_t stored_vectors() const;
  std::size_t stored_bytes() const { return stored_vectors() * points() * sizeof(double); }

  // --- checkpoint state ------------------------------------------------------------------
  /// The state after levels() pushes is state_size() vectors of points() values: the
  /// current history, then the increments du^1..du^levels (direct) or H_1..H_Nexp (soe).
  std::size_t state_size() const;
  /// Copies state vector k (0 <= k < state_size()) to out[i * out_stride], i < points().
  void save_state(std::size_t k, double* out, std::size_t out_stride = 1) const;
  /// Restores the state of an L1History built with the same arguments after `levels`
  /// pushes: vector k at point i is state[i * point_stride + k * vector_stride] (an
  /// interleaved array of `vectors` components: point_stride = vectors, vector_stride = 1).
  /// The continuation is bit-identical to the uninterrupted one. Throws fracmfg::Error if
  /// `vectors` is not the state_size() of that state.
  void load_state(std::int64_t levels, std::size_t vectors, const double* state,
                  std::size_t point_stride, std::size_t vector_stride);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::frac
