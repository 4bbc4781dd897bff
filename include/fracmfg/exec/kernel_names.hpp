#pragma once
// The names under which node-local kernel calls describe themselves to the rank's Selector
// (Workload::kernel, via Selector::kernel(name)). The performance model is keyed by these
// names, so `fracmfg calibrate` (exec/calibrate.hpp) measures exactly the kernels the
// solvers consult; tests/unit/exec_calibrate_test.cpp runs the solvers with a selector and
// checks that every name they register is one of these.

namespace fracmfg::exec::kernel_names {

/// frac::FodeSolver's history squares by FFT (kernels::history_fft_*).
inline constexpr const char* history_fft = "history_fft";
/// mfg::ParticleFokkerPlanck's density estimate of the binned particle mass
/// (kernels::kde_binned_*, the grid nodes as weighted samples).
inline constexpr const char* mfg_particle_kde = "mfg_particle_kde";
/// mfg::ParticleFokkerPlanck's particle step: the draw from m0, the Euler-Maruyama move
/// and the binning onto the grid (kernels::particle_step_host / ParticleDevice::run).
inline constexpr const char* mfg_particle_step = "mfg_particle_step";
/// The mfg solvers' HJB residual and Jacobian rows of one time level
/// (kernels::mfg_hjb_rows_host / MfgRowsDevice::hjb, through mfg/row_kernels.hpp).
inline constexpr const char* mfg_hjb_rows = "mfg_hjb_rows";
/// The 1D Fokker-Planck rows of one time level (kernels::mfg_fp_rows_host /
/// MfgRowsDevice::fp).
inline constexpr const char* mfg_fp_rows = "mfg_fp_rows";
/// mfg::Coupling's nonlocal (Gaussian convolution) coupling (kernels::kde_binned_*).
inline constexpr const char* mfg_nonlocal_coupling = "mfg_nonlocal_coupling";
/// frac::L1History's sum-of-exponentials update of the time-fractional PDE solver
/// (kernels::soe_history_host / L1HistoryDevice::soe_step).
inline constexpr const char* fpde_soe_history = "fpde_soe_history";
/// frac::L1History's direct L1 sum (kernels::l1_direct_host / L1HistoryDevice::direct_step).
inline constexpr const char* fpde_l1_history = "fpde_l1_history";
/// frac::RieszOperator's Toeplitz products (the space-fractional PDE solver's shell matrix)
/// by FFT (kernels::circulant_batched_*).
inline constexpr const char* fpde_riesz_product = "fpde_riesz_product";
/// frac::RieszOperator's 1D circulant preconditioner inverse (kernels::circulant_batched_*).
inline constexpr const char* fpde_circulant_pc = "fpde_circulant_pc";
/// frac::RieszOperator's 2D transforms (kernels::circulant_2d_*): the 2D periodic operator
/// and the 2D circulant preconditioner inverse, one real 2D transform pair each (the 2D
/// space-fractional PDE solver, the 2D fractional mean field game).
inline constexpr const char* fpde_circulant_2d = "fpde_circulant_2d";
/// kernels::tridiag_batched_* on its own (batched line solves).
inline constexpr const char* tridiag_batched = "tridiag_batched";
/// kernels::kde_binned_* on scattered samples, 1D and 2D.
inline constexpr const char* kde_binned_1d = "kde_binned_1d";
inline constexpr const char* kde_binned_2d = "kde_binned_2d";

}  // namespace fracmfg::exec::kernel_names
