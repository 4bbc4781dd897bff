#pragma once
// The finite-difference rows of the mfg solvers (kernels/mfg_rows.hpp: the HJB residual and
// Jacobian rows, the 1D Fokker-Planck rows) where the rank's selector places them: the one
// dispatch point of kernels "mfg_hjb_rows" and "mfg_fp_rows" (exec/kernel_names.hpp). The
// solvers' row functions (mfg/stencil.hpp, mfg/direct_1d.hpp) take a RowKernels and call
// through it for the configurations the kernels cover (rows_kernel_covers); a null
// RowKernels, or one without a selector, runs the host kernel.
#include <memory>
#include <utility>

#include "fracmfg/exec/selector.hpp"
#include "fracmfg/kernels/mfg_rows.hpp"
#include "fracmfg/mfg/model.hpp"
#include "mfg/stencil.hpp"

namespace fracmfg::mfg::detail {

class RowKernels {
 public:
  /// selector: the rank's (null: the host). Registers the kernels' names once.
  explicit RowKernels(exec::Selector* selector);
  ~RowKernels();
  RowKernels(const RowKernels&) = delete;
  RowKernels& operator=(const RowKernels&) = delete;

  /// kernels::mfg_hjb_rows_host or MfgRowsDevice::hjb; the sum of r^2. Not collective.
  double hjb(const kernels::HjbRowsCall& c);
  /// kernels::mfg_fp_rows_host or MfgRowsDevice::fp. Not collective.
  void fp(const kernels::FpRowsCall& c);

 private:
  exec::Selector* selector_;
  exec::KernelId hjb_kernel_, fp_kernel_;
  std::unique_ptr<kernels::MfgRowsDevice> device_;
};

/// rk->hjb(c) and rk->fp(c); with a null rk the host kernels.
double hjb_rows_call(RowKernels* rk, const kernels::HjbRowsCall& c);
void fp_rows_call(RowKernels* rk, const kernels::FpRowsCall& c);

/// True when the row kernels cover the model's configuration: no exit side, no obstacle.
bool rows_kernel_covers(const Model& model);

/// The owned block of the model's rank with u in the ghosted box gb.
kernels::MfgBlock row_block(const Model& model, const GhostBox& gb);
/// The owned block of a 1D model with u as owned values and their two ghosts.
kernels::MfgBlock row_block_1d(const Model& model, std::pair<double, double> ghosts);

/// The call's time step, diffusion and Hamiltonian from the model and the stencil's view.
kernels::HjbRowsCall hjb_call(const Model& model, const UpwindHamiltonian& ham,
                              const kernels::MfgBlock& block);

}  // namespace fracmfg::mfg::detail
