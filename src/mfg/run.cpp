#include "fracmfg/mfg/run.hpp"

#include <sstream>
#include <string>
#include <vector>

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
