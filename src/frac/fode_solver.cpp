#include "fracmfg/frac/fode_solver.hpp"

#include <petscksp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "frac/history_engine.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/progress.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/frac/fpde_time_mesh.hpp"
#include "fracmfg/frac/weights.hpp"
#include "fracmfg/la/petsc_handles.hpp"
#include "la/dense_lu.hpp"
#include "la/solve_check.hpp"

namespace fracmfg::frac {

namespace {

// RAII for the PETSc objects of the implicit method.
using OwnedVec = la::VecHandle;
using OwnedMat = la::MatHandle;
using OwnedKsp = la::KspHandle;

/// Dense local Newton systems above this size are refused (O(n^3) per iteration).
constexpr std::size_t kDenseNewtonLimit = 4096;

/// What went wrong at a step, in the order of the agreement key (smallest wins at equal
/// component): the solution is NaN or too large, the right-hand side is not finite, the
/// Newton matrix is singular, the explicit method is unstable (see check_growth()).
enum FailureCode : std::int64_t {
  failure_nan = 0,
  failure_diverged = 1,
  failure_rhs = 2,
  failure_singular = 3,
  failure_unstable = 4,
  failure_corrector = 5,
};
/// The agreement key is kFailureCodes * (global index) + code.
constexpr std::int64_t kFailureCodes = 8;

/// Growth the equation cannot have (check_growth()): |y_i| above this many times
/// max(|y_i(0)|, kGrowthFloor * max_k |y_k(0)|).
constexpr double kGrowthFactor = 2.0;
constexpr double kGrowthFloor = 1e-8;

/// abm: the largest defect of the corrector's equation at a step's result, relative to the
/// component's size, over the second half of the steps. Accurate runs stay orders of
/// magnitude below (the defect falls like the local error); at very small orders with few
/// steps the weight h^a / Gamma(a + 2) of f at the new step nears 1 / |df/dy|, the
/// corrector's fixed-point passes stop contracting, and the result can be wrong in the first
/// digit with a defect of that order.
constexpr double kCorrectorDefectLimit = 0.1;

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace

const char* to_string(FodeMethod method) {
  return method == FodeMethod::abm ? "abm" : "trapezoidal";
}

const char* to_string(FodeHistory history) {
  switch (history) {
    case FodeHistory::automatic: return "auto";
    case FodeHistory::direct: return "direct";
    case FodeHistory::fft: return "fft";
  }
  return "?";
}

PetscInt fode_local_size(MPI_Comm comm, PetscInt global_size) {
  PetscInt local = PETSC_DECIDE;
  PetscInt global = global_size;
  FRACMFG_PETSC_CHECK(PetscSplitOwnership(comm, &local, &global));
  return local;
}

struct FodeSolver::Impl {
  struct Group {
    double order = 0.0;
    double c0 = 0.0;                       ///< weight of f(t_n, y_n) in the corrector
    std::vector<double> start_correction;  ///< start(n) - K_c(n), n = 0..N
  };

  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  FodeOptions options;
  FodeRhs rhs;
  OwnedMat linear;  // a reference to rhs.linear
  core::Logger log;
  exec::Selector* selector = nullptr;

  PetscInt global = 0;
  PetscInt local = 0;
  PetscInt first = 0;
  std::vector<PetscInt> sizes;
  std::vector<PetscInt> starts;
  double horizon = 1.0;
  std::int64_t steps = 1;
  double h = 1.0;
  int rules = 1;

  std::vector<double> order;  // per local component (natural order)
  std::vector<double> c0;
  std::vector<double> y0;
  std::vector<double> y1;  // 0 where the order is <= 1
  std::vector<std::size_t> group_of;
  std::vector<Group> groups;
  std::vector<std::size_t> internal;  // internal column k holds natural component internal[k]

  std::unique_ptr<detail::HistoryEngine> engine;  // uniform mesh only

  // Graded mesh (grading > 1): the levels, every f row (natural order) and the weights of one
  // step, summed directly.
  double grading = 1.0;
  std::unique_ptr<FpdeTimeMesh> mesh;
  std::vector<double> f_rows;
  std::vector<double> wc;
  std::vector<double> wp;
  double graded_seconds = 0.0;

  // Per-step work arrays (natural order).
  std::vector<double> y;
  std::vector<double> f;
  std::vector<double> ytmp;
  std::vector<double> ftmp;
  std::vector<double> fused;  ///< abm: f at the iterate the last corrector pass used
  std::vector<double> taylor;
  std::vector<double> hp;
  std::vector<double> hc;
  std::vector<double> jac;
  std::vector<double> dg;

  // Implicit method with a Mat.
  OwnedVec x_wrap;
  OwnedVec f_wrap;
  OwnedVec residual;
  OwnedVec update;
  OwnedVec diagonal;
  OwnedMat m0;  // I - diag(c0) A
  OwnedMat m;   // m0 - diag(c0 g'(y))
  OwnedKsp ksp;

  FodeStats stats;
  bool warned_newton = false;
  /// The rank's first failed step (-1: none yet), its local component and FailureCode.
  std::int64_t failed_step = -1;
  std::int64_t failed_component = 0;
  std::int64_t failed_code = 0;
  /// Values for the message of a failure (the owner's, broadcast by agree()): the offending
  /// value, and for failure_unstable |y_i(0)| and h^a f_i / y_i.
  double failed_detail[3] = {0.0, 0.0, 0.0};
  /// Set by the Newton iterations when the right-hand side was not finite at an iterate
  /// (their return value then names that component instead of a zero pivot).
  bool newton_rhs_failed = false;
  /// Per local component of order <= 1 (abm): y_i f_i(t, y) <= 0 at every step so far, so
  /// that the equation's solution satisfies |y_i(t)| <= |y_i(0)| (check_growth()).
  std::vector<char> inward;
  std::vector<double> growth_limit;
  /// Steps between agreements on failures when nothing else communicates (see step()).
  std::int64_t agree_every = 32;
  std::int64_t observe_every = 0;  ///< 0: no observer
  std::chrono::steady_clock::time_point t_start;
  /// Progress lines of this solve (options.progress_interval > 0 and info enabled).
  std::optional<core::Progress> progress_lines;

