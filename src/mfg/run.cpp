#include "fracmfg/mfg/run.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/memory_check.hpp"
#include "core/text.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "fracmfg/io/restart_source.hpp"
#include "fracmfg/mfg/output_size.hpp"

namespace fracmfg::mfg {

namespace {

// Runs fn and turns an io::WriteError (thrown by every rank of the file's communicator, here
// the run's, together) into one collective error: one line from rank 0, exit code io on every
// rank, no abort.
template <class Fn>
void shared_write_errors(Fn&& fn) {
  try {
    fn();
  } catch (const io::WriteError& e) {
    throw core::CollectiveError(e.what(), ExitCode::io, 0);
  }
}

// A lower bound of the bytes one rank holds during the solve: the iterate and the sweep's
// result (u and m at every time level), Anderson's history of such states, and the
// particles' positions. Matrices, factorisations and Krylov spaces come on top.
std::uint64_t solve_bytes(const io::MfgConfig& config, MPI_Comm comm) {
  const std::uint64_t local = core::per_rank(comm, core::grid_points(config.grid.points));
  const auto levels = static_cast<std::uint64_t>(std::max(config.time.steps, 1)) + 1;
  const std::uint64_t state = 2 * levels * local * sizeof(double);
  const auto depth = static_cast<std::uint64_t>(std::max(config.iteration.anderson, 0));
  std::uint64_t bytes = (2 + (depth > 0 ? 2 + 2 * depth : 0)) * state;
  if (config.fokker_planck.method == io::MfgConfig::FokkerPlanck::Method::particles) {
    const auto particles =
        static_cast<std::uint64_t>(std::max<std::int64_t>(config.fokker_planck.particles, 0));
    bytes += core::per_rank(comm, particles) * config.grid.points.size() * sizeof(double);
  }
  return bytes;
}

std::string describe(const io::MfgConfig& config) {
  return "the mfg solve (grid " + detail::format_extents(config.grid.points) + ", " +
         std::to_string(config.time.steps) + " steps)";
}

}  // namespace

MfgRunOptions mfg_run_options_from_petsc(MPI_Comm comm, const io::Deck& /*deck*/) {
  const io::RestartSource source = io::restart_source(comm, "-mfg_restart");
  MfgRunOptions o;
  o.restart = source.path;
  o.restart_origin = source.origin;
  return o;
}

MfgRunSummary run_mfg_deck(MPI_Comm comm, const io::Deck& deck, exec::Selector* selector,
                           const core::Logger& log, const MfgRunOptions& options) {
  const io::MfgConfig config = deck.mfg();
  io::OutputConfig output = deck.output();
  if (!options.output_file.empty()) output.file = options.output_file;
  MfgRunSummary summary;
  summary.file = output.file;
  // 1. A bad output path or checkpoint, or a file system without room for them, fails now,
  //    not after the solve.
  const io::OutputBytes bytes = mfg_output_bytes(config, output);
  std::vector<io::OutputSpace> files = {{output.file, bytes.results}};
  if (output.checkpoint_every > 0) files.push_back({output.checkpoint_file, bytes.checkpoints});
  core::collective(comm, [&] { io::H5Writer::check_output_paths(comm, files); });
  // ... and so does a solve larger than the memory the ranks have.
  core::check_memory(comm, solve_bytes(config, comm), describe(config));
  const io::RestartSource restart{options.restart, options.restart_origin.empty()
                                                       ? std::string("restart")
                                                       : options.restart_origin};
  io::check_checkpoint(comm, restart, "mfg");
  io::check_restart_keeps_outputs(comm, restart, output);
  // 2. Build. From here on a stop signal ends the run after the current iteration, with a
  //    checkpoint, instead of killing it.
  Solver solver(comm, problem_from_config(config), selector, log);
  const io::ExecutionConfig::Balance& balance = deck.execution().balance;
  core::BalanceOptions bo;
  bo.enabled = balance.grid;
  bo.interval = balance.interval;
  bo.threshold = balance.threshold;
  bo.patience = balance.patience;
  solver.set_balance(bo);
  core::InterruptGuard interrupts;
  if (!restart.empty()) solver.restart(restart.path);
  summary.first_iteration = solver.iterations();
  // 3. Solve. A checkpoint that cannot be written (disk full) is an io::WriteError, thrown by
  //    every rank together: it ends the run with one message (exit code io); the previous
  //    checkpoint stays as it was.
  shared_write_errors([&] {
    summary.result = solver.solve({output.checkpoint_file, output.checkpoint_every});
  });
  // 4. Write.
  shared_write_errors([&] {
    io::H5Writer out(comm, output.file, {"mfg", deck.text(), deck.resolved_yaml()});
    solver.write(out, output.every);
    out.commit();
  });
  log.info("mfg: results written to ", output.file);
  summary.outflow = solver.outflow();
  if (solver.model().grid().has_exit()) {
    const int nt = solver.steps();
    const double left = summary.outflow.back();
    const double inside = solver.model().mass(solver.m(nt));
    log.info("mfg: mass that left through the exits by t = ", solver.model().time(nt), ": ", left,
             " (in the domain: ", inside, ")");
  }
  // 5. Report.
  const SolveResult& result = summary.result;
  if (!result.converged) {
    // Three significant digits: std::to_string would print a tolerance of 1e-8 as 0.000000.
    std::ostringstream os;
    os.precision(3);
    os << "mfg: no convergence in " << result.iterations << " iterations (relative change of u "
       << result.change_u << ", of m " << result.change_m << ", tolerance "
       << config.iteration.tolerance << "); " << result.advice << "; results written to "
       << output.file;
    throw core::CollectiveError(os.str(), ExitCode::numerical, 0);
  }
  return summary;
}

}  // namespace fracmfg::mfg
