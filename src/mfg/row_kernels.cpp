#include "mfg/row_kernels.hpp"

#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/kernel_workloads.hpp"

namespace fracmfg::mfg::detail {

RowKernels::RowKernels(exec::Selector* selector) : selector_(selector) {
  if (selector_ != nullptr) {
    hjb_kernel_ = selector_->kernel(exec::kernel_names::mfg_hjb_rows);
    fp_kernel_ = selector_->kernel(exec::kernel_names::mfg_fp_rows);
  }
}

RowKernels::~RowKernels() = default;

double RowKernels::hjb(const kernels::HjbRowsCall& c) {
  if (selector_ == nullptr) return kernels::mfg_hjb_rows_host(c);
  const kernels::MfgBlock& b = c.block;
  const bool rows = c.rows != nullptr || c.diag != nullptr;
  const exec::Workload w =
      exec::mfg_hjb_rows_workload(hjb_kernel_, b.dim, kernels::mfg_block_points(b),
                                  kernels::mfg_block_values(b), c.residual != nullptr, rows);
  double sum = 0.0;
  selector_->run(
      w, [&] { sum = kernels::mfg_hjb_rows_host(c); },
      [&] {
        if (!device_)
          device_ = std::make_unique<kernels::MfgRowsDevice>(selector_->device().device);
        sum = device_->hjb(c);
      });
  return sum;
}

void RowKernels::fp(const kernels::FpRowsCall& c) {
  if (selector_ == nullptr) {
    kernels::mfg_fp_rows_host(c);
    return;
  }
  const exec::Workload w = exec::mfg_fp_rows_workload(fp_kernel_, c.block.size[0]);
  selector_->run(
      w, [&] { kernels::mfg_fp_rows_host(c); },
      [&] {
        if (!device_)
          device_ = std::make_unique<kernels::MfgRowsDevice>(selector_->device().device);
        device_->fp(c);
      });
}

double hjb_rows_call(RowKernels* rk, const kernels::HjbRowsCall& c) {
  return rk != nullptr ? rk->hjb(c) : kernels::mfg_hjb_rows_host(c);
}

void fp_rows_call(RowKernels* rk, const kernels::FpRowsCall& c) {
  if (rk != nullptr) {
    rk->fp(c);
  } else {
    kernels::mfg_fp_rows_host(c);
  }
}

bool rows_kernel_covers(const Model& model) {
  return !model.grid().has_exit() && !model.has_obstacle();
}

namespace {

kernels::MfgBlock grid_block(const Model& model) {
  const Grid& g = model.grid();
  const OwnedBox& box = model.box();
  kernels::MfgBlock b;
  b.dim = g.dim;
  const PetscInt start[3] = {box.xs, box.ys, box.zs};
  const PetscInt size[3] = {box.xm, box.ym, box.zm};
  for (int a = 0; a < 3; ++a) {
    const bool used = a < g.dim;
    b.points[a] = used ? g.points[static_cast<std::size_t>(a)] : 1;
    b.start[a] = used ? start[a] : 0;
    b.size[a] = used ? size[a] : 1;
    b.inv_h[a] = used ? 1.0 / g.spacing(a) : 1.0;
    b.mirror[2 * a] = used && g.side(a, 0) != Boundary::periodic;
    b.mirror[2 * a + 1] = used && g.side(a, 1) != Boundary::periodic;
  }
  return b;
}

}  // namespace

kernels::MfgBlock row_block(const Model& model, const GhostBox& gb) {
  kernels::MfgBlock b = grid_block(model);
  b.ghost_start[0] = gb.gxs;
  b.ghost_start[1] = gb.gys;
  b.ghost_start[2] = gb.gzs;
  b.ghost_size[0] = gb.gxm;
  b.ghost_size[1] = gb.gym;
  b.ghost_size[2] = gb.gzm;
  return b;
}

kernels::MfgBlock row_block_1d(const Model& model, std::pair<double, double> ghosts) {
  kernels::MfgBlock b = grid_block(model);
  b.owned_1d = true;
  b.ghost_west = ghosts.first;
  b.ghost_east = ghosts.second;
  return b;
}

kernels::HjbRowsCall hjb_call(const Model& model, const UpwindHamiltonian& ham,
                              const kernels::MfgBlock& block) {
  kernels::HjbRowsCall c;
  c.block = block;
  c.inv_dt = 1.0 / model.dt();
  c.nu = model.diffusion();
  c.coef = ham.coef;
  c.power = ham.power;
  c.exponent = ham.exponent;
  return c;
}

}  // namespace fracmfg::mfg::detail