  bool implicit() const { return options.method == FodeMethod::trapezoidal; }
  bool graded() const { return mesh != nullptr; }
  bool split_form() const { return rhs.linear != nullptr || static_cast<bool>(rhs.pointwise); }

  void setup(FodeProblem problem);
  void setup_layout(const FodeProblem& problem);
  void setup_components(const FodeProblem& problem);
  void setup_history();
  void setup_implicit();

  double time_of(std::int64_t n) const {
    if (graded()) return mesh->time(n);
    return n == steps ? horizon : static_cast<double>(n) * h;
  }
  /// The graded mesh's history of step n >= 1 into hc (and hp) and its c0, directly.
  void graded_history(std::int64_t n);
  /// The engine's history of step n >= 1 (uniform mesh) into hc (and hp).
  void uniform_history(std::int64_t n);
  void eval(double t, const double* yv, double* fv);
  void step(std::int64_t n);
  /// Newton's method for y = ytmp + c0 f(t, y) from the previous y. Return the local index of
  /// a component whose Newton pivot is zero (singular matrix), else -1.
  std::int64_t newton_dense(std::int64_t n, double t);
  std::int64_t newton_diagonal(std::int64_t n, double t);
  std::int64_t newton_ksp(std::int64_t n, double t);
  void pointwise_derivative(double t, const double* yv, double* out);
  void note_newton(std::int64_t n, int iterations, bool converged);
  /// Collective agreement on a failed step: throws CollectiveError on every rank.
  /// Collective agreement on the first failed step over all ranks: throws CollectiveError on
  /// every rank when some rank recorded a failure.
  void agree();
  void progress(std::int64_t n);
  /// The explicit method's instability: the local component that grew beyond what the
  /// equation allows at this step, else -1.
  std::int64_t check_growth();
  /// The first local component whose right-hand side value is not finite, else -1.
  std::int64_t non_finite_rhs() const;
};

// --- setup -------------------------------------------------------------------------------

void FodeSolver::Impl::setup_layout(const FodeProblem& problem) {
  PetscInt g = problem.global_size;
  PetscInt l = problem.local_size;
  if (rhs.linear != nullptr) {
    PetscInt rows = 0, cols = 0, lrows = 0, lcols = 0;
    FRACMFG_PETSC_CHECK(MatGetSize(rhs.linear, &rows, &cols));
    FRACMFG_PETSC_CHECK(MatGetLocalSize(rhs.linear, &lrows, &lcols));
    if (rows != cols || lrows != lcols) {
      throw Error("FodeSolver: the linear part must be square with equal row and column layouts (" +
                  std::to_string(rows) + " x " + std::to_string(cols) + ", local " +
                  std::to_string(lrows) + " x " + std::to_string(lcols) + ")");
    }
    if ((g != PETSC_DECIDE && g != rows) || (l != PETSC_DECIDE && l != lrows)) {
      throw Error("FodeSolver: the problem's sizes (global " + std::to_string(g) + ", local " +
                  std::to_string(l) + ") differ from the linear part's (" + std::to_string(rows) +
                  ", " + std::to_string(lrows) + ")");
    }
    g = rows;
    l = lrows;
  } else {
    if (g == PETSC_DECIDE && l == PETSC_DECIDE) {
      throw Error("FodeSolver: give the global or the local number of components");
    }
    if ((g != PETSC_DECIDE && g < 1) || (l != PETSC_DECIDE && l < 0)) {
      throw Error("FodeSolver: invalid number of components (global " + std::to_string(g) +
                  ", local " + std::to_string(l) + ")");
    }
    FRACMFG_PETSC_CHECK(PetscSplitOwnership(comm, &l, &g));
  }
  global = g;
  local = l;
  sizes.assign(static_cast<std::size_t>(size), 0);
  MPI_Allgather(&local, 1, MPIU_INT, sizes.data(), 1, MPIU_INT, comm);
  starts.assign(static_cast<std::size_t>(size), 0);
  PetscInt sum = 0;
  for (int r = 0; r < size; ++r) {
    starts[static_cast<std::size_t>(r)] = sum;
    sum += sizes[static_cast<std::size_t>(r)];
  }
  if (sum != global) {
    throw Error("FodeSolver: the local sizes add up to " + std::to_string(sum) + ", not " +
                std::to_string(global));
  }
  first = starts[static_cast<std::size_t>(rank)];
}

void FodeSolver::Impl::setup_components(const FodeProblem& problem) {
  const auto n = static_cast<std::size_t>(local);
  const auto expand = [&](const std::vector<double>& v, const char* what) {
    if (v.size() == 1) return std::vector<double>(n, v[0]);
    if (v.size() == n) return v;
    throw Error(std::string("FodeSolver: ") + what + " holds " + std::to_string(v.size()) +
                " values; expected 1 or the rank's " + std::to_string(n) + " components");
  };
  // Global inputs are checked identically on every rank; per-component ones are agreed on
  // below so that every rank throws the same error.
  if (!(problem.horizon > 0.0 && std::isfinite(problem.horizon))) {
    throw Error("FodeSolver: the horizon must be positive and finite, got " +
                format_double(problem.horizon));
  }
  if (problem.steps < 1) {
    throw Error("FodeSolver: needs at least one step, got " + std::to_string(problem.steps));
  }
  if (options.corrector_iterations < 1)
    throw Error("FodeSolver: corrector_iterations must be >= 1");
  if (options.block_size < 2) throw Error("FodeSolver: block_size must be >= 2");
  if (!(options.newton_tolerance > 0.0)) throw Error("FodeSolver: newton_tolerance must be > 0");
  if (options.newton_max_iterations < 1) {
    throw Error("FodeSolver: newton_max_iterations must be >= 1");
  }
  if (rhs.function && split_form()) {
    throw Error("FodeSolver: give either `function` or `linear`/`pointwise`, not both");
  }
  if (!rhs.function && !split_form()) throw Error("FodeSolver: no right-hand side given");
  if (!(problem.grading >= 1.0 && std::isfinite(problem.grading))) {
    throw Error("FodeSolver: the grading must be >= 1 and finite, got " +
                format_double(problem.grading));
  }
  if (problem.grading > 1.0) {
    if (options.history == FodeHistory::fft) {
      throw Error(
          "FodeSolver: the fft history needs uniform steps (grading 1); a graded mesh "
          "sums the history directly (history auto or direct)");
    }
    if (rhs.linear != nullptr && implicit()) {
      throw Error(
          "FodeSolver: a graded mesh with the implicit method takes a `function` or "
          "`pointwise` right-hand side, not a linear (Mat) part");
    }
  }
  horizon = problem.horizon;
  steps = problem.steps;
  grading = problem.grading;
  h = horizon / static_cast<double>(steps);

  std::string problem_text;
  try {
    order = expand(problem.order, "order");
    y0 = expand(problem.initial, "initial");
    bool above_one = false;
    for (std::size_t k = 0; k < n; ++k) {
      if (!(order[k] > 0.0 && order[k] < 2.0)) {
        throw Error("FodeSolver: the order of component y" +
                    std::to_string(first + static_cast<PetscInt>(k) + 1) + " is " +
                    format_double(order[k]) + "; it must lie in (0, 2)");
      }
      above_one = above_one || order[k] > 1.0;
    }
    y1.assign(n, 0.0);
    if (above_one) {
      if (problem.initial_derivative.empty()) {
        throw Error("FodeSolver: initial_derivative (y'(0)) is required because an order is > 1");
      }
      y1 = expand(problem.initial_derivative, "initial_derivative");
      for (std::size_t k = 0; k < n; ++k) {
        if (order[k] <= 1.0) y1[k] = 0.0;
      }
    }
    if (implicit() && rhs.function && n > kDenseNewtonLimit) {
      throw Error(
          "FodeSolver: the implicit method with a `function` right-hand side solves a "
          "dense Newton system of the rank's " +
          std::to_string(n) + " components (limit " + std::to_string(kDenseNewtonLimit) +
          "); use the linear/pointwise form for large systems");
    }
  } catch (const Error& e) {
    problem_text = e.what();
  }
  // Agree on per-component errors (the first failing rank's message).
  int failed = problem_text.empty() ? size : rank;
  int lowest = size;
  MPI_Allreduce(&failed, &lowest, 1, MPI_INT, MPI_MIN, comm);
  if (lowest < size) {
    unsigned long long len = problem_text.size();
    MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, lowest, comm);
    problem_text.resize(static_cast<std::size_t>(len));
    MPI_Bcast(problem_text.data(), static_cast<int>(len), MPI_CHAR, lowest, comm);
    throw core::CollectiveError(problem_text, ExitCode::failure, lowest);
  }
}

void FodeSolver::Impl::setup_history() {
  const auto n = static_cast<std::size_t>(local);
  rules = implicit() ? 1 : 2;
  // Groups of equal order, in order of first appearance; internal columns sorted by group.
  std::map<double, std::size_t> index;
  group_of.assign(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    auto [it, inserted] = index.emplace(order[k], groups.size());
    if (inserted) {
      Group g;
      g.order = order[k];
      groups.push_back(std::move(g));
    }
    group_of[k] = it->second;
  }
  internal.clear();
  internal.reserve(n);
  std::vector<detail::HistoryGroup> hist(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    hist[g].begin = static_cast<std::int64_t>(internal.size());
    for (std::size_t k = 0; k < n; ++k) {
      if (group_of[k] == g) internal.push_back(k);
    }
    hist[g].end = static_cast<std::int64_t>(internal.size());
  }

  if (grading > 1.0) {
    mesh = std::make_unique<FpdeTimeMesh>(horizon, steps, grading);
    f_rows.assign(static_cast<std::size_t>(steps + 1) * n, 0.0);
    c0.assign(n, 0.0);
    return;
  }
  const detail::HistoryMode mode =
      options.history == FodeHistory::direct ? detail::HistoryMode::direct
      : options.history == FodeHistory::fft  ? detail::HistoryMode::fft
                                             : detail::HistoryMode::automatic;
  const std::int64_t points = steps + 1;
  // Weights K(0..count-1) (kernels read K(1..count-1)).
  const auto count = static_cast<std::size_t>(detail::HistoryEngine::weight_count(points, mode));
  c0.assign(n, 0.0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double a = groups[g].order;
    // Corrector (trapezoid) weights K_c(k) = t_k (Diethelm, Ford & Freed 2002,
    // eq. (2.8) in convolution form); predictor (rectangle) weights K_p(k) = b_{k-1}.
    std::vector<double> kc = rl_trapezoid_weights(a, h, count);
    groups[g].c0 = kc[0];
    auto& corr = groups[g].start_correction;
    corr.assign(static_cast<std::size_t>(steps + 1), 0.0);
    for (std::int64_t s = 1; s <= steps; ++s) {
      const auto si = static_cast<std::size_t>(s);
      corr[si] = rl_trapezoid_start_weight(a, h, si) - kc[si];
    }
    if (rules == 2) {
      const std::vector<double> b = rl_rectangle_weights(a, h, count - 1);
      std::vector<double> kp(count, 0.0);
      std::copy(b.begin(), b.end(), kp.begin() + 1);
      hist[g].weights[0] = std::move(kp);
      hist[g].weights[1] = std::move(kc);
    } else {
      hist[g].weights[0] = std::move(kc);
    }
  }
  for (std::size_t k = 0; k < n; ++k) c0[k] = groups[group_of[k]].c0;
  engine =
      std::make_unique<detail::HistoryEngine>(points, static_cast<std::int64_t>(n), rules, mode,
                                              options.block_size, std::move(hist), selector);
}

void FodeSolver::Impl::setup_implicit() {
  if (rhs.linear == nullptr) return;
  Vec v = nullptr;
  FRACMFG_PETSC_CHECK(VecCreateMPIWithArray(comm, 1, local, global, nullptr, &v));
  x_wrap.reset(v);
  FRACMFG_PETSC_CHECK(VecCreateMPIWithArray(comm, 1, local, global, nullptr, &v));
  f_wrap.reset(v);
  if (!implicit()) return;
  FRACMFG_PETSC_CHECK(VecCreateMPI(comm, local, global, &v));
  residual.reset(v);
  FRACMFG_PETSC_CHECK(VecDuplicate(residual.get(), &v));
  update.reset(v);
  FRACMFG_PETSC_CHECK(VecDuplicate(residual.get(), &v));
  diagonal.reset(v);
  // m0 = I - diag(c0) A.
  Mat a = nullptr;
  FRACMFG_PETSC_CHECK(MatDuplicate(rhs.linear, MAT_COPY_VALUES, &a));
  m0.reset(a);
  {
    PetscScalar* d = nullptr;
    FRACMFG_PETSC_CHECK(VecGetArray(diagonal.get(), &d));
    for (PetscInt k = 0; k < local; ++k) d[k] = -c0[static_cast<std::size_t>(k)];
    FRACMFG_PETSC_CHECK(VecRestoreArray(diagonal.get(), &d));
  }
  FRACMFG_PETSC_CHECK(MatDiagonalScale(m0.get(), diagonal.get(), nullptr));
  FRACMFG_PETSC_CHECK(MatSetOption(m0.get(), MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  FRACMFG_PETSC_CHECK(MatShift(m0.get(), 1.0));
  if (rhs.pointwise) {
    FRACMFG_PETSC_CHECK(MatDuplicate(m0.get(), MAT_COPY_VALUES, &a));
    m.reset(a);
  }
  KSP k = nullptr;
  FRACMFG_PETSC_CHECK(KSPCreate(comm, &k));
  ksp.reset(k);
  FRACMFG_PETSC_CHECK(KSPSetOptionsPrefix(k, options.options_prefix.c_str()));
  // Newton needs updates well below its own tolerance; each iteration gains this factor.
  FRACMFG_PETSC_CHECK(KSPSetTolerances(k, 1.0e-10, 1.0e-300, PETSC_DEFAULT, PETSC_DEFAULT));
  FRACMFG_PETSC_CHECK(KSPSetOperators(k, m0.get(), m0.get()));
  FRACMFG_PETSC_CHECK(KSPSetFromOptions(k));
}

void FodeSolver::Impl::setup(FodeProblem problem) {
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rhs.linear != nullptr) {
    FRACMFG_PETSC_CHECK(PetscObjectReference(reinterpret_cast<PetscObject>(rhs.linear)));
    linear.reset(rhs.linear);
  }
  setup_layout(problem);
  setup_components(problem);
  setup_history();
  setup_implicit();
  const auto n = static_cast<std::size_t>(local);
  y = y0;
  for (auto* v : {&f, &ytmp, &ftmp, &fused, &taylor, &hp, &hc, &dg}) v->assign(n, 0.0);
  double scale = max_abs(y0);
  MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, comm);
  growth_limit.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    growth_limit[k] = kGrowthFactor * std::max({std::fabs(y0[k]), kGrowthFloor * scale,
                                                std::numeric_limits<double>::min()});
  }
}

