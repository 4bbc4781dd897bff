#include "fracmfg/la/tridiag_solver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

namespace fracmfg::la {

// What each rank publishes at setup (all doubles, so one MPI_Allgather of MPI_DOUBLE
// carries it; row counts below 2^31 are exact in a double).
struct TridiagSolver::Summary {
  double n;           // rows owned (negative: invalid argument on that rank)
  double fail_local;  // local index of the first zero pivot, -1 when none
  double fail_pivot;
  double fail_scale;
  double lo[2];  // reduced rows of this rank (min(n, 2) of them)
  double di[2];
  double up[2];
  double sub_first;   // sub of the first owned row (for the transposed matrix)
  double super_last;  // super of the last owned row
  double rhs[2];      // reduced right-hand sides (factor_solve only)
  double retry;       // 1: factor_solve's fast factorisation failed on this rank
  double sums[TridiagSolver::max_carried_sums];  // factor_solve's carried sums (else 0)
};

namespace {

constexpr int summary_doubles = 15 + TridiagSolver::max_carried_sums;

void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    throw Error(std::string("TridiagSolver: ") + what +
                " failed: " + std::string(text, static_cast<std::size_t>(len)));
  }
}

// Resizes v to n; true when that needed new memory.
template <class T>
bool fit(std::vector<T>& v, std::size_t n) {
  const bool grows = n > v.capacity();
  v.resize(n);
  return grows;
}

constexpr double eps = std::numeric_limits<double>::epsilon();

// A pivot is zero when it is not finite or not larger than eps times its row's scale (the
// sum of the row's absolute coefficients), which also catches an all-zero row.
bool is_zero_pivot(double pivot, double scale) {
  return !std::isfinite(pivot) || !(std::fabs(pivot) > eps * scale);
}

// The pivots of Thomas' algorithm as ratios of leading principal minors theta_j,
// theta_j = d_j theta_{j-1} - a_j c_{j-1} theta_{j-2} (theta_{-1} = 1), pivot_j =
// theta_j / theta_{j-1}. Unlike the pivot recurrence pivot_j = d_j - a_j c_{j-1} / pivot_{j-1}
// it has no division on its dependency chain, so the divisions of successive rows overlap;
// theta is rescaled by powers of two (exact) to stay in range. ok() turns false at a zero,
// tiny (|pivot| <= eps times the row scale) or non-finite pivot, or when a_j c_{j-1} lost
// digits to underflow or overflow; the caller then repeats the factorisation the classic way.
class Continuant {
 public:
  /// 1 / pivot of the next row (sub a, diag d, super c; a of the first row and c of the last
  /// must be passed as 0).
  double next(double a, double d, double c, double scale) {
    const double e = a * c_prev_;
    const double theta = d * t1_ - e * t2_;
    const double inv = t1_ / theta;
    const double em = std::fabs(e);
    ok_ = ok_ && std::fabs(theta) > eps * scale * std::fabs(t1_) && std::isfinite(inv) &&
          ((em >= std::numeric_limits<double>::min() && em <= std::numeric_limits<double>::max()) ||
           a == 0.0 || c_prev_ == 0.0);
    c_prev_ = c;
    t2_ = t1_;
    t1_ = theta;
    const double mag = std::fabs(theta);
    if (!(mag < big && mag > small)) {
      if (!std::isfinite(mag) || mag == 0.0) {
        ok_ = false;
      } else {
        // theta's binary exponent from its bits and a multiplication by 2^-exponent: what
        // ilogb and scalbn compute, without two library calls in the row loop (every ~20
        // rows on the MFG steps); their fallback only where theta or 2^-exponent is subnormal.
        std::uint64_t bits = 0;
        std::memcpy(&bits, &theta, sizeof bits);
        const int ex = static_cast<int>((bits >> 52) & 0x7ffU) - 1023;
        if (ex > -1023 && ex < 1023) {
          const std::uint64_t fbits = static_cast<std::uint64_t>(1023 - ex) << 52;
          double f = 0.0;
          std::memcpy(&f, &fbits, sizeof f);
          t1_ *= f;
          t2_ *= f;
        } else {
          const int exact = std::ilogb(theta);
          t1_ = std::scalbn(t1_, -exact);
          t2_ = std::scalbn(t2_, -exact);
        }
      }
    }
    return inv;
  }
  bool ok() const { return ok_; }
  /// 1 / the last pivot.
  double last_inverse() const { return t2_ / t1_; }

