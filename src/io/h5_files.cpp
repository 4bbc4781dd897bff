#include "io/h5_files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <system_error>
#include <unistd.h>

#include "fracmfg/config.hpp"
#include "io/xdmf_writer.hpp"

namespace fracmfg::io::detail {

namespace fs = std::filesystem;

namespace {

fs::path directory_of(const fs::path& target) {
  fs::path dir = target.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

/// Rank 0's part of check_output_path.
void check_output_path_locally(const std::string& path) {
  const std::string prefix = "cannot write output file '" + path + "': ";
  if (path.empty()) throw IoError("cannot write output file: the path is empty");
  const fs::path target(path);
  if (!target.has_filename()) throw IoError(prefix + "the path has no file name");
  const fs::path dir = directory_of(target);
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    throw IoError(prefix + "'" + dir.string() + "' exists and is not a directory");
  }
  fs::create_directories(dir, ec);
  if (ec) {
    throw IoError(prefix + "cannot create directory '" + dir.string() + "': " + ec.message());
  }
  if (fs::is_directory(target, ec)) throw IoError(prefix + "it is a directory");
  // Try to create a file: the only test of writability that holds for every file system,
  // access control list and user (root passes access(W_OK) on read-only mounts too).
  const fs::path probe =
      dir / ("." + target.filename().string() + ".probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    throw IoError(prefix + "directory '" + dir.string() +
                  "' is not writable: " + std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

std::string temporary_name_for(const std::string& path) {
  const fs::path target(path);
  std::string job;
  if (const char* slurm = std::getenv("SLURM_JOB_ID"); slurm != nullptr && *slurm != '\0') {
    job = std::string(slurm) + "-";
  }
  std::random_device rd;
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".tmp-%s%d-%08x", job.c_str(), static_cast<int>(::getpid()),
                rd());
  return (directory_of(target) / ("." + target.filename().string() + suffix)).string();
}

}  // namespace

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void AtomicH5File::check_output_path(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  agree(comm, [&] {
    if (rank == 0) check_output_path_locally(path);
  });
}

AtomicH5File::AtomicH5File(MPI_Comm comm, const std::string& path, const std::string& file_kind,
                           const std::string& problem)
    : comm_(comm), path_(path) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  check_output_path(comm_, path_);
  if (rank_ == 0) temporary_path_ = temporary_name_for(path_);
  bcast_string(comm_, temporary_path_);
  label_ = path_;

  try {
    agree(comm_, [&] {
      H5PropList fapl = make_file_access(comm_, path_);
      file_ = H5File(
          check_id(H5Fcreate(temporary_path_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()),
                   "cannot create output file '" + path_ + "' (as '" + temporary_path_ + "')"));
    });
    std::string created = utc_timestamp();
    std::string problem_name = problem;
    bcast_string(comm_, created);
    bcast_string(comm_, problem_name);
    const std::string ctx = "the root group of '" + path_ + "'";
    write_attribute(file_.get(), "fracmfg_version", std::string(FRACMFG_VERSION_STRING), ctx);
    write_attribute(file_.get(), "git_revision", std::string(FRACMFG_GIT_REVISION), ctx);
    write_attribute(file_.get(), "mpi_ranks", static_cast<std::int64_t>(size_), ctx);
    write_attribute(file_.get(), "created", created, ctx);
    write_attribute(file_.get(), "problem", problem_name, ctx);
    write_attribute(file_.get(), "file_kind", file_kind, ctx);
  } catch (...) {
    discard();
    throw;
  }
}

AtomicH5File::~AtomicH5File() {
  discard();
}

void AtomicH5File::discard() noexcept {
  if (committed_) return;
  // Remove the name first: even if closing cannot complete (another rank has gone), the
  // partial file does not stay behind.
  if (rank_ == 0 && !temporary_path_.empty()) ::unlink(temporary_path_.c_str());
  if (!file_.valid()) return;
  if (std::uncaught_exceptions() > 0) {
    // Closing is collective and, while an exception unwinds, other ranks may be elsewhere
    // (an error seen by one rank): never block here. HDF5 closes the file at MPI_Finalize.
    file_.release();
  } else {
    H5ErrorSilencer quiet;
    file_.reset();
    H5Eclear2(H5E_DEFAULT);
  }
}

void AtomicH5File::require_open(const std::string& action) const {
  if (committed_ || !file_.valid()) {
    throw IoError("cannot " + action + " in '" + path_ + "': the file is already " +
                  (committed_ ? "committed" : "closed"));
  }
}

void AtomicH5File::commit(const std::function<void()>& after_rename) {
  require_open("commit");
  try {
    // 1. Close on every rank (collective: flushes metadata and the MPI-IO file), then agree,
    //    which doubles as the barrier: no rank is still writing when rank 0 renames.
    agree(comm_, [&] {
      H5Fflush(file_.get(), H5F_SCOPE_GLOBAL);
      if (!file_.reset()) throw_h5("cannot close output file '" + path_ + "'");
    });
    // 2. Rank 0 makes the data durable, then publishes it under the final name; rename()
    //    replaces an older file atomically, so readers see the old or the new file, whole.
    agree(comm_, [&] {
      if (rank_ != 0) return;
      fsync_path(temporary_path_, false);
      if (std::rename(temporary_path_.c_str(), path_.c_str()) != 0) {
        throw IoError("cannot rename '" + temporary_path_ + "' to '" + path_ +
                      "': " + std::strerror(errno));
      }
      fsync_path(directory_of(fs::path(path_)).string(), true);
    });
  } catch (...) {
    discard();
    throw;
  }
  committed_ = true;
  if (after_rename) {
    agree(comm_, [&] {
      if (rank_ == 0) after_rename();
    });
  }
}

H5File open_for_reading(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  agree(comm, [&] {
    if (rank != 0) return;
    std::error_code ec;
    if (!fs::exists(path, ec)) throw IoError("cannot open '" + path + "': no such file");
    if (!fs::is_regular_file(path, ec)) throw IoError("cannot open '" + path + "': not a file");
  });
  H5File file;
  agree(comm, [&] {
    H5PropList fapl = make_file_access(comm, path);
    file = H5File(check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()),
                           "cannot open '" + path + "' as an HDF5 file"));
  });
  return file;
}

void close_after_reading(H5File& file) noexcept {
  if (!file.valid()) return;
  if (std::uncaught_exceptions() > 0) {
    file.release();
  } else {
    H5ErrorSilencer quiet;
    file.reset();
    H5Eclear2(H5E_DEFAULT);
  }
}

}  // namespace fracmfg::io::detail