// --- right-hand side ---------------------------------------------------------------------

void FodeSolver::Impl::eval(double t, const double* yv, double* fv) {
  ++stats.rhs_evaluations;
  const auto n = static_cast<std::size_t>(local);
  if (rhs.function) {
    rhs.function(t, yv, fv);
    return;
  }
  if (rhs.linear != nullptr) {
    FRACMFG_PETSC_CHECK(VecPlaceArray(x_wrap.get(), yv));
    FRACMFG_PETSC_CHECK(VecPlaceArray(f_wrap.get(), fv));
    FRACMFG_PETSC_CHECK(MatMult(rhs.linear, x_wrap.get(), f_wrap.get()));
    FRACMFG_PETSC_CHECK(VecResetArray(f_wrap.get()));
    FRACMFG_PETSC_CHECK(VecResetArray(x_wrap.get()));
  } else {
    std::fill(fv, fv + n, 0.0);
  }
  if (rhs.pointwise && n > 0) {
    rhs.pointwise(t, first, n, yv, ftmp.data());
    for (std::size_t k = 0; k < n; ++k) fv[k] += ftmp[k];
  }
}

void FodeSolver::Impl::pointwise_derivative(double t, const double* yv, double* out) {
  const auto n = static_cast<std::size_t>(local);
  if (n == 0) return;
  if (rhs.pointwise_derivative) {
    rhs.pointwise_derivative(t, first, n, yv, out);
    return;
  }
  // Forward differences, one evaluation for every component at once (g is pointwise).
  std::vector<double> g0(n);
  std::vector<double> shifted(n);
  std::vector<double> g1(n);
  const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  for (std::size_t k = 0; k < n; ++k) {
    const double delta = root_eps * std::max(1.0, std::fabs(yv[k]));
    shifted[k] = yv[k] + delta;
    out[k] = shifted[k] - yv[k];  // the step actually taken
  }
  rhs.pointwise(t, first, n, yv, g0.data());
  rhs.pointwise(t, first, n, shifted.data(), g1.data());
  for (std::size_t k = 0; k < n; ++k) out[k] = (g1[k] - g0[k]) / out[k];
}

