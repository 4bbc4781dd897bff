#pragma once
// exec::PerfModel: per (kernel, backend) cost model  t(n) = latency + n * seconds_per_unit,
// fitted online from measured (n, t) samples, and kept between runs in a file.
//
// The fit. Each sample i (size n_i = Workload::units(), time t_i seconds) has weight
//   w_i = lambda^(age_i) / max(t_i, 1e-9 s)^2,
// lambda in (0, 1] the forgetting factor (age = number of later samples). The 1/t^2 factor
// makes the fit minimise relative errors, so small calls (which fix the latency) count as
// much as large ones (which fix the slope). The model keeps the running sums
//   W = sum w, Sn = sum w n, St = sum w t, Snn = sum w n^2, Snt = sum w n t
// (adding a sample multiplies the sums by lambda first) and solves the 2x2 normal
// equations of min sum w_i (a + b n_i - t_i)^2 in closed form:
//   b = (Snt/W - (Sn/W)(St/W)) / (Snn/W - (Sn/W)^2),   a = St/W - b Sn/W.
// Then:
//  - fewer than min_fit_samples samples: the prior (set_prior, or the options' defaults);
//  - sizes too alike to fix a slope (coefficient of variation of n below 1e-3): the
//    prior's slope and a fitted latency a = St/W - b Sn/W;
//  - a < 0 or b < 0 (noise): that parameter is 0 and the other is refitted
//    (b = Snt/Snn through the origin, or a = St/W).
//
// Persistence. One file per host and device name (sanitised: [A-Za-z0-9._-], anything
// else '_') in directory_for(...): "<host>__<device>.perf", a line-based text format,
//   fracmfg-perf-model 1
//   host <host name>
//   device <device name>
//   entry <kernel> <cpu|cuda> <count> <W> <Sn> <St> <Snn> <Snt>
// A rank without a device has the device name "cpu". Files written before the backend had
// one name say "host" for cpu (in entries, and as the device name: "<host>__host.perf");
// they are read as cpu, and a missing "<host>__cpu.perf" is read from such a file (the next
// save writes the merged samples under the new name and leaves the old file as it was).
// save() merges: under an flock on "<file>.lock" it reads the file, adds this model's
// samples since its last load/save (file sums x lambda^k + new sums, k = new samples),
// writes a temporary file in the same directory and renames it over the old one, so
// readers never see a partial file and concurrent ranks/processes lose nothing. A file
// that is corrupt, of another format version or of another host/device is ignored with a
// warning (and replaced on save), never an error.
//
// Not thread-safe; one model per rank (inside its Selector).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/workload.hpp"

namespace fracmfg::exec {

/// t(n) = latency + n * seconds_per_unit, seconds.
struct LinearCost {
  double latency = 0.0;
  double seconds_per_unit = 0.0;
  double operator()(double n) const { return latency + n * seconds_per_unit; }
};

struct PerfModelOptions {
  /// lambda in (0, 1]: 1 keeps every sample forever; 0.999 remembers about 1000 samples.
  double forgetting = 0.999;
  /// Samples needed before the fit replaces the prior (>= 2).
  int min_fit_samples = 3;
  /// Default priors (used until set_prior or enough samples): a 1 us call at 1 ns per unit
  /// on the host; a 20 us launch + synchronisation at 0.1 ns per unit on a device.
  LinearCost host_prior{1e-6, 1e-9};
  LinearCost cuda_prior{2e-5, 1e-10};
  /// When false, add_sample() is ignored.
  bool learning = true;
};

/// Weighted sample sums of one (kernel, backend) (see the header comment).
struct SampleSums {
  std::uint64_t count = 0;
  double w = 0.0;
  double sn = 0.0;
  double st = 0.0;
  double snn = 0.0;
  double snt = 0.0;
};

class PerfModel {
 public:
  /// host_name and device_name identify the persistence file ("cpu" for a rank without
  /// a device).
  PerfModel(std::string host_name, std::string device_name, PerfModelOptions options = {},
            core::Logger log = {});

