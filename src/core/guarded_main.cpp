#include "fracmfg/core/guarded_main.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "fracmfg/core/interrupt.hpp"

namespace fracmfg::core {

namespace {
ExitCode code_of(const std::exception& e) {
  if (const auto* fe = dynamic_cast<const Error*>(&e)) return fe->exit_code();
  return ExitCode::failure;
}
}  // namespace

void collective(MPI_Comm comm, const std::function<void()>& fn) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string message;
  int code = 0;
  try {
    fn();
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
