#include "fracmfg/exec/rebalancer.hpp"

#include <climits>
#include <petscdmda.h>
#include <petscis.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/partition.hpp"

namespace fracmfg::exec {

namespace {

using core::IsHandle;
using ScatterHandle = core::VecScatterHandle;

// 64-bit FNV-1a over raw bytes: a cheap fingerprint to compare decisions across ranks.
class Fingerprint {
 public:
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
      h_ ^= p[i];
      h_ *= 1099511628211ULL;
    }
  }
  template <class T>
  void add(const T& value) {
    add(&value, sizeof(T));
  }
  template <class T>
  void add(const std::vector<T>& values) {
    const std::uint64_t n = values.size();
    add(n);
    if (!values.empty()) add(values.data(), values.size() * sizeof(T));
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 1469598103934665603ULL;
};

// True on every rank when the fingerprint is the same on every rank.
bool same_on_all_ranks(MPI_Comm comm, std::uint64_t h) {
  std::uint64_t in[2] = {h, ~h};
  std::uint64_t out[2] = {0, 0};
  MPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, comm);
  return out[0] == h && ~out[1] == h;  // max == min
}

template <class T>
std::string join(const std::vector<T>& v) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) os << (i ? " " : "") << v[i];
  os << ']';
  return os.str();
}

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
  if (l.dim != 2) throw Error("rebalance: layout dimension must be 1 or 2");
  if (l.px < 1 || l.py < 1) throw Error("rebalance: 2D process grid must be at least 1 x 1");
  if (l.nx < 1 || l.ny < 1) throw Error("rebalance: 2D grid must have at least 1 x 1 points");
}

}  // namespace

// --- layout, reasons, imbalance ----------------------------------------------------------

RebalanceLayout RebalanceLayout::of(DM da) {
  PetscBool is_da = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(da), DMDA, &is_da));
  if (!is_da) throw Error("RebalanceLayout::of: not a DMDA");
  PetscInt dim = 0, nx = 0, ny = 0, px = 0, py = 0;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da, &dim, &nx, &ny, nullptr, &px, &py, nullptr, nullptr, nullptr,
                                  nullptr, nullptr, nullptr, nullptr));
  if (dim == 1) return contiguous();
  if (dim == 2) return grid_2d(static_cast<int>(px), static_cast<int>(py), nx, ny);
  throw Error("RebalanceLayout::of: only 1D and 2D DMDAs are rebalanced");
}

const char* to_string(RebalanceReason reason) {
  switch (reason) {
    case RebalanceReason::single_rank: return "single_rank";
    case RebalanceReason::disabled: return "disabled";
    case RebalanceReason::cooling_down: return "cooling_down";
    case RebalanceReason::balanced: return "balanced";
    case RebalanceReason::waiting: return "waiting";
    case RebalanceReason::no_data: return "no_data";
    case RebalanceReason::no_gain: return "no_gain";
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
  last_ = RebalanceDecision{};
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
    if (layout_.nx < layout_.px * options_.min_per_rank ||
        layout_.ny < layout_.py * options_.min_per_rank) {
      return;
    }
    Partition2d q = partition_2d(throughput_, layout_.px, layout_.py, layout_.nx, layout_.ny,
                                 options_.min_per_rank);
    d.counts.assign(p, 0);
    const auto px = static_cast<std::size_t>(layout_.px);
    for (std::size_t j = 0; j < q.ly.size(); ++j) {
      for (std::size_t i = 0; i < px; ++i) d.counts[i + px * j] = q.lx[i] * q.ly[j];
    }
    d.lx = std::move(q.lx);
    d.ly = std::move(q.ly);
  }
  d.predicted_current = imbalance(model_times(d.points, throughput_));
  d.predicted_new = imbalance(model_times(d.counts, throughput_));
}

