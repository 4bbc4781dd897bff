#include "mfg/kde_dispatch.hpp"

#include <algorithm>
#include <cmath>

namespace fracmfg::mfg::detail {

void kde_on_rank(exec::Selector* selector, exec::KernelId kernel, const kernels::KdeGrid& grid,
                 const kernels::KdeSamples& samples, double* density) {
  const kernels::KdeOptions options;
  auto host = [&] { kernels::kde_binned_host(grid, samples, density, options); };
  if (selector == nullptr) {
    host();
    return;
  }
  // Per sample: position(s) and weight read, a few bins touched; the FFT part grows as
  // n log n in the cost model's units.
  exec::Workload w;
  w.kernel = kernel;
  w.elements = samples.count;
  const double n = static_cast<double>(samples.count);
  w.bytes = 64.0 * n;
  w.transfer_bytes = 16.0 * n;
  w.flops = 20.0 * n * std::log2(std::max(2.0, n));
  w.device_bytes = 64.0 * n;
  selector->run(w, host, [&] {
    kernels::KdeOptions o = options;
    o.cuda_device = selector->device().device;
    o.cuda_resources = selector->cuda_resources();
    kernels::kde_binned_cuda(grid, samples, density, o);
  });
}

}  // namespace fracmfg::mfg::detail
