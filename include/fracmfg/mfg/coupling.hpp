#pragma once
// mfg::Coupling: the running cost F(x, m) = strength f(m) + V(x) of the HJB equation,
// evaluated on the grid for a density m:
//
//   log       f(m) = log(max(m, 1e-300))   (the floor keeps an empty cell finite)
//   power     f(m) = max(m, 0)^exponent
//   nonlocal  f(m)(x) = (K * m)(x) = sum_j K(x - x_j) m_j * cell volume, K a Gaussian of
//             standard deviation `width` per axis, periodised (periodic) or with mirror
//             images across the walls (reflecting), normalised so that the discrete
//             kernel sums to one over the grid (kernels::kde: the grid values are its
//             samples, binned exactly onto the points, convolved by FFT).
//
// The nonlocal coupling gathers m onto every rank (natural order) and runs the
// convolution through the rank's exec::Selector (kernel "mfg_nonlocal_coupling": the host
// or cuda KDE).
//
// Collectivity: the constructor and evaluate() are collective on the model's communicator.

#include <petscvec.h>

#include <memory>

#include "fracmfg/exec/selector.hpp"
#include "fracmfg/mfg/model.hpp"

namespace fracmfg::mfg {

class Coupling {
 public:
  /// selector is used by the nonlocal coupling only (may be null otherwise; a nonlocal
  /// coupling without one runs on the host). The model and selector must outlive this.
  Coupling(const Model& model, exec::Selector* selector);
  ~Coupling();
  Coupling(const Coupling&) = delete;
  Coupling& operator=(const Coupling&) = delete;

  /// out = strength f(m) + V(t_n) on the owned points (out != m); n: the time level of the
  /// potential (Model::potential_values).
  void evaluate(Vec m, Vec out, int n);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::mfg