 private:
  static constexpr double big = 0x1p+400, small = 0x1p-400;
  double t1_ = 1.0;      // theta_{j-1}
  double t2_ = 0.0;      // theta_{j-2}
  double c_prev_ = 0.0;  // c_{j-1}
  bool ok_ = true;
};

}  // namespace

TridiagSolver::TridiagSolver(MPI_Comm comm) : comm_(comm) {}
TridiagSolver::TridiagSolver(TridiagSolver&&) noexcept = default;
TridiagSolver& TridiagSolver::operator=(TridiagSolver&&) noexcept = default;
TridiagSolver::~TridiagSolver() = default;

void TridiagSolver::throw_zero_pivot(PetscInt row, double pivot, double scale) const {
  std::ostringstream os;
  os << "TridiagSolver: zero pivot at global row " << row << " (pivot " << pivot << ", row scale "
     << scale << "): the matrix is singular or needs pivoting, which this solver does not do";
  throw NumericalError(os.str());
}

TridiagSolver::Summary TridiagSolver::begin_summary(PetscInt n_local, bool arrays_given) {
  static_assert(sizeof(Summary) == summary_doubles * sizeof(double));
  setup_ = false;
  transposed_ready_ = false;
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  Summary mine{};
  mine.fail_local = -1.0;
  mine.n = n_local > 0 && !arrays_given ? -1.0 : static_cast<double>(n_local);
  return mine;
}