// --- one step ----------------------------------------------------------------------------

void FodeSolver::Impl::note_newton(std::int64_t n, int iterations, bool converged) {
  stats.newton_iterations += iterations;
  if (converged) return;
  ++stats.newton_not_converged;
  if (!warned_newton) {
    warned_newton = true;
    log.warn("fode: Newton's method did not reach the tolerance ", options.newton_tolerance, " in ",
             options.newton_max_iterations, " iterations at step ", n, " (t = ", time_of(n),
             "); further occurrences are only counted");
  }
}

std::int64_t FodeSolver::Impl::newton_dense(std::int64_t step_index, double t) {
  const auto n = static_cast<std::size_t>(local);
  jac.resize(n * n);
  std::vector<double> g(n);
  std::vector<double> fp(n);
  std::vector<double> yp(n);
  const double root_eps = std::sqrt(std::numeric_limits<double>::epsilon());
  int it = 0;
  bool converged = false;
  while (it < options.newton_max_iterations && !converged) {
    ++it;
    eval(t, y.data(), f.data());
    if (const std::int64_t bad = non_finite_rhs(); bad >= 0) {
      newton_rhs_failed = true;
      return bad;
    }
    for (std::size_t k = 0; k < n; ++k) g[k] = y[k] - ytmp[k] - c0[k] * f[k];
    if (rhs.jacobian) {
      rhs.jacobian(t, y.data(), jac.data());
    } else {
      yp = y;
      for (std::size_t l = 0; l < n; ++l) {
        const double delta = root_eps * std::max(1.0, std::fabs(y[l]));
        yp[l] = y[l] + delta;
        const double step = yp[l] - y[l];
        eval(t, yp.data(), fp.data());
        for (std::size_t k = 0; k < n; ++k) jac[k * n + l] = (fp[k] - f[k]) / step;
        yp[l] = y[l];
      }
    }
    ++stats.jacobian_evaluations;
    // Newton matrix I - diag(c0) J.
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t l = 0; l < n; ++l) jac[k * n + l] *= -c0[k];
      jac[k * n + k] += 1.0;
    }
    const std::int64_t bad = la::dense_lu_solve(n, jac.data(), g.data());
    if (bad >= 0) return bad;
    double du = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
      y[k] -= g[k];
      du = std::max(du, std::fabs(g[k]));
    }
    converged = std::isfinite(du) && du <= options.newton_tolerance * (1.0 + max_abs(y));
    if (!std::isfinite(du)) break;
  }
  note_newton(step_index, it, converged);
  return -1;
}

