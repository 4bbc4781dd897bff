#pragma once
// Private: the memory check before a solve, the twin of the output space check.
//
// A runner passes the bytes its solver will hold on each rank (a lower bound: the arrays
// whose size follows from the deck, not PETSc's or the libraries' overheads), and
// check_memory refuses the run before anything is allocated when
//  - the ranks of one node together need more than the node has available (MemAvailable
//    of /proc/meminfo, or less where a cgroup memory limit of the job leaves less), or
//  - one rank needs more than its address-space or data limit (ulimit -v, ulimit -d) leaves.
// The error names the problem, the estimate, what is available and the override
// FRACMFG_SKIP_MEMORY_CHECK=1. A run that passes and still exhausts memory is ended at
// once by core::guarded_main's out-of-memory policy.

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fracmfg::core {

/// What this machine leaves a process (bytes; 0 where unknown or unlimited).
struct MemoryLimits {
  std::uint64_t node_available = 0;  ///< MemAvailable, or a cgroup's limit less its usage
  std::uint64_t address_space = 0;   ///< RLIMIT_AS less the process's size (VmSize)
  std::uint64_t data = 0;            ///< RLIMIT_DATA less the process's data (VmData)
};

/// A rank's share of `total` items spread evenly over the ranks of comm (rounded up).
std::uint64_t per_rank(MPI_Comm comm, std::uint64_t total);

/// The product of a grid's extents (each at least 1).
std::uint64_t grid_points(const std::vector<int>& extents);

/// The limits seen by this process now. Not collective.
MemoryLimits memory_limits();

/// Collective on comm: every rank throws the same core::CollectiveError (exit code 2, as for a deck
/// this machine cannot run) when `bytes` (this rank's estimate) does not fit (see above). `what`
/// names the run in the message, e.g. "the mfg solve (grid 4096 x 4096, 200 steps)".
void check_memory(MPI_Comm comm, std::uint64_t bytes, const std::string& what);

}  // namespace fracmfg::core