void TridiagSolver::setup(PetscInt n_local, const double* sub, const double* diag,
                          const double* super, bool periodic) {
  Summary mine = begin_summary(n_local, sub != nullptr && diag != nullptr && super != nullptr);
  const PetscInt m = n_local < 0 ? 0 : n_local;
  bool grew = false;

  if (mine.n >= 0.0) {
    const auto mu = static_cast<std::size_t>(m);
    const std::size_t mi = m > 2 ? mu - 2 : 0;
    grew |= fit(sub_, mu);
    grew |= fit(diag_, mu);
    grew |= fit(super_, mu);
    grew |= fit(inv_, mi);
    grew |= fit(ell_, mi);
    grew |= fit(cp_, mi);
    grew |= fit(w_, mi);
    grew |= fit(galpha_, mi);
    for (std::size_t i = 0; i < mu; ++i) {
      sub_[i] = sub[i];
      diag_[i] = diag[i];
      super_[i] = super[i];
    }

    // Interior rows k = 1 .. m-2 (stored at j = k-1): T = L U by Thomas' algorithm, with the
    // block's end points removed; their couplings sub[1] (to x_first) and super[m-2] (to
    // x_last) become the right-hand sides of the spikes alpha and beta.
    bool ok = mi == 0 || factor_interior_continuant(mi);
    if (!ok) {
      // The classic recurrence, which also names the failing row.
      ok = true;
      double cp_prev = 0.0;
      for (std::size_t j = 0; j < mi; ++j) {
        const std::size_t k = j + 1;
        const double a = j > 0 ? sub_[k] : 0.0;
        const double c = j + 1 < mi ? super_[k] : 0.0;
        const double pivot = diag_[k] - a * cp_prev;
        const double scale = std::fabs(sub_[k]) + std::fabs(diag_[k]) + std::fabs(super_[k]);
        if (is_zero_pivot(pivot, scale)) {
          mine.fail_local = static_cast<double>(k);
          mine.fail_pivot = pivot;
          mine.fail_scale = scale;
          ok = false;
          break;
        }
        const double inv = 1.0 / pivot;
        inv_[j] = inv;
        ell_[j] = a * inv;
        cp_[j] = cp_prev = c * inv;
      }
    }
    double alpha_first = 0.0;
    double alpha_last = 0.0;
    double beta_first = 0.0;
    if (ok && mi > 0) {
      // Forward-swept spike right-hand sides: galpha = L^{-1} (-sub[1] e_0) (the last entry
      // is alpha's last, U being unit upper), and L^{-1} (-super[m-2] e_last) is zero but
      // for its last entry gbeta = beta's last.
      // w = T^{-T} e_0 = L^{-T} U^{-T} e_0, so that (T^{-1} r)_0 = w . r: U^T u = e_0 gives
      // u_j = -cp_{j-1} u_{j-1}, then L^T w = u backwards (L^T has the pivots on its
      // diagonal and the interior sub-diagonal above it).
      galpha_[0] = -sub_[1] * inv_[0];
      for (std::size_t j = 1; j < mi; ++j) galpha_[j] = -ell_[j] * galpha_[j - 1];
      gbeta_ = -super_[mu - 2] * inv_[mi - 1];
      alpha_last = galpha_[mi - 1];
      w_[0] = 1.0;
      for (std::size_t j = 1; j < mi; ++j) w_[j] = -cp_[j - 1] * w_[j - 1];
      w_[mi - 1] *= inv_[mi - 1];
      for (std::size_t j = mi - 1; j-- > 0;) w_[j] = (w_[j] - sub_[j + 2] * w_[j + 1]) * inv_[j];
      alpha_first = -sub_[1] * w_[0];
      beta_first = -super_[mu - 2] * w_[mi - 1];
    }

    // The block's reduced rows (first and last row, interior eliminated).
    if (m <= 2) {
      // A block of one or two rows is its own reduced system.
      for (PetscInt r = 0; r < m; ++r) {
        mine.lo[r] = sub_[r];
        mine.di[r] = diag_[r];
        mine.up[r] = super_[r];
      }
    } else if (ok) {
      mine.lo[0] = sub_[0];
      mine.di[0] = diag_[0] + super_[0] * alpha_first;
      mine.up[0] = super_[0] * beta_first;
      mine.lo[1] = sub_[mu - 1] * alpha_last;
      mine.di[1] = diag_[mu - 1] + sub_[mu - 1] * gbeta_;
      mine.up[1] = super_[mu - 1];
    }
    if (m > 0) {
      mine.sub_first = sub_[0];
      mine.super_last = super_[mu - 1];
    }
  }

  grew |= gather_and_agree(mine, m, periodic, "setup");
  grew |= factor_reduced();

  // Couplings of the neighbouring rows, for A^T: the previous non-empty rank's last super and
  // the next one's first sub (cyclically when periodic; 0 at the ends otherwise).
  super_prev_ = 0.0;
  sub_next_ = 0.0;
  if (m > 0) {
    for (int step = 1; step <= size_; ++step) {
      const int r = rank_ - step;
      if (r < 0 && !periodic_) break;
      const Summary& s = all_[(r + size_) % size_];
      if (s.n > 0.0) {
        super_prev_ = s.super_last;
        break;
      }
    }
    for (int step = 1; step <= size_; ++step) {
      const int r = rank_ + step;
      if (r >= size_ && !periodic_) break;
      const Summary& s = all_[r % size_];
      if (s.n > 0.0) {
        sub_next_ = s.sub_first;
        break;
      }
    }
  }

  ++setups_;
  if (grew) ++allocating_setups_;
  setup_ = true;
}

void TridiagSolver::factor_solve(PetscInt n_local, const double* sub, const double* diag,
                                 const double* super, bool periodic, const double* b, double* x) {
  factor_solve(n_local, sub, diag, super, periodic, b, x, nullptr, 0, nullptr);
}

