#include "fracmfg/exec/partition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "fracmfg/core/error.hpp"

namespace fracmfg::exec {

namespace {

double clamp_share(double x, double lo, double hi) {
  return std::min(std::max(x, lo), hi);
}

}  // namespace

std::vector<std::int64_t> apportion(const std::vector<double>& weights, std::int64_t total,
                                    std::int64_t min_each, std::int64_t max_each) {
  const auto p = static_cast<std::int64_t>(weights.size());
  if (p == 0) throw Error("apportion: no weights");
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] <= 0.0) {
      throw Error("apportion: weight " + std::to_string(i) + " is " + std::to_string(weights[i]) +
                  "; weights must be finite and positive");
    }
  }
  if (min_each < 0) throw Error("apportion: negative minimum per part");
  const bool bounded = max_each >= 0;
  if (bounded && max_each < min_each) throw Error("apportion: maximum below minimum");
  if (total < p * min_each) {
    throw Error("cannot split " + std::to_string(total) + " into " + std::to_string(p) +
                " parts of at least " + std::to_string(min_each));
  }
  if (bounded && total > p * max_each) {
    throw Error("cannot split " + std::to_string(total) + " into " + std::to_string(p) +
                " parts of at most " + std::to_string(max_each));
  }

  // Real shares x_i = clamp(lambda w_i, min, max) with sum x = total. The sum is monotone in
  // lambda, so bisection finds lambda to the last bit; the integer rounding below absorbs
  // what floating point leaves.
  const double lo_share = static_cast<double>(min_each);
  const double hi_share =
      bounded ? static_cast<double>(max_each) : std::numeric_limits<double>::infinity();
  const double target = static_cast<double>(total);
  const double w_min = *std::min_element(weights.begin(), weights.end());
  auto sum_at = [&](double lambda) {
    double s = 0.0;
    for (double w : weights) s += clamp_share(lambda * w, lo_share, hi_share);
    return s;
  };
  double lam_lo = 0.0;
  double lam_hi = std::max(target, 1.0) / w_min;
  if (bounded) lam_hi = std::max(lam_hi, hi_share / w_min);
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (lam_lo + lam_hi);
    if (mid <= lam_lo || mid >= lam_hi) break;
    if (sum_at(mid) < target) {
      lam_lo = mid;
    } else {
      lam_hi = mid;
    }
  }
  const double lambda = lam_hi;

  std::vector<std::int64_t> count(weights.size());
  std::vector<double> remainder(weights.size());
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double x = clamp_share(lambda * weights[i], lo_share, hi_share);
    auto c = static_cast<std::int64_t>(std::floor(x));
    c = std::max(c, min_each);
    if (bounded) c = std::min(c, max_each);
    count[i] = c;
    remainder[i] = x - static_cast<double>(c);
    assigned += c;
  }

  // Largest remainders first, ties to the lower index (PETSc's split for equal weights).
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  std::int64_t left = total - assigned;
  while (left > 0) {
    for (std::size_t i : order) {
      if (left == 0) break;
      if (bounded && count[i] >= max_each) continue;
      ++count[i];
      --left;
    }
  }
  while (left < 0) {  // only if the shares overshot by rounding: take from the smallest
    for (auto it = order.rbegin(); it != order.rend() && left < 0; ++it) {
      if (count[*it] <= min_each) continue;
      --count[*it];
      ++left;
    }
  }
  return count;
}

std::vector<PetscInt> partition(const std::vector<double>& weights, PetscInt n,
                                PetscInt min_per_rank) {
  if (weights.empty()) throw Error("partition: no ranks");
  if (n < static_cast<PetscInt>(weights.size()) * min_per_rank) {
    throw Error("partition: " + std::to_string(n) + " grid points cannot give each of " +
                std::to_string(weights.size()) + " ranks at least " + std::to_string(min_per_rank));
  }
  const std::vector<std::int64_t> c = apportion(weights, n, min_per_rank);
  return std::vector<PetscInt>(c.begin(), c.end());
}

std::vector<std::vector<PetscInt>> partition_grid(const std::vector<double>& rank_weights,
                                                  const std::vector<int>& procs,
                                                  const std::vector<PetscInt>& points,
                                                  PetscInt min_per_rank) {
  if (procs.empty() || procs.size() != points.size()) {
    throw Error("partition_grid: " + std::to_string(procs.size()) + " process counts for " +
                std::to_string(points.size()) + " axes");
  }
  std::size_t ranks = 1;
  std::string shape;
  for (std::size_t a = 0; a < procs.size(); ++a) {
    if (procs[a] < 1) throw Error("partition_grid: process grid must be at least 1 per axis");
    ranks *= static_cast<std::size_t>(procs[a]);
    shape += (a ? " x " : "") + std::to_string(procs[a]);
  }
  if (rank_weights.size() != ranks) {
    throw Error("partition_grid: " + std::to_string(rank_weights.size()) + " weights for a " +
                shape + " process grid");
  }
  for (double w : rank_weights) {
    if (!std::isfinite(w) || w <= 0.0) {
      throw Error("partition_grid: weights must be finite and positive");
    }
  }
  // Slab totals: the weight of every rank adds to its slab along each axis.
  std::vector<std::vector<double>> slab(procs.size());
  for (std::size_t a = 0; a < procs.size(); ++a) {
    slab[a].assign(static_cast<std::size_t>(procs[a]), 0.0);
  }
  for (std::size_t r = 0; r < ranks; ++r) {
    std::size_t rest = r;
    for (std::size_t a = 0; a < procs.size(); ++a) {
      const auto pa = static_cast<std::size_t>(procs[a]);
      slab[a][rest % pa] += rank_weights[r];
      rest /= pa;
    }
  }
  std::vector<std::vector<PetscInt>> out(procs.size());
  for (std::size_t a = 0; a < procs.size(); ++a) {
    out[a] = partition(slab[a], points[a], min_per_rank);
  }
  return out;
}

Partition2d partition_2d(const std::vector<double>& rank_weights, int px, int py, PetscInt nx,
                         PetscInt ny, PetscInt min_per_rank) {
  std::vector<std::vector<PetscInt>> l =
      partition_grid(rank_weights, {px, py}, {nx, ny}, min_per_rank);
  Partition2d out;
  out.lx = std::move(l[0]);
  out.ly = std::move(l[1]);
  return out;
}

}  // namespace fracmfg::exec
