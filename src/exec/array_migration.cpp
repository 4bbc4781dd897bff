#include "fracmfg/exec/array_migration.hpp"

#include <climits>

#include <algorithm>
#include <string>

#include "exec/fingerprint.hpp"
#include "fracmfg/core/error.hpp"

namespace fracmfg::exec {

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