void TridiagSolver::factor_solve(PetscInt n_local, const double* sub, const double* diag,
                                 const double* super, bool periodic, const double* b, double* x,
                                 const double* local_sums, int count, double* total_sums) {
  if (count < 0 || count > max_carried_sums ||
      (count > 0 && (local_sums == nullptr || total_sums == nullptr))) {
    throw Error("TridiagSolver::factor_solve: carried sums need 0 to " +
                std::to_string(max_carried_sums) + " values and both arrays");
  }
  Summary mine = begin_summary(n_local, sub != nullptr && diag != nullptr && super != nullptr &&
                                            b != nullptr && x != nullptr && x != b);
  for (int i = 0; i < count; ++i) mine.sums[i] = local_sums[i];
  const PetscInt m = n_local < 0 ? 0 : n_local;
  const auto mu = static_cast<std::size_t>(m);
  const std::size_t mi = m > 2 ? mu - 2 : 0;
  if (mine.n >= 0.0) {
    fit(cp_, mi);
    fit(galpha_, mi);
    fit(w_, mi);  // the beta spike
    if (m <= 2) {
      for (PetscInt r = 0; r < m; ++r) {
        mine.lo[r] = sub[r];
        mine.di[r] = diag[r];
        mine.up[r] = super[r];
        mine.rhs[r] = b[r];
      }
    } else {
      // Interior rows k = 1 .. m-2 at j = k-1: the pivots from the continuant recurrence
      // (Continuant) and, in the same sweep, L^{-1} applied to the three
      // right-hand sides b (into x[1 .. m-2]), -sub[1] e_0 (alpha) and -super[m-2] e_last
      // (beta, zero until its last entry).
      Continuant pivots;
      double g = 0.0, ga = 0.0;
      double* y = x + 1;
      for (std::size_t j = 0; j < mi && pivots.ok(); ++j) {
        const std::size_t k = j + 1;
        const double a = j > 0 ? sub[k] : 0.0;
        const double c = j + 1 < mi ? super[k] : 0.0;
        const double inv = pivots.next(
            a, diag[k], c, std::fabs(sub[k]) + std::fabs(diag[k]) + std::fabs(super[k]));
        cp_[j] = c * inv;
        const double ell = a * inv;  // off the dependency chains below
        g = b[k] * inv - ell * g;
        y[j] = g;
        ga = j > 0 ? -ell * ga : -sub[1] * inv;
        galpha_[j] = ga;
      }
      if (pivots.ok()) {
        // U^{-1} backwards: y, alpha and beta (beta's forward entry: -super[m-2] / pivot).
        double* beta = w_.data();
        double yv = y[mi - 1], av = galpha_[mi - 1];
        double bv = -super[mu - 2] * pivots.last_inverse();
        beta[mi - 1] = bv;
        for (std::size_t j = mi - 1; j-- > 0;) {
          const double cj = cp_[j];
          yv = y[j] - cj * yv;
          av = galpha_[j] - cj * av;
          bv = -cj * bv;
          y[j] = yv;
          galpha_[j] = av;
          beta[j] = bv;
        }
        // The block's two reduced rows and right-hand sides.
        mine.lo[0] = sub[0];
        mine.di[0] = diag[0] + super[0] * galpha_[0];
        mine.up[0] = super[0] * beta[0];
        mine.rhs[0] = b[0] - super[0] * y[0];
        mine.lo[1] = sub[mu - 1] * galpha_[mi - 1];
        mine.di[1] = diag[mu - 1] + sub[mu - 1] * beta[mi - 1];
        mine.up[1] = super[mu - 1];
        mine.rhs[1] = b[mu - 1] - sub[mu - 1] * y[mi - 1];
      } else {
        mine.retry = 1.0;
      }
    }
  }
  gather_and_agree(mine, m, periodic, "factor_solve", count, total_sums);
  bool retry = false;
  for (const Summary& s : all_) retry = retry || s.retry != 0.0;
  if (retry) {
    // The classic factorisation (which names a zero pivot's row), then the solve.
    setup(n_local, sub, diag, super, periodic);
    solve(b, x);
    setup_ = false;
    return;
  }
  factor_reduced();
  for (int r = 0; r < size_; ++r) {
    const int q0 = reduced_offset_[r];
    const int rows = reduced_offset_[r + 1] - q0;
    for (int t = 0; t < rows; ++t) r_rhs_[q0 + t] = all_[r].rhs[t];
  }
  solve_reduced();
  if (m == 0) return;
  const int q0 = reduced_offset_[rank_];
  const double x_first = r_x_[q0];
  const double x_last = r_x_[reduced_offset_[rank_ + 1] - 1];
  const double* beta = w_.data();
  for (std::size_t j = 0; j < mi; ++j) x[j + 1] += galpha_[j] * x_first + beta[j] * x_last;
  x[0] = x_first;
  x[m - 1] = x_last;
}

