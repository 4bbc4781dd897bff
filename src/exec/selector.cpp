#include "fracmfg/exec/selector.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <locale>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.hpp"
#include "fracmfg/core/error.hpp"

namespace fracmfg::exec {

// --- backend choice ----------------------------------------------------------------------

const char* to_string(BackendChoice choice) {
  switch (choice) {
    case BackendChoice::cpu: return "cpu";
    case BackendChoice::cuda: return "cuda";
    case BackendChoice::automatic: return "auto";
  }
  return "?";
}

std::optional<BackendChoice> parse_backend_choice(std::string_view text) {
  if (text == "cpu") return BackendChoice::cpu;
  if (text == "cuda") return BackendChoice::cuda;
  if (text == "auto") return BackendChoice::automatic;
  return std::nullopt;
}

namespace {

using ::fracmfg::detail::closest_match;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<bool> parse_flag(std::string_view v) {
  const std::string s = lower(v);
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  return std::nullopt;
}

void validate(const SelectorConfig& c) {
  auto bad = [](const std::string& what) { throw Error("execution configuration: " + what); };
  if (c.explore_min_samples < 0) bad("explore_min_samples must be >= 0");
  if (c.explore_period < 1) bad("explore_period must be >= 1");
  if (!(c.exploration >= 0.0 && c.exploration <= 1.0)) bad("exploration must be in [0, 1]");
  if (!(c.memory_margin >= 0.0 && c.memory_margin < 1.0)) bad("memory_margin must be in [0, 1)");
  if (c.failure_limit < 1) bad("failure_limit must be >= 1");
  if (!(c.forgetting > 0.0 && c.forgetting <= 1.0)) bad("forgetting must be in (0, 1]");
  if (c.min_fit_samples < 2) bad("min_fit_samples must be >= 2");
  const CostPrior& p = c.prior;
  for (double v : {p.host_latency, p.cuda_latency, p.transfer_latency}) {
    if (!(v >= 0.0) || !std::isfinite(v)) bad("prior latencies must be finite and >= 0");
  }
  for (double v : {p.host_bandwidth_per_thread, p.host_bandwidth_max, p.host_flops_per_thread,
                   p.cuda_bandwidth, p.cuda_flops, p.transfer_bandwidth}) {
    if (!(v > 0.0) || !std::isfinite(v)) bad("prior rates must be finite and > 0");
  }
}

SelectorConfig effective_config(SelectorConfig c, const core::Logger& log) {
  if (c.use_environment) c = with_environment(std::move(c), log);
  validate(c);
  return c;
}

DeviceSlot initial_slot(const Hardware& hw, const SelectorConfig& c) {
  if (c.gpu_disabled || c.backend == BackendChoice::cpu || !hw.cuda_compiled) return {};
  return place_rank(hw, c.max_ranks_per_gpu);
}

std::string slot_device_name(const Hardware& hw, const DeviceSlot& slot) {
  if (slot.on_cpu()) return "cpu";
  return hw.gpus[static_cast<std::size_t>(slot.gpu_index)].name;
}

PerfModelOptions model_options(const SelectorConfig& c) {
  PerfModelOptions o;
  o.forgetting = c.forgetting;
  o.min_fit_samples = c.min_fit_samples;
  o.learning = c.learn;
  return o;
}

std::string format_seconds(double s) {
  char buf[48];
  if (!std::isfinite(s)) return "n/a";
  if (s < 1e-3) {
    std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  } else if (s < 1.0) {
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  }
  return buf;
}

}  // namespace

std::string closest_backend_choice(std::string_view text) {
  const std::string t = lower(text);
  if (auto c = parse_backend_choice(t)) return to_string(*c);
  // Words people use for the same thing.
  if (t == "gpu" || t == "device" || t == "nvidia") return "cuda";
  if (t == "host" || t == "serial" || t == "openmp" || t == "kokkos") return "cpu";
  if (t == "automatic" || t == "default") return "auto";
  return closest_match(t, {"cpu", "cuda", "auto"});
}

BackendChoice backend_choice_from_string(std::string_view text, std::string_view origin) {
  if (auto c = parse_backend_choice(text)) return *c;
  std::string message = std::string(origin) + ": unknown backend '" + std::string(text) +
                        "' (expected cpu, cuda or auto)";
  const std::string best = closest_backend_choice(text);
  if (!best.empty()) message += "; did you mean '" + best + "'?";
  throw UsageError(message);
}

std::vector<std::string> available_backends(bool cuda_compiled) {
  if (cuda_compiled) return {"cpu", "cuda", "auto"};
  return {"cpu", "auto"};
}

SelectorConfig with_environment(SelectorConfig config, const core::Logger& log) {
  if (const char* v = std::getenv("FRACMFG_BACKEND"); v != nullptr && *v != '\0') {
    config.backend = backend_choice_from_string(v, "FRACMFG_BACKEND");
  }
  if (const char* v = std::getenv("FRACMFG_DISABLE_GPU"); v != nullptr && *v != '\0') {
    if (auto flag = parse_flag(v)) {
      config.gpu_disabled = *flag;
    } else {
      log.warn("ignoring FRACMFG_DISABLE_GPU=", v, " (expected 1 or 0)");
    }
  }
  if (const char* v = std::getenv("FRACMFG_PERF_DIR"); v != nullptr && *v != '\0') {
    config.perf_dir = v;
  }
  return config;
}

// --- decisions ---------------------------------------------------------------------------

const char* to_string(Reason reason) {
  switch (reason) {
    case Reason::gpu_disabled: return "gpu_disabled";
    case Reason::forced_cpu: return "forced_cpu";
    case Reason::not_compiled: return "not_compiled";
    case Reason::no_device: return "no_device";
    case Reason::cuda_failed: return "cuda_failed";
    case Reason::memory: return "memory";
    case Reason::forced_cuda: return "forced_cuda";
    case Reason::model: return "model";
    case Reason::exploration: return "exploration";
  }
  return "?";
}

const char* Decision::text() const {
  switch (reason) {
    case Reason::gpu_disabled: return "GPUs are disabled (FRACMFG_DISABLE_GPU)";
    case Reason::forced_cpu: return "backend cpu was requested";
    case Reason::not_compiled: return "this build has no CUDA backend";
    case Reason::no_device: return "no CUDA device is assigned to this rank";
    case Reason::cuda_failed: return "the cuda path of this kernel failed too often on this rank";
    case Reason::memory: return "the working set exceeds this rank's device memory budget";
    case Reason::forced_cuda: return "backend cuda was requested";
    case Reason::model: return "the performance model predicts it is faster";
    case Reason::exploration: return "trying the other backend to improve the performance model";
  }
  return "?";
}

std::string describe(const Decision& d) {
  std::string s = to_string(d.backend);
  s += " (";
  s += to_string(d.reason);
  s += ": ";
  s += d.text();
  if (d.chunks > 1) s += ", in " + std::to_string(d.chunks) + " chunks";
  if (std::isfinite(d.predicted_cpu) || std::isfinite(d.predicted_cuda)) {
    s += "; predicted";
    if (std::isfinite(d.predicted_cuda)) s += " " + format_seconds(d.predicted_cuda) + " on cuda";
    if (std::isfinite(d.predicted_cuda) && std::isfinite(d.predicted_cpu)) s += ",";
    if (std::isfinite(d.predicted_cpu)) s += " " + format_seconds(d.predicted_cpu) + " on cpu";
  }
  s += ")";
  return s;
}

// --- Selector ------------------------------------------------------------------------------

Selector::Selector(Hardware hardware, SelectorConfig config, core::Logger log)
    : hardware_(std::move(hardware)),
      config_(effective_config(std::move(config), log)),
      log_(log),
      slot_(initial_slot(hardware_, config_)),
      device_name_(slot_device_name(hardware_, slot_)),
      model_(hardware_.host_name, device_name_, model_options(config_), log_) {
  if (config_.backend == BackendChoice::cuda && !config_.gpu_disabled && !hardware_.cuda_compiled) {
    throw NotCompiled("the cuda backend (requested as execution backend)",
                      available_backends(false));
  }
  bool activation_failed = false;
  if (!slot_.on_cpu() && hardware_.probed && config_.activate_device) {
    try {
      activate_device(slot_);  // the one cudaSetDevice of this rank (and its context)
      activated_ = true;
    } catch (const Error& e) {
      log_.warn("rank stays on the cpu backend: ", e.what());
      activation_failed = true;
      slot_ = DeviceSlot{};
      device_name_ = "cpu";
      model_ = PerfModel(hardware_.host_name, device_name_, model_options(config_), log_);
    }
  }
  cuda_usable_ = !slot_.on_cpu();
  // A requested device that this rank cannot use: its work runs on the host, as the
  // backend's fallback promises, but not without a word.
  if (config_.backend == BackendChoice::cuda && !config_.gpu_disabled && !cuda_usable_) {
    std::string why;
    if (hardware_.gpus.empty()) {
      why = "no CUDA device is visible";
      if (!hardware_.cuda_status.empty() && hardware_.cuda_status != "ok") {
        why += " (" + hardware_.cuda_status + ")";
      }
    } else if (activation_failed) {
      why = "its device could not be made current (see above)";
    } else {
      why = "the node's " + std::to_string(hardware_.gpus.size()) + " device(s) take at most " +
            std::to_string(config_.max_ranks_per_gpu) + " rank(s) each (max_ranks_per_gpu) and " +
            "this node runs " + std::to_string(hardware_.node_size);
    }
    log_.warn("backend cuda was requested, but rank ", hardware_.node_rank, " of node ",
              hardware_.host_name, " runs on the cpu: ", why);
  }
  const double threads = std::max(1, hardware_.kokkos_host_concurrency);
  host_bandwidth_ =
      std::min(config_.prior.host_bandwidth_per_thread * threads, config_.prior.host_bandwidth_max);
  host_flops_ = config_.prior.host_flops_per_thread * threads;
  if (config_.exploration > 0.0) {
    explore_every_ =
        static_cast<std::uint64_t>(std::max(1.0, std::round(1.0 / config_.exploration)));
  }
  if (config_.persist) {
    try {
      model_.load(perf_directory());
    } catch (const Error& e) {
      log_.warn("performance file not loaded: ", e.what());
    }
  }
  states_.resize(model_.kernel_count());
  log_.debug("selector: backend ", to_string(config_.backend), ", device ", to_string(slot_),
             slot_.sharing > 1 ? " (shared)" : "", ", learning ", config_.learn ? "on" : "off");
}

double Selector::device_budget() const {
  if (!cuda_usable_) return 0.0;
  if (budget_known_) return device_budget_;
  const CudaDevice& dev = hardware_.gpus[static_cast<std::size_t>(slot_.gpu_index)];
  double free = static_cast<double>(dev.free_memory_measured ? dev.free_memory : dev.total_memory);
  if (!dev.free_memory_measured && activated_) {
    try {
      free = static_cast<double>(cuda_free_memory(slot_.device));
    } catch (const Error& e) {
      log_.warn("device memory budget from the total memory: ", e.what());
    }
  }
  device_budget_ = free * (1.0 - config_.memory_margin) / std::max(1, slot_.sharing);
  budget_known_ = true;
  return device_budget_;
}

void Selector::unknown_kernel(KernelId id) {
  throw Error("kernel id " + std::to_string(id.index) + " was not registered with this selector");
}

KernelId Selector::kernel(std::string_view name) {
  const KernelId id = model_.kernel(name);
  if (states_.size() < model_.kernel_count()) states_.resize(model_.kernel_count());
  return id;
}

double Selector::roofline(const Workload& w, Backend backend) const {
  const CostPrior& p = config_.prior;
  if (backend == Backend::cpu) {
    return p.host_latency + std::max(w.bytes / host_bandwidth_, w.flops / host_flops_);
  }
  double t = p.cuda_latency + std::max(w.bytes / p.cuda_bandwidth, w.flops / p.cuda_flops);
  if (w.transfer_bytes > 0.0) t += p.transfer_latency + w.transfer_bytes / p.transfer_bandwidth;
  return t;
}

Decision Selector::evaluate(const Workload& w, const KernelState& ks) const {
  Decision d;
  const double n = w.units();
  const KernelId k = w.kernel;
  d.predicted_cpu = model_.fitted(k, Backend::cpu) ? model_.predict(k, Backend::cpu, n)
                                                   : roofline(w, Backend::cpu);
  if (cuda_usable_) {
    d.predicted_cuda = model_.fitted(k, Backend::cuda) ? model_.predict(k, Backend::cuda, n)
                                                       : roofline(w, Backend::cuda);
  }
  d.backend = Backend::cpu;
  if (config_.gpu_disabled) {
    d.reason = Reason::gpu_disabled;
    return d;
  }
  if (config_.backend == BackendChoice::cpu) {
    d.reason = Reason::forced_cpu;
    return d;
  }
  if (!hardware_.cuda_compiled) {
    d.reason = Reason::not_compiled;
    return d;
  }
  if (slot_.on_cpu()) {
    d.reason = Reason::no_device;
    return d;
  }
  if (ks.cuda_disabled) {
    d.reason = Reason::cuda_failed;
    return d;
  }
  const double budget = w.device_bytes > 0.0 ? device_budget() : 0.0;
  if (w.device_bytes > budget) {
    if (!w.chunkable || !(budget > 0.0)) {
      d.reason = Reason::memory;
      return d;
    }
    const double chunks = std::ceil(w.device_bytes / budget);
    d.chunks = chunks < 2147483647.0 ? static_cast<int>(chunks) : 2147483647;
  }
  if (config_.backend == BackendChoice::cuda) {
    d.backend = Backend::cuda;
    d.reason = Reason::forced_cuda;
    return d;
  }
  d.reason = Reason::model;
  d.backend = d.predicted_cuda < d.predicted_cpu ? Backend::cuda : Backend::cpu;
  return d;
}

Decision Selector::decide(const Workload& w) const {
  return evaluate(w, state(w.kernel));
}

Decision Selector::place(const Workload& w) {
  if (w.kernel.index >= states_.size() && w.kernel.index < model_.kernel_count()) {
    states_.resize(model_.kernel_count());  // registered through model() directly
  }
  KernelState& ks = state(w.kernel);
  if (!ks.prior_set && w.elements > 0) {
    // The first workload of a kernel shapes the model's prior (used for degenerate fits
    // and crossover()) from the roofline estimate.
    const double n = w.units();
    const double lh = config_.prior.host_latency;
    double lc = config_.prior.cuda_latency;
    if (w.transfer_bytes > 0.0) lc += config_.prior.transfer_latency;
    model_.set_prior(w.kernel, Backend::cpu,
                     LinearCost{lh, std::max(0.0, roofline(w, Backend::cpu) - lh) / n});
    model_.set_prior(w.kernel, Backend::cuda,
                     LinearCost{lc, std::max(0.0, roofline(w, Backend::cuda) - lc) / n});
    ks.prior_set = true;
  }
  Decision d = evaluate(w, ks);
  ++ks.placed;
  if (d.reason == Reason::model && config_.learn && config_.explore) {
    const Backend other = d.backend == Backend::cpu ? Backend::cuda : Backend::cpu;
    const std::uint64_t have = model_.samples(w.kernel, other);
    bool go = false;
    if (have < static_cast<std::uint64_t>(config_.explore_min_samples)) {
      go = ks.placed % static_cast<std::uint64_t>(config_.explore_period) == 0;
    } else if (explore_every_ > 0) {
      go = ks.placed % explore_every_ == 0;
    }
    if (go) {
      d.backend = other;
      d.reason = Reason::exploration;
    }
  }
  return d;
}

void Selector::record(const Workload& w, Backend backend, double seconds) {
  KernelState& ks = state(w.kernel);
  BackendStats& s = ks.stats[static_cast<int>(backend)];
  ++s.calls;
  s.seconds += seconds;
  if (backend == Backend::cuda) ks.consecutive_failures = 0;
  if (config_.learn) model_.add_sample(w.kernel, backend, w.units(), seconds);
}

void Selector::cuda_failed(KernelId kernel, std::string_view error) {
  KernelState& ks = state(kernel);
  BackendStats& s = ks.stats[static_cast<int>(Backend::cuda)];
  ++s.failures;
  ++ks.consecutive_failures;
  const std::string& name = model_.kernel_name(kernel);
  if (!ks.warned) {
    log_.warn("cuda path of kernel ", name, " failed (", error, "); re-running it on cpu");
    ks.warned = true;
  } else {
    log_.debug("cuda path of kernel ", name, " failed again (", error, "); cpu fallback");
  }
  if (!ks.cuda_disabled && s.failures >= static_cast<std::uint64_t>(config_.failure_limit)) {
    ks.cuda_disabled = true;
    log_.warn("kernel ", name, " runs on cpu only from now on (", s.failures,
              " cuda failures on this rank)");
  }
}

bool Selector::cuda_disabled(KernelId kernel) const {
  return state(kernel).cuda_disabled;
}

const BackendStats& Selector::stats(KernelId kernel, Backend backend) const {
  return state(kernel).stats[static_cast<int>(backend)];
}

std::string Selector::perf_directory() const {
  return config_.perf_dir.empty() ? PerfModel::default_directory() : config_.perf_dir;
}

bool Selector::save_model() {
  try {
    model_.save(perf_directory());
  } catch (const Error& e) {
    log_.warn("performance model not saved: ", e.what());
    return false;
  }
  if (states_.size() < model_.kernel_count()) states_.resize(model_.kernel_count());
  return true;
}

// --- reports ------------------------------------------------------------------------------

std::vector<ReportRow> Selector::report() const {
  std::vector<ReportRow> rows;
  for (std::size_t k = 0; k < states_.size(); ++k) {
    for (int b = 0; b < backend_count; ++b) {
      const BackendStats& s = states_[k].stats[b];
      if (s.calls == 0 && s.failures == 0) continue;
      ReportRow r;
      r.rank = log_.rank();
      r.kernel = model_.kernel_name(KernelId{static_cast<std::uint32_t>(k)});
      r.backend = static_cast<Backend>(b);
      r.calls = s.calls;
      r.failures = s.failures;
      r.total_seconds = s.seconds;
      r.mean_seconds = s.calls > 0 ? s.seconds / static_cast<double>(s.calls) : 0.0;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

std::vector<ReportRow> Selector::gather_report(MPI_Comm comm) const {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os.precision(17);
  for (const ReportRow& r : report()) {
    os << r.kernel << ' ' << to_string(r.backend) << ' ' << r.calls << ' ' << r.failures << ' '
       << r.total_seconds << '\n';
  }
  const std::string mine = os.str();
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank == 0 ? static_cast<std::size_t>(size) : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
  std::vector<int> offsets(lengths.size(), 0);
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      offsets[i] = total;
      total += lengths[i];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, comm);
  std::vector<ReportRow> rows;
  if (rank != 0) return rows;
  for (int r = 0; r < size; ++r) {
    std::istringstream is(
        all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                   static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
    is.imbue(std::locale::classic());
    ReportRow row;
    std::string backend;
    while (is >> row.kernel >> backend >> row.calls >> row.failures >> row.total_seconds) {
      row.rank = r;
      row.backend = parse_backend(backend).value_or(Backend::cpu);
      row.mean_seconds = row.calls > 0 ? row.total_seconds / static_cast<double>(row.calls) : 0.0;
      rows.push_back(row);
    }
  }
  return rows;
}

std::vector<ReportRow> aggregate_report(const std::vector<ReportRow>& rows) {
  std::vector<ReportRow> out;
  for (const ReportRow& r : rows) {
    auto it = std::find_if(out.begin(), out.end(), [&](const ReportRow& o) {
      return o.kernel == r.kernel && o.backend == r.backend;
    });
    if (it == out.end()) {
      out.push_back(r);
      out.back().rank = -1;
    } else {
      it->calls += r.calls;
      it->failures += r.failures;
      it->total_seconds += r.total_seconds;
    }
  }
  for (ReportRow& r : out) {
    r.mean_seconds = r.calls > 0 ? r.total_seconds / static_cast<double>(r.calls) : 0.0;
  }
  return out;
}

std::string format_report(const std::vector<ReportRow>& rows) {
  std::size_t width = 6;
  for (const ReportRow& r : rows) width = std::max(width, r.kernel.size());
  const int kw = static_cast<int>(width);
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%4s  %-*s  %-7s  %12s  %8s  %12s  %12s\n", "rank", kw, "kernel",
                "backend", "calls", "failures", "total [s]", "mean [us]");
  out += line;
  for (const ReportRow& r : rows) {
    const std::string rank = r.rank < 0 ? std::string("all") : std::to_string(r.rank);
    std::snprintf(
        line, sizeof line, "%4s  %-*s  %-7s  %12llu  %8llu  %12.4e  %12.3f\n", rank.c_str(), kw,
        r.kernel.c_str(), to_string(r.backend), static_cast<unsigned long long>(r.calls),
        static_cast<unsigned long long>(r.failures), r.total_seconds, r.mean_seconds * 1e6);
    out += line;
  }
  return out;
}

}  // namespace fracmfg::exec
