#include "mfg/direct_1d.hpp"

#include <cstring>
#include <sstream>
#include <string>

#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/mfg/hamiltonian.hpp"

namespace fracmfg::mfg::detail {

bool only_options_among(const char* prefix, std::initializer_list<const char*> names) {
  char* all = nullptr;
  FRACMFG_PETSC_CHECK(PetscOptionsGetAll(nullptr, &all));
  const std::string text = all ? all : "";
  FRACMFG_PETSC_CHECK(PetscFree(all));
  const std::string lead = std::string("-") + prefix;
  std::istringstream in(text);
  std::string token;
  while (in >> token) {
    if (token.compare(0, lead.size(), lead) != 0) continue;
    const std::string name = token.substr(lead.size());
    bool known = false;
    for (const char* n : names) known = known || name == n;
    if (!known) return false;
  }
  return true;
}

namespace {

// The owned range of a 1D grid and the ghosted index of its first point.
struct Range1d {
  PetscInt first, count, ghost_offset, last_global;
  bool mirror;
};

Range1d range_1d(const Model& model, const GhostBox& gb) {
  const OwnedBox& b = model.box();
  return {b.xs, b.xm, b.xs - gb.gxs, model.grid().points[0] - 1,
          model.grid().boundary == Boundary::reflecting};
}

}  // namespace

double hjb_residual_rows_1d(const Model& model, const GhostBox& gb, const double* u,
                            const double* u_next, const double* rhs, double* r, double* sub,
                            double* diag, double* super) {
  const Range1d rg = range_1d(model, gb);
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const double ih = 1.0 / model.grid().spacing(0);
  const double lap = nu * ih * ih;
  const double* inv_c = model.inverse_control_cost().data();
  double sum = 0.0;
  for (PetscInt k = 0; k < rg.count; ++k) {
    const PetscInt i = rg.first + k;
    const PetscInt s = rg.ghost_offset + k;
    const bool wall_w = rg.mirror && i == 0;
    const bool wall_e = rg.mirror && i == rg.last_global;
    const double up = u[s];
    const double uw = wall_w ? up : u[s - 1];
    const double ue = wall_e ? up : u[s + 1];
    const double dplus = (ue - up) * ih, dminus = (up - uw) * ih;
    const double ic = inv_c[k];
    const double lap_u = (ue - 2.0 * up + uw) * ih * ih;
    const double res =
        (up - u_next[k]) * inv_dt - nu * lap_u + upwind_hamiltonian(dplus, dminus, ic) - rhs[k];
    r[k] = res;
    sum += res * res;
    const double ap = upwind_a_plus(dplus, ic);
    const double am = upwind_a_minus(dminus, ic);
    double cplus = -lap + ap * ih;
    double cminus = -lap - am * ih;
    double d = inv_dt + 2.0 * lap + (am - ap) * ih;
    if (wall_e) {
      d += cplus;
      cplus = 0.0;
    }
    if (wall_w) {
      d += cminus;
      cminus = 0.0;
    }
    sub[k] = cminus;
    diag[k] = d;
    super[k] = cplus;
  }
  return sum;
}

double hjb_residual_1d(const Model& model, const GhostBox& gb, const double* u,
                       const double* u_next, const double* rhs, double* r) {
  const Range1d rg = range_1d(model, gb);
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const double ih = 1.0 / model.grid().spacing(0);
  const double* inv_c = model.inverse_control_cost().data();
  double sum = 0.0;
  for (PetscInt k = 0; k < rg.count; ++k) {
    const PetscInt i = rg.first + k;
    const PetscInt s = rg.ghost_offset + k;
    const double up = u[s];
    const double uw = rg.mirror && i == 0 ? up : u[s - 1];
    const double ue = rg.mirror && i == rg.last_global ? up : u[s + 1];
    const double lap_u = (ue - 2.0 * up + uw) * ih * ih;
    const double res = (up - u_next[k]) * inv_dt - nu * lap_u +
                       upwind_hamiltonian((ue - up) * ih, (up - uw) * ih, inv_c[k]) - rhs[k];
    r[k] = res;
    sum += res * res;
  }
  return sum;
}

void fp_rows_1d(const Model& model, const GhostBox& gb, const double* u, const double* inv_c,
                double* sub, double* diag, double* super) {
  const Range1d rg = range_1d(model, gb);
  const double inv_dt = 1.0 / model.dt();
  const double nu = model.diffusion();
  const double ih = 1.0 / model.grid().spacing(0);
  const double lap = nu * ih * ih;
  for (PetscInt k = 0; k < rg.count; ++k) {
    const PetscInt i = rg.first + k;
    const PetscInt s = rg.ghost_offset + k;
    const bool wall_w = rg.mirror && i == 0;
    const bool wall_e = rg.mirror && i == rg.last_global;
    const double up = u[s];
    const double uw = wall_w ? up : u[s - 1];
    const double ue = wall_e ? up : u[s + 1];
    const double dplus = (ue - up) * ih, dminus = (up - uw) * ih;
    // J(q, q), with the mirrored neighbours folded in (their a+/a- vanish: zero difference).
    const double ap = upwind_a_plus(dplus, inv_c[s]);
    const double am = upwind_a_minus(dminus, inv_c[s]);
    double d = inv_dt + 2.0 * lap + (am - ap) * ih;
    if (wall_w) d -= lap;
    if (wall_e) d -= lap;
    diag[k] = d;
    // J(q-1, q): the east coefficient of row q-1, whose D+ is this point's D-.
    sub[k] = wall_w ? 0.0 : -lap + upwind_a_plus(dminus, inv_c[s - 1]) * ih;
    // J(q+1, q): the west coefficient of row q+1, whose D- is this point's D+.
    super[k] = wall_e ? 0.0 : -lap - upwind_a_minus(dplus, inv_c[s + 1]) * ih;
  }
}

}  // namespace fracmfg::mfg::detail