bool TridiagSolver::gather_and_agree(const Summary& mine, PetscInt m, bool periodic,
                                     const char* who, int sums_count, double* sums_total) {
  bool grew = false;
  grew |= fit(all_, static_cast<std::size_t>(size_));
  check_mpi(MPI_Allgather(&mine, summary_doubles, MPI_DOUBLE, all_.data(), summary_doubles,
                          MPI_DOUBLE, comm_),
            "MPI_Allgather");
  // The carried sums, in rank order (the same on every rank), before any error is raised.
  for (int i = 0; i < sums_count; ++i) {
    double total = 0.0;
    for (int r = 0; r < size_; ++r) total += all_[r].sums[i];
    sums_total[i] = total;
  }

  // Agree on the outcome: every rank sees the same summaries.
  std::int64_t total = 0;
  std::int64_t my_first = 0;
  for (int r = 0; r < size_; ++r) {
    if (all_[r].n < 0.0) {
      throw Error(std::string("TridiagSolver::") + who + ": rank " + std::to_string(r) +
                  " passed a negative row count or missing diagonal arrays");
    }
    if (r == rank_) my_first = total;
    total += static_cast<std::int64_t>(all_[r].n);
  }
  if (total > std::numeric_limits<PetscInt>::max()) {
    throw Error(std::string("TridiagSolver::") + who + ": global size " + std::to_string(total) +
                " exceeds PetscInt");
  }
  {
    std::int64_t offset = 0;
    std::int64_t bad_row = -1;
    const Summary* bad = nullptr;
    for (int r = 0; r < size_; ++r) {
      if (all_[r].fail_local >= 0.0 && bad == nullptr) {
        bad_row = offset + static_cast<std::int64_t>(all_[r].fail_local);
        bad = &all_[r];
      }
      offset += static_cast<std::int64_t>(all_[r].n);
    }
    if (bad != nullptr) {
      throw_zero_pivot(static_cast<PetscInt>(bad_row), bad->fail_pivot, bad->fail_scale);
    }
  }

  periodic_ = periodic;
  n_local_ = m;
  first_row_ = static_cast<PetscInt>(my_first);
  n_global_ = static_cast<PetscInt>(total);
  return grew;
}

bool TridiagSolver::factor_interior_continuant(std::size_t mi) {
  Continuant pivots;
  for (std::size_t j = 0; j < mi && pivots.ok(); ++j) {
    const std::size_t k = j + 1;
    const double a = j > 0 ? sub_[k] : 0.0;
    const double c = j + 1 < mi ? super_[k] : 0.0;
    const double inv = pivots.next(a, diag_[k], c,
                                   std::fabs(sub_[k]) + std::fabs(diag_[k]) + std::fabs(super_[k]));
    inv_[j] = inv;
    ell_[j] = a * inv;
    cp_[j] = c * inv;
  }
  return pivots.ok();
}

