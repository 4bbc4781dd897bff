#include "io/h5_files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <random>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "core/temporary_files.hpp"
#include "fracmfg/config.hpp"
#include "fracmfg/io/output_paths.hpp"
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
  require_replaceable(path);
  // Try to create a file: the only test of writability that holds for every file system,
  // access control list and user (root passes access(W_OK) on read-only mounts too).
  // A short name: a long output name still leaves room for it (and for the temporary name,
  // core/temporary_files.hpp), and the name's own length is checked where the deck is read.
  const fs::path probe = dir / (".fracmfg-probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    throw IoError(prefix + "directory '" + dir.string() +
                  "' is not writable: " + std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

/// Rank 0's space check: the bytes of the files on each file system (st_dev of their
/// directories, which check_output_path_locally has created) against its free space.
void check_space_locally(const std::vector<OutputSpace>& files) {
  if (const char* skip = std::getenv("FRACMFG_SKIP_SPACE_CHECK");
      skip != nullptr && std::string(skip) == "1") {
    return;
  }
  // The file size limit (ulimit -f) holds per file, whatever the file system.
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const auto max = static_cast<std::uint64_t>(limit.rlim_cur);
    for (const auto& f : files) {
      if (f.bytes == 0 || space_needed(f.bytes) <= max) continue;
      throw IoError(f.path + ": the results need about " + format_bytes(f.bytes) +
                    ", the file size limit (ulimit -f) is " + format_bytes(max) +
                    " (FRACMFG_SKIP_SPACE_CHECK=1 skips this check)");
    }
  }
  struct Group {
    std::string dir;
    std::uint64_t bytes = 0;
    std::vector<const OutputSpace*> files;
  };
  std::map<dev_t, Group> groups;
  std::vector<dev_t> order;
  for (const auto& f : files) {
    if (f.bytes == 0) continue;
    const std::string dir = directory_of(fs::path(f.path)).string();
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
      throw IoError("cannot write output file '" + f.path + "': cannot inspect directory '" + dir +
                    "': " + std::strerror(errno));
    }
    auto [it, fresh] = groups.try_emplace(st.st_dev);
    if (fresh) {
      it->second.dir = dir;
      order.push_back(st.st_dev);
    }
    it->second.bytes += f.bytes;
    it->second.files.push_back(&f);
  }
  for (dev_t dev : order) {
    const Group& g = groups.at(dev);
    std::uint64_t free = 0;
    try {
      free = free_space(g.dir);
    } catch (const IoError& e) {
      throw IoError("cannot write output file '" + g.files.front()->path + "': " + e.what());
    }
    if (free >= space_needed(g.bytes)) continue;
    std::string what = "the results need about " + format_bytes(g.files.front()->bytes);
    for (std::size_t k = 1; k < g.files.size(); ++k) {
      what += ", '" + g.files[k]->path + "' about " + format_bytes(g.files[k]->bytes);
    }
    throw IoError(g.files.front()->path + ": " + what + ", the file system has " +
                  format_bytes(free) + " free (" + format_bytes(space_needed(g.bytes)) +
                  " wanted with a margin; FRACMFG_SKIP_SPACE_CHECK=1 skips this check)");
  }
}

/// Raises this process's file size limit (ulimit -f) as far as it may for its lifetime.
class LiftedFileSizeLimit {
 public:
  LiftedFileSizeLimit() {
    if (::getrlimit(RLIMIT_FSIZE, &saved_) != 0 || saved_.rlim_cur == RLIM_INFINITY) return;
    struct rlimit open = {RLIM_INFINITY, RLIM_INFINITY};
    if (::setrlimit(RLIMIT_FSIZE, &open) != 0) {  // privileged only: else up to the hard limit
      open = {saved_.rlim_max, saved_.rlim_max};
      if (::setrlimit(RLIMIT_FSIZE, &open) != 0) return;
    }
    lifted_ = true;
  }
  LiftedFileSizeLimit(const LiftedFileSizeLimit&) = delete;
  LiftedFileSizeLimit& operator=(const LiftedFileSizeLimit&) = delete;
  ~LiftedFileSizeLimit() {
    if (lifted_) ::setrlimit(RLIMIT_FSIZE, &saved_);
  }

