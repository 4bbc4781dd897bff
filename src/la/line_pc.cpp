#include "fracmfg/la/line_pc.hpp"

#include <petsc/private/pcimpl.h>
#include <petscdmda.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/kernel_names.hpp"
#include "fracmfg/exec/kernel_workloads.hpp"
#include "fracmfg/kernels/tridiag_batched.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "la/pc_types.hpp"

namespace fracmfg::la {

namespace {

constexpr int kMaxSweeps = 16;

// One batch of line systems with its own coefficient arrays and kernel workspace.
struct Lines {
  std::int64_t systems = 0, size = 0;
  bool cyclic = false;
  std::vector<double> sub, diag, super, work;

  void resize(std::int64_t m, std::int64_t n, bool cyc) {
    systems = m;
    size = n;
    cyclic = cyc;
    const auto count = static_cast<std::size_t>(m * n);
    for (auto* v : {&sub, &diag, &super}) v->assign(count, 0.0);
    work.assign(kernels::tridiag_workspace_size(m, n, cyc), 0.0);
  }

  kernels::TridiagBatch batch(double* rhs) {
    kernels::TridiagBatch b;
    b.layout = kernels::TridiagLayout::strided;
    b.systems = systems;
    b.size = size;
    b.sub = sub.data();
    b.diag = diag.data();
    b.super = super.data();
    b.rhs = rhs;
    b.workspace = work.data();
    return b;
  }
};

// The PC's context (pc->data). x holds the x-lines in the box's natural order (entry i of
// line j at j*xm + i), so its sub/diag/super are the west/diagonal/east coefficients of the
// owned rows; y holds the y-lines transposed (entry j of line i at i*ym + j), so its
// sub/super are the south/north coefficients.
struct PcData {
  Lines x, y;
  std::int64_t xm = 0, ym = 0;
  std::vector<double> t;  // the correction of a sweep (line order)
  int sweeps = 8;
  long setups = 0;
  long applies = 0;
  exec::Selector* selector = nullptr;
  exec::KernelId kernel;
};

PcData& data_of(PC pc) {
  if (pc->data == nullptr) throw Error("fracmfg_line: the PC has no context");
  return *static_cast<PcData*>(pc->data);
}

// One batch through the rank's selector (host kernel without one). The workload is the one
// `fracmfg calibrate` measures for this kernel (exec/kernel_workloads.hpp), so the
// performance model's fit applies; a cyclic batch costs about twice a plain one.
void solve_lines(PcData& d, Lines& lines, double* rhs) {
  if (lines.systems == 0 || lines.size == 0) return;
  const kernels::TridiagBatch batch = lines.batch(rhs);
  kernels::TridiagOptions options;
  options.cyclic = lines.cyclic;
  auto host = [&] { kernels::tridiag_batched_host(batch, options); };
  if (d.selector == nullptr) {
    host();
    return;
  }
  const exec::Workload w = exec::tridiag_batched_workload(d.kernel, lines.systems, lines.size);
  exec::Selector* sel = d.selector;
  sel->run(w, host, [&] {
    kernels::TridiagOptions o = options;
    o.cuda_device = sel->device().device;
    o.cuda_resources = sel->cuda_resources();
    kernels::tridiag_batched_cuda(batch, o);
  });
}

struct Grid2d {
  PetscInt mx = 0, my = 0, xm = 0, ym = 0;
  bool periodic_x = false, periodic_y = false;
};

Grid2d grid_of(PC pc, PetscInt local_rows) {
  DM dm = nullptr;
  FRACMFG_PETSC_CHECK(PCGetDM(pc, &dm));
  PetscBool is_da = PETSC_FALSE;
  if (dm != nullptr) {
    FRACMFG_PETSC_CHECK(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(dm), DMDA, &is_da));
  }
  if (!is_da) {
    throw Error(
        "fracmfg_line: the PC needs the 2D DMDA of its matrix (KSPSetDM, with "
        "KSPSetDMActive(ksp, PETSC_FALSE) when the operators are set by hand)");
  }
  PetscInt dim = 0, dof = 0;
  DMBoundaryType bx = DM_BOUNDARY_NONE, by = DM_BOUNDARY_NONE;
  Grid2d g;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(dm, &dim, &g.mx, &g.my, nullptr, nullptr, nullptr, nullptr, &dof,
                                  nullptr, &bx, &by, nullptr, nullptr));
  if (dim != 2 || dof != 1) {
    throw Error("fracmfg_line: the DMDA has dimension " + std::to_string(dim) + " and " +
                std::to_string(dof) +
                " degree(s) of freedom; the PC is for 2D grids with one (1D: fracmfg_tridiag)");
  }
  PetscInt xs = 0, ys = 0;
  FRACMFG_PETSC_CHECK(DMDAGetCorners(dm, &xs, &ys, nullptr, &g.xm, &g.ym, nullptr));
  if (g.xm * g.ym != local_rows) {
    throw Error("fracmfg_line: the matrix has " + std::to_string(local_rows) +
                " rows on this rank but the DMDA's box has " + std::to_string(g.xm) + " x " +
                std::to_string(g.ym) + " points");
  }
  g.periodic_x = bx == DM_BOUNDARY_PERIODIC;
  g.periodic_y = by == DM_BOUNDARY_PERIODIC;
  return g;
}

