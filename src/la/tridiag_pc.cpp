#include "fracmfg/la/tridiag_pc.hpp"

#include <petsc/private/pcimpl.h>

#include <string>

#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/line_pc.hpp"
#include "fracmfg/la/tridiag_matrix.hpp"
#include "la/pc_types.hpp"

namespace fracmfg::la {

namespace {

// The PC's context (pc->data): the diagonals read at the last setup and the solver.
struct PcData {
  explicit PcData(MPI_Comm comm) : solver(comm) {}
  TridiagRows rows;
  TridiagSolver solver;
};

PcData& data_of(PC pc) {
  if (pc->data == nullptr) throw Error("fracmfg_tridiag: the PC has no context");
  return *static_cast<PcData*>(pc->data);
}

// Access to a Vec's local array, given back even when the solve throws.
using ReadArray = VecReadArray;
using WriteArray = VecWriteArray;

void check_sizes(const TridiagSolver& solver, Vec x, Vec y) {
  PetscInt nx = 0;
  PetscInt ny = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(x, &nx));
  FRACMFG_PETSC_CHECK(VecGetLocalSize(y, &ny));
  if (nx != solver.local_size() || ny != solver.local_size()) {
    throw Error("fracmfg_tridiag: vector local sizes " + std::to_string(nx) + ", " +
                std::to_string(ny) + " differ from the matrix's " +
                std::to_string(solver.local_size()) + " rows on this rank");
  }
}

PetscErrorCode pc_setup(PC pc) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  PcData& d = data_of(pc);
  extract_tridiagonal(pc->pmat, d.rows);
  d.solver.setup(d.rows.local_size(), d.rows.sub.data(), d.rows.diag.data(), d.rows.super.data(),
                 d.rows.periodic);
  FRACMFG_PETSC_CALLBACK_END
}

PetscErrorCode pc_apply(PC pc, Vec x, Vec y) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  PcData& d = data_of(pc);
  check_sizes(d.solver, x, y);
  // Aliasing x and y would be fine for the solver, but PETSc never passes the same Vec.
  ReadArray b(x);
  WriteArray out(y);
  d.solver.solve(b.get(), out.get());
  FRACMFG_PETSC_CALLBACK_END
}

PetscErrorCode pc_apply_transpose(PC pc, Vec x, Vec y) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  PcData& d = data_of(pc);
  check_sizes(d.solver, x, y);
  ReadArray b(x);
  WriteArray out(y);
  d.solver.solve_transpose(b.get(), out.get());
  FRACMFG_PETSC_CALLBACK_END
}

PetscErrorCode pc_reset(PC pc) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  if (pc->data != nullptr) {
    PcData& d = data_of(pc);
    d.rows = TridiagRows{};
    d.solver = TridiagSolver(d.solver.comm());
  }
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
  const TridiagSolver& s = data_of(pc).solver;
  if (!s.is_setup()) {
    FRACMFG_PETSC_CHECK(PetscViewerASCIIPrintf(
        viewer, "  exact distributed tridiagonal solve (partition method), not set up\n"));
    return 0;
  }
  int ranks = 1;
  MPI_Comm_size(s.comm(), &ranks);
  FRACMFG_PETSC_CHECK(PetscViewerASCIIPrintf(
      viewer,
      "  exact distributed tridiagonal solve (partition method): N = %" PetscInt_FMT
      ", %d rank(s), %s, reduced system of %" PetscInt_FMT " unknowns, %ld setup(s)\n",
      s.global_size(), ranks, s.periodic() ? "periodic (cyclic)" : "non-periodic", s.reduced_size(),
      s.setups()));
  FRACMFG_PETSC_CALLBACK_END
}

PetscErrorCode pc_create(PC pc) {
  FRACMFG_PETSC_CALLBACK_BEGIN
  MPI_Comm comm = MPI_COMM_NULL;
  FRACMFG_PETSC_CHECK(PetscObjectGetComm(reinterpret_cast<PetscObject>(pc), &comm));
  pc->data = new PcData(comm);
  pc->ops->setup = pc_setup;
  pc->ops->apply = pc_apply;
  pc->ops->applytranspose = pc_apply_transpose;
  pc->ops->reset = pc_reset;
  pc->ops->destroy = pc_destroy;
  pc->ops->view = pc_view;
  FRACMFG_PETSC_CALLBACK_END
}

}  // namespace

void register_petsc_types() {
  // PCRegister replaces an entry of the same name, so repeated calls are harmless.
  FRACMFG_PETSC_CHECK(PCRegister(tridiag_pc_type, pc_create));
  FRACMFG_PETSC_CHECK(PCRegister(line_pc_type, detail::line_pc_create));
}

KspHandle create_ksp(MPI_Comm comm) {
  register_petsc_types();
  KspHandle ksp;
  FRACMFG_PETSC_CHECK(KSPCreate(comm, ksp.out()));
  return ksp;
}

SnesHandle create_snes(MPI_Comm comm) {
  register_petsc_types();
  SnesHandle snes;
  FRACMFG_PETSC_CHECK(SNESCreate(comm, snes.out()));
  return snes;
}

bool is_tridiag_pc(PC pc) {
  PetscBool same = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(
      PetscObjectTypeCompare(reinterpret_cast<PetscObject>(pc), tridiag_pc_type, &same));
  return same == PETSC_TRUE;
}

const TridiagSolver& tridiag_pc_solver(PC pc) {
  if (!is_tridiag_pc(pc)) throw Error("tridiag_pc_solver: the PC is not of type fracmfg_tridiag");
  const TridiagSolver& s = data_of(pc).solver;
  if (!s.is_setup()) throw Error("tridiag_pc_solver: the fracmfg_tridiag PC is not set up");
  return s;
}

}  // namespace fracmfg::la
