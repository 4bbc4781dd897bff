#include "fracmfg/exec/balance_policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/partition.hpp"

namespace fracmfg::exec {

namespace {

std::vector<double> model_times(const std::vector<PetscInt>& counts,
                                const std::vector<double>& throughput) {
  std::vector<double> t(counts.size());
  for (std::size_t r = 0; r < counts.size(); ++r) {
    t[r] = static_cast<double>(counts[r]) / throughput[r];
  }
  return t;
}

void check_options(const RebalanceOptions& o) {
  if (!std::isfinite(o.threshold) || o.threshold < 0.0) {
    throw Error("rebalance: threshold must be finite and >= 0");
  }
  if (o.patience < 1) throw Error("rebalance: patience must be >= 1");
  if (o.cooldown < 0) throw Error("rebalance: cooldown must be >= 0");
  if (!std::isfinite(o.hysteresis) || o.hysteresis < 0.0) {
    throw Error("rebalance: hysteresis must be finite and >= 0");
  }
  if (!(o.smoothing > 0.0 && o.smoothing <= 1.0)) {
    throw Error("rebalance: smoothing must lie in (0, 1]");
  }
  if (o.min_per_rank < 0) throw Error("rebalance: min_per_rank must be >= 0");
}

void check_layout(const RebalanceLayout& l) {
  if (l.dim == 1) return;
  if (l.dim != 2 && l.dim != 3) throw Error("rebalance: layout dimension must be 1, 2 or 3");
  if (l.px < 1 || l.py < 1 || l.pz < 1) {
    throw Error("rebalance: the process grid must have at least 1 rank per axis");
  }
  if (l.nx < 1 || l.ny < 1 || l.nz < 1) {
    throw Error("rebalance: the grid must have at least 1 point per axis");
  }
  if (l.dim == 2 && (l.pz != 1 || l.nz != 1)) {
    throw Error("rebalance: a 2D layout has one rank and one point along z");
  }
}

// The process grid and the grid points along each axis of a DMDA layout (dim >= 2).
std::vector<int> procs_of(const RebalanceLayout& l) {
  if (l.dim == 2) return {l.px, l.py};
  return {l.px, l.py, l.pz};
}
std::vector<PetscInt> points_of(const RebalanceLayout& l) {
  if (l.dim == 2) return {l.nx, l.ny};
  return {l.nx, l.ny, l.nz};
}

}  // namespace

const char* to_string(RebalanceReason reason) {
  switch (reason) {
    case RebalanceReason::single_rank: return "single_rank";
    case RebalanceReason::disabled: return "disabled";
    case RebalanceReason::cooling_down: return "cooling_down";
    case RebalanceReason::balanced: return "balanced";
    case RebalanceReason::waiting: return "waiting";
    case RebalanceReason::no_data: return "no_data";
    case RebalanceReason::no_gain: return "no_gain";
    case RebalanceReason::not_worth: return "not_worth";
    case RebalanceReason::resplit: return "resplit";
  }
  return "?";
}

double imbalance(const std::vector<double>& times) {
  if (times.size() < 2) return 0.0;
  double sum = 0.0;
  double max = times.front();
  for (double t : times) {
    sum += t;
    max = std::max(max, t);
  }
  const double mean = sum / static_cast<double>(times.size());
  if (!(mean > 0.0)) return 0.0;
  return max / mean - 1.0;
}

// --- RebalancePolicy ---------------------------------------------------------------------

RebalancePolicy::RebalancePolicy(RebalanceOptions options, RebalanceLayout layout)
    : options_(options), layout_(layout) {
  check_options(options_);
  check_layout(layout_);
}

void RebalancePolicy::set_layout(const RebalanceLayout& layout) {
  check_layout(layout);
  layout_ = layout;
}

void RebalancePolicy::reset() {
  throughput_.clear();
  observations_ = 0;
  resplits_ = 0;
  streak_ = 0;
  cooldown_left_ = 0;
  cost_ = -1.0;
  last_ = RebalanceDecision{};
}

void RebalancePolicy::record_cost(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0.0) {
    throw Error("rebalance: a re-split's cost must be finite and >= 0 s, got " +
                std::to_string(seconds));
  }
  cost_ = seconds;
}

void RebalancePolicy::propose(RebalanceDecision& d) const {
  const std::size_t p = d.points.size();
  const std::int64_t total = std::accumulate(d.points.begin(), d.points.end(), std::int64_t{0});
  const auto min_each = static_cast<std::int64_t>(options_.min_per_rank);
  if (layout_.dim == 1) {
    if (total < static_cast<std::int64_t>(p) * min_each) return;  // no valid split exists
    d.counts = partition(throughput_, static_cast<PetscInt>(total), options_.min_per_rank);
    d.lx = d.counts;
  } else {
    const std::vector<int> procs = procs_of(layout_);
    const std::vector<PetscInt> n = points_of(layout_);
    for (std::size_t a = 0; a < procs.size(); ++a) {
      if (n[a] < procs[a] * options_.min_per_rank) return;  // no valid split exists
    }
    std::vector<std::vector<PetscInt>> l =
        partition_grid(throughput_, procs, n, options_.min_per_rank);
    d.counts.assign(p, 0);
    for (std::size_t r = 0; r < p; ++r) {
      PetscInt c = 1;
      std::size_t rest = r;
      for (std::size_t a = 0; a < procs.size(); ++a) {
        const auto pa = static_cast<std::size_t>(procs[a]);
        c *= l[a][rest % pa];
        rest /= pa;
      }
      d.counts[r] = c;
    }
    d.lx = std::move(l[0]);
    d.ly = std::move(l[1]);
    if (layout_.dim == 3) d.lz = std::move(l[2]);
  }
  const std::vector<double> now = model_times(d.points, throughput_);
  const std::vector<double> next = model_times(d.counts, throughput_);
  d.predicted_current = imbalance(now);
  d.predicted_new = imbalance(next);
  d.predicted_saving =
      *std::max_element(now.begin(), now.end()) - *std::max_element(next.begin(), next.end());
}

