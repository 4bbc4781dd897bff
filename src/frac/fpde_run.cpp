#include "fracmfg/frac/fpde_run.hpp"

#include <petscsys.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "core/memory_check.hpp"
#include "core/text.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/interrupt.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/core/petsc_options.hpp"
#include "fracmfg/core/progress.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "fracmfg/io/restart_source.hpp"

namespace fracmfg::frac {

FpdeRunOptions fpde_run_options_from_petsc(MPI_Comm comm, const io::Deck& deck,
                                           const std::string& prefix) {
  FpdeRunOptions o;
  o.prefix = prefix;
  const io::RestartSource source =
      io::restart_source(comm, "-" + prefix + "restart", deck.output().checkpoint_file);
  o.restart = source.path;
  o.restart_origin = source.origin;
  // Registered, so that -help lists it (-<prefix>restart is io::restart_source's).
  core::collective(comm, [&] {
    o.stop_at = core::option_int(
        comm, prefix, "-stop_at",
        {"fracmfg fpde run options", "stop after this step, writing a checkpoint"}, -1);
  });
  return o;
}

namespace {

FpdeRunSummary run_checked_deck(MPI_Comm comm, const io::Deck& deck, const core::Logger& log,
                                const FpdeRunOptions& options) {
  const io::FpdeConfig config = deck.fpde();
  io::OutputConfig output = deck.output();
  if (!options.output_file.empty()) output.file = options.output_file;
  FpdeRunSummary summary;
  summary.file = output.file;

  // 1. Checks first, each once: a bad input fails in the first second, not after the solve.
  //    The checkpoint to resume from (readable, of an fpde run, not one of the outputs), then
  //    the output paths and the room for the results and checkpoints.
  const io::RestartSource restart{options.restart, options.restart_origin.empty()
                                                       ? std::string("restart")
                                                       : options.restart_origin};
  io::check_checkpoint(comm, restart, "fpde");
  io::check_restart_keeps_outputs(comm, restart, output);
  const io::OutputBytes bytes = fpde_output_bytes(config, output, options.stop_at);
  std::vector<io::OutputSpace> files = {{output.file, bytes.results}};
  if (bytes.checkpoints > 0) files.push_back({output.checkpoint_file, bytes.checkpoints});
  core::collective(comm, [&] { io::H5Writer::check_output_paths(comm, files); });
  //    And the memory the solve holds: a lower bound of one rank's arrays (the solution,
  //    its update and right-hand side; the direct L1 history keeps every time level).
  {
    const std::uint64_t local = core::per_rank(comm, core::grid_points(config.grid.points));
    std::uint64_t levels = 3;
    if (config.type == io::FpdeConfig::Type::time_fractional &&
        config.history.method == io::FpdeConfig::History::Method::direct) {
      levels += static_cast<std::uint64_t>(std::max(config.time.steps, 1)) + 1;
    }
    core::check_memory(comm, levels * local * sizeof(double),
                       "the fpde solve (grid " + detail::format_extents(config.grid.points) + ", " +
                           std::to_string(config.time.steps) + " steps)");
  }

  // 2. The solver, and the state of a previous run.
  FpdeSolverOptions so;
  so.prefix = options.prefix;
  so.log = log;
  so.selector = options.selector;
  so.progress_interval = options.progress_interval >= 0.0
                             ? options.progress_interval
                             : core::progress_interval_from_environment(log);
  const io::ExecutionConfig::Balance& balance = deck.execution().balance;
  so.balance.enabled = balance.grid;
  so.balance.interval = balance.interval;
  so.balance.threshold = balance.threshold;
  so.balance.patience = balance.patience;
  std::optional<FpdeSolver> solver;
  core::collective(comm, [&] { solver.emplace(comm, fpde_problem_from_config(config), so); });
  if (!options.restart.empty()) {
    core::collective(comm, [&] {
      try {
        solver->restart(options.restart);
      } catch (const IoError&) {
        throw;
      } catch (const Error& e) {
        // A checkpoint of another problem (type, order, grid, steps): the file does not fit
        // this deck, which is an input error of the run, not a failure of the solver.
        if (e.exit_code() != ExitCode::failure) throw;
        throw IoError(std::string("cannot resume: ") + e.what());
      }
    });
    log.info("fpde: continuing from ", options.restart, " at step ", solver->step(),
             " (t = ", solver->time(), ")");
  }
  summary.first_step = solver->step();
  const L1History* hist = solver->history();
  log.info("fpde: ", io::to_string(config.type), " order ", config.order, ", ", config.dimension(),
           "D grid ", solver->grid().points(0),
           config.dimension() == 2 ? " x " + std::to_string(solver->grid().points(1)) : "", ", ",
           solver->steps(), " steps to t = ", config.time.horizon,
           hist ? (", history " + std::string(io::to_string(config.history.method)) +
                   (hist->soe() ? " with " + std::to_string(hist->soe()->size()) + " exponentials"
                                : std::string()))
                : std::string());

  // 3. The output file and the first field.
  io::H5WriterOptions h5;
  h5.problem = "fpde";
  h5.deck = deck.text();
  h5.resolved_deck = deck.resolved_yaml();
  if (!options.restart.empty()) {
    h5.continue_existing = true;
    h5.continue_at_step = solver->step();
  }
  std::unique_ptr<io::H5Writer> out;
  core::collective(comm, [&] { out = std::make_unique<io::H5Writer>(comm, summary.file, h5); });
  if (!options.restart.empty()) {
    log.info("fpde: ", out->continued()
                           ? "continuing " + summary.file + " (levels before step " +
                                 std::to_string(solver->step()) + " kept)"
                           : "no " + summary.file + " to continue; a new file starts at step " +
                                 std::to_string(solver->step()));
  }
  out->set_attribute_string("/", "fpde_type", io::to_string(config.type));
  out->set_attribute_double("/", "order", config.order);
  if (hist) {
    out->set_attribute_string("/", "history_method", io::to_string(config.history.method));
    out->set_attribute_int64("/", "soe_terms",
                             hist->soe() ? static_cast<std::int64_t>(hist->soe()->size()) : 0);
  }
  const int every = std::max(1, output.every);
  {
    const std::int64_t left = solver->steps() - solver->step();
    out->define_field("u", {solver->grid().geometry(), {"u"}, left / every + 2});
  }
  auto write = [&](const FpdeSolver& s) {
    out->write_field("u", s.dm(), s.solution(), s.step(), s.time());
    ++summary.outputs;
  };
  // The first field: the file's first level, or a level of the output schedule. A stopped
  // run's last level, off the schedule, is not carried into the file that continues it
  // (which then ends with the uninterrupted run's levels).
  if (out->field_levels("u") == 0 || solver->step() % every == 0 || solver->done()) {
    write(*solver);
  }

  // 4. The time loop (FpdeSolver::solve: progress lines, checkpoints, stop requests). While
  //    it runs, SIGUSR1/SIGTERM/SIGINT ask for a checkpoint and a clean stop instead of
  //    ending the process; the fields written so far are committed.
  core::InterruptGuard interrupts;
  const std::int64_t last =
      options.stop_at >= 0 ? std::min(options.stop_at, solver->steps()) : solver->steps();
  const bool checkpoints_on = output.checkpoint_every > 0 || options.stop_at >= 0;
  const core::CheckpointOptions ck{checkpoints_on ? output.checkpoint_file : std::string(),
                                   output.checkpoint_every};
  try {
    const FpdeSolveResult r = solver->solve(ck, last, [&](const FpdeSolver& s) {
      if (s.step() % every == 0 || s.done() || s.step() == last) write(s);
    });
    summary.checkpoint = r.checkpoint;
    summary.checkpoints = r.checkpoints;
  } catch (const core::Interrupted& stop) {
    core::collective(comm, [&] { out->commit(); });
    log.info("fpde: stopped by a signal at step ", stop.step(), "; wrote ", summary.outputs,
             " fields to ", summary.file);
    throw;
  }
  summary.last_step = solver->step();
  summary.stats = solver->statistics();
  hist = solver->history();  // a re-split of the grid builds the history again

  // 5. Commit and report.
  core::collective(comm, [&] { out->commit(); });
  const FpdeStatistics& st = summary.stats;
  log.info("fpde: steps ", summary.first_step, "..", summary.last_step, " in ", st.total_seconds,
           " s (solve ", st.solve_seconds, " s, history ", st.history_seconds, " s), ",
           st.linear_iterations, " linear iterations",
           st.nonlinear_iterations > 0
               ? ", " + std::to_string(st.nonlinear_iterations) + " Newton iterations"
               : std::string(),
           hist ? ", history " + std::to_string(hist->stored_bytes() / 1024) + " KiB per rank"
                : std::string(),
           st.resplits > 0 ? ", " + std::to_string(st.resplits) + " grid re-splits (" +
                                 std::to_string(st.resplit_seconds) + " s)"
                           : std::string(),
           "; wrote ", summary.outputs, " fields to ", summary.file,
           summary.checkpoint.empty() ? std::string() : ", checkpoint " + summary.checkpoint);
  return summary;
}

}  // namespace

FpdeRunSummary run_fpde_deck(MPI_Comm comm, const io::Deck& deck, const core::Logger& log,
                             const FpdeRunOptions& options) {
  try {
    return run_checked_deck(comm, deck, log, options);
  } catch (const io::WriteError& e) {
    // Thrown by every rank together (a field or checkpoint that could not be written, the
    // temporary file removed): one message from rank 0 and exit code io, no abort.
    throw core::CollectiveError(e.what(), ExitCode::io, 0);
  }
}

}  // namespace fracmfg::frac