const RebalanceDecision& RebalancePolicy::observe(const std::vector<double>& seconds,
                                                  const std::vector<PetscInt>& points) {
  // Validate everything first: an error leaves the state as it was.
  const std::size_t p = seconds.size();
  if (p == 0) throw Error("rebalance: no ranks observed");
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
  if (total > static_cast<std::int64_t>(PETSC_MAX_INT)) {
    throw Error("rebalance: " + std::to_string(total) + " points exceed PetscInt");
  }
  if (layout_.dim == 2) {
    if (p != static_cast<std::size_t>(layout_.px) * static_cast<std::size_t>(layout_.py)) {
      throw Error("rebalance: " + std::to_string(p) + " ranks for a " + std::to_string(layout_.px) +
                  " x " + std::to_string(layout_.py) + " process grid");
    }
    if (total != static_cast<std::int64_t>(layout_.nx) * layout_.ny) {
      throw Error("rebalance: ranks own " + std::to_string(total) + " points in total, the " +
                  std::to_string(layout_.nx) + " x " + std::to_string(layout_.ny) + " grid has " +
                  std::to_string(static_cast<std::int64_t>(layout_.nx) * layout_.ny));
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
    if (changes && d.predicted_new <= d.predicted_current - options_.hysteresis) {
      d.reason = RebalanceReason::resplit;
      d.resplit = true;
      ++resplits_;
      streak_ = 0;
      cooldown_left_ = options_.cooldown;
    } else {
      d.reason = RebalanceReason::no_gain;
    }
  }
  last_ = std::move(d);
  return last_;
}

// --- Rebalancer --------------------------------------------------------------------------

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

// --- DMDA migration ----------------------------------------------------------------------

namespace {

// What migrate and create_dmda_like need to know of a 1D or 2D DMDA (1D: y of size 1).
struct DaInfo {
  MPI_Comm comm = MPI_COMM_NULL;
  PetscInt dim = 0;
  PetscInt nx = 0, ny = 1, nz = 1;
  PetscInt px = 1, py = 1;
  PetscInt dof = 1;
  PetscInt stencil_width = 0;
  DMBoundaryType bx = DM_BOUNDARY_NONE, by = DM_BOUNDARY_NONE;
  DMDAStencilType stencil = DMDA_STENCIL_BOX;
  std::vector<PetscInt> lx, ly;
  PetscInt xs = 0, ys = 0, xm = 0, ym = 1;
};

DaInfo info_of(DM da, const char* who) {
  PetscBool is_da = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(da), DMDA, &is_da));
  if (!is_da) throw Error(std::string(who) + ": not a DMDA");
  DaInfo a;
  FRACMFG_PETSC_CHECK(PetscObjectGetComm(reinterpret_cast<PetscObject>(da), &a.comm));
  PetscInt pz = 1;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da, &a.dim, &a.nx, &a.ny, &a.nz, &a.px, &a.py, &pz, &a.dof,
                                  &a.stencil_width, &a.bx, &a.by, nullptr, &a.stencil));
  if (a.dim != 1 && a.dim != 2) {
    throw Error(std::string(who) + ": only 1D and 2D DMDAs are supported (got " +
                std::to_string(a.dim) + "D)");
  }
  const PetscInt* lx = nullptr;
  const PetscInt* ly = nullptr;
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(da, &lx, &ly, nullptr));
  a.lx.assign(lx, lx + a.px);
  PetscInt zs = 0, zm = 0;
  FRACMFG_PETSC_CHECK(DMDAGetCorners(da, &a.xs, &a.ys, &zs, &a.xm, &a.ym, &zm));
  if (a.dim == 1) {
    a.ny = 1;
    a.py = 1;
    a.ly.assign(1, 1);
    a.ys = 0;
    a.ym = 1;
  } else {
    a.ly.assign(ly, ly + a.py);
  }
  return a;
}

std::vector<PetscInt> offsets(const std::vector<PetscInt>& sizes) {
  std::vector<PetscInt> off(sizes.size() + 1, 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) off[i + 1] = off[i] + sizes[i];
  return off;
}

// The range (index into off) that holds global index g; empty ranges are skipped.
std::size_t owner(const std::vector<PetscInt>& off, PetscInt g) {
  return static_cast<std::size_t>(std::upper_bound(off.begin(), off.end(), g) - off.begin() - 1);
}

}  // namespace

