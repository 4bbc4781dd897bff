#include "fracmfg/exec/kernel_workloads.hpp"

#include <algorithm>
#include <cmath>

#include "fracmfg/kernels/l1_history.hpp"
#include "fracmfg/kernels/particle_step.hpp"

namespace fracmfg::exec {

Workload tridiag_batched_workload(KernelId kernel, std::int64_t systems, std::int64_t size) {
  Workload w;
  w.kernel = kernel;
  w.elements = systems * size;
  const double e = static_cast<double>(w.elements);
  w.bytes = 5.0 * 8.0 * e;           // three diagonals and the right-hand side read, x written
  w.transfer_bytes = 4.0 * 8.0 * e;  // the same four arrays across (solution back)
  w.flops = 8.0 * e;                 // Thomas: one forward and one backward sweep
  w.device_bytes = 6.0 * 8.0 * e;    // the four arrays and two of workspace
  return w;
}

Workload mfg_hjb_rows_workload(KernelId kernel, int dim, std::int64_t points, std::int64_t values,
                               bool residual, bool rows) {
  Workload w;
  w.kernel = kernel;
  w.elements = points;
  const double n = static_cast<double>(points);
  const double d = static_cast<double>(dim);
  const double width = 1.0 + 2.0 * d;
  // Read: u (each value once from memory, the neighbours from cache) and the coefficient;
  // a residual also reads u_next and rhs and writes r; rows write width values.
  double in = 8.0 * static_cast<double>(values) + 8.0 * n;
  double out = 0.0;
  double flops = 0.0;
  if (residual) {
    in += 16.0 * n;
    out += 8.0 * n;
    flops += (12.0 + 14.0 * d) * n;  // the Laplacian, the upwind Hamiltonian, the residual
  }
  if (rows) {
    out += 8.0 * width * n;
    flops += (4.0 + 16.0 * d) * n;  // a+, a-, the coefficients and diag per axis
  }
  w.bytes = in + out;
  w.transfer_bytes = in + out;  // everything over and back per call
  w.flops = flops;
  w.device_bytes = in + out;
  return w;
}

Workload mfg_fp_rows_workload(KernelId kernel, std::int64_t points) {
  Workload w;
  w.kernel = kernel;
  w.elements = points;
  const double n = static_cast<double>(points);
  w.bytes = 8.0 * 5.0 * n;           // u, 1/c read; sub, diag, super written
  w.transfer_bytes = 8.0 * 5.0 * n;  // the same: two arrays over, three back
  w.flops = 30.0 * n;
  w.device_bytes = 8.0 * 5.0 * n;
  return w;
}

Workload kde_binned_workload(KernelId kernel, std::int64_t samples) {
  Workload w;
  w.kernel = kernel;
  w.elements = samples;
  const double n = static_cast<double>(samples);
  // Per sample: position(s) and weight read, a few bins touched; the FFT part grows as
  // n log n in the model's units.
  w.bytes = 64.0 * n;
  w.transfer_bytes = 16.0 * n;
  w.flops = 20.0 * n * std::log2(std::max(2.0, n));
  w.device_bytes = 64.0 * n;
  w.chunkable = true;
  return w;
}

Workload particle_step_workload(KernelId kernel, int dim, std::int64_t count,
                                std::int64_t grid_points, std::int64_t faces, bool draw, bool move,
                                bool resident) {
  Workload w;
  w.kernel = kernel;
  w.elements = count;
  const double n = static_cast<double>(count);
  const double d = static_cast<double>(dim);
  const double corners = dim == 2 ? 4.0 : 2.0;  // bins touched, interpolation stencils
  const double search = std::log2(std::max(2.0, static_cast<double>(grid_points)));
  // Per particle: its position read (unless drawn) and written (drawn or moved); a move
  // reads the face differences and 1/c at the stencil's corners (d + 1 of them); a draw
  // searches the cdf; each bin touched is read and written.
  double per = (draw ? 0.0 : 8.0 * d) + (draw || move ? 8.0 * d : 0.0) + 16.0 * corners;
  double flops = 10.0 * d;  // the binning
  if (move) {
    per += 8.0 * corners * (d + 1.0);
    // Philox (10 rounds), Box-Muller (log, sqrt, sin, cos), the interpolations, the
    // reflection or wrap.
    flops += 140.0 + 30.0 * d * corners;
  }
  if (draw) {
    per += 8.0 * search;
    flops += 40.0 + 20.0 * d + 2.0 * search;
  }
  w.bytes = per * n + (move ? 8.0 * static_cast<double>(faces) : 0.0);
  w.flops = flops * n;
  w.transfer_bytes = 8.0 * static_cast<double>(grid_points) +
                     (move ? 8.0 * static_cast<double>(faces) : 0.0) +
                     (resident || draw ? 0.0 : 8.0 * d * n);
  w.device_bytes = kernels::ParticleDevice::device_bytes(dim, count, grid_points, faces);
  return w;
}

Workload history_fft_workload(KernelId kernel, std::int64_t components, std::int64_t fft_length,
                              std::int64_t signal_rows, std::int64_t output_rows, int rules) {
  Workload w;
  w.kernel = kernel;
  w.elements = components * fft_length;
  const double doubles = static_cast<double>(w.elements);
  const double log_length = std::log2(std::max(2.0, static_cast<double>(fft_length)));
  const double r = static_cast<double>(rules);
  // Per padded double: the signal padded and transformed once, one product and one inverse
  // transform per rule.
  w.bytes = 8.0 * doubles * (2.0 + 4.0 * r);
  w.flops = doubles * (1.0 + r) * 2.5 * log_length + 6.0 * doubles * r;
  // Across per call: the signal rows in, each rule's output rows back (added on the host),
  // each rule's spectrum (L/2 + 1 complex numbers) in.
  w.transfer_bytes = 8.0 * (static_cast<double>(components) *
                                static_cast<double>(signal_rows + rules * output_rows) +
                            r * static_cast<double>(fft_length + 2));
  w.device_bytes = 8.0 * doubles * 4.0;
  w.chunkable = true;
  return w;
}

Workload soe_history_workload(KernelId kernel, std::int64_t points, std::int64_t terms,
                              bool resident) {
  Workload w;
  w.kernel = kernel;
  w.elements = points * terms;
  const double p = static_cast<double>(points);
  const double e = static_cast<double>(w.elements);
  // Per mode and point: the mode read and written, 4 flops; per point the increment read
  // and the history written.
  w.bytes = 16.0 * e + 16.0 * p;
  w.flops = 4.0 * e;
  w.transfer_bytes =
      8.0 * (2.0 * p + 3.0 * static_cast<double>(terms)) + (resident ? 0.0 : 8.0 * e);
  w.device_bytes = kernels::L1HistoryDevice::device_bytes(kernels::L1Algorithm::soe, points, terms);
  return w;
}

Workload l1_direct_workload(KernelId kernel, std::int64_t points, std::int64_t levels,
                            std::int64_t capacity, bool resident) {
  Workload w;
  w.kernel = kernel;
  w.elements = points * levels;
  const double p = static_cast<double>(points);
  const double e = static_cast<double>(w.elements);
  w.bytes = 8.0 * e + 8.0 * p;  // every past increment read once, the history written
  w.flops = 2.0 * e;
  w.transfer_bytes =
      8.0 * (2.0 * p + static_cast<double>(levels)) +
      (resident ? 0.0 : 8.0 * p * static_cast<double>(std::max<std::int64_t>(levels - 1, 0)));
  w.device_bytes =
      kernels::L1HistoryDevice::device_bytes(kernels::L1Algorithm::direct, points, capacity);
  return w;
}

Workload circulant_batched_workload(KernelId kernel, std::int64_t lines, std::int64_t length,
                                    std::int64_t fft_length) {
  Workload w;
  w.kernel = kernel;
  w.elements = lines * fft_length;
  const double n = static_cast<double>(w.elements);
  const double values = static_cast<double>(lines * length);
  const double log_length = std::log2(std::max(2.0, static_cast<double>(fft_length)));
  // Two real transforms per line (2.5 L log2 L flops each), the padded line and its half
  // spectrum written and read a few times.
  w.bytes = 8.0 * (6.0 * n + 3.0 * values);
  w.flops = 5.0 * n * log_length + 2.0 * n + 2.0 * values;
  w.transfer_bytes = 8.0 * (3.0 * values + static_cast<double>(fft_length / 2 + 1));
  w.device_bytes = 8.0 * (2.0 * values + 2.0 * n + static_cast<double>(fft_length / 2 + 1));
  return w;
}

Workload circulant_2d_workload(KernelId kernel, std::int64_t nx, std::int64_t ny) {
  Workload w;
  w.kernel = kernel;
  w.elements = nx * ny;
  const double n = static_cast<double>(w.elements);
  const double frequencies = static_cast<double>((nx / 2 + 1) * ny);
  const double log_size = std::log2(std::max(2.0, n));
  // A real 2D transform pair (2.5 n log2 n flops each); the grid, its half spectrum and the
  // product written and read a few times.
  w.bytes = 8.0 * (7.0 * n + frequencies);
  w.flops = 5.0 * n * log_size + 2.0 * frequencies + 2.0 * n;
  w.transfer_bytes = 8.0 * (2.0 * n + frequencies);
  w.device_bytes = 8.0 * (3.0 * n + 3.0 * frequencies);
  return w;
}

std::int64_t chunk_size(std::int64_t items, int chunks) {
  const std::int64_t c = chunks < 1 ? 1 : chunks;
  return std::max<std::int64_t>(1, (items + c - 1) / c);
}

}  // namespace fracmfg::exec
