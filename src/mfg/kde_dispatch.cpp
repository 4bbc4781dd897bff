#include "mfg/kde_dispatch.hpp"

#include "fracmfg/exec/kernel_workloads.hpp"

namespace fracmfg::mfg::detail {

void kde_on_rank(exec::Selector* selector, exec::KernelId kernel, const kernels::KdeGrid& grid,
                 const kernels::KdeSamples& samples, double* density) {
  const kernels::KdeOptions options;
  auto host = [&] { kernels::kde_binned_host(grid, samples, density, options); };
  if (selector == nullptr) {
    host();
    return;
  }
  const exec::Workload w = exec::kde_binned_workload(kernel, samples.count);
  selector->run(w, host, [&](const exec::Decision& d) {
    kernels::KdeOptions o = options;
    o.cuda_device = selector->device().device;
    o.cuda_resources = selector->cuda_resources();
    o.sample_chunks = d.chunks;
    kernels::kde_binned_cuda(grid, samples, density, o);
  });
}

}  // namespace fracmfg::mfg::detail
