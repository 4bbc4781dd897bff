#pragma once
// MPI helpers shared by the tests under tests/mpi: ranks, the sub-communicator of the first
// k ranks, checks that hold on every rank (each a collective call: make it on every rank of
// the communicator, never after an ASSERT that may return on some ranks only), a temporary
// directory shared by the ranks, DMDA vectors gathered in natural order, the largest
// difference of two Vecs, and a quiet logger.

#include <mpi.h>
#include <petscdmda.h>

#include <cstdint>
#include <filesystem>
#include <stdlib.h>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/core/petsc_check.hpp"

namespace fracmfg::test {

inline int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

inline int size_of(MPI_Comm comm) {
  int s = 1;
  MPI_Comm_size(comm, &s);
  return s;
}

inline int world_rank() {
  return rank_of(MPI_COMM_WORLD);
}
inline int world_size() {
  return size_of(MPI_COMM_WORLD);
}

/// "<prefix>_np<ranks of world>_<name>": a file or directory name of one test that differs
/// between the rank counts ctest may run at the same time.
inline std::string per_rank_count(const std::string& prefix, const std::string& name) {
  return prefix + "_np" + std::to_string(world_size()) + "_" + name;
}

/// A logger that knows its rank (only rank 0 writes) and shows warnings and errors only.
inline core::Logger quiet_logger(MPI_Comm comm = MPI_COMM_WORLD,
                                 core::LogLevel level = core::LogLevel::warn) {
  return core::Logger(rank_of(comm), level, false);
}

/// The first k ranks of MPI_COMM_WORLD (MPI_COMM_NULL on the others). Collective on world.
struct SubComm {
  MPI_Comm comm = MPI_COMM_NULL;
  explicit SubComm(int k) {
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < k ? 0 : MPI_UNDEFINED, world_rank(), &comm);
  }
  SubComm(const SubComm&) = delete;
  SubComm& operator=(const SubComm&) = delete;
  ~SubComm() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

/// True on every rank when `mine` is true on every rank. Collective.
inline bool on_all_ranks(bool mine, MPI_Comm comm = MPI_COMM_WORLD) {
  int v = mine ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, comm);
  return v != 0;
}

/// The number of ranks where `mine` is true (on every rank). Collective.
inline int ranks_where(bool mine, MPI_Comm comm = MPI_COMM_WORLD) {
  int v = mine ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, comm);
  return v;
}

/// True on every rank when the integers `v` are the same (size and values) on every rank.
/// Collective.
template <class Int>
bool same_on_all_ranks(const std::vector<Int>& v, MPI_Comm comm = MPI_COMM_WORLD) {
  static_assert(std::is_integral_v<Int>, "integers only (compare floating point with a tolerance)");
  std::vector<std::int64_t> lo(v.begin(), v.end());
  std::vector<std::int64_t> hi = lo;
  int size_lo = static_cast<int>(v.size());
  int size_hi = size_lo;
  MPI_Allreduce(MPI_IN_PLACE, &size_lo, 1, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, &size_hi, 1, MPI_INT, MPI_MAX, comm);
  if (size_lo != size_hi) return false;  // every rank sees the same sizes: no hang below
  MPI_Allreduce(MPI_IN_PLACE, lo.data(), size_lo, MPI_INT64_T, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, hi.data(), size_hi, MPI_INT64_T, MPI_MAX, comm);
  return lo == hi;
}

/// Rank 0's `text`, on every rank. Collective.
inline std::string broadcast_from_zero(const std::string& text, MPI_Comm comm = MPI_COMM_WORLD) {
  int n = static_cast<int>(text.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, comm);
  std::string out = rank_of(comm) == 0 ? text : std::string(static_cast<std::size_t>(n), '\0');
  MPI_Bcast(out.data(), n, MPI_CHAR, 0, comm);
  return out;
}

/// A fresh directory under the system temp directory (<prefix>-XXXXXX) made by rank 0, the
/// same path on every rank of comm (empty when it could not be made); removed by rank 0
/// after a barrier at scope exit. Construction and destruction are collective.
class SharedTempDir {
 public:
  explicit SharedTempDir(const std::string& prefix = "fracmfg-mpi", MPI_Comm comm = MPI_COMM_WORLD)
      : comm_(comm) {
    std::string made;
    if (rank_of(comm) == 0) {
      std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
      if (::mkdtemp(t.data()) != nullptr) made = t;
    }
    path_ = broadcast_from_zero(made, comm);
  }
  SharedTempDir(const SharedTempDir&) = delete;
  SharedTempDir& operator=(const SharedTempDir&) = delete;
  ~SharedTempDir() {
    MPI_Barrier(comm_);
    if (rank_of(comm_) == 0 && !path_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }

 private:
  MPI_Comm comm_;
  std::string path_;
};

/// The DMDA Vec v in natural (grid) order, on rank 0 of its communicator only (`to_all`
/// false; empty elsewhere) or on every rank. Collective on the DMDA's communicator.
inline std::vector<double> gather_natural(DM da, Vec v, bool to_all) {
  Vec nat = nullptr, out = nullptr;
  VecScatter sc = nullptr;
  FRACMFG_PETSC_CHECK(DMDACreateNaturalVector(da, &nat));
  FRACMFG_PETSC_CHECK(DMDAGlobalToNaturalBegin(da, v, INSERT_VALUES, nat));
  FRACMFG_PETSC_CHECK(DMDAGlobalToNaturalEnd(da, v, INSERT_VALUES, nat));
  if (to_all) {
    FRACMFG_PETSC_CHECK(VecScatterCreateToAll(nat, &sc, &out));
  } else {
    FRACMFG_PETSC_CHECK(VecScatterCreateToZero(nat, &sc, &out));
  }
  FRACMFG_PETSC_CHECK(VecScatterBegin(sc, nat, out, INSERT_VALUES, SCATTER_FORWARD));
  FRACMFG_PETSC_CHECK(VecScatterEnd(sc, nat, out, INSERT_VALUES, SCATTER_FORWARD));
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(out, &n));
  const PetscScalar* a = nullptr;
  FRACMFG_PETSC_CHECK(VecGetArrayRead(out, &a));
  std::vector<double> values(a, a + n);
  FRACMFG_PETSC_CHECK(VecRestoreArrayRead(out, &a));
  FRACMFG_PETSC_CHECK(VecScatterDestroy(&sc));
  FRACMFG_PETSC_CHECK(VecDestroy(&out));
  FRACMFG_PETSC_CHECK(VecDestroy(&nat));
  return values;
}

inline std::vector<double> natural_on_zero(DM da, Vec v) {
  return gather_natural(da, v, false);
}
inline std::vector<double> natural_on_all(DM da, Vec v) {
  return gather_natural(da, v, true);
}

/// max_i |a_i - b_i| of two Vecs with the same layout (on every rank). Collective.
inline double max_abs_difference(Vec a, Vec b) {
  Vec d = nullptr;
  FRACMFG_PETSC_CHECK(VecDuplicate(a, &d));
  FRACMFG_PETSC_CHECK(VecWAXPY(d, -1.0, b, a));
  PetscReal norm = 0.0;
  FRACMFG_PETSC_CHECK(VecNorm(d, NORM_INFINITY, &norm));
  FRACMFG_PETSC_CHECK(VecDestroy(&d));
  return static_cast<double>(norm);
}

}  // namespace fracmfg::test
