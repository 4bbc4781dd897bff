// fracmfg: the command-line driver. Sample runs (CI runs these lines):
//
//   fracmfg --version
//   fracmfg info
//   mpiexec -n 2 fracmfg calibrate --sizes 1e2:1e5
//   fracmfg validate inputs/crowd_1d.yaml
//   fracmfg validate --reference > docs/deck_reference.md
//   mpiexec -n 2 fracmfg run inputs/fode_relaxation-ci.yaml
//   mpiexec -n 2 fracmfg run inputs/crowd_1d-ci.yaml -- -ksp_monitor
//
// A run reads as numbered steps: 1. read and check the deck (every rank, collectively),
// 2. configure logging and PETSc from it, 3. pick the solver for the problem type,
// 4. build, solve and write (inside the solver), 5. report.
//
// Exit codes: 0 success, 1 other error, 2 bad command line or deck, 3 not available in this
// build, 4 numerical failure (divergence, NaN), 5 file error, 6 PETSc error, 75 stopped by
// a signal after writing a checkpoint (resume from it).
#include <CLI/CLI.hpp>
#include <petscsys.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/petsc_option_rules.hpp"
#include "driver_calibrate.hpp"
#include "driver_info.hpp"
#include "fracmfg/config.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/huge_pages.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/exec/calibrate.hpp"
#include "fracmfg/io/deck.hpp"
#include "fracmfg/io/schema.hpp"
#include "runners.hpp"

namespace {

using fracmfg::core::Environment;

/// Solvers compiled into this build, by deck problem type (drivers/runners.hpp).
std::map<std::string, fracmfg::driver::Runner> solvers() {
  std::map<std::string, fracmfg::driver::Runner> available;
  available["mfg"] = &fracmfg::driver::run_mfg;
  available["fode"] = &fracmfg::driver::run_fode;
  available["fpde"] = &fracmfg::driver::run_fpde;
  return available;
}

/// The rank's selector from the deck's `execution` section (FRACMFG_* variables override).
fracmfg::exec::SelectorConfig selector_config(const fracmfg::io::ExecutionConfig& e) {
  using B = fracmfg::io::ExecutionConfig::Backend;
  fracmfg::exec::SelectorConfig c;
  c.backend = e.backend == B::cpu    ? fracmfg::exec::BackendChoice::cpu
              : e.backend == B::cuda ? fracmfg::exec::BackendChoice::cuda
                                     : fracmfg::exec::BackendChoice::automatic;
  c.learn = e.learn;
  c.max_ranks_per_gpu = e.max_ranks_per_gpu;
  return c;
}

/// Rank in MPI_COMM_WORLD before MPI is initialised (from the launcher's environment), so
/// that command-line errors are printed once.
int launcher_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var); v != nullptr) return std::atoi(v);
  }
  return 0;
}

// Every environment variable fracmfg reads, one line each (docs/user_guide.md has the same
// table).
const char* const exit_code_help =
    "Exit codes: 0 success, 1 other error, 2 bad command line or deck, 3 not available in "
    "this build,\n            4 numerical failure, 5 file error, 6 PETSc error, 75 stopped by a "
    "signal\n"
    "            after writing a checkpoint (resume from it).\n"
    "Environment:\n"
    "  FRACMFG_RESTART=<checkpoint>    resume an mfg or fpde run from its checkpoint (same as\n"
    "                                  -mfg_restart / -fpde_restart; a fode deck refuses it)\n"
    "  FRACMFG_PROGRESS_SECONDS=<s>    seconds between progress lines at info level (default\n"
    "                                  10, 0: every iteration or step; a bad value: warning)\n"
    "  FRACMFG_SKIP_SPACE_CHECK=1      skip the free-space check before a solve (a write that\n"
    "                                  then fails still ends the run with exit code 5)\n"
    "  FRACMFG_SKIP_MEMORY_CHECK=1     skip the check that a solve's arrays fit in memory (a rank\n"
    "                                  that then runs out of memory still ends the job)\n"
    "  PETSC_OPTIONS=<options>         PETSc's own; the same rules as options after --\n"
    "  FRACMFG_LOG_LEVEL=error|warn|info|debug   overrides the deck's logging.level\n"
    "  FRACMFG_LOG_RANKS=all|0         all: every rank writes log lines (tagged with the rank)\n"
    "  FRACMFG_BACKEND=cpu|cuda|auto   overrides the deck's execution.backend\n"
    "  FRACMFG_DISABLE_GPU=1           never use a GPU\n"
    "  FRACMFG_PERF_DIR=<dir>          performance model directory (default\n"
    "                                  $XDG_CACHE_HOME/fracmfg, else ~/.cache/fracmfg)\n"
    "  FRACMFG_HUGE_PAGES=0            do not re-execute run, calibrate and info with\n"
    "                                  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (huge pages)\n"
    "  KOKKOS_NUM_THREADS=<n>          host threads of Kokkos (when fracmfg starts Kokkos)\n"
    "  CUDA_VISIBLE_DEVICES=<list>     the GPUs the ranks may use\n"
    "  SLURM_JOB_ID                    (set by Slurm) part of temporary file names\n"
    "  OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID   (set by the launcher) the\n"
    "                                  rank, so that command-line errors are printed once\n"
    "Signals: SIGUSR1, SIGTERM or SIGINT during an mfg or fpde solve: the run finishes its\n"
    "  current outer iteration (mfg) or time step (fpde), writes a checkpoint and exits with 75.";

