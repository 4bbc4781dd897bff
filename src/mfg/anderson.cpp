#include "mfg/anderson.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "fracmfg/core/petsc_check.hpp"
#include "la/dense_lu.hpp"

namespace fracmfg::mfg::detail {

namespace {

// Local (this rank's) dot product of two Vecs.
double local_dot(Vec a, Vec b) {
  detail::ReadArray x(a), y(b);
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(a, &n));
  double s = 0.0;
  for (PetscInt i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

// Solves the small symmetric system (G + lambda I) x = b (LU with partial pivoting, LAPACK);
// false when it is singular or the solution is not finite.
bool solve_small(std::vector<double> g, std::vector<double> b, std::size_t n,
                 std::vector<double>& x) {
  double trace = 0.0;
  for (std::size_t i = 0; i < n; ++i) trace += g[i * n + i];
  for (std::size_t i = 0; i < n; ++i) g[i * n + i] += 1e-14 * trace;
  if (la::dense_lu_solve(n, g.data(), b.data()) >= 0) return false;
  x = std::move(b);
  return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
}

}  // namespace

void Anderson::setup(MPI_Comm c, core::Logger l, DM da, int n_levels, int p) {
  comm = c;
  log = l;
  dm = da;
  levels = n_levels;
  depth = p;
  if (depth > 0) {
    x_before = std::make_unique<State>(make_state(dm, levels));
    f_prev = std::make_unique<State>(make_state(dm, levels));
    g_prev = std::make_unique<State>(make_state(dm, levels));
    f_cur = std::make_unique<State>(make_state(dm, levels));
  }
}

State Anderson::take_state() {
  if (!spare.empty()) {
    State s = std::move(spare.back());
    spare.pop_back();
    return s;
  }
  return make_state(dm, levels);
}

// Type-II Anderson mixing on x = (U, M): x currently holds g_k, x_before holds x_k.
bool Anderson::mix(State& x, int it) {
  difference(x, *x_before, *f_cur);  // f_k
  if (have_prev) {
    State df =
        d_f.size() == static_cast<std::size_t>(depth) ? std::move(d_f.front()) : take_state();
    State dg =
        d_g.size() == static_cast<std::size_t>(depth) ? std::move(d_g.front()) : take_state();
    if (d_f.size() == static_cast<std::size_t>(depth)) {
      d_f.pop_front();
      d_g.pop_front();
    }
    difference(*f_cur, *f_prev, df);
    difference(x, *g_prev, dg);
    d_f.push_back(std::move(df));
    d_g.push_back(std::move(dg));
  }
  std::swap(f_prev, f_cur);
  copy_state(x, *g_prev);
  have_prev = true;
  const std::size_t p = d_f.size();
  if (p == 0) return false;

  // Weighted Gram matrix of the residual differences and their products with f_k.
  std::vector<double> local(p * p + p + 2, 0.0);
  for (int n = 0; n < levels; ++n) {
    local[p * p + p] += local_dot(x.u[n].get(), x.u[n].get());
    local[p * p + p + 1] += local_dot(x.m[n].get(), x.m[n].get());
  }
  MPI_Allreduce(MPI_IN_PLACE, local.data() + p * p + p, 2, MPI_DOUBLE, MPI_SUM, comm);
  const double wu = local[p * p + p] > 0.0 ? 1.0 / local[p * p + p] : 1.0;
  const double wm = local[p * p + p + 1] > 0.0 ? 1.0 / local[p * p + p + 1] : 1.0;
  std::vector<double> gram(p * p + p, 0.0);
  for (int n = 0; n < levels; ++n) {
    for (std::size_t i = 0; i < p; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        gram[i * p + j] += wu * local_dot(d_f[i].u[n].get(), d_f[j].u[n].get()) +
                           wm * local_dot(d_f[i].m[n].get(), d_f[j].m[n].get());
      }
      gram[p * p + i] += wu * local_dot(d_f[i].u[n].get(), f_prev->u[n].get()) +
                         wm * local_dot(d_f[i].m[n].get(), f_prev->m[n].get());
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, gram.data(), static_cast<int>(gram.size()), MPI_DOUBLE, MPI_SUM,
                comm);
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t j = 0; j < i; ++j) gram[j * p + i] = gram[i * p + j];
  }
  std::vector<double> gamma;
  const std::vector<double> b(gram.begin() + static_cast<std::ptrdiff_t>(p * p), gram.end());
  gram.resize(p * p);
  if (!solve_small(gram, b, p, gamma)) {
    log.debug("mfg iteration ", it, ": Anderson system singular, history cleared");
    clear_history();
    return false;
  }
  // x_{k+1} = g_k - sum_j gamma_j dG_j
  for (int n = 0; n < levels; ++n) {
    for (std::size_t j = 0; j < p; ++j) {
      FRACMFG_PETSC_CHECK(VecAXPY(x.u[n].get(), -gamma[j], d_g[j].u[n].get()));
      FRACMFG_PETSC_CHECK(VecAXPY(x.m[n].get(), -gamma[j], d_g[j].m[n].get()));
    }
  }
  // A mixed density must stay >= 0; otherwise keep the plain step.
  double lo = std::numeric_limits<double>::infinity();
  for (int n = 0; n < levels; ++n) {
    PetscReal v = 0.0;
    FRACMFG_PETSC_CHECK(VecMin(x.m[n].get(), nullptr, &v));
    lo = std::min(lo, static_cast<double>(v));
  }
  if (!(lo >= 0.0)) {
    log.debug("mfg iteration ", it, ": Anderson mix has m < 0, plain step kept");
    copy_state(*g_prev, x);
    clear_history();
    return false;
  }
  return true;
}

void Anderson::clear_history() {
  while (!d_f.empty()) {
    spare.push_back(std::move(d_f.back()));
    d_f.pop_back();
  }
  while (!d_g.empty()) {
    spare.push_back(std::move(d_g.back()));
    d_g.pop_back();
  }
}

}  // namespace fracmfg::mfg::detail
