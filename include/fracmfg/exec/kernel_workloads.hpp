#pragma once
// How each kernel dispatched through a Selector describes one call of itself: the one place
// where a kernel's bytes, flops, per-call transfers and resident device bytes are written.
// The solvers' dispatch points (frac/history_engine.cpp, mfg/kde_dispatch.cpp,
// mfg/particles.cpp, la/line_pc.cpp) and `fracmfg calibrate` (exec/calibration_kernels.cpp)
// both build their Workloads here, so the performance model fitted by calibration is the one
// the solvers consult. The functions sit in exec, not next to the kernels' declarations, because
// the kernels layer is below exec (docs/design.md §1); each names the kernel it describes.
//
// Chunkable kernels (Workload::chunkable) take the call's Decision in their cuda_fn and
// process their data in Decision::chunks pieces when the device budget holds only part of
// the working set: history_fft (components), the binned KDE (samples). Kernels with state
// resident on the device (the L1 history, the particles) count in transfer_bytes only what
// crosses per call, plus the state when it is not yet where the call would run.

#include <cstdint>

#include "fracmfg/exec/workload.hpp"

namespace fracmfg::exec {

/// kernels::tridiag_batched_*: `systems` tridiagonal systems of `size` unknowns, solved in
/// place (read sub, diag, super, rhs; write rhs and a workspace). The cuda path copies the
/// three diagonals and the right-hand side over and the solution back.
Workload tridiag_batched_workload(KernelId kernel, std::int64_t systems, std::int64_t size);

/// kernels::kde_binned_* over `samples` weighted samples onto a grid of about as many points
/// (the MFG calls: grid nodes as samples): binning, then an FFT convolution. Chunkable: the
/// cuda path bins the samples in Decision::chunks pieces (KdeOptions::sample_chunks).
Workload kde_binned_workload(KernelId kernel, std::int64_t samples);

/// kernels::particle_step: `count` particles in `dim` (1 or 2) dimensions on a grid of
/// `grid_points` points with `faces` face differences of grad u (both axes): a draw from m0
/// and/or an Euler-Maruyama move, then the binning. The positions stay resident on the
/// device, so per call the cuda path copies only the face differences over (a moving call)
/// and the bins (the density grid) back; the positions count as a transfer only while they
/// are not there and the call does not draw them there (`resident` and `draw` false). Not
/// chunkable: the resident positions must fit the device (else the call runs on the cpu).
Workload particle_step_workload(KernelId kernel, int dim, std::int64_t count,
                                std::int64_t grid_points, std::int64_t faces, bool draw, bool move,
                                bool resident);

/// kernels::mfg_hjb_rows: the HJB residual (`residual`) and/or the Jacobian rows (`rows`) of
/// `points` owned points of a `dim`-dimensional grid, u read from `values` values (the
/// ghosted box, or the owned points in 1D). Nothing stays on the device: per call the cuda
/// path copies u and the coefficients over (and u_next, rhs for a residual) and the residual
/// and the 1 + 2 dim row values per point back.
Workload mfg_hjb_rows_workload(KernelId kernel, int dim, std::int64_t points, std::int64_t values,
                               bool residual, bool rows);

/// kernels::mfg_fp_rows: the 1D Fokker-Planck rows of `points` owned points; per call u and
/// the coefficients over, three rows back.
Workload mfg_fp_rows_workload(KernelId kernel, std::int64_t points);

/// kernels::history_fft_*: one history square of `components` columns, `signal_rows` known
/// rows convolved into `output_rows` future rows under `rules` (1 or 2) weight sequences,
/// with FFTs of length `fft_length`. The cuda path copies the signal and the spectra over
/// and the outputs back. Chunkable: Decision::chunks batches of components
/// (history_fft_cuda's `chunks`).
Workload history_fft_workload(KernelId kernel, std::int64_t components, std::int64_t fft_length,
                              std::int64_t signal_rows, std::int64_t output_rows, int rules);

/// kernels::l1_history's soe update: `terms` modes of `points` values advanced and summed.
/// Per step the cuda path copies the increment and the 3 x terms coefficients over and the
/// history back; the modes stay resident on the device, so they are counted as a transfer
/// only while they are not there (`resident` false: the first step there moves them).
Workload soe_history_workload(KernelId kernel, std::int64_t points, std::int64_t terms,
                              bool resident);

/// kernels::l1_history's direct sum over `levels` past increments of `points` values, out of
/// a device state of `capacity` increments. Per step: the new increment and the weights over,
/// the history back; the past increments while not resident.
Workload l1_direct_workload(KernelId kernel, std::int64_t points, std::int64_t levels,
                            std::int64_t capacity, bool resident);

/// kernels::circulant_batched_*: `lines` lines of `length` values through real FFTs of
/// length `fft_length`. The cuda path copies the lines and the products over and the
/// products back (the eigenvalues too).
Workload circulant_batched_workload(KernelId kernel, std::int64_t lines, std::int64_t length,
                                    std::int64_t fft_length);

/// kernels::circulant_2d_*: one real 2D transform pair over ny x nx values. The cuda path
/// copies the grid and the ny (nx/2 + 1) eigenvalues over and the product back.
Workload circulant_2d_workload(KernelId kernel, std::int64_t nx, std::int64_t ny);

/// The number of items of one batch when `items` are processed in `chunks` pieces
/// (ceil(items / chunks), at least 1; chunks < 1 counts as 1).
std::int64_t chunk_size(std::int64_t items, int chunks);

}  // namespace fracmfg::exec
