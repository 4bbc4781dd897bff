#pragma once
// exec::Selector: the per-rank CPU/GPU choice for node-local kernel calls.
//
//   exec::Selector sel(exec::Hardware::probe(comm), config, log);   // probe is collective
//   const exec::KernelId kde = sel.kernel("kde");                   // register once
//   exec::Workload w;  w.kernel = kde;  w.elements = n;  w.bytes = ...;
//   sel.run(w, [&] { kde_host(...); },
//              [&] { kde_cuda(...); /* must synchronise before returning */ });
//   sel.save_model();                                  // keep what was learned (optional)
//   log.info("\n", exec::format_report(exec::aggregate_report(sel.gather_report(comm))));
//
// place(w) decides, in this order (the first rule that applies wins; Decision::reason
// names it):
//  1. explicit choice: FRACMFG_DISABLE_GPU=1 (gpu_disabled) or backend cpu (forced_cpu);
//     backend comes from the config (deck `execution.backend`), overridden by
//     FRACMFG_BACKEND; asking for cuda in a build without CUDA throws NotCompiled from the
//     constructor;
//  2. availability: CUDA not compiled (not_compiled), no device for this rank (no_device:
//     no GPU visible, or the rank is beyond max_ranks_per_gpu), or the cuda path of this
//     kernel failed failure_limit times on this rank (cuda_failed);
//  3. memory: Workload::device_bytes above this rank's device budget = free device memory
//     x (1 - memory_margin) / ranks sharing the device -> cpu (memory), or,
//     for a chunkable workload, Decision::chunks = ceil(device_bytes / budget);
//  4. backend cuda -> cuda (forced_cuda); otherwise the performance model: the backend with
//     the smaller predicted time (model). Before a (kernel, backend) has fitted samples its
//     prediction is a roofline estimate from the workload's bytes, flops and transfers
//     (CostPrior);
//  5. exploration (learning on, backend auto): while the backend the model did not pick
//     has fewer than explore_min_samples samples, every explore_period-th call of the
//     kernel tries it; afterwards one call in round(1/exploration) does (exploration).
//
// run(w, host_fn, cuda_fn) places the call, times it (steady clock, or the clock given to
// set_clock), records the time in the statistics and, when learning, in the model. A
// cuda_fn may take the call's `const Decision&`: a chunkable kernel then processes its data
// in Decision::chunks pieces (kernel_workloads.hpp says which kernels are chunkable). A
// cuda_fn must finish its device work (synchronise) before it returns, so that the time
// and any asynchronous error are its own; it reports failure by throwing, by returning
// false (bool) or a non-empty error text (std::string). On failure host_fn runs instead,
// so the result is never lost; the first fallback of a kernel is logged at warn, later
// ones at debug; after failure_limit failures (total, per kernel) cuda is no longer tried
// for that kernel on this rank. Exceptions from host_fn propagate.
//
// Free device memory is read lazily, once, for the rank's own device only (the first
// decision that needs the budget): the hardware probe creates no CUDA context, and reading
// free memory needs one. A probed device that this selector did not make current
// (activate_device false, e.g. `fracmfg info`) is not touched: its total memory stands in.
//
// CUDA resources: the selector owns the rank's kernels::CudaResources (cuFFT plans and the
// cuSPARSE handle, created on first use and reused); kernels called through run() take
// them via cuda_resources() in their options. They are destroyed with the selector, which
// must therefore not outlive the program's main scope (never a global).
//
// A Selector belongs to one rank and is not thread-safe. place() and run() do not allocate
// (except for an error text on a cuda failure) and look nothing up by name.

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/perf_model.hpp"
#include "fracmfg/exec/placement.hpp"
#include "fracmfg/exec/workload.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"

