#include "fracmfg/core/guarded_main.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/petsc_error_handler.hpp"
#include "core/temporary_files.hpp"
#include "fracmfg/core/interrupt.hpp"

namespace fracmfg::core {

namespace {
ExitCode code_of(const std::exception& e) {
  if (const auto* fe = dynamic_cast<const Error*>(&e)) return fe->exit_code();
  return ExitCode::failure;
}

// The communicator that an allocation failure ends (process-wide by nature, like the
// new-handler itself): set by guarded_main for its lifetime.
MPI_Comm oom_comm = MPI_COMM_NULL;

void new_handler() {
  abort_out_of_memory(oom_comm, "a C++ allocation (operator new) failed");
}

void petsc_out_of_memory(const char* detail) {
  char text[512];
  std::snprintf(text, sizeof(text), "PETSc's malloc failed (%s)", detail);
  abort_out_of_memory(oom_comm, text);
}

// Installs the out-of-memory policy for guarded_main's lifetime, and restores what was
// there before.
class OutOfMemoryPolicy {
 public:
  explicit OutOfMemoryPolicy(MPI_Comm comm) : previous_(std::set_new_handler(&new_handler)) {
    oom_comm = comm;
    detail::set_petsc_out_of_memory_handler(&petsc_out_of_memory);
  }
  OutOfMemoryPolicy(const OutOfMemoryPolicy&) = delete;
  OutOfMemoryPolicy& operator=(const OutOfMemoryPolicy&) = delete;
  ~OutOfMemoryPolicy() {
    detail::set_petsc_out_of_memory_handler(nullptr);
    std::set_new_handler(previous_);
    oom_comm = MPI_COMM_NULL;
  }

 private:
  std::new_handler previous_;
};
}  // namespace

void abort_out_of_memory(MPI_Comm comm, const char* detail) noexcept {
  int rank = 0;
  int up = 0;
  MPI_Initialized(&up);
  if (up) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // No allocation on this path: the message is formatted into a fixed buffer and written
  // with write(2).
  char text[1024];
  const int n = std::snprintf(
      text, sizeof(text),
      "fracmfg: error on rank %d: out of memory: %s; the job is ended on every rank (see "
      "'A run that runs out of memory' in docs/user_guide.md)\n",
      rank, detail != nullptr ? detail : "an allocation failed");
  if (n > 0) {
    const auto len =
        static_cast<std::size_t>(n) < sizeof(text) ? static_cast<std::size_t>(n) : sizeof(text) - 1;
    [[maybe_unused]] const ssize_t w = ::write(2, text, len);
  }
  if (up)
    MPI_Abort(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, static_cast<int>(ExitCode::failure));
  std::_Exit(static_cast<int>(ExitCode::failure));
}

void collective(MPI_Comm comm, const std::function<void()>& fn) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string message;
  int code = 0;
  try {
    fn();
  } catch (const std::bad_alloc&) {
    // Another rank may be waiting inside fn in a collective call that this one will never
    // reach: an agreement here could wait for ever.
    abort_out_of_memory(comm, "an allocation failed (std::bad_alloc)");
  } catch (const std::exception& e) {
    message = e.what();
    code = static_cast<int>(code_of(e));
    if (code == 0) code = static_cast<int>(ExitCode::failure);
  } catch (...) {
    message = "unknown exception";
    code = static_cast<int>(ExitCode::failure);
  }
  // Agree on the lowest failing rank, then broadcast its message and code.
  int mine = code != 0 ? rank : size;
  int first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  int len = static_cast<int>(message.size());
  int payload[2] = {code, len};
  MPI_Bcast(payload, 2, MPI_INT, first, comm);
  std::vector<char> buf(static_cast<size_t>(payload[1]));
  if (rank == first) buf.assign(message.begin(), message.end());
  if (payload[1] > 0) MPI_Bcast(buf.data(), payload[1], MPI_CHAR, first, comm);
  throw CollectiveError(std::string(buf.begin(), buf.end()), static_cast<ExitCode>(payload[0]),
                        first);
}

int guarded_main(int argc, char** argv, const std::function<int(Environment&)>& body,
                 EnvironmentOptions options) {
  int rank = 0;
  try {
    Environment env(&argc, &argv, options);
    rank = env.rank();
    const OutOfMemoryPolicy out_of_memory(env.comm());
    const detail::FatalSignalCleanup remove_temporaries_on_signal;
    try {
      return body(env);
    } catch (const Interrupted& e) {
      // Thrown on every rank once the checkpoint is on disk: a clean, resumable stop.
      if (env.rank() == 0) std::fprintf(stderr, "fracmfg: %s\n", e.what());
      return static_cast<int>(e.exit_code());
    } catch (const CollectiveError& e) {
      // Every rank has this error: rank 0 reports it, every rank leaves normally.
      if (env.rank() == 0) std::fprintf(stderr, "fracmfg: error: %s\n", e.what());
      return static_cast<int>(e.exit_code());
    } catch (const std::exception& e) {
      // Seen by this rank, perhaps by this rank only: report and end the whole job.
      std::fprintf(stderr, "fracmfg: error on rank %d: %s\n", env.rank(), e.what());
      std::fflush(stderr);
      if (env.size() > 1) env.abort(static_cast<int>(code_of(e)));
      return static_cast<int>(code_of(e));
    }
  } catch (const std::exception& e) {
    // Start-up failed (MPI or PETSc did not initialise): nothing collective is possible.
    std::fprintf(stderr, "fracmfg: error on rank %d: %s\n", rank, e.what());
    return static_cast<int>(code_of(e));
  }
}

}  // namespace fracmfg::core
