#pragma once
// Private: the life cycle of fracmfg's HDF5 files.
//
// AtomicH5File is a parallel HDF5 file being written under a temporary name in the target
// directory (".<name>.tmp-<job>-<random>", picked by rank 0) that becomes <name> only by
// commit(): close (collective) -> barrier -> rank 0 fsyncs and renames -> everyone learns
// the outcome. Without commit the temporary file is removed; the final name is never
// touched, so an older file of that name stays intact.

#include <mpi.h>

#include <functional>
#include <string>

#include "io/h5_handles.hpp"

namespace fracmfg::io::detail {

class AtomicH5File {
 public:
  /// Collective; every rank throws the same IoError when the path is unusable.
  static void check_output_path(MPI_Comm comm, const std::string& path);

  /// Checks the path, creates the temporary file and writes the common root attributes
  /// (fracmfg_version, git_revision, mpi_ranks, created, problem, file_kind). Collective.
  AtomicH5File(MPI_Comm comm, const std::string& path, const std::string& file_kind,
               const std::string& problem);
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
  /// The name used in error messages (the final name).
  const std::string& label() const { return label_; }

  /// Throws IoError("cannot <action> ...: already committed") once committed.
  void require_open(const std::string& action) const;

  /// Close + barrier + rename by rank 0, then after_rename() on rank 0 (e.g. a sidecar
  /// file). Collective; every rank throws the same IoError on failure. When the rename
  /// failed the temporary file is removed and the final name is untouched.
  void commit(const std::function<void()>& after_rename = {});

 private:
  void discard() noexcept;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::string path_;
  std::string temporary_path_;
  std::string label_;
  H5File file_;
  bool committed_ = false;
};

/// Opens an existing HDF5 file read-only for parallel access. Collective; every rank
/// throws the same IoError when the file is missing or unreadable.
H5File open_for_reading(MPI_Comm comm, const std::string& path);

/// Closes a file opened for reading: collectively, or, while an exception unwinds (other
/// ranks may not be closing), by leaving the handle to HDF5's shutdown at MPI_Finalize.
void close_after_reading(H5File& file) noexcept;

/// The current UTC time as ISO 8601, "2024-05-01T12:00:00Z".
std::string utc_timestamp();

}  // namespace fracmfg::io::detail