// Where a coupling of point (ri, rj) to (ci, cj) of the same box goes; the wrap across a
// periodic boundary counts only on a cyclic line (the box holds the whole line).
enum class Slot { diag, minus, plus, none };
Slot along(PetscInt r, PetscInt c, PetscInt m, bool cyclic) {
  const PetscInt d = c - r;
  if (d == 0) return Slot::diag;
  if (d == 1 || (cyclic && d == -(m - 1))) return Slot::plus;
  if (d == -1 || (cyclic && d == m - 1)) return Slot::minus;
  return Slot::none;
}

PetscErrorCode pc_setup(PC pc) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  PcData& d = data_of(pc);
  Mat a = pc->pmat;
  PetscInt local_rows = 0, local_cols = 0;
  FRACMFG_PETSC_CHECK(MatGetLocalSize(a, &local_rows, &local_cols));
  const Grid2d g = grid_of(pc, local_rows);
  const bool cyc_x = g.periodic_x && g.xm == g.mx;
  const bool cyc_y = g.periodic_y && g.ym == g.my;
  if (d.xm != g.xm || d.ym != g.ym || d.x.cyclic != cyc_x || d.y.cyclic != cyc_y) {
    d.xm = g.xm;
    d.ym = g.ym;
    d.x.resize(g.ym, g.xm, cyc_x);
    d.y.resize(g.xm, g.ym, cyc_y);
    d.t.assign(static_cast<std::size_t>(g.xm * g.ym), 0.0);
  } else {
    for (Lines* l : {&d.x, &d.y}) {
      std::fill(l->sub.begin(), l->sub.end(), 0.0);
      std::fill(l->super.begin(), l->super.end(), 0.0);
    }
  }
  Mat block = nullptr;
  FRACMFG_PETSC_CHECK(MatGetDiagonalBlock(a, &block));
  const PetscInt xm = g.xm;
  const PetscInt ym = g.ym;
  for (PetscInt row = 0; row < local_rows; ++row) {
    const PetscInt ri = row % xm;
    const PetscInt rj = row / xm;
    const auto kx = static_cast<std::size_t>(row);           // x-line order
    const auto ky = static_cast<std::size_t>(ri * ym + rj);  // y-line order
    double diag = 0.0;
    PetscInt ncols = 0;
    const PetscInt* cols = nullptr;
    const PetscScalar* vals = nullptr;
    FRACMFG_PETSC_CHECK(MatGetRow(block, row, &ncols, &cols, &vals));
    std::string bad;
    for (PetscInt c = 0; c < ncols; ++c) {
      const PetscInt ci = cols[c] % xm;
      const PetscInt cj = cols[c] / xm;
      const double v = vals[c];
      Slot s = Slot::none;
      bool x_dir = true;
      if (cj == rj) {
        s = along(ri, ci, xm, cyc_x);
      } else if (ci == ri) {
        s = along(rj, cj, ym, cyc_y);
        x_dir = false;
      }
      if (s == Slot::diag) {
        diag += v;
      } else if (s == Slot::minus) {
        (x_dir ? d.x.sub[kx] : d.y.sub[ky]) += v;
      } else if (s == Slot::plus) {
        (x_dir ? d.x.super[kx] : d.y.super[ky]) += v;
      } else if (v != 0.0 && bad.empty()) {
        bad = "fracmfg_line: the matrix is not a 5-point operator on the DMDA: owned row " +
              std::to_string(row) + " (point " + std::to_string(ri) + ", " + std::to_string(rj) +
              " of the rank's box) couples to local column " + std::to_string(cols[c]);
      }
    }
    FRACMFG_PETSC_CHECK(MatRestoreRow(block, row, &ncols, &cols, &vals));
    if (!bad.empty()) throw Error(bad);
    d.x.diag[kx] = diag;
    d.y.diag[ky] = diag;
  }
  d.setups += 1;
  FRACMFG_PETSC_CALLBACK_END
}