 private:
  struct rlimit saved_ {};
  bool lifted_ = false;
};

}  // namespace

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::uint64_t free_space(const std::string& dir) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) {
    throw IoError("cannot read the free space of the file system of '" + dir +
                  "': " + std::strerror(errno));
  }
  return static_cast<std::uint64_t>(vfs.f_bavail) * static_cast<std::uint64_t>(vfs.f_frsize);
}

std::string diagnose_write_failure(const std::string& file, const std::string& dir) {
  constexpr std::uint64_t kMiB = 1u << 20;
  // 1. The file size limit (ulimit -f): writes past it fail with EFBIG (SIGXFSZ ignored).
  struct rlimit limit {};
  struct stat st {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      ::stat(file.c_str(), &st) == 0 &&
      static_cast<std::uint64_t>(st.st_size) + kMiB >= static_cast<std::uint64_t>(limit.rlim_cur)) {
    return std::string(std::strerror(EFBIG)) + " (the file size limit is " +
           format_bytes(static_cast<std::uint64_t>(limit.rlim_cur)) + ")";
  }
  // 2. A full file system: a failed write fills it to the last block first.
  try {
    const std::uint64_t free = free_space(dir);
    if (free < kMiB) {
      return std::string(std::strerror(ENOSPC)) + " (" + format_bytes(free) + " free in '" + dir +
             "')";
    }
  } catch (const IoError&) {
  }
  // 3. Anything else (I/O error, quota, read-only remount): what a small write answers now.
  const std::string probe =
      (fs::path(dir) / (".fracmfg-write-probe-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return std::strerror(errno);
  std::vector<char> block(64 * 1024, '\0');
  int err = 0;
  if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
    err = errno != 0 ? errno : ENOSPC;
  } else if (::fsync(fd) != 0) {
    err = errno;
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  ::unlink(probe.c_str());
  return err != 0 ? std::strerror(err) : std::string();
}

void AtomicH5File::check_output_paths(MPI_Comm comm, const std::vector<OutputSpace>& files) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  agree(comm, [&] {
    if (rank != 0) return;
    for (const auto& f : files) check_output_path_locally(f.path);
    check_space_locally(files);
  });
}

AtomicH5File::AtomicH5File(MPI_Comm comm, const std::string& path, const std::string& file_kind,
                           const std::string& problem, bool continue_existing)
    : comm_(comm), path_(path), file_kind_(file_kind) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  check_output_paths(comm_, {{path_, 0}});
  if (rank_ == 0) {
    // A dead run's leftovers of this file and of its XDMF sidecar (core/temporary_files.hpp).
    fracmfg::detail::remove_stale_temporaries(path_);
    fracmfg::detail::remove_stale_temporaries(xdmf_sidecar_path(path_));
    temporary_path_ = fracmfg::detail::temporary_name(path_);
    fracmfg::detail::register_temporary_file(temporary_path_);
  }
  bcast_string(comm_, temporary_path_);
  label_ = path_;

  try {
    // A continued file starts as a copy of the committed one under the temporary name, so
    // the final name keeps the old file, whole, until the continued one is committed.
    int copied = 0;
    if (continue_existing) {
      agree(comm_, [&] {
        if (rank_ != 0) return;
        std::error_code ec;
        if (!fs::is_regular_file(path_, ec)) return;
        if (!fs::copy_file(path_, temporary_path_, ec)) {
          throw IoError("cannot continue '" + path_ + "': copying it to '" + temporary_path_ +
                        "' failed: " + ec.message());
        }
        copied = 1;
      });
      MPI_Bcast(&copied, 1, MPI_INT, 0, comm_);
    }
    continued_ = copied != 0;
    agree(comm_, [&] {
      H5PropList fapl = make_file_access(comm_, path_);
      const std::string what = "cannot " + std::string(continued_ ? "continue" : "create") +
                               " output file '" + path_ + "' (as '" + temporary_path_ + "')";
      file_ = H5File(check_id(
          continued_ ? H5Fopen(temporary_path_.c_str(), H5F_ACC_RDWR, fapl.get())
                     : H5Fcreate(temporary_path_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()),
          what));
    });
    std::string created = utc_timestamp();
    std::string problem_name = problem;
    bcast_string(comm_, created);
    bcast_string(comm_, problem_name);
    const std::string ctx = "the root group of '" + path_ + "'";
    if (continued_) {
      if (!attribute_exists(file_.get(), "layout_version", ctx) ||
          read_attribute_int64(file_.get(), "layout_version", ctx) != kLayoutVersion) {
        throw IoError("cannot continue '" + path_ + "': it was not written with layout version " +
                      std::to_string(kLayoutVersion) + " (move it away to start a new file)");
      }
    }
    write_attribute(file_.get(), "layout_version", kLayoutVersion, ctx);
    write_attribute(file_.get(), "fracmfg_version", std::string(FRACMFG_VERSION_STRING), ctx);
    write_attribute(file_.get(), "git_revision", std::string(FRACMFG_GIT_REVISION), ctx);
    write_attribute(file_.get(), "mpi_ranks", static_cast<std::int64_t>(size_), ctx);
    if (!continued_) write_attribute(file_.get(), "created", created, ctx);
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
  if (committed_ || failed_) return;
  if (std::uncaught_exceptions() > 0) {
    // Closing is collective and, while an exception unwinds, other ranks may be elsewhere
    // (an error seen by one rank): never block here. The name goes now, so the partial file
    // does not stay behind; HDF5 closes the file at MPI_Finalize.
    if (rank_ == 0 && !temporary_path_.empty()) {
      ::unlink(temporary_path_.c_str());
      fracmfg::detail::unregister_temporary_file(temporary_path_);
    }
    if (file_.valid()) file_.release();
    return;
  }
  // Every rank is here (the writer is destroyed collectively): close first, then remove the
  // name, so that nothing the close still writes through MPI-IO can bring it back.
  if (file_.valid()) {
    H5ErrorSilencer quiet;
    file_.reset();
    H5Eclear2(H5E_DEFAULT);
  }
  if (rank_ == 0 && !temporary_path_.empty()) {
    ::unlink(temporary_path_.c_str());
    fracmfg::detail::unregister_temporary_file(temporary_path_);
  }
}

void AtomicH5File::require_open(const std::string& action) const {
  if (committed_ || failed_ || !file_.valid()) {
    throw IoError("cannot " + action + " in '" + path_ + "': the file is already " +
                  (committed_ ? "committed"
                   : failed_  ? "given up after a failed write"
                              : "closed"));
  }
}

std::string AtomicH5File::kind_label() const {
  return file_kind_ == "checkpoint" ? "checkpoint" : file_kind_ + " file";
}

void AtomicH5File::settle(int kind, const std::string& message) {
  int worst = 0;
  MPI_Allreduce(&kind, &worst, 1, MPI_INT, MPI_MAX, comm_);
  if (worst == 0) return;
  if (worst == 1) {
    agree_impl(comm_, message, kind != 0);  // throws the same IoError on every rank
    return;
  }
  // A failed HDF5 call somewhere: the message of the lowest such rank goes to everyone.
  int mine = kind == 2 ? rank_ : size_;
  int first = size_;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm_);
  unsigned long long n = rank_ == first ? message.size() : 0;
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, first, comm_);
  std::string text = rank_ == first ? message : std::string(static_cast<std::size_t>(n), ' ');
  if (n > 0) MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, first, comm_);
  fail(text);
}