std::int64_t FodeSolver::Impl::newton_diagonal(std::int64_t step_index, double t) {
  const auto n = static_cast<std::size_t>(local);
  int it = 0;
  bool converged = false;
  while (it < options.newton_max_iterations && !converged) {
    ++it;
    eval(t, y.data(), f.data());
    if (const std::int64_t bad = non_finite_rhs(); bad >= 0) {
      newton_rhs_failed = true;
      return bad;
    }
    pointwise_derivative(t, y.data(), dg.data());
    ++stats.jacobian_evaluations;
    double du = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
      const double g = y[k] - ytmp[k] - c0[k] * f[k];
      const double d = 1.0 - c0[k] * dg[k];
      if (!(d > 0.0 || d < 0.0)) return static_cast<std::int64_t>(k);
      const double dy = g / d;
      y[k] -= dy;
      du = std::max(du, std::fabs(dy));
    }
    converged = std::isfinite(du) && du <= options.newton_tolerance * (1.0 + max_abs(y));
    if (!std::isfinite(du)) break;
  }
  note_newton(step_index, it, converged);
  return -1;
}

std::int64_t FodeSolver::Impl::newton_ksp(std::int64_t step_index, double t) {
  const auto n = static_cast<std::size_t>(local);
  int it = 0;
  bool converged = false;
  while (it < options.newton_max_iterations && !converged) {
    ++it;
    eval(t, y.data(), f.data());
    {
      PetscScalar* r = nullptr;
      FRACMFG_PETSC_CHECK(VecGetArray(residual.get(), &r));
      for (std::size_t k = 0; k < n; ++k) r[k] = y[k] - ytmp[k] - c0[k] * f[k];
      FRACMFG_PETSC_CHECK(VecRestoreArray(residual.get(), &r));
    }
    if (rhs.pointwise) {
      pointwise_derivative(t, y.data(), dg.data());
      ++stats.jacobian_evaluations;
      PetscScalar* d = nullptr;
      FRACMFG_PETSC_CHECK(VecGetArray(diagonal.get(), &d));
      for (std::size_t k = 0; k < n; ++k) d[k] = -c0[k] * dg[k];
      FRACMFG_PETSC_CHECK(VecRestoreArray(diagonal.get(), &d));
      FRACMFG_PETSC_CHECK(MatCopy(m0.get(), m.get(), SAME_NONZERO_PATTERN));
      FRACMFG_PETSC_CHECK(MatDiagonalSet(m.get(), diagonal.get(), ADD_VALUES));
      FRACMFG_PETSC_CHECK(KSPSetOperators(ksp.get(), m.get(), m.get()));
    }
    FRACMFG_PETSC_CHECK_SOLVE(KSPSolve(ksp.get(), residual.get(), update.get()));
    KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
    FRACMFG_PETSC_CHECK(KSPGetConvergedReason(ksp.get(), &reason));
    PetscInt its = 0;
    FRACMFG_PETSC_CHECK(KSPGetIterationNumber(ksp.get(), &its));
    stats.linear_iterations += its;
    if (reason < 0) {
      // The reason is the same on every rank (KSP is collective).
      throw core::CollectiveError(
          "fode: the Newton linear solve failed at step " + std::to_string(step_index) +
              " (t = " + format_double(t) + "): KSP reason " + KSPConvergedReasons[reason] +
              " after " + std::to_string(its) + " iterations (set -" + options.options_prefix +
              "ksp_type / -" + options.options_prefix + "pc_type)",
          ExitCode::numerical, 0);
    }
    la::require_solved(ksp.get(), residual.get(), update.get(),
                       "fode: the Newton step at step " + std::to_string(step_index));
    const PetscScalar* u = nullptr;
    FRACMFG_PETSC_CHECK(VecGetArrayRead(update.get(), &u));
    // ||dy||_inf and ||y||_inf; a non-finite update counts as +inf (MPI_MAX and std::max
    // would drop a NaN), and the step check then reports the component.
    double norms[2] = {0.0, 0.0};
    const double inf = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < n; ++k) {
      y[k] -= u[k];
      norms[0] = std::max(norms[0], std::isfinite(u[k]) ? std::fabs(u[k]) : inf);
      norms[1] = std::max(norms[1], std::isfinite(y[k]) ? std::fabs(y[k]) : inf);
    }
    FRACMFG_PETSC_CHECK(VecRestoreArrayRead(update.get(), &u));
    double global_norms[2] = {0.0, 0.0};
    MPI_Allreduce(norms, global_norms, 2, MPI_DOUBLE, MPI_MAX, comm);
    if (!std::isfinite(global_norms[0])) break;
    converged = global_norms[0] <= options.newton_tolerance * (1.0 + global_norms[1]);
  }
  note_newton(step_index, it, converged);
  return -1;
}

