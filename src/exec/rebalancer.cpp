#include "fracmfg/exec/rebalancer.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "exec/fingerprint.hpp"
#include "fracmfg/core/error.hpp"

namespace fracmfg::exec {

namespace {

template <class T>
std::string join(const std::vector<T>& v) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? " " : "") << v[i];
  os << ']';
  return os.str();
}

}  // namespace

Rebalancer::Rebalancer(MPI_Comm comm, RebalanceOptions options, core::Logger log,
                       RebalanceLayout layout)
    : comm_(comm), log_(std::move(log)), policy_(options, layout) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

const RebalanceDecision& Rebalancer::observe(double my_seconds, PetscInt my_points,
                                             double horizon) {
  const auto p = static_cast<std::size_t>(size_);
  std::vector<double> seconds(p);
  std::vector<std::int64_t> points64(p);
  const auto mine = static_cast<std::int64_t>(my_points);
  MPI_Allgather(&my_seconds, 1, MPI_DOUBLE, seconds.data(), 1, MPI_DOUBLE, comm_);
  MPI_Allgather(&mine, 1, MPI_INT64_T, points64.data(), 1, MPI_INT64_T, comm_);
  const std::vector<PetscInt> points(points64.begin(), points64.end());

  // Identical input on every rank: the policy accepts or throws the same way everywhere.
  const RebalanceDecision& d = policy_.observe(seconds, points, horizon);

  Fingerprint f;
  f.add(d.resplit);
  f.add(d.reason);
  f.add(d.imbalance);
  f.add(d.horizon);
  f.add(d.counts);
  f.add(d.lx);
  f.add(d.ly);
  f.add(d.lz);
  if (!same_on_all_ranks(comm_, f.value())) {
    throw Error("rebalance: ranks reached different decisions from the same data");
  }

  log_.debug("rebalance: observation ", d.observation, " imbalance ", d.imbalance, " (",
             to_string(d.reason), ")");
  if (d.reason == RebalanceReason::not_worth) {
    log_.debug("rebalance: a re-split would save ", d.predicted_saving, " s per observation over ",
               d.horizon, " more, less than its cost of ", d.expected_cost, " s");
  }
  if (d.resplit) {
    log_.info("rebalance: imbalance ", d.imbalance, ", predicted ", d.predicted_current, " -> ",
              d.predicted_new, "; points per rank ", join(d.points), " -> ", join(d.counts));
  }
  return d;
}

void Rebalancer::record_cost(double my_seconds) {
  // One reduction of {invalid here, seconds}: a NaN must not be lost in the maximum.
  const bool valid = std::isfinite(my_seconds) && my_seconds >= 0.0;
  const double mine[2] = {valid ? 0.0 : 1.0, valid ? my_seconds : 0.0};
  double all[2] = {0.0, 0.0};
  MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, comm_);
  if (all[0] != 0.0)
    throw Error("rebalance: some rank reported a re-split cost that is not a time");
  policy_.record_cost(all[1]);
}

}  // namespace fracmfg::exec