DmPtr create_dmda_like(DM old_da, const std::vector<PetscInt>& lx,
                       const std::vector<PetscInt>& ly) {
  const DaInfo a = info_of(old_da, "create_dmda_like");
  auto check = [](const std::vector<PetscInt>& l, PetscInt parts, PetscInt n, const char* name) {
    if (static_cast<PetscInt>(l.size()) != parts) {
      throw Error(std::string("create_dmda_like: ") + name + " has " + std::to_string(l.size()) +
                  " entries for " + std::to_string(parts) + " ranks");
    }
    const std::int64_t sum = std::accumulate(l.begin(), l.end(), std::int64_t{0});
    if (sum != n || std::any_of(l.begin(), l.end(), [](PetscInt c) { return c < 0; })) {
      throw Error(std::string("create_dmda_like: ") + name + " must be >= 0 and sum to " +
                  std::to_string(n) + " (got " + std::to_string(sum) + ")");
    }
  };
  check(lx, a.px, a.nx, "lx");
  if (a.dim == 2) check(ly, a.py, a.ny, "ly");

  DM raw = nullptr;
  if (a.dim == 1) {
    FRACMFG_PETSC_CHECK(DMDACreate1d(a.comm, a.bx, a.nx, a.dof, a.stencil_width, lx.data(), &raw));
  } else {
    FRACMFG_PETSC_CHECK(DMDACreate2d(a.comm, a.bx, a.by, a.stencil, a.nx, a.ny, a.px, a.py, a.dof,
                                     a.stencil_width, lx.data(), ly.data(), &raw));
  }
  DmPtr da(raw);
  const char* prefix = nullptr;
  FRACMFG_PETSC_CHECK(PetscObjectGetOptionsPrefix(reinterpret_cast<PetscObject>(old_da), &prefix));
  if (prefix != nullptr) {
    FRACMFG_PETSC_CHECK(PetscObjectSetOptionsPrefix(reinterpret_cast<PetscObject>(raw), prefix));
  }
  FRACMFG_PETSC_CHECK(DMSetUp(raw));
  for (PetscInt c = 0; c < a.dof; ++c) {
    const char* name = nullptr;
    FRACMFG_PETSC_CHECK(DMDAGetFieldName(old_da, c, &name));
    if (name != nullptr) FRACMFG_PETSC_CHECK(DMDASetFieldName(raw, c, name));
  }
  Vec old_coords = nullptr;
  FRACMFG_PETSC_CHECK(DMGetCoordinates(old_da, &old_coords));
  if (old_coords != nullptr) {
    DM old_cdm = nullptr;
    DM new_cdm = nullptr;
    FRACMFG_PETSC_CHECK(DMGetCoordinateDM(old_da, &old_cdm));
    FRACMFG_PETSC_CHECK(DMGetCoordinateDM(raw, &new_cdm));
    VecPtr coords = migrate(old_cdm, old_coords, new_cdm);
    FRACMFG_PETSC_CHECK(DMSetCoordinates(raw, coords.get()));  // takes its own reference
  }
  return da;
}

void migrate(DM old_da, Vec old_vec, DM new_da, Vec new_vec) {
  const DaInfo a = info_of(old_da, "migrate");
  const DaInfo b = info_of(new_da, "migrate");
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(a.comm, b.comm, &cmp);
  if (cmp != MPI_IDENT && cmp != MPI_CONGRUENT) {
    throw Error("migrate: the DMDAs live on different communicators");
  }
  if (a.dim != b.dim || a.nx != b.nx || a.ny != b.ny || a.dof != b.dof || a.px != b.px ||
      a.py != b.py) {
    throw Error("migrate: the DMDAs differ in dimension, global size, dof or process grid");
  }
  // Vector sizes are local facts; agree on them before building the collective scatter.
  PetscInt old_local = 0;
  PetscInt new_local = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(old_vec, &old_local));
  FRACMFG_PETSC_CHECK(VecGetLocalSize(new_vec, &new_local));
  int bad = old_local != a.xm * a.ym * a.dof || new_local != b.xm * b.ym * b.dof ? 1 : 0;
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, a.comm);
  if (any_bad != 0) {
    throw Error("migrate: on some rank a vector's local size does not match its DMDA");
  }

  // PETSc's global order of a DMDA: ranks r = i + px j in order, each rank's box in natural
  // order inside (x fastest, dof innermost). For every entry this rank owns in the new
  // layout, find its index in the old layout from the old ownership ranges.
  const std::vector<PetscInt> xoff = offsets(a.lx);
  const std::vector<PetscInt> yoff = offsets(a.ly);
  const auto px = static_cast<std::size_t>(a.px);
  std::vector<PetscInt> rank_start(px * a.ly.size(), 0);
  PetscInt start = 0;
  for (std::size_t j = 0; j < a.ly.size(); ++j) {
    for (std::size_t i = 0; i < px; ++i) {
      rank_start[i + px * j] = start;
      start += a.lx[i] * a.ly[j] * a.dof;
    }
  }
  std::vector<std::size_t> col(static_cast<std::size_t>(b.xm));
  for (PetscInt i = 0; i < b.xm; ++i) col[static_cast<std::size_t>(i)] = owner(xoff, b.xs + i);
  std::vector<PetscInt> from;
  from.reserve(static_cast<std::size_t>(new_local));
  for (PetscInt j = b.ys; j < b.ys + b.ym; ++j) {
    const std::size_t pj = owner(yoff, j);
    for (PetscInt i = b.xs; i < b.xs + b.xm; ++i) {
      const std::size_t pi = col[static_cast<std::size_t>(i - b.xs)];
      const PetscInt base =
          rank_start[pi + px * pj] + ((j - yoff[pj]) * a.lx[pi] + (i - xoff[pi])) * a.dof;
      for (PetscInt c = 0; c < a.dof; ++c) from.push_back(base + c);
    }
  }

  PetscInt lo = 0;
  PetscInt hi = 0;
  FRACMFG_PETSC_CHECK(VecGetOwnershipRange(new_vec, &lo, &hi));
  IsHandle is_from;
  IsHandle is_to;
  ScatterHandle scatter;
  FRACMFG_PETSC_CHECK(
      ISCreateGeneral(PETSC_COMM_SELF, new_local, from.data(), PETSC_COPY_VALUES, is_from.out()));
  FRACMFG_PETSC_CHECK(ISCreateStride(PETSC_COMM_SELF, new_local, lo, 1, is_to.out()));
  FRACMFG_PETSC_CHECK(
      VecScatterCreate(old_vec, is_from.get(), new_vec, is_to.get(), scatter.out()));
  FRACMFG_PETSC_CHECK(
      VecScatterBegin(scatter.get(), old_vec, new_vec, INSERT_VALUES, SCATTER_FORWARD));
  FRACMFG_PETSC_CHECK(
      VecScatterEnd(scatter.get(), old_vec, new_vec, INSERT_VALUES, SCATTER_FORWARD));
}

