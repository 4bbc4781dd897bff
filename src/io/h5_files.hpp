#pragma once
// Private: the life cycle of fracmfg's HDF5 files.
//
// AtomicH5File is a parallel HDF5 file being written under a temporary name in the target
// directory (".<name>.tmp-<job>-<random>", picked by rank 0) that becomes <name> only by
// commit(): close (collective) -> barrier -> rank 0 fsyncs and renames -> everyone learns
// the outcome. Without commit the temporary file is removed; the final name is never
// touched, so an older file of that name stays intact.
//
// Every operation that writes goes through write(): when an HDF5 call fails on some rank
// (the write did not reach the disk), all ranks agree, the file is given up (closed, the
// temporary file removed) and every rank throws the same WriteError with the system's
// reason found by rank 0 (diagnose_write_failure).

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/io/h5_writer.hpp"
#include "io/h5_handles.hpp"

namespace fracmfg::io::detail {

class AtomicH5File {
 public:
  /// Collective; every rank throws the same IoError when a path is unusable or its file
  /// system lacks the space (see H5Writer::check_output_paths).
  static void check_output_paths(MPI_Comm comm, const std::vector<OutputSpace>& files);

  /// Checks the path, creates the temporary file and writes the common root attributes
  /// (layout_version, fracmfg_version, git_revision, mpi_ranks, created, problem,
  /// file_kind). With continue_existing and a file at `path`, the temporary file starts as
  /// a copy of it (rank 0 copies; an IoError when it has another layout version) and is
  /// opened for writing; continued() then says so. Collective.
  AtomicH5File(MPI_Comm comm, const std::string& path, const std::string& file_kind,
               const std::string& problem, bool continue_existing = false);
  AtomicH5File(const AtomicH5File&) = delete;
  AtomicH5File& operator=(const AtomicH5File&) = delete;
  ~AtomicH5File();

  hid_t id() const { return file_.get(); }
  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& path() const { return path_; }
  const std::string& temporary_path() const { return temporary_path_; }
  bool committed() const { return committed_; }
  bool continued() const { return continued_; }
  /// The name used in error messages (the final name).
  const std::string& label() const { return label_; }

  /// Data can still be written: not committed, not given up, the file open.
  bool writable() const { return !committed_ && !failed_ && file_.valid(); }
  /// Throws IoError("cannot <action> ...: already committed") once committed.
  void require_open(const std::string& action) const;

  /// Runs fn (HDF5 calls on this file, the same on every rank) and agrees on the outcome.
  /// An IoError raised by fracmfg itself (a bad name, a shape mismatch) is rethrown on every
  /// rank as the same IoError and the file stays usable; a failed HDF5 call (H5Failure)
  /// gives the file up and is a WriteError on every rank. Collective.
  template <class Fn>
  void write(Fn&& fn) {
    std::string message;
    int kind = 0;  // 0 success, 1 an error of fracmfg, 2 a failed HDF5 call
    try {
      std::forward<Fn>(fn)();
    } catch (const H5Failure& e) {
      message = e.what();
      kind = 2;
    } catch (const std::exception& e) {
      message = e.what();
      kind = 1;
    } catch (...) {
      message = "unknown exception";
      kind = 1;
    }
    settle(kind, message);
  }

  /// Close + barrier + rename by rank 0, then after_rename() on rank 0 (e.g. a sidecar
  /// file). Collective; every rank throws the same IoError on failure. When the rename
  /// failed the temporary file is removed and the final name is untouched.
  void commit(const std::function<void()>& after_rename = {});

 private:
  void discard() noexcept;
  /// The agreement of write(): returns when every rank succeeded, else throws.
  void settle(int kind, const std::string& message);
  /// Gives the file up after a failed write on some rank, then throws the WriteError.
  /// Collective (every rank arrives here together).
  [[noreturn]] void fail(const std::string& hdf5_message);
  std::string kind_label() const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::string path_;
  std::string temporary_path_;
  std::string label_;
  H5File file_;
  bool committed_ = false;
  bool continued_ = false;  ///< opened as a copy of the committed file
  bool failed_ = false;     ///< given up after a failed write
  std::string file_kind_;
};

/// Rank-local: why writing `file` in directory `dir` failed, as the system's words:
/// strerror(EFBIG) when the file reached the file size limit (ulimit -f), strerror(ENOSPC)
/// when the file system has (almost) no space left, else the error of a small test write
/// (and fsync) in dir (EIO, EDQUOT, EROFS...); "" when the file system looks healthy.
std::string diagnose_write_failure(const std::string& file, const std::string& dir);

/// Rank-local: the free space of the file system holding `dir` (statvfs, bytes available
/// to unprivileged users); throws IoError when statvfs fails.
std::uint64_t free_space(const std::string& dir);

/// Opens an existing HDF5 file read-only for parallel access. Collective; every rank
/// throws the same IoError when the file is missing or unreadable.
H5File open_for_reading(MPI_Comm comm, const std::string& path);

/// Closes a file opened for reading: collectively, or, while an exception unwinds (other
/// ranks may not be closing), by leaving the handle to HDF5's shutdown at MPI_Finalize.
void close_after_reading(H5File& file) noexcept;

/// The current UTC time as ISO 8601, "2024-05-01T12:00:00Z".
std::string utc_timestamp();

}  // namespace fracmfg::io::detail
