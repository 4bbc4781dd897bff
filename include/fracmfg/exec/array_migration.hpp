#pragma once
// Moving a globally contiguous array of items (particle records) to a new split over the
// ranks of a communicator, keeping the order and every byte (MPI_Alltoallv). The new
// counts come from exec::RebalanceDecision (balance_policy.hpp) or exec::partition.

#include <mpi.h>
#include <petscsystypes.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace fracmfg::exec {

/// Moves a globally contiguous array of items, rank r holding the items from the sum of the
/// lower ranks' counts on (rank order), to the split new_counts (one entry per rank, same
/// total), keeping the order. send_items is this rank's old count; recv must hold
/// new_counts[rank] items of item_bytes bytes. MPI_Alltoallv, exact. Collective on comm;
/// Error on every rank when the totals differ or new_counts has the wrong size.
void migrate_bytes(MPI_Comm comm, const void* send, std::int64_t send_items, void* recv,
                   const std::vector<PetscInt>& new_counts, std::size_t item_bytes);

/// migrate_bytes for a vector of trivially copyable items (e.g. particle records).
template <class T>
std::vector<T> migrate_array(MPI_Comm comm, const std::vector<T>& mine,
                             const std::vector<PetscInt>& new_counts) {
  static_assert(std::is_trivially_copyable_v<T>, "migrate_array moves bytes");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const auto r = static_cast<std::size_t>(rank);
  const bool known = r < new_counts.size() && new_counts[r] > 0;
  std::vector<T> out(known ? static_cast<std::size_t>(new_counts[r]) : 0);
  migrate_bytes(comm, mine.data(), static_cast<std::int64_t>(mine.size()), out.data(), new_counts,
                sizeof(T));
  return out;
}

}  // namespace fracmfg::exec