bool TridiagSolver::factor_reduced() {
  bool grew = false;
  std::size_t count = 0;
  for (const Summary& s : all_) count += s.n >= 2.0 ? 2 : static_cast<std::size_t>(s.n);
  grew |= fit(reduced_rows_, count);
  grew |= fit(reduced_offset_, static_cast<std::size_t>(size_) + 1);
  grew |= fit(r_lo_, count);
  grew |= fit(r_di_, count);
  grew |= fit(r_up_, count);
  grew |= fit(r_inv_, count);
  grew |= fit(r_cp_, count);
  grew |= fit(r_z_, count);
  grew |= fit(r_rhs_, count);
  grew |= fit(r_x_, count);
  grew |= fit(gathered_, 2 * static_cast<std::size_t>(size_));

  std::size_t q = 0;
  PetscInt offset = 0;
  for (int r = 0; r < size_; ++r) {
    const Summary& s = all_[r];
    const auto n = static_cast<PetscInt>(s.n);
    reduced_offset_[r] = static_cast<int>(q);
    const int rows = n >= 2 ? 2 : static_cast<int>(n);
    for (int t = 0; t < rows; ++t, ++q) {
      reduced_rows_[q] = t == 0 ? offset : offset + n - 1;
      r_lo_[q] = s.lo[t];
      r_di_[q] = s.di[t];
      r_up_[q] = s.up[t];
    }
    offset += n;
  }
  reduced_offset_[size_] = static_cast<int>(q);
  const std::size_t R = count;
  if (R == 0) return grew;
  if (!periodic_) {
    r_lo_[0] = 0.0;
    r_up_[R - 1] = 0.0;
  }

  // Thomas on rows 0 .. nt-1; when cyclic the last unknown is the border, coupled to rows 0
  // and R-2 through lo[0] and up[R-2].
  const std::size_t nt = periodic_ ? R - 1 : R;
  for (std::size_t j = 0; j < nt; ++j) {
    const double a = j > 0 ? r_lo_[j] : 0.0;
    const double c = j + 1 < nt ? r_up_[j] : 0.0;
    const double pivot = r_di_[j] - (j > 0 ? a * r_cp_[j - 1] : 0.0);
    const double scale = std::fabs(r_lo_[j]) + std::fabs(r_di_[j]) + std::fabs(r_up_[j]);
    if (is_zero_pivot(pivot, scale)) throw_zero_pivot(reduced_rows_[j], pivot, scale);
    r_inv_[j] = 1.0 / pivot;
    r_cp_[j] = c * r_inv_[j];
  }
  if (periodic_) {
    const std::size_t last = R - 1;
    double sigma = r_di_[last];
    if (R == 1) {
      sigma += r_lo_[0] + r_up_[0];
    } else {
      // z = T'^{-1} w with w = -(lo[0] e_0 + up[R-2] e_{R-2}): the interior's response to
      // the border unknown.
      for (std::size_t j = 0; j < nt; ++j) r_z_[j] = 0.0;
      r_z_[0] -= r_lo_[0];
      r_z_[nt - 1] -= r_up_[nt - 1];
      thomas_reduced(r_z_.data(), nt);
      sigma += r_lo_[last] * r_z_[nt - 1] + r_up_[last] * r_z_[0];
    }
    const double scale = std::fabs(r_lo_[last]) + std::fabs(r_di_[last]) + std::fabs(r_up_[last]);
    if (is_zero_pivot(sigma, scale)) throw_zero_pivot(reduced_rows_[last], sigma, scale);
    r_sigma_inv_ = 1.0 / sigma;
  }
  return grew;
}

void TridiagSolver::thomas_reduced(double* v, std::size_t n) const {
  v[0] *= r_inv_[0];
  for (std::size_t j = 1; j < n; ++j) v[j] = (v[j] - r_lo_[j] * v[j - 1]) * r_inv_[j];
  for (std::size_t j = n - 1; j-- > 0;) v[j] -= r_cp_[j] * v[j + 1];
}

void TridiagSolver::solve_reduced() {
  const std::size_t R = r_rhs_.size();
  if (R == 0) return;
  std::copy(r_rhs_.begin(), r_rhs_.end(), r_x_.begin());
  if (!periodic_) {
    thomas_reduced(r_x_.data(), R);
    return;
  }
  if (R == 1) {
    r_x_[0] *= r_sigma_inv_;
    return;
  }
  const std::size_t nt = R - 1;
  thomas_reduced(r_x_.data(), nt);
  const double border =
      (r_rhs_[nt] - r_lo_[nt] * r_x_[nt - 1] - r_up_[nt] * r_x_[0]) * r_sigma_inv_;
  for (std::size_t j = 0; j < nt; ++j) r_x_[j] += r_z_[j] * border;
  r_x_[nt] = border;
}