namespace fracmfg::exec {

/// The user's choice: "cpu" | "cuda" | "auto".
enum class BackendChoice : std::uint8_t { cpu, cuda, automatic };
const char* to_string(BackendChoice choice);
/// Exact words "cpu", "cuda", "auto"; nullopt for anything else.
std::optional<BackendChoice> parse_backend_choice(std::string_view text);
/// The valid word text stands for: itself in any case, a common synonym ("gpu" -> "cuda",
/// "host" -> "cpu"), else the nearest word by the project's did-you-mean rule; "" when none
/// is close enough to be a likely typo.
std::string closest_backend_choice(std::string_view text);
/// parse_backend_choice or a UsageError "<origin>: unknown backend 'x' (expected cpu, cuda
/// or auto); did you mean 'cuda'?" (the suggestion only when closest_backend_choice has one).
BackendChoice backend_choice_from_string(std::string_view text, std::string_view origin);
/// The choices this build (or a described machine) accepts: cpu, [cuda,] auto.
std::vector<std::string> available_backends(bool cuda_compiled);

/// Rough machine figures for predictions before measurements exist (replaced by fitted
/// models as samples arrive). Host figures scale with the Kokkos host concurrency.
struct CostPrior {
  double host_latency = 1e-6;              ///< s, one host parallel dispatch
  double host_bandwidth_per_thread = 5e9;  ///< B/s
  double host_bandwidth_max = 5e10;        ///< B/s, the node's memory bandwidth cap
  double host_flops_per_thread = 2e9;      ///< flop/s
  double cuda_latency = 1e-5;              ///< s, launch + synchronisation
  double cuda_bandwidth = 1e12;            ///< B/s, device memory
  double cuda_flops = 5e12;                ///< flop/s (FP64)
  double transfer_latency = 1e-5;          ///< s, once per call with transfers
  double transfer_bandwidth = 1.2e10;      ///< B/s, host<->device
};

struct SelectorConfig {
  BackendChoice backend = BackendChoice::automatic;
  /// Never use a GPU (FRACMFG_DISABLE_GPU=1 sets it).
  bool gpu_disabled = false;
  /// Update the performance model from measured calls.
  bool learn = true;
  /// Try the backend the model did not pick now and then (only with learn).
  bool explore = true;
  int explore_min_samples = 8;     ///< K: samples below which exploration is frequent
  int explore_period = 4;          ///< every this many calls while below K
  double exploration = 1.0 / 256;  ///< fraction of calls exploring after K (0: never)
  /// Fraction of free device memory kept in reserve, in [0, 1).
  double memory_margin = 0.10;
  /// cuda failures of a kernel after which it runs on cpu only (>= 1).
  int failure_limit = 3;
  /// Ranks allowed per GPU (<= 0: no limit); further ranks use cpu.
  int max_ranks_per_gpu = 0;
  /// Performance files directory; empty: PerfModel::default_directory().
  std::string perf_dir;
  /// Load the performance file at construction (save_model() writes it).
  bool persist = true;
  double forgetting = 0.999;  ///< PerfModelOptions::forgetting
  int min_fit_samples = 3;    ///< PerfModelOptions::min_fit_samples
  CostPrior prior;
  /// Apply FRACMFG_BACKEND, FRACMFG_DISABLE_GPU and FRACMFG_PERF_DIR at construction.
  bool use_environment = true;
  /// Make the rank's device current at construction (probed hardware only).
  bool activate_device = true;
};

/// config with FRACMFG_BACKEND (cpu|cuda|auto; a wrong word is a UsageError),
/// FRACMFG_DISABLE_GPU (1/true/yes/on or 0/false/no/off; other values ignored with a
/// warning) and FRACMFG_PERF_DIR applied; environment values win over config values.
SelectorConfig with_environment(SelectorConfig config, const core::Logger& log);

/// Which rule of place() decided (see the header comment).
enum class Reason : std::uint8_t {
  gpu_disabled,
  forced_cpu,
  not_compiled,
  no_device,
  cuda_failed,
  memory,
  forced_cuda,
  model,
  exploration,
};
/// The enumerator's name, e.g. "no_device".
const char* to_string(Reason reason);

struct Decision {
  Backend backend = Backend::cpu;
  Reason reason = Reason::forced_cpu;
  /// > 1: the device budget holds only 1/chunks of the working set (chunkable workloads).
  int chunks = 1;
  /// Predicted seconds of the call on each backend (model or prior); NaN when the backend
  /// cannot run it in this build/rank.
  double predicted_cpu = std::numeric_limits<double>::quiet_NaN();
  double predicted_cuda = std::numeric_limits<double>::quiet_NaN();