// t = r - A_r z at the owned points, written in x-line order (transpose false) or y-line
// order (transpose true); A_r from the x-line and y-line coefficients.
void block_residual(const PcData& d, const double* r, const double* z, double* t, bool transpose) {
  const std::int64_t xm = d.xm;
  const std::int64_t ym = d.ym;
  const double* west = d.x.sub.data();
  const double* east = d.x.super.data();
  const double* diag = d.x.diag.data();
  const double* south = d.y.sub.data();
  const double* north = d.y.super.data();
  const bool cx = d.x.cyclic;
  const bool cy = d.y.cyclic;
  for (std::int64_t j = 0; j < ym; ++j) {
    const std::int64_t row = j * xm;
    const std::int64_t jm = j > 0 ? j - 1 : (cy ? ym - 1 : -1);
    const std::int64_t jp = j + 1 < ym ? j + 1 : (cy ? 0 : -1);
    for (std::int64_t i = 0; i < xm; ++i) {
      const std::int64_t k = row + i;
      const std::int64_t ky = i * ym + j;
      double az = diag[k] * z[k];
      const std::int64_t im = i > 0 ? i - 1 : (cx ? xm - 1 : -1);
      const std::int64_t ip = i + 1 < xm ? i + 1 : (cx ? 0 : -1);
      if (im >= 0) az += west[k] * z[row + im];
      if (ip >= 0) az += east[k] * z[row + ip];
      if (jm >= 0) az += south[ky] * z[jm * xm + i];
      if (jp >= 0) az += north[ky] * z[jp * xm + i];
      t[transpose ? ky : k] = r[k] - az;
    }
  }
}

PetscErrorCode pc_apply(PC pc, Vec x, Vec y) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  PcData& d = data_of(pc);
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(x, &n));
  if (n != d.xm * d.ym) {
    throw Error("fracmfg_line: vector local size " + std::to_string(n) +
                " differs from the matrix's " + std::to_string(d.xm * d.ym) + " rows on this rank");
  }
  VecReadArray rv(x);
  VecWriteArray zv(y);
  const double* r = rv.get();
  double* z = zv.get();
  const auto count = static_cast<std::size_t>(n);
  std::copy(r, r + count, z);
  solve_lines(d, d.x, z);
  double* t = d.t.data();
  for (int sweep = 2; sweep <= d.sweeps; ++sweep) {
    const bool y_lines = sweep % 2 == 0;
    block_residual(d, r, z, t, y_lines);
    solve_lines(d, y_lines ? d.y : d.x, t);
    if (y_lines) {
      for (std::int64_t j = 0; j < d.ym; ++j) {
        for (std::int64_t i = 0; i < d.xm; ++i) z[j * d.xm + i] += t[i * d.ym + j];
      }
    } else {
      for (std::size_t k = 0; k < count; ++k) z[k] += t[k];
    }
  }
  d.applies += 1;
  FRACMFG_PETSC_CALLBACK_END
}