void TridiagSolver::solve(const double* b, double* x) {
  if (!setup_) throw Error("TridiagSolver::solve: setup() has not completed");
  const auto m = static_cast<std::size_t>(n_local_);
  const std::size_t mi = m > 2 ? m - 2 : 0;

  // 1. Interior forward sweep g = L^{-1} b into x[1 .. m-2] (reads b[k] before writing x[k],
  //    so x may alias b), and the ends of y = T^{-1} b: y_last = g_last, y_first = w . b.
  double y_first = 0.0;
  double y_last = 0.0;
  if (mi > 0) {
    double g = b[1] * inv_[0];
    double dot = w_[0] * b[1];
    x[1] = g;
    for (std::size_t j = 1; j < mi; ++j) {
      const double bj = b[j + 1];
      dot += w_[j] * bj;
      g = bj * inv_[j] - ell_[j] * g;
      x[j + 1] = g;
    }
    y_first = dot;
    y_last = g;
  }

  // 2. Reduced right-hand sides of this block, gathered from every rank.
  double mine[2] = {0.0, 0.0};
  if (m == 1) {
    mine[0] = b[0];
  } else if (m == 2) {
    mine[0] = b[0];
    mine[1] = b[1];
  } else if (m > 2) {
    mine[0] = b[0] - super_[0] * y_first;
    mine[1] = b[m - 1] - sub_[m - 1] * y_last;
  }
  check_mpi(MPI_Allgather(mine, 2, MPI_DOUBLE, gathered_.data(), 2, MPI_DOUBLE, comm_),
            "MPI_Allgather");
  for (int r = 0; r < size_; ++r) {
    const int q0 = reduced_offset_[r];
    const int rows = reduced_offset_[r + 1] - q0;
    for (int t = 0; t < rows; ++t) r_rhs_[q0 + t] = gathered_[2 * r + t];
  }

  // 3. The interface unknowns (every rank solves the same small system).
  solve_reduced();

  // 4. Back-substitution.
  if (m == 0) return;
  const int q0 = reduced_offset_[rank_];
  const double x_first = r_x_[q0];
  const double x_last = r_x_[reduced_offset_[rank_ + 1] - 1];
  if (mi > 0) {
    // Backward sweep of U x = g + x_first galpha + x_last gbeta e_last.
    double v = x[mi] + x_first * galpha_[mi - 1] + x_last * gbeta_;
    x[mi] = v;
    for (std::size_t j = mi - 1; j-- > 0;) {
      v = x[j + 1] + x_first * galpha_[j] - cp_[j] * v;
      x[j + 1] = v;
    }
  }
  x[0] = x_first;
  x[m - 1] = x_last;
}

std::pair<double, double> TridiagSolver::neighbour_solution() const {
  const int R = static_cast<int>(r_x_.size());
  if (n_local_ <= 0 || R == 0 || static_cast<int>(reduced_offset_.size()) != size_ + 1) {
    return {0.0, 0.0};
  }
  const int q0 = reduced_offset_[rank_];
  const int q1 = reduced_offset_[rank_ + 1];
  double west = 0.0, east = 0.0;
  if (q0 > 0) {
    west = r_x_[q0 - 1];
  } else if (periodic_) {
    west = r_x_[R - 1];
  }
  if (q1 < R) {
    east = r_x_[q1];
  } else if (periodic_) {
    east = r_x_[0];
  }
  return {west, east};
}

void TridiagSolver::solve_transpose(const double* b, double* x) {
  if (!setup_) throw Error("TridiagSolver::solve_transpose: setup() has not completed");
  if (!transposed_ready_) {
    // A^T row i: A(i-1, i) x[i-1] + A(i, i) x[i] + A(i+1, i) x[i+1], that is super of row
    // i-1, diag of row i, sub of row i+1.
    const auto m = static_cast<std::size_t>(n_local_);
    std::vector<double> tsub(m), tsuper(m);
    for (std::size_t i = 0; i < m; ++i) {
      tsub[i] = i > 0 ? super_[i - 1] : super_prev_;
      tsuper[i] = i + 1 < m ? sub_[i + 1] : sub_next_;
    }
    if (!transposed_) transposed_ = std::make_unique<TridiagSolver>(comm_);
    transposed_->setup(n_local_, tsub.data(), diag_.data(), tsuper.data(), periodic_);
    transposed_ready_ = true;
  }
  transposed_->solve(b, x);
}

}  // namespace fracmfg::la