fracmfg::io::Deck load_deck(Environment& env, const std::string& path) {
  std::optional<fracmfg::io::Deck> deck;
  fracmfg::core::collective(env.comm(), [&] { deck = fracmfg::io::Deck::load(env.comm(), path); });
  return *deck;
}

int cmd_validate(Environment& env, const std::string& path, bool print_resolved) {
  const auto deck = load_deck(env, path);
  if (env.rank() == 0) {
    if (print_resolved) {
      std::printf("%s", deck.resolved_yaml().c_str());
    } else {
      std::printf("%s: valid %s deck\n", path.c_str(), fracmfg::io::to_string(deck.problem()));
    }
  }
  return 0;
}

int cmd_run(Environment& env, const std::string& path) {
  // 1. Read and check the deck on every rank.
  const auto deck = load_deck(env, path);
  // 2. Logging and PETSc options from the deck (the environment variables still win).
  const auto logging = deck.logging();
  env.log().set_level(logging.level);
  env.log().set_all_ranks(logging.all_ranks);
  env.log().apply_environment();
  const std::string problem = fracmfg::io::to_string(deck.problem());
  env.log().info("deck ", path, " (", problem, "), ", env.size(), " rank(s)");
  env.log().info("resolved deck:\n", deck.resolved_yaml());
  if (!deck.petsc_options().empty()) {
    fracmfg::core::collective(env.comm(), [&] {
      FRACMFG_PETSC_CHECK(PetscOptionsInsertString(nullptr, deck.petsc_options().c_str()));
      // PETSc starts its event log in PetscInitialize when -log_view is given there; asked
      // for by the deck, the log is started here, so PetscFinalize has a log to print.
      for (const auto& o : fracmfg::core::split_petsc_options(deck.petsc_options())) {
        if (o.name == "-log_view") {
          FRACMFG_PETSC_CHECK(PetscLogDefaultBegin());
          break;
        }
      }
    });
  }
  // 3. The solver for this problem type.
  const auto available = solvers();
  const auto it = available.find(problem);
  if (it == available.end()) {
    std::vector<std::string> names;
    for (const auto& [name, runner] : available) names.push_back(name);
    throw fracmfg::core::CollectiveError(
        fracmfg::NotCompiled("problem type " + problem, names).what(),
        fracmfg::ExitCode::not_compiled, 0);
  }
  // 4. Pick each rank's backend placement (hardware probe is collective), build, solve, write.
  const auto execution = deck.execution();
  std::optional<fracmfg::exec::Selector> selector;
  fracmfg::core::collective(env.comm(), [&] {
    selector.emplace(fracmfg::exec::Hardware::probe(env.comm()), selector_config(execution),
                     env.log());
  });
  const int code = it->second(env, deck, *selector);
  // 5. Report: per-rank kernel statistics, and keep what the performance model learned.
  const auto rows = selector->gather_report(env.comm());
  if (execution.report && env.rank() == 0) {
    std::printf("%s", fracmfg::exec::format_report(fracmfg::exec::aggregate_report(rows)).c_str());
  }
  if (execution.learn) selector->save_model();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fracmfg " FRACMFG_VERSION_STRING
               ": MPI-distributed Mean Field Games and fractional ODE/PDE solvers"};
  app.footer(exit_code_help);
  app.set_version_flag("--version", std::string("fracmfg ") + FRACMFG_VERSION_STRING + " (" +
                                        FRACMFG_GIT_REVISION + ", " + FRACMFG_BUILD_TYPE + ")");
  app.require_subcommand(1);

  std::string deck_path;
  std::vector<std::string> petsc_args;
  auto* run = app.add_subcommand("run", "Run the solver a deck describes (under mpiexec or srun)");
  run->add_option("deck", deck_path, "YAML input deck")->required();
  run->add_option("petsc", petsc_args, "PETSc options after --, e.g. -- -ksp_monitor");

  bool print_resolved = false;
  bool reference = false;
  auto* validate = app.add_subcommand("validate", "Check a deck without running anything");
  validate->add_option("deck", deck_path, "YAML input deck");
  validate->add_flag("--resolved", print_resolved, "Print the deck with every default filled in");
  validate->add_flag("--reference", reference,
                     "Print the reference of every deck key (docs/deck_reference.md)");

  auto* info =
      app.add_subcommand("info", "Print build options, ranks and the hardware each rank sees");
  std::string assume_hardware;
  info->add_option("--assume-hardware", assume_hardware,
                   "Describe hardware from a YAML file instead of probing it")
      ->check(CLI::ExistingFile);
  int max_ranks_per_gpu = 4;
  info->add_option("--max-ranks-per-gpu", max_ranks_per_gpu,
                   "Ranks allowed per GPU for the placement shown (deck: "
                   "execution.max_ranks_per_gpu)")
      ->capture_default_str();

  fracmfg::driver::CalibrateArgs calib;
  auto* calibrate = app.add_subcommand(
      "calibrate", "Time the kernels on each rank's backends; store the model runs consult");
  std::string kernel_list;
  for (const auto& name : fracmfg::exec::calibration_kernel_names()) {
    kernel_list += (kernel_list.empty() ? "" : ", ") + name;
  }
  calibrate->footer(
      "Kernels: " + kernel_list +
      ".\nEach rank measures its own backends (cpu; cuda where it has a device) at sizes "
      "log-spaced over --sizes,\nrecords the samples and merges them into its node's "
      "performance file (atomically, under a lock),\nin --output, else FRACMFG_PERF_DIR, else "
      "$XDG_CACHE_HOME/fracmfg or ~/.cache/fracmfg.\nRank 0 prints per file: kernel, backend, "
      "samples, fitted latency, throughput and the crossover n*\nabove which cuda is predicted "
      "faster. Sizes whose inputs do not fit in memory, or beyond the time cap,\nare skipped "
      "with a note.");
  calibrate->add_option("--sizes", calib.sizes, "Work units min:max (log-spaced), e.g. 1e2:1e7")
      ->capture_default_str();
  calibrate->add_option("--per-decade", calib.per_decade, "Sizes per decade")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  calibrate->add_option("--repeats", calib.repeats, "Timed calls per size (after one warm-up)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  calibrate->add_option("--kernels", calib.kernels, "Only these kernels (comma-separated)")
      ->delimiter(',');
  calibrate->add_option("--backend", calib.backend, "Backends to time")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  calibrate->add_option("--output", calib.output,
                        "Performance model directory (default: FRACMFG_PERF_DIR or the user "
                        "cache directory)");
  calibrate
      ->add_option("--max-seconds", calib.max_seconds,
                   "Time cap per kernel and backend on each rank, seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);

  try {
    app.parse(argc, argv);
    if (validate->parsed() && !reference && deck_path.empty()) {
      throw CLI::ValidationError("validate", "a deck file is required (or --reference)");
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    if (launcher_rank() == 0) {
      std::fprintf(stderr, "fracmfg: error: %s\nRun 'fracmfg --help' for usage.\n", e.what());
    }
    return static_cast<int>(fracmfg::ExitCode::usage);
  }

  if (validate->parsed() && reference) {
    std::printf("%s", fracmfg::io::deck_reference_markdown().c_str());
    return 0;
  }

  // Large allocations in huge pages where the kernel gives them on request (see
  // core/huge_pages.hpp): a re-execution with glibc's tunable, before MPI starts.
  if (run->parsed() || calibrate->parsed() || info->parsed()) {
    fracmfg::core::request_huge_pages(argv);
  }

  // PETSc reads its options from the command line after "--" (and PETSC_OPTIONS): the same
  // rule as for a deck's petsc.options (core/petsc_option_rules.hpp), checked before PETSc
  // sees them.
  {
    std::string given;
    for (const auto& a : petsc_args) given += (given.empty() ? "" : " ") + a;
    std::string why = fracmfg::core::first_refused_petsc_option(
        given, fracmfg::core::PetscOptionSource::command_line);
    std::string where = "command line: ";
    if (why.empty()) {
      if (const char* env_options = std::getenv("PETSC_OPTIONS"); env_options != nullptr) {
        why = fracmfg::core::first_refused_petsc_option(
            env_options, fracmfg::core::PetscOptionSource::command_line);
        where = "PETSC_OPTIONS: ";
      }
    }
    if (!why.empty()) {
      if (launcher_rank() == 0)
        std::fprintf(stderr, "fracmfg: error: %s%s\n", where.c_str(), why.c_str());
      return static_cast<int>(fracmfg::ExitCode::usage);
    }
  }
  // PETSc reads its options from the command line after "--".
  std::vector<char*> petsc_argv{argv[0]};
  for (auto& a : petsc_args) petsc_argv.push_back(a.data());
  petsc_argv.push_back(nullptr);
  int petsc_argc = static_cast<int>(petsc_argv.size()) - 1;

  return fracmfg::core::guarded_main(petsc_argc, petsc_argv.data(), [&](Environment& env) {
    if (validate->parsed()) return cmd_validate(env, deck_path, print_resolved);
    if (info->parsed()) return fracmfg::driver::print_info(env, assume_hardware, max_ranks_per_gpu);
    if (calibrate->parsed()) return fracmfg::driver::run_calibrate(env, calib);
    return cmd_run(env, deck_path);
  });
}