void AtomicH5File::fail(const std::string& hdf5_message) {
  // Rank 0 asks the file system why, while the temporary file still shows how far it got.
  std::string reason;
  int previous = 0;
  if (rank_ == 0) {
    reason = diagnose_write_failure(temporary_path_, directory_of(fs::path(path_)).string());
    std::error_code ec;
    previous = fs::exists(path_, ec) ? 1 : 0;
  }
  bcast_string(comm_, reason);
  MPI_Bcast(&previous, 1, MPI_INT, 0, comm_);
  // Give the file up: every rank is here, so the collective close cannot strand anyone. The
  // close must succeed: when H5Fclose fails, HDF5 1.10 frees the file but keeps its
  // identifier, and closing that again at MPI_Finalize crashes. Closing writes the cached
  // metadata, so first rank 0 frees the space the temporary file holds (its contents are
  // lost anyway; the metadata then lands in a sparse file) and every rank lifts its file
  // size limit (ulimit -f) for the close.
  failed_ = true;
  if (file_.valid()) {
    if (rank_ == 0) (void)::truncate(temporary_path_.c_str(), 0);
    MPI_Barrier(comm_);
    const LiftedFileSizeLimit lifted;
    H5ErrorSilencer quiet;
    file_.reset();
    H5Eclear2(H5E_DEFAULT);
  }
  if (rank_ == 0) {
    ::unlink(temporary_path_.c_str());
    fracmfg::detail::unregister_temporary_file(temporary_path_);
  }
  MPI_Barrier(comm_);
  std::string text = "cannot write " + kind_label() + " '" + path_ + "': ";
  text += reason.empty() ? hdf5_message : reason;
  text += "; the incomplete file was removed";
  if (previous != 0) {
    text += file_kind_ == "checkpoint" ? ", the previous checkpoint is unchanged"
                                       : ", the existing file is unchanged";
  }
  throw WriteError(text);
}