PetscErrorCode pc_set_from_options(PC pc, PetscOptionItems* items) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  PcData& d = data_of(pc);
  // PetscOptionsHeadBegin/End expand to PetscCall, whose PetscError() would name fracmfg's
  // exception type inside this namespace: the heading is printed by hand.
  if (items->printhelp && items->count == 1 && !items->alreadyprinted) {
    FRACMFG_PETSC_CHECK(
        (*PetscHelpPrintf)(items->comm, "  Alternating line relaxation (fracmfg_line)\n"));
  }
  PetscInt sweeps = d.sweeps;
  FRACMFG_PETSC_CHECK(PetscOptionsInt_Private(
      items, "-pc_fracmfg_line_sweeps",
      "Line sweeps per application, alternating x and y lines (1 = x-lines only)",
      "la::line_pc_set_sweeps", d.sweeps, &sweeps, nullptr, 1, kMaxSweeps));
  d.sweeps = static_cast<int>(sweeps);
  FRACMFG_PETSC_CALLBACK_END
}

PetscErrorCode pc_destroy(PC pc) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  delete static_cast<PcData*>(pc->data);
  pc->data = nullptr;
  FRACMFG_PETSC_CALLBACK_END
}

PetscErrorCode pc_view(PC pc, PetscViewer viewer) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  PetscBool ascii = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(
      PetscObjectTypeCompare(reinterpret_cast<PetscObject>(viewer), PETSCVIEWERASCII, &ascii));
  if (!ascii) return 0;
  const PcData& d = data_of(pc);
  FRACMFG_PETSC_CHECK(PetscViewerASCIIPrintf(
      viewer,
      "  alternating line relaxation, %d sweep(s) (x-lines first), block Jacobi over ranks, "
      "line solves %s\n",
      d.sweeps, d.selector != nullptr ? "through the rank's selector" : "on the host"));
  if (d.setups > 0) {
    FRACMFG_PETSC_CHECK(PetscViewerASCIIPrintf(
        viewer, "  rank 0's box %lld x %lld, x-lines %s, y-lines %s, %ld setup(s)\n",
        static_cast<long long>(d.xm), static_cast<long long>(d.ym), d.x.cyclic ? "cyclic" : "plain",
        d.y.cyclic ? "cyclic" : "plain", d.setups));
  }
  FRACMFG_PETSC_CALLBACK_END
}

}  // namespace

namespace detail {

PetscErrorCode line_pc_create(PC pc) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  pc->data = new PcData();
  pc->ops->setup = pc_setup;
  pc->ops->apply = pc_apply;
  pc->ops->setfromoptions = pc_set_from_options;
  pc->ops->destroy = pc_destroy;
  pc->ops->view = pc_view;
  FRACMFG_PETSC_CALLBACK_END
}

}  // namespace detail

bool is_line_pc(PC pc) {
  PetscBool same = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(
      PetscObjectTypeCompare(reinterpret_cast<PetscObject>(pc), line_pc_type, &same));
  return same == PETSC_TRUE;
}

void line_pc_set_selector(PC pc, exec::Selector* selector) {
  if (!is_line_pc(pc)) return;
  PcData& d = data_of(pc);
  d.selector = selector;
  if (selector != nullptr) d.kernel = selector->kernel(exec::kernel_names::tridiag_batched);
}

void line_pc_set_sweeps(PC pc, int sweeps) {
  if (!is_line_pc(pc)) throw Error("line_pc_set_sweeps: the PC is not of type fracmfg_line");
  if (sweeps < 1 || sweeps > kMaxSweeps) {
    throw Error("line_pc_set_sweeps: sweeps must be in 1.." + std::to_string(kMaxSweeps) +
                ", got " + std::to_string(sweeps));
  }
  data_of(pc).sweeps = sweeps;
}

LinePcInfo line_pc_info(PC pc) {
  if (!is_line_pc(pc)) throw Error("line_pc_info: the PC is not of type fracmfg_line");
  const PcData& d = data_of(pc);
  LinePcInfo info;
  info.xm = d.xm;
  info.ym = d.ym;
  info.cyclic_x = d.x.cyclic;
  info.cyclic_y = d.y.cyclic;
  info.sweeps = d.sweeps;
  info.setups = d.setups;
  info.applies = d.applies;
  return info;
}

}  // namespace fracmfg::la