VecPtr migrate(DM old_da, Vec old_vec, DM new_da) {
  Vec raw = nullptr;
  FRACMFG_PETSC_CHECK(DMCreateGlobalVector(new_da, &raw));
  VecPtr out(raw);
  migrate(old_da, old_vec, new_da, raw);
  return out;
}

// --- array migration ---------------------------------------------------------------------

void migrate_bytes(MPI_Comm comm, const void* send, std::int64_t send_items, void* recv,
                   const std::vector<PetscInt>& new_counts, std::size_t item_bytes) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const auto p = static_cast<std::size_t>(size);
  std::vector<std::int64_t> old_counts(p);
  MPI_Allgather(&send_items, 1, MPI_INT64_T, old_counts.data(), 1, MPI_INT64_T, comm);

  // Every rank must see the same new split; compare fingerprints before trusting it.
  Fingerprint f;
  f.add(new_counts);
  f.add(static_cast<std::uint64_t>(item_bytes));
  if (!same_on_all_ranks(comm, f.value())) {
    throw Error("migrate_array: ranks passed different new counts or item sizes");
  }
  if (new_counts.size() != p) {
    throw Error("migrate_array: " + std::to_string(new_counts.size()) + " new counts for " +
                std::to_string(p) + " ranks");
  }
  if (item_bytes == 0 || item_bytes > static_cast<std::size_t>(INT_MAX)) {
    throw Error("migrate_array: item size out of range");
  }
  std::int64_t old_total = 0;
  std::int64_t new_total = 0;
  std::int64_t largest = 0;
  for (std::size_t r = 0; r < p; ++r) {
    if (old_counts[r] < 0 || new_counts[r] < 0) throw Error("migrate_array: negative count");
    old_total += old_counts[r];
    new_total += new_counts[r];
    largest = std::max({largest, old_counts[r], static_cast<std::int64_t>(new_counts[r])});
  }
  if (old_total != new_total) {
    throw Error("migrate_array: the ranks hold " + std::to_string(old_total) +
                " items, the new counts sum to " + std::to_string(new_total));
  }
  if (largest > static_cast<std::int64_t>(INT_MAX)) {
    throw Error("migrate_array: more than INT_MAX items on one rank");
  }

  std::vector<std::int64_t> old_off(p + 1, 0);
  std::vector<std::int64_t> new_off(p + 1, 0);
  for (std::size_t r = 0; r < p; ++r) {
    old_off[r + 1] = old_off[r] + old_counts[r];
    new_off[r + 1] = new_off[r] + new_counts[r];
  }
  const auto me = static_cast<std::size_t>(rank);
  std::vector<int> scount(p, 0), sdispl(p, 0), rcount(p, 0), rdispl(p, 0);
  for (std::size_t r = 0; r < p; ++r) {
    // What I send to r: my old range intersected with r's new range; and the converse.
    const std::int64_t s0 = std::max(old_off[me], new_off[r]);
    const std::int64_t s1 = std::min(old_off[me + 1], new_off[r + 1]);
    if (s1 > s0) {
      scount[r] = static_cast<int>(s1 - s0);
      sdispl[r] = static_cast<int>(s0 - old_off[me]);
    }
    const std::int64_t r0 = std::max(new_off[me], old_off[r]);
    const std::int64_t r1 = std::min(new_off[me + 1], old_off[r + 1]);
    if (r1 > r0) {
      rcount[r] = static_cast<int>(r1 - r0);
      rdispl[r] = static_cast<int>(r0 - new_off[me]);
    }
  }

  MPI_Datatype item = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(item_bytes), MPI_BYTE, &item);
  MPI_Type_commit(&item);
  unsigned char dummy = 0;  // a valid address for empty buffers
  const int rc =
      MPI_Alltoallv(send != nullptr ? send : &dummy, scount.data(), sdispl.data(), item,
                    recv != nullptr ? recv : &dummy, rcount.data(), rdispl.data(), item, comm);
  MPI_Type_free(&item);
  if (rc != MPI_SUCCESS) throw Error("migrate_array: MPI_Alltoallv failed");
}

}  // namespace fracmfg::exec