const RebalanceDecision& RebalancePolicy::observe(const std::vector<double>& seconds,
                                                  const std::vector<PetscInt>& points,
                                                  double horizon) {
  // Validate everything first: an error leaves the state as it was.
  const std::size_t p = seconds.size();
  if (p == 0) throw Error("rebalance: no ranks observed");
  if (std::isnan(horizon)) throw Error("rebalance: the horizon is not a number");
  if (points.size() != p) {
    throw Error("rebalance: " + std::to_string(seconds.size()) + " times but " +
                std::to_string(points.size()) + " point counts");
  }
  if (!throughput_.empty() && throughput_.size() != p) {
    throw Error("rebalance: the number of ranks changed from " +
                std::to_string(throughput_.size()) + " to " + std::to_string(p));
  }
  std::int64_t total = 0;
  for (std::size_t r = 0; r < p; ++r) {
    if (!std::isfinite(seconds[r]) || seconds[r] < 0.0) {
      throw Error("rebalance: rank " + std::to_string(r) + " reported a step time of " +
                  std::to_string(seconds[r]) + " s; times must be finite and >= 0");
    }
    if (points[r] < 0) {
      throw Error("rebalance: rank " + std::to_string(r) + " reported " +
                  std::to_string(points[r]) + " points");
    }
    total += points[r];
  }
  if (total > static_cast<std::int64_t>(std::numeric_limits<PetscInt>::max())) {
    throw Error("rebalance: " + std::to_string(total) + " points exceed PetscInt");
  }
  if (layout_.dim >= 2) {
    const std::size_t ranks = static_cast<std::size_t>(layout_.px) *
                              static_cast<std::size_t>(layout_.py) *
                              static_cast<std::size_t>(layout_.pz);
    const std::int64_t grid = static_cast<std::int64_t>(layout_.nx) * layout_.ny * layout_.nz;
    std::string shape = std::to_string(layout_.px) + " x " + std::to_string(layout_.py);
    std::string size = std::to_string(layout_.nx) + " x " + std::to_string(layout_.ny);
    if (layout_.dim == 3) {
      shape += " x " + std::to_string(layout_.pz);
      size += " x " + std::to_string(layout_.nz);
    }
    if (p != ranks) {
      throw Error("rebalance: " + std::to_string(p) + " ranks for a " + shape + " process grid");
    }
    if (total != grid) {
      throw Error("rebalance: ranks own " + std::to_string(total) + " points in total, the " +
                  size + " grid has " + std::to_string(grid));
    }
  }

  if (throughput_.empty()) throughput_.assign(p, 0.0);
  const double a = options_.smoothing;
  for (std::size_t r = 0; r < p; ++r) {
    if (points[r] == 0 || seconds[r] == 0.0) continue;  // no information about the speed
    const double s = static_cast<double>(points[r]) / seconds[r];
    throughput_[r] = throughput_[r] > 0.0 ? (1.0 - a) * throughput_[r] + a * s : s;
  }

  RebalanceDecision d;
  d.observation = ++observations_;
  d.seconds = seconds;
  d.points = points;
  d.throughputs = throughput_;
  d.imbalance = imbalance(seconds);
  d.horizon = horizon < 0.0 ? -1.0 : horizon;
  d.expected_cost = cost_;

  if (p == 1) {
    d.reason = RebalanceReason::single_rank;
  } else if (!options_.enabled) {
    d.reason = RebalanceReason::disabled;
  } else if (cooldown_left_ > 0) {
    --cooldown_left_;
    streak_ = 0;
    d.reason = RebalanceReason::cooling_down;
  } else if (!(d.imbalance > options_.threshold)) {
    streak_ = 0;
    d.reason = RebalanceReason::balanced;
  } else if (++streak_ < options_.patience) {
    d.reason = RebalanceReason::waiting;
  } else if (std::any_of(throughput_.begin(), throughput_.end(),
                         [](double s) { return !(s > 0.0); })) {
    d.reason = RebalanceReason::no_data;
  } else {
    propose(d);
    const bool changes = !d.counts.empty() && d.counts != d.points;
    const bool weighed = cost_ >= 0.0 && d.horizon >= 0.0;
    if (!changes || !(d.predicted_new <= d.predicted_current - options_.hysteresis)) {
      d.reason = RebalanceReason::no_gain;
    } else if (weighed && !(d.horizon * d.predicted_saving > cost_)) {
      d.reason = RebalanceReason::not_worth;
    } else {
      d.reason = RebalanceReason::resplit;
      d.resplit = true;
      ++resplits_;
      streak_ = 0;
      cooldown_left_ = options_.cooldown;
    }
  }
  last_ = std::move(d);
  return last_;
}

}  // namespace fracmfg::exec
