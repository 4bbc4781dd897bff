#pragma once
// Private: the temporary files this process is writing, so that no way out of a run leaves
// one behind.
//
// A finished file is written under a hidden temporary name next to its final name and
// renamed when complete (io/h5_files.hpp). An error unwinds and removes it; what does not
// unwind is handled here:
//  - a signal that ends the process (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU, SIGPIPE
//    where no InterruptGuard catches it first): FatalSignalCleanup's handler removes the
//    registered files and ends the process with the same signal;
//  - MPI_Abort (an error on one rank, an allocation failure): the aborting rank removes its
//    files first, and the other ranks receive SIGTERM from the launcher (above);
//  - SIGKILL, a node failure: nothing runs; the next run that writes the same output removes
//    the temporary files of processes of its own host that are gone (temporary_name and
//    remove_stale_temporaries below).
// Registration and removal are for the thread that runs the solve; the handler only reads.

#include <cstddef>
#include <string>

namespace fracmfg::detail {

/// Adds `path` to the files removed on a fatal signal or an abort. Allocates nothing after
/// the first call; a path longer than the registry's slots (4096 bytes) or beyond its 16
/// slots is not registered (the next run's clean-up still finds it).
void register_temporary_file(const std::string& path) noexcept;
/// Removes `path` from the registry (after it was renamed or removed).
void unregister_temporary_file(const std::string& path) noexcept;
/// Unlinks every registered file. Async-signal-safe.
void remove_temporary_files() noexcept;

/// Installs the handlers described above for the lifetime of the object; restores the
/// previous ones after.
class FatalSignalCleanup {
 public:
  FatalSignalCleanup();
  ~FatalSignalCleanup();
  FatalSignalCleanup(const FatalSignalCleanup&) = delete;
  FatalSignalCleanup& operator=(const FatalSignalCleanup&) = delete;
};

/// The hidden temporary name for `path` in its directory:
///   .<name>.tmp-[<SLURM_JOB_ID>-]<host>-<pid>-<8 hex digits>
/// with <name> shortened (at a UTF-8 character boundary) so that the whole name fits in
/// kMaxTemporaryName bytes, well within every file system's 255 and MPI-IO's buffers.
std::string temporary_name(const std::string& path);

/// The longest temporary file name temporary_name gives (bytes).
inline constexpr std::size_t kMaxTemporaryName = 160;

/// Unlinks the temporary files that temporary_name gave for `path` to processes of this
/// host that no longer run; returns how many. Looks once per path and process (later calls
/// return 0). Not collective (rank 0 calls it).
int remove_stale_temporaries(const std::string& path) noexcept;

}  // namespace fracmfg::detail