  /// A fixed sentence explaining the reason (no allocation).
  const char* text() const;
};
/// "cuda (model: predicted 12.3 us on cuda, 45.6 us on cpu)" and the like.
std::string describe(const Decision& decision);

/// What run() did.
struct RunResult {
  Decision decision;
  Backend ran_on = Backend::cpu;
  bool fell_back = false;  ///< cuda was tried and failed; host_fn produced the result
  double seconds = 0.0;    ///< time of the call that produced the result
};

/// Per (kernel, backend) counters of one rank.
struct BackendStats {
  std::uint64_t calls = 0;     ///< completed calls on this backend
  std::uint64_t failures = 0;  ///< failed cuda attempts (always 0 for cpu)
  double seconds = 0.0;        ///< total time of the completed calls
};

/// One line of a report; rank -1 after aggregate_report().
struct ReportRow {
  int rank = 0;
  std::string kernel;
  Backend backend = Backend::cpu;
  std::uint64_t calls = 0;
  std::uint64_t failures = 0;
  double total_seconds = 0.0;
  double mean_seconds = 0.0;  ///< total_seconds / calls (0 without calls)
};

/// Sums rows of the same (kernel, backend) over ranks.
std::vector<ReportRow> aggregate_report(const std::vector<ReportRow>& rows);
/// A fixed-width table: rank, kernel, backend, calls, failures, total [s], mean [us].
std::string format_report(const std::vector<ReportRow>& rows);

namespace detail {
// Calls a cuda_fn with the decision when it takes one (chunked kernels read
// Decision::chunks), else without arguments.
template <class F>
decltype(auto) invoke_cuda(F& fn, const Decision& decision) {
  if constexpr (std::is_invocable_v<F&, const Decision&>) {
    return fn(decision);
  } else {
    (void)decision;
    return fn();
  }
}

// Runs a cuda_fn; false (with the error text) when it reported failure by its return value.
template <class F>
bool call_cuda(F& fn, const Decision& decision, std::string& error) {
  using R = decltype(invoke_cuda(fn, decision));
  if constexpr (std::is_void_v<R>) {
    invoke_cuda(fn, decision);
    return true;
  } else if constexpr (std::is_same_v<std::decay_t<R>, std::string>) {
    std::decay_t<R> text = invoke_cuda(fn, decision);
    if (text.empty()) return true;
    error = std::move(text);
    return false;
  } else {
    static_assert(std::is_convertible_v<R, bool>,
                  "a cuda_fn returns void, bool (true = success) or std::string (error text)");
    if (static_cast<bool>(invoke_cuda(fn, decision))) return true;
    error = "the cuda path reported failure";
    return false;
  }
}
}  // namespace detail

class Selector {
 public:
  /// Applies the environment (config.use_environment), checks the config (Error for values
  /// out of range), places the rank on a device (placement.hpp, with
  /// config.max_ranks_per_gpu), makes it current (probed hardware, config.activate_device;
  /// a refusal is a warning and the rank uses cpu) and loads the performance file
  /// (config.persist). Throws NotCompiled when backend cuda is asked for and
  /// hardware.cuda_compiled is false. Not collective.
  Selector(Hardware hardware, SelectorConfig config, core::Logger log = {});

  /// Interns a kernel name (see PerfModel::kernel); call once per kernel, not per call.
  KernelId kernel(std::string_view name);

  /// The decision for one call, with exploration (updates the kernel's call counter).
  Decision place(const Workload& w);
  /// The decision rules 1-4 without exploration or bookkeeping (for `fracmfg info`).
  Decision decide(const Workload& w) const;

  /// Places w and runs host_fn or cuda_fn as described in the header comment.
  template <class HostFn, class CudaFn>
  RunResult run(const Workload& w, HostFn&& host_fn, CudaFn&& cuda_fn) {
    RunResult result;
    result.decision = place(w);
    if (result.decision.backend == Backend::cuda) {
      std::string error;
      bool ok = false;
      const double t0 = now();
      try {
        ok = detail::call_cuda(cuda_fn, result.decision, error);
      } catch (const std::exception& e) {
        error = e.what();
      } catch (...) {
        error = "unknown exception";
      }
      if (ok) {
        result.seconds = now() - t0;
        result.ran_on = Backend::cuda;
        record(w, Backend::cuda, result.seconds);
        return result;
      }
      cuda_failed(w.kernel, error);
      result.fell_back = true;
    }
    const double t0 = now();
    host_fn();
    result.seconds = now() - t0;
    result.ran_on = Backend::cpu;
    record(w, Backend::cpu, result.seconds);
    return result;
  }