void FodeSolver::Impl::uniform_history(std::int64_t n) {
  const auto nloc = static_cast<std::size_t>(local);
  const double* hist_c = engine->history(rules - 1, n);
  const double* hist_p = rules == 2 ? engine->history(0, n) : nullptr;
  const double* f0 = engine->f_row(0);
  for (std::size_t q = 0; q < nloc; ++q) {
    const std::size_t k = internal[q];
    hc[k] = hist_c[q] + groups[group_of[k]].start_correction[static_cast<std::size_t>(n)] * f0[q];
    if (hist_p != nullptr) hp[k] = hist_p[q];
  }
}

namespace {

/// A^p - (A - d)^p for 0 < d <= A without cancellation (A^p when d reaches A).
double power_difference(double a_val, double d, double p) {
  const double ap = std::pow(a_val, p);
  if (d >= a_val) return ap;
  return -ap * std::expm1(p * std::log1p(-d / a_val));
}

}  // namespace

// Product integration of 1/Gamma(a) int_0^{t_n} (t_n - s)^{a-1} f(s) ds on the graded mesh
// (the product rules of Garrappa 2018, Sec. 3, for cells of any length): on the cell
// [t_j, t_{j+1}] of length d_j, with A = t_n - t_j, B = A - d_j and D_p = A^p - B^p, the
// rectangle rule (f_j on the cell) gives the predictor weight D_a / Gamma(a+1); the trapezoid
// rule (f linear on the cell) gives f_j the weight (D_{a+1}/(a+1) - B D_a/a) / (d_j Gamma(a))
// and f_{j+1} the weight (A D_a/a - D_{a+1}/(a+1)) / (d_j Gamma(a)). On the uniform mesh
// these are the weights of frac/weights.hpp. The sum is direct: O(n) per component at step n.
void FodeSolver::Impl::graded_history(std::int64_t n) {
  const auto start = std::chrono::steady_clock::now();
  const auto nloc = static_cast<std::size_t>(local);
  const auto un = static_cast<std::size_t>(n);
  const double tn = mesh->time(n);
  wc.assign(un, 0.0);
  wp.assign(un, 0.0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const double a = groups[g].order;
    const double gamma_a = std::tgamma(a);
    const double gamma_a1 = std::tgamma(a + 1.0);
    std::fill(wc.begin(), wc.end(), 0.0);
    double c0n = 0.0;
    for (std::size_t j = 0; j < un; ++j) {
      const double d = mesh->step(static_cast<std::int64_t>(j) + 1);
      const double big = tn - mesh->time(static_cast<std::int64_t>(j));
      const double small = j + 1 == un ? 0.0 : std::max(big - d, 0.0);
      const double da = power_difference(big, big - small, a);
      const double da1 = power_difference(big, big - small, a + 1.0);
      const double left = (da1 / (a + 1.0) - small * da / a) / (d * gamma_a);
      const double right = (big * da / a - da1 / (a + 1.0)) / (d * gamma_a);
      wc[j] += left;
      if (j + 1 < un) {
        wc[j + 1] += right;
      } else {
        c0n = right;
      }
      wp[j] = da / gamma_a1;
    }
    groups[g].c0 = c0n;
    for (std::size_t k = 0; k < nloc; ++k) {
      if (group_of[k] != g) continue;
      double sc = 0.0;
      double sp = 0.0;
      for (std::size_t j = 0; j < un; ++j) {
        const double fj = f_rows[j * nloc + k];
        sc += wc[j] * fj;
        sp += wp[j] * fj;
      }
      hc[k] = sc;
      hp[k] = sp;
      c0[k] = c0n;
    }
  }
  graded_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void FodeSolver::Impl::step(std::int64_t n) {
  const auto nloc = static_cast<std::size_t>(local);
  const double t = time_of(n);
  std::int64_t failure = -1;
  std::int64_t code = failure_nan;
  std::int64_t corrector_failure = -1;
  double corrector_detail = 0.0;
  double failed_detail_candidate = 0.0;
  if (n == 0) {
    inward.assign(nloc, 1);
    y = y0;
    eval(t, y.data(), f.data());
  } else {
    if (graded()) {
      graded_history(n);
    } else {
      uniform_history(n);
    }
    for (std::size_t k = 0; k < nloc; ++k) taylor[k] = y0[k] + t * y1[k];
    if (!implicit()) {
      // P(EC)^mu E: predictor, mu corrector passes, final evaluation.
      for (std::size_t k = 0; k < nloc; ++k) ytmp[k] = taylor[k] + hp[k];
      eval(t, ytmp.data(), f.data());
      for (int it = 0; it < options.corrector_iterations; ++it) {
        if (it > 0) eval(t, y.data(), f.data());
        for (std::size_t k = 0; k < nloc; ++k) y[k] = taylor[k] + hc[k] + c0[k] * f[k];
      }
      // The corrector's equation y = taylor + hc + c0 f(t, y) at the result: its defect,
      // c0 (f(y) - f(used)), is free here (f(y) is needed for the history anyway). Over the
      // second half of the steps (the first ones carry the solution's start at t = 0).
      const bool measure = 2 * n > steps;
      if (measure) std::copy(f.begin(), f.end(), fused.begin());
      eval(t, y.data(), f.data());
      if (measure) {
        for (std::size_t k = 0; k < nloc; ++k) {
          // growth_limit / kGrowthFactor is max(|y_k(0)|, a floor): the component's size.
          const double magnitude = std::max(std::fabs(y[k]), growth_limit[k] / kGrowthFactor);
          const double defect = std::fabs(c0[k] * (f[k] - fused[k])) / magnitude;
          if (!(defect <= stats.corrector_defect)) stats.corrector_defect = defect;
          if (!(defect <= kCorrectorDefectLimit) && corrector_failure < 0) {
            corrector_failure = static_cast<std::int64_t>(k);
            corrector_detail = defect;
          }
        }
      }
    } else {
      for (std::size_t k = 0; k < nloc; ++k) ytmp[k] = taylor[k] + hc[k];
      newton_rhs_failed = false;
      const std::int64_t singular = rhs.function            ? newton_dense(n, t)
                                    : rhs.linear != nullptr ? newton_ksp(n, t)
                                                            : newton_diagonal(n, t);
      if (singular >= 0) {
        failure = singular;
        code = newton_rhs_failed ? failure_rhs : failure_singular;
        if (newton_rhs_failed) failed_detail_candidate = f[static_cast<std::size_t>(singular)];
      } else {
        eval(t, y.data(), f.data());
      }
    }
  }
  if (failure < 0) {
    for (std::size_t k = 0; k < nloc; ++k) {
      const double v = y[k];
      if (std::isnan(v)) {
        failure = static_cast<std::int64_t>(k);
        code = failure_nan;
        break;
      }
      if (!(std::fabs(v) <= options.divergence_threshold)) {
        failure = static_cast<std::int64_t>(k);
        code = failure_diverged;
        failed_detail_candidate = v;
        break;
      }
    }
  }
  // A right-hand side that is not finite at the step's solution (at step 0: at the initial
  // value) is named here, before it turns the next step into NaN or a singular matrix.
  if (failure < 0) {
    failure = non_finite_rhs();
    code = failure_rhs;
    if (failure >= 0) failed_detail_candidate = f[static_cast<std::size_t>(failure)];
  }
  if (failure < 0 && !implicit() && options.growth_check) {
    failure = check_growth();
    code = failure_unstable;
  }
  if (failure < 0 && corrector_failure >= 0) {
    failure = corrector_failure;
    code = failure_corrector;
    failed_detail_candidate = corrector_detail;
  }
  if (failure >= 0 && failed_step < 0) {
    failed_step = n;
    failed_component = failure;
    failed_code = code;
    failed_detail[0] = failed_detail_candidate;
    if (code == failure_unstable) {
      const auto k = static_cast<std::size_t>(failure);
      failed_detail[0] = std::fabs(y[k]);
      failed_detail[1] = std::fabs(y0[k]);
      failed_detail[2] = std::pow(h, order[k]) * f[k] / y[k];  // |y[k]| > 0 here
    }
  }
  // Agree on failures every step with one rank or a Mat (the step communicates anyway),
  // else every agree_every steps, before every observer call and at the end: a rank that
  // failed carries on (with meaningless values) until then, and the error names its first
  // failed step.
  if (size == 1 || rhs.linear != nullptr || n % agree_every == 0 || n == steps ||
      (observe_every > 0 && n % observe_every == 0)) {
    agree();
  }
  if (graded()) {
    std::copy(f.begin(), f.end(),
              f_rows.begin() + static_cast<std::ptrdiff_t>(n) * static_cast<std::ptrdiff_t>(nloc));
  } else {
    double* row = engine->f_row(n);
    for (std::size_t q = 0; q < nloc; ++q) row[q] = f[internal[q]];
  }
  progress(n);
}

void FodeSolver::Impl::agree() {
  // The earliest failed step wins, then the smallest key kFailureCodes * (global index) +
  // code.
  const std::int64_t none = std::numeric_limits<std::int64_t>::max();
  std::int64_t n = failed_step < 0 ? none : failed_step;
  std::int64_t key =
      failed_step < 0 ? none : kFailureCodes * (first + failed_component) + failed_code;
  if (size > 1) {
    std::int64_t global_step = none;
    MPI_Allreduce(&n, &global_step, 1, MPI_INT64_T, MPI_MIN, comm);
    if (global_step == none) return;
    if (n != global_step) key = none;
    n = global_step;
    std::int64_t global_key = none;
    MPI_Allreduce(&key, &global_key, 1, MPI_INT64_T, MPI_MIN, comm);
    key = global_key;
  }
  if (n == none) return;
  const std::int64_t component = key / kFailureCodes;
  const std::int64_t code = key % kFailureCodes;
  int owner = 0;
  for (int r = 0; r < size; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    if (component >= starts[ur] && component < starts[ur] + sizes[ur]) owner = r;
  }
  double detail[3] = {failed_detail[0], failed_detail[1], failed_detail[2]};
  if (size > 1) MPI_Bcast(detail, 3, MPI_DOUBLE, owner, comm);
  const std::string yi = "y" + std::to_string(component + 1);
  const std::string fi = "f" + std::to_string(component + 1);
  std::ostringstream os;
  os << "fode: ";
  switch (code) {
    case failure_nan: os << "the solution is not a number (NaN)"; break;
    case failure_diverged:
      os << "the solution diverged (infinite or above " << options.divergence_threshold
         << " in magnitude)";
      break;
    case failure_rhs:
      os << "the right-hand side " << fi << " is "
         << (std::isnan(detail[0]) ? "not a number (NaN)"
                                   : "infinite (" + format_double(detail[0]) + ")")
         << (n == 0 ? " at the initial value," : "");
      break;
    case failure_unstable:
      os << "method abm is unstable at this step size (h = " << format_double(h) << "): |" << yi
         << "| grew to " << format_double(detail[0]) << ", more than " << kGrowthFactor
         << " x its initial " << format_double(detail[1]) << ", although " << yi << " " << fi
         << " <= 0 at every step so far, so the exact solution cannot grow (h^a " << fi << "/" << yi
         << " = " << format_double(detail[2]) << ")";
      break;
    case failure_corrector:
      os << "method abm did not solve its corrector equation: the defect of " << yi << " is "
         << format_double(detail[0]) << " of its size (above " << kCorrectorDefectLimit
         << "), so its value is not accurate; the corrector's weight h^a/Gamma(a+2) of the "
            "new step is too large for its fixed-point passes (very small orders with few "
            "steps)";
      break;
    default: os << "the Newton matrix is singular"; break;
  }
  os << " at step " << n << " (t = " << format_double(time_of(n)) << "), component " << yi
     << " (global index " << component << ")";
  if (code == failure_unstable || code == failure_corrector) {
    os << "; use method: trapezoidal (implicit) or more steps (a smaller h)";
  }
  throw core::CollectiveError(os.str(), ExitCode::numerical, owner);
}

std::int64_t FodeSolver::Impl::non_finite_rhs() const {
  for (std::size_t k = 0; k < f.size(); ++k) {
    if (!std::isfinite(f[k])) return static_cast<std::int64_t>(k);
  }
  return -1;
}

// For 0 < a <= 1, D^a (y^2) <= 2 y D^a y (Alikhanov, Comput. Math. Appl. 59 (2010), Lemma 1),
// so while y_i f_i(t, y) <= 0 on [0, t] the solution keeps |y_i(t)| <= |y_i(0)|. The
// predictor-corrector outside its stability region (e.g. D^a y = -lambda y with lambda h^a
// too large; Garrappa, Int. J. Comput. Math. 87 (2010)) grows instead, with y_i f_i < 0 at
// every step: that growth is refused. A solution that grows legitimately (D^a y = y) has
// y f > 0 and is never checked. Components of order > 1 (with an initial derivative) are
// not covered by the inequality.
std::int64_t FodeSolver::Impl::check_growth() {
  const auto nloc = static_cast<std::size_t>(local);
  for (std::size_t k = 0; k < nloc; ++k) {
    if (inward[k] == 0 || order[k] > 1.0) continue;
    if (y[k] * f[k] > 0.0) {
      inward[k] = 0;
      continue;
    }
    if (std::fabs(y[k]) > growth_limit[k]) return static_cast<std::int64_t>(k);
  }
  return -1;
}

void FodeSolver::Impl::progress(std::int64_t n) {
  if (!progress_lines) return;
  const core::LogLevel level = progress_lines->step(n >= steps);
  if (!progress_lines->enabled(level)) return;
  const double done = static_cast<double>(n) / static_cast<double>(steps);
  char buf[200];
  std::snprintf(buf, sizeof buf, "fode: step %lld/%lld (%.1f%%), t = %.6g; elapsed %s, ETA %s",
                static_cast<long long>(n), static_cast<long long>(steps), 100.0 * done, time_of(n),
                core::format_duration(progress_lines->elapsed()).c_str(),
                core::format_duration(progress_lines->eta_steps(steps - n)).c_str());
  progress_lines->write(level, buf);
}

// --- public ------------------------------------------------------------------------------

FodeSolver::FodeSolver(MPI_Comm comm, FodeProblem problem, FodeRhs rhs, FodeOptions options,
                       exec::Selector* selector, core::Logger log)
    : impl_(std::make_unique<Impl>()) {
  impl_->comm = comm;
  impl_->options = std::move(options);
  impl_->rhs = std::move(rhs);
  impl_->selector = selector;
  impl_->log = log;
  impl_->setup(std::move(problem));
}

FodeSolver::~FodeSolver() = default;
FodeSolver::FodeSolver(FodeSolver&&) noexcept = default;
FodeSolver& FodeSolver::operator=(FodeSolver&&) noexcept = default;

FodeStats FodeSolver::solve(const Observer& observer, std::int64_t observe_every) {
  Impl& s = *impl_;
  if (observe_every < 1) throw Error("FodeSolver::solve: observe_every must be >= 1");
  s.stats = FodeStats{};
  s.stats.steps = s.steps;
  s.warned_newton = false;
  s.failed_step = -1;
  s.observe_every = observer ? observe_every : 0;
  s.t_start = std::chrono::steady_clock::now();
  s.progress_lines.reset();
  if (s.options.progress_interval > 0.0 && s.log.enabled(core::LogLevel::info)) {
    s.progress_lines.emplace(s.log, s.options.progress_interval);
  }
  const auto one_step = [&](std::int64_t n) {
    s.step(n);
    if (observer && (n % observe_every == 0 || n == s.steps)) {
      FodeStepView view;
      view.step = n;
      view.time = s.time_of(n);
      view.y = s.y.data();
      view.local_size = s.y.size();
      core::collective(s.comm, [&] { observer(view); });
    }
  };
  if (s.graded()) {
    s.graded_seconds = 0.0;
    for (std::int64_t n = 0; n <= s.steps; ++n) one_step(n);
    s.stats.history_seconds = s.graded_seconds;
  } else {
    s.engine->run(one_step);
    const detail::HistoryCounters& c = s.engine->counters();
    s.stats.fft_squares = c.fft_squares;
    s.stats.direct_squares = c.direct_squares;
    s.stats.history_seconds = c.square_seconds + c.local_seconds;
  }
  if (s.size > 1) {
    MPI_Allreduce(MPI_IN_PLACE, &s.stats.corrector_defect, 1, MPI_DOUBLE, MPI_MAX, s.comm);
  }
  s.stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - s.t_start).count();
  return s.stats;
}

MPI_Comm FodeSolver::comm() const {
  return impl_->comm;
}
PetscInt FodeSolver::global_size() const {
  return impl_->global;
}
PetscInt FodeSolver::local_size() const {
  return impl_->local;
}
PetscInt FodeSolver::first() const {
  return impl_->first;
}
const std::vector<PetscInt>& FodeSolver::local_sizes() const {
  return impl_->sizes;
}
double FodeSolver::step_size() const {
  return impl_->h;
}
std::int64_t FodeSolver::steps() const {
  return impl_->steps;
}
double FodeSolver::horizon() const {
  return impl_->horizon;
}
double FodeSolver::grading() const {
  return impl_->grading;
}
double FodeSolver::order(std::size_t k) const {
  return impl_->order.at(k);
}
const FodeOptions& FodeSolver::options() const {
  return impl_->options;
}
std::int64_t FodeSolver::block_size() const {
  return impl_->graded() ? impl_->steps : impl_->engine->block();
}
const std::vector<double>& FodeSolver::solution() const {
  return impl_->y;
}

}  // namespace fracmfg::frac
