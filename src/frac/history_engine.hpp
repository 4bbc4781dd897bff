#pragma once
// frac::detail::HistoryEngine: the history sums of a fractional time-stepping scheme on the
// uniform grid t_n = n h, n = 0..P-1, for c components (this rank's), by the nested block
// splitting of Hairer, Lubich & Schlichte (SIAM J. Sci. Stat. Comput. 6 (1985) 532-541) in
// the form of Garrappa's FDE12 (Mathematics 6(2):16, 2018, Sec. 3.2 and the code fde12.m).
//
// For rules r (1 or 2) with weights K_r(k), k >= 1 (per group of components), the engine
// maintains, for every step n before the caller computes it,
//
//     history(r, n)[i] = sum_{j<n} K_r(n - j) F[j][i]
//
// where F[j] (f_row(j)) is what the caller stored at step j. The grid [0, S), S = r0 2^Q >= P
// (r0 the base block), is split recursively in halves; once the left half [lo, mid) is
// computed, its contribution to the right half [mid, hi) is added by one kernel call
// (kernels::history_fft_* through the exec::Selector, or the direct sum when that is
// cheaper); inside a base block of r0 steps the short local sums are done directly, step by
// step. Each level costs O(c S log S): O(c S log^2 S) time in all against O(c P^2) for the
// direct sum, and O(c P) memory (F and the accumulated sums). Mode `direct` uses one base
// block of P steps: the plain O(c P^2) sum, the reference.
//
// Groups: components [begin, end) (internal column order) share one set of weights (one
// fractional order). Rows have stride c. Node-local, not collective.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "fracmfg/exec/selector.hpp"
#include "fracmfg/kernels/history.hpp"

namespace fracmfg::frac::detail {

enum class HistoryMode { direct, fft, automatic };

struct HistoryGroup {
  std::int64_t begin = 0;  ///< first internal column
  std::int64_t end = 0;    ///< one past the last
  /// K_r(k) for k < weight_count(P, mode, block) (K_r(0) unused), one vector per rule.
  std::vector<double> weights[2];
};

struct HistoryCounters {
  std::int64_t fft_squares = 0;     ///< kernel calls of the FFT path (per group)
  std::int64_t direct_squares = 0;  ///< squares summed directly (per group)
  std::int64_t local_sums = 0;      ///< direct local-sum calls (per step and group)
  double square_seconds = 0.0;      ///< time in square contributions
  double local_seconds = 0.0;       ///< time in local sums
};

class HistoryEngine {
 public:
  /// points P >= 1, components c >= 0, rules 1 or 2; block >= 1 is the base block (ignored
  /// by mode direct). selector may be null (FFT squares then run on the host directly).
  HistoryEngine(std::int64_t points, std::int64_t components, int rules, HistoryMode mode,
                std::int64_t block, std::vector<HistoryGroup> groups, exec::Selector* selector,
                kernels::HistoryOptions kernel_options = {});

  /// S = block 2^Q, the smallest such value >= points (points itself for mode direct): the
  /// extent of the recursive splitting.
  static std::int64_t padded_points(std::int64_t points, HistoryMode mode, std::int64_t block);
  /// How many weights K_r(0..) each group must hold: P for the direct sums, and up to the
  /// FFT length of the largest square, next_fast_fft_size(P) (a square of m rows with p
  /// outputs uses L = next_fast_fft_size(m + p - 1) <= that).
  static std::int64_t weight_count(std::int64_t points, HistoryMode mode);

  /// Calls step(n) for n = 0..P-1 in order. On entry to step(n), history(r, n) is complete;
  /// step(n) must fill f_row(n). Resets the sums first, so run() may be called again.
  void run(const std::function<void(std::int64_t)>& step);

  const double* history(int rule, std::int64_t n) const {
    return sums_[rule].data() + n * components_;
  }
  double* f_row(std::int64_t n) { return f_.data() + n * components_; }
  const double* f_row(std::int64_t n) const { return f_.data() + n * components_; }

  std::int64_t points() const { return points_; }
  std::int64_t components() const { return components_; }
  std::int64_t block() const { return block_; }
  std::int64_t padded() const { return padded_; }
  HistoryMode mode() const { return mode_; }
  const HistoryCounters& counters() const { return counters_; }

 private:
  void run_block(std::int64_t lo, std::int64_t size, const std::function<void(std::int64_t)>& step);
  void base_block(std::int64_t lo, std::int64_t hi, const std::function<void(std::int64_t)>& step);
  void add_square(std::int64_t lo, std::int64_t m, std::int64_t p);
  /// The spectrum of K_r(1..L) of a group (history_spectrum), computed once per (group,
  /// rule, L).
  const std::vector<double>& spectrum(std::size_t group, int rule, std::int64_t length);
  kernels::HistoryBlock block_of(const HistoryGroup& g, std::int64_t lo, std::int64_t m,
                                 std::int64_t n0, std::int64_t p);

  std::int64_t points_;
  std::int64_t components_;
  int rules_;
  HistoryMode mode_;
  std::int64_t block_;
  std::int64_t padded_;
  std::vector<HistoryGroup> groups_;
  exec::Selector* selector_;
  exec::KernelId kernel_id_{};
  kernels::HistoryWorkspace workspace_;
  std::vector<double> f_;
  std::vector<double> sums_[2];
  /// spectra_[group][rule]: spectra by FFT length.
  std::vector<std::vector<std::map<std::int64_t, std::vector<double>>>> spectra_;
  HistoryCounters counters_;
};

}  // namespace fracmfg::frac::detail