  /// Accounts one completed call measured by the caller: statistics, and the model when
  /// learning. run() calls it.
  void record(const Workload& w, Backend backend, double seconds);
  /// Accounts one failed cuda attempt of a kernel (run() calls it).
  void cuda_failed(KernelId kernel, std::string_view error);

  /// Replaces the clock run() reads (seconds, monotone); an empty function restores the
  /// steady clock. A test seam: a fake clock advanced by host_fn/cuda_fn injects timings.
  void set_clock(std::function<double()> now) { clock_ = std::move(now); }
  double now() const {
    if (clock_) return clock_();
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  const Hardware& hardware() const { return hardware_; }
  /// The effective configuration (environment applied).
  const SelectorConfig& config() const { return config_; }
  const DeviceSlot& device() const { return slot_; }
  /// Name of the rank's device, "cpu" without one (also names the performance file).
  const std::string& device_name() const { return device_name_; }
  /// True when a call may run on cuda at all (compiled, a device, not disabled or forced
  /// to cpu).
  bool cuda_usable() const { return cuda_usable_; }
  /// Device bytes a call may use (rule 3); 0 without a device. Reads the device's free
  /// memory on first call (see the header comment).
  double device_budget() const;
  /// The rank's cache of cuFFT plans and cuSPARSE handles for the cuda paths (pass it as the
  /// kernels' options.cuda_resources); null when cuda is not usable on this rank.
  kernels::CudaResources* cuda_resources() { return cuda_usable_ ? &cuda_resources_ : nullptr; }
  /// True once the cuda path of this kernel reached failure_limit.
  bool cuda_disabled(KernelId kernel) const;
  const BackendStats& stats(KernelId kernel, Backend backend) const;

  PerfModel& model() { return model_; }
  const PerfModel& model() const { return model_; }
  /// Effective performance directory (config.perf_dir or the default).
  std::string perf_directory() const;
  /// Merges learned samples into the performance file (PerfModel::save); a failure is a
  /// warning and returns false.
  bool save_model();

  /// This rank's rows (rank = the logger's rank), one per (kernel, backend) with calls or
  /// failures.
  std::vector<ReportRow> report() const;
  /// Every rank's rows on rank 0 (rank = rank in comm), empty elsewhere. Collective on comm.
  std::vector<ReportRow> gather_report(MPI_Comm comm) const;

 private:
  struct KernelState {
    std::uint64_t placed = 0;
    bool prior_set = false;
    bool cuda_disabled = false;
    bool warned = false;
    std::uint32_t consecutive_failures = 0;
    BackendStats stats[backend_count];
  };
  const KernelState& state(KernelId id) const {
    if (id.index >= states_.size()) unknown_kernel(id);
    return states_[id.index];
  }
  KernelState& state(KernelId id) {
    if (id.index >= states_.size()) unknown_kernel(id);
    return states_[id.index];
  }
  [[noreturn]] static void unknown_kernel(KernelId id);
  Decision evaluate(const Workload& w, const KernelState& ks) const;
  double roofline(const Workload& w, Backend backend) const;

  Hardware hardware_;
  SelectorConfig config_;
  core::Logger log_;
  DeviceSlot slot_;
  std::string device_name_;
  bool cuda_usable_ = false;
  bool activated_ = false;  // this selector made the rank's device current
  mutable bool budget_known_ = false;
  mutable double device_budget_ = 0.0;
  double host_bandwidth_ = 0.0;
  double host_flops_ = 0.0;
  std::uint64_t explore_every_ = 0;
  PerfModel model_;
  std::vector<KernelState> states_;
  std::function<double()> clock_;
  kernels::CudaResources cuda_resources_;
};

}  // namespace fracmfg::exec
