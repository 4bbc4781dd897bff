#include "fracmfg/frac/fode_run.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/memory_check.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/frac/fode_deck.hpp"
#include "fracmfg/frac/fode_output.hpp"

namespace fracmfg::frac {

io::OutputBytes fode_output_bytes(const io::FodeConfig& config, const io::OutputConfig& output) {
  const auto components = static_cast<std::uint64_t>(std::max<std::size_t>(config.dimension(), 1));
  const auto steps = static_cast<std::uint64_t>(std::max(config.steps, 1));
  const auto every = static_cast<std::uint64_t>(std::max(output.every, 1));
  const std::uint64_t written = steps / every + 1 + (steps % every != 0 ? 1 : 0);
  io::OutputBytes out;
  // The series of y, the step index (/time, /step) and /order.
  out.results = io::series_bytes(written, components) + written * 2 * sizeof(double) +
                components * sizeof(double) + 3 * io::kH5DatasetOverhead + io::kH5FileOverhead;
  return out;
}

FodeRunSummary run_fode_deck(MPI_Comm comm, const io::Deck& deck, exec::Selector* selector,
                             const core::Logger& log, const std::string& output_file,
                             double progress_interval) {
  // 1. The problem from the deck.
  const io::FodeConfig config = deck.fode();
  const io::OutputConfig output = deck.output();
  const std::string file = output_file.empty() ? output.file : output_file;
  // A bad path or a file system without room for the results fails now, not after the solve.
  core::collective(comm, [&] {
    io::H5Writer::check_output_path(comm, file, fode_output_bytes(config, output).results);
  });
  // ... and so does a solve larger than memory: a lower bound of one rank's arrays, the
  // right-hand side of every step of its components (the history sums read them all) and,
  // for each distinct order, the history's weights and start corrections at every step
  // (every rank holds them all).
  {
    const auto components =
        static_cast<std::uint64_t>(std::max<std::size_t>(config.dimension(), 1));
    std::vector<double> orders = config.multi_term() ? config.terms.order : config.order;
    std::sort(orders.begin(), orders.end());
    orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
    const auto groups = static_cast<std::uint64_t>(std::max<std::size_t>(orders.size(), 1));
    const auto steps = static_cast<std::uint64_t>(std::max(config.steps, 1)) + 1;
    core::check_memory(comm,
                       steps * (core::per_rank(comm, components) + 3 * groups) * sizeof(double),
                       "the fode solve (" + std::to_string(components) + " component(s), " +
                           std::to_string(config.steps) + " steps)");
  }
  // A system, or one multi-term equation solved as the reduced system of MultiTermSolver.
  std::optional<FodeSolver> solver;
  std::optional<MultiTermSolver> multi;
  FodeOptions options;
  if (config.multi_term()) {
    MultiTermSetup setup = multi_term_setup(config);
    setup.options.progress_interval = progress_interval;
    options = setup.options;
    core::collective(
        comm, [&] { multi.emplace(comm, std::move(setup.problem), setup.options, selector, log); });
  } else {
    FodeSetup setup = fode_setup(comm, config);
    setup.options.progress_interval = progress_interval;
    options = setup.options;
    core::collective(comm, [&] {
      solver.emplace(comm, std::move(setup.problem), std::move(setup.rhs), setup.options, selector,
                     log);
    });
  }
  const FodeSolver& system = multi ? multi->system() : *solver;
  if (multi) {
    log.info("fode: multi-term equation of ", config.terms.order.size(), " terms (highest order ",
             multi->highest_order(), ", reduced system of ", system.global_size(), " components), ",
             config.steps, " steps of ", system.step_size(), " to t = ", config.horizon,
             ", method ", to_string(options.method), ", history ", to_string(options.history),
             " (base block ", system.block_size(), ")");
  } else {
    log.info("fode: ", config.dimension(), " component(s), ", config.steps, " steps of ",
             system.step_size(), " to t = ", config.horizon, ", method ", to_string(options.method),
             ", history ", to_string(options.history), " (base block ", system.block_size(), ")");
  }
  if (config.grading > 1.0) {
    log.info("fode: graded mesh t_n = T (n/N)^", config.grading,
             "; the history is summed directly, O(N^2)");
  }

  // 2. The output file, before the solve so that a bad path fails at once.
  FodeRunSummary summary;
  summary.file = file;
  io::H5WriterOptions h5;
  h5.problem = "fode";
  h5.deck = deck.text();
  h5.resolved_deck = deck.resolved_yaml();
  std::unique_ptr<FodeOutput> out;
  const std::int64_t every = std::max(output.every, 1);
  const std::int64_t levels = config.steps / every + 1 + (config.steps % every != 0 ? 1 : 0);
  const FodeSeries series = multi ? fode_series(*multi) : fode_series(*solver);
  core::collective(comm,
                   [&] { out = std::make_unique<FodeOutput>(series, summary.file, h5, levels); });

  // 3. Solve, writing every output.every steps (the observer runs inside core::collective).
  const FodeSolver::Observer write = [&](const FodeStepView& v) { out->write(v); };
  summary.stats = multi ? multi->solve(write, output.every) : solver->solve(write, output.every);
  summary.outputs = out->written();

  // 4. Commit and report.
  core::collective(comm, [&] { out->commit(); });
  std::string method_note;
  if (options.method == FodeMethod::trapezoidal) {
    method_note = ", " + std::to_string(summary.stats.newton_iterations) + " Newton iterations";
  } else {
    char text[64];
    std::snprintf(text, sizeof(text), ", largest corrector defect %.2g",
                  summary.stats.corrector_defect);
    method_note = text;
  }
  log.info("fode: ", summary.stats.steps, " steps in ", summary.stats.seconds, " s (history ",
           summary.stats.history_seconds, " s, ", summary.stats.fft_squares, " FFT and ",
           summary.stats.direct_squares, " direct squares, ", summary.stats.rhs_evaluations,
           " right-hand side evaluations", method_note, "); wrote ", summary.outputs, " steps to ",
           summary.file);
  return summary;
}

}  // namespace fracmfg::frac
