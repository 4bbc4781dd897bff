#include "fracmfg/exec/rebalancer.hpp"

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

const RebalanceDecision& Rebalancer::observe(double my_seconds, PetscInt my_points) {
  const auto p = static_cast<std::size_t>(size_);
  std::vector<double> seconds(p);
  std::vector<std::int64_t> points64(p);
  const auto mine = static_cast<std::int64_t>(my_points);
  MPI_Allgather(&my_seconds, 1, MPI_DOUBLE, seconds.data(), 1, MPI_DOUBLE, comm_);
  MPI_Allgather(&mine, 1, MPI_INT64_T, points64.data(), 1, MPI_INT64_T, comm_);
  const std::vector<PetscInt> points(points64.begin(), points64.end());

  // Identical input on every rank: the policy accepts or throws the same way everywhere.
  const RebalanceDecision& d = policy_.observe(seconds, points);

  Fingerprint f;
  f.add(d.resplit);
  f.add(d.reason);
  f.add(d.imbalance);
  f.add(d.counts);
  f.add(d.lx);
  f.add(d.ly);
  if (!same_on_all_ranks(comm_, f.value())) {
    throw Error("rebalance: ranks reached different decisions from the same data");
  }

  log_.debug("rebalance: observation ", d.observation, " imbalance ", d.imbalance, " (",
             to_string(d.reason), ")");
  if (d.resplit) {
    log_.info("rebalance: imbalance ", d.imbalance, ", predicted ", d.predicted_current, " -> ",
              d.predicted_new, "; points per rank ", join(d.points), " -> ", join(d.counts));
  }
  return d;
}

}  // namespace fracmfg::exec