  const std::string& host_name() const { return host_name_; }
  const std::string& device_name() const { return device_name_; }
  const PerfModelOptions& options() const { return options_; }

  /// Interns a kernel name (non-empty, at most 64 characters, no whitespace; else Error)
  /// and returns its id; the same name always gives the same id. Allocates: call once.
  KernelId kernel(std::string_view name);
  std::optional<KernelId> find_kernel(std::string_view name) const;
  const std::string& kernel_name(KernelId id) const;
  std::size_t kernel_count() const { return names_.size(); }

  /// Records one measurement: size n (units), time in seconds. Ignored when learning is off
  /// or when n or seconds is negative or not finite. O(1), no allocation.
  /// Every call taking a KernelId throws Error for an id this model did not issue.
  void add_sample(KernelId id, Backend backend, double n, double seconds);

  /// The current cost line of (kernel, backend): fitted or prior (see header comment).
  const LinearCost& cost(KernelId id, Backend backend) const { return entry(id, backend).fit; }
  /// Predicted seconds for size n.
  double predict(KernelId id, Backend backend, double n) const { return cost(id, backend)(n); }
  /// True when cost() comes from samples rather than from the prior alone.
  bool fitted(KernelId id, Backend backend) const { return entry(id, backend).fitted; }
  /// Samples ever added or loaded for (kernel, backend) (not reduced by forgetting).
  std::uint64_t samples(KernelId id, Backend backend) const {
    return entry(id, backend).total.count;
  }
  const SampleSums& sums(KernelId id, Backend backend) const { return entry(id, backend).total; }

  /// The size n* > 0 where host and cuda predictions are equal; nullopt when one backend is
  /// predicted faster (or equal) at every size.
  std::optional<double> crossover(KernelId id) const;

  /// Replaces the prior of (kernel, backend); the fit is recomputed.
  void set_prior(KernelId id, Backend backend, LinearCost prior);
  const LinearCost& prior(KernelId id, Backend backend) const { return entry(id, backend).prior; }

  bool learning() const { return options_.learning; }
  void set_learning(bool on) { options_.learning = on; }
  /// Forgets every sample (kernels and priors stay).
  void reset();

  /// FRACMFG_PERF_DIR, else $XDG_CACHE_HOME/fracmfg, else $HOME/.cache/fracmfg, else
  /// ".fracmfg-cache".
  static std::string default_directory();
  /// "<sanitised host>__<sanitised device>.perf".
  static std::string file_name(const std::string& host_name, const std::string& device_name);
  /// directory + "/" + file_name(host_name(), device_name()).
  std::string path(const std::string& directory) const;

  /// Merges the file in `directory` into the model (its sums replace what was loaded
  /// before; samples added since the last load/save are kept on top). Returns false,
  /// after a warning for anything but a missing file, when there is nothing usable.
  bool load(const std::string& directory);
  /// Merges this model's new samples into the file (creating the directory), atomically
  /// and under a lock; afterwards the model holds the merged sums. Throws IoError when the
  /// directory or file cannot be written. No-op without new samples.
  void save(const std::string& directory);

 private:
  struct Entry {
    LinearCost prior;
    LinearCost fit;
    bool fitted = false;
    SampleSums total;    // what predictions use
    SampleSums unsaved;  // samples since the last load/save, for merging
  };
  const Entry& entry(KernelId id, Backend backend) const {
    if (id.index >= entries_.size()) unknown_kernel(id);
    return entries_[id.index][static_cast<int>(backend)];
  }
  Entry& entry(KernelId id, Backend backend) {
    if (id.index >= entries_.size()) unknown_kernel(id);
    return entries_[id.index][static_cast<int>(backend)];
  }
  [[noreturn]] static void unknown_kernel(KernelId id);
  void refit(Entry& e) const;

  std::string host_name_;
  std::string device_name_;
  PerfModelOptions options_;
  core::Logger log_;
  std::vector<std::string> names_;
  std::vector<std::array<Entry, backend_count>> entries_;
};

}  // namespace fracmfg::exec