void AtomicH5File::commit(const std::function<void()>& after_rename) {
  require_open("commit");
  // 1. Flush, then close on every rank (collective: the metadata and the MPI-IO file). A
  //    failed write is often reported only here, so both results count. A failed flush
  //    gives the file up (fail() closes it safely); the close then has nothing left to
  //    write. write() agrees, which doubles as the barrier: no rank is still writing when
  //    rank 0 renames.
  write([&] {
    check_status(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), "cannot flush '" + path_ + "'");
  });
  write([&] {
    if (!file_.reset()) throw_h5("cannot close '" + path_ + "'");
  });
  // 2. Rank 0 checks that the closed file is a whole HDF5 file (a write that came up short
  //    leaves it shorter than HDF5's end of file, which H5Fopen refuses), makes the data
  //    durable, then publishes it under the final name; rename() replaces an older file
  //    atomically, so readers see the old or the new file, whole.
  int kind = 0;
  std::string message;
  if (rank_ == 0) {
    try {
      {
        H5ErrorSilencer quiet;
        H5File check(H5Fopen(temporary_path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
        if (!check.valid()) throw_h5("the closed file '" + temporary_path_ + "' is incomplete");
        if (!check.reset()) throw_h5("cannot reopen '" + temporary_path_ + "'");
      }
      fsync_path(temporary_path_, false);
      require_replaceable(path_);  // never a device node, FIFO or directory
      if (std::rename(temporary_path_.c_str(), path_.c_str()) != 0) {
        throw IoError("cannot rename '" + temporary_path_ + "' to '" + path_ +
                      "': " + std::strerror(errno));
      }
      fracmfg::detail::unregister_temporary_file(temporary_path_);
    } catch (const std::exception& e) {
      message = e.what();
      kind = 2;
    }
  }
  settle(kind, message);
  committed_ = true;
  agree(comm_, [&] {
    if (rank_ == 0) fsync_path(directory_of(fs::path(path_)).string(), true);
  });
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
