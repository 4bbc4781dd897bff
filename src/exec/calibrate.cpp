#include "fracmfg/exec/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"

namespace fracmfg::exec {

namespace {

// Timed calls of one size: options.repeats, cut so that they take about
// max_seconds_per_size at `call` seconds each (at least one).
int repeats_within(const CalibrationOptions& options, double call) {
  const double fit = std::floor(options.max_seconds_per_size / std::max(call, 1e-9));
  return std::max(1, static_cast<int>(std::min<double>(options.repeats, fit)));
}

std::string units_text(double n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", n);
  return buf;
}

}  // namespace

std::vector<std::int64_t> calibration_sizes(const CalibrationOptions& o) {
  if (!(o.min_size >= 1.0) || !std::isfinite(o.max_size) || !(o.max_size >= o.min_size)) {
    throw UsageError("calibration sizes: need 1 <= min <= max, got " + units_text(o.min_size) +
                     ":" + units_text(o.max_size));
  }
  if (o.max_size > 1e12) throw UsageError("calibration sizes: max above 1e12");
  if (o.per_decade < 1) throw UsageError("calibration: sizes per decade must be >= 1");
  std::vector<std::int64_t> sizes;
  const double decades = std::log10(o.max_size / o.min_size);
  const int steps = static_cast<int>(std::floor(decades * o.per_decade + 1e-9));
  for (int k = 0; k <= steps; ++k) {
    const double n = o.min_size * std::pow(10.0, static_cast<double>(k) / o.per_decade);
    sizes.push_back(std::llround(n));
  }
  const std::int64_t last = std::llround(o.max_size);
  if (sizes.back() < last) sizes.push_back(last);
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

CalibrationReport calibrate(Selector& selector, const std::vector<CalibratedKernel>& kernels,
                            const CalibrationOptions& options) {
  const std::vector<std::int64_t> sizes = calibration_sizes(options);
  if (options.repeats < 1) throw UsageError("calibration: repeats must be >= 1");
  if (!(options.max_seconds_per_kernel > 0.0) || !(options.max_seconds_per_size > 0.0)) {
    throw UsageError("calibration: time caps must be positive");
  }
  CalibrationReport report;
  PerfModel& model = selector.model();
  const bool was_learning = model.learning();
  model.set_learning(true);

  double host_limit = options.host_memory_limit;
  if (!(host_limit > 0.0)) {
    host_limit = 0.5 * static_cast<double>(selector.hardware().host_memory_available);
    if (!(host_limit > 0.0)) host_limit = 4.0 * 1024 * 1024 * 1024;  // unknown: 4 GiB
  }
  std::vector<Backend> backends;
  if (options.cpu) backends.push_back(Backend::cpu);
  if (options.cuda) {
    if (selector.cuda_usable()) {
      backends.push_back(Backend::cuda);
    } else {
      const Hardware& hw = selector.hardware();
      std::string why = !hw.cuda_compiled ? "CUDA backend not compiled"
                        : hw.gpus.empty() ? "no CUDA device (" + hw.cuda_status + ")"
                                          : "no CUDA device for this rank";
      if (selector.config().gpu_disabled) why = "GPUs disabled (FRACMFG_DISABLE_GPU)";
      if (selector.config().backend == BackendChoice::cpu) why = "backend cpu requested";
      report.notes.push_back("cuda not calibrated: " + why);
    }
  }

  for (const CalibratedKernel& kernel : kernels) {
    const KernelId id = selector.kernel(kernel.name);
    std::vector<CalibrationEntry> entries;
    for (Backend b : backends) {
      CalibrationEntry e;
      e.kernel = kernel.name;
      e.backend = b;
      entries.push_back(e);
    }
    std::vector<bool> stopped(entries.size(), false);
    std::vector<double> last_units(entries.size(), 0.0);
    std::vector<double> last_call(entries.size(), 0.0);
    for (std::int64_t n : sizes) {
      const double host_bytes = kernel.host_bytes_per_unit * static_cast<double>(n);
      if (host_bytes > host_limit) {
        for (CalibrationEntry& e : entries) {
          e.notes.push_back("sizes from " + units_text(static_cast<double>(n)) +
                            " skipped: inputs would need " + units_text(host_bytes / 1048576.0) +
                            " MiB of host memory (limit " + units_text(host_limit / 1048576.0) +
                            " MiB)");
        }
        break;
      }
      // Which backends still want this size (time cap, predicted linearly).
      std::vector<bool> run(entries.size(), false);
      bool any = false;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (stopped[i]) continue;
        CalibrationEntry& e = entries[i];
        if (e.sizes > 0) {
          const double scale = static_cast<double>(n) / std::max(1.0, last_units[i]);
          const double call = last_call[i] * std::max(1.0, scale);
          const double predicted = call * (1 + repeats_within(options, call));  // + warm-up
          if (e.seconds + predicted > options.max_seconds_per_kernel) {
            e.notes.push_back("sizes from " + units_text(static_cast<double>(n)) +
                              " skipped: time cap of " +
                              units_text(options.max_seconds_per_kernel) +
                              " s per kernel (predicted " + units_text(predicted) + " s)");
            stopped[i] = true;
            continue;
          }
        }
        run[i] = true;
        any = true;
      }
      if (!any) break;
      const double t_make = selector.now();
      CalibrationCase c = kernel.make_case(n);
      c.workload.kernel = id;
      const double make_seconds = selector.now() - t_make;
      const double units = c.workload.units();
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!run[i]) continue;
        CalibrationEntry& e = entries[i];
        e.seconds += make_seconds;
        const Backend b = e.backend;
        if (b == Backend::cuda) {
          if (!c.cuda) {
            e.notes.push_back("no cuda path");
            stopped[i] = true;
            continue;
          }
          if (c.workload.device_bytes > selector.device_budget()) {
            e.notes.push_back("sizes from " + units_text(units) +
                              " skipped: working set exceeds the device memory budget");
            stopped[i] = true;
            continue;
          }
        }
        const int device = selector.device().device;
        kernels::CudaResources* resources = selector.cuda_resources();
        auto call = [&] {
          if (b == Backend::cpu) {
            c.host();
          } else {
            c.cuda(device, resources);
          }
        };
        try {
          double t0 = selector.now();
          call();  // warm-up: plans, caches, first touch
          double t = selector.now() - t0;
          e.seconds += t;
          const int repeats = repeats_within(options, t);
          double total = 0.0;
          for (int r = 0; r < repeats; ++r) {
            t0 = selector.now();
            call();
            t = selector.now() - t0;
            total += t;
            model.add_sample(id, b, units, t);
            ++e.samples;
          }
          e.seconds += total;
          last_call[i] = total / repeats;
          last_units[i] = units;
          if (e.sizes == 0) e.min_units = units;
          e.max_units = std::max(e.max_units, units);
          ++e.sizes;
        } catch (const std::exception& ex) {
          e.notes.push_back("failed at " + units_text(units) + ": " + ex.what());
          stopped[i] = true;
        }
      }
    }
    for (CalibrationEntry& e : entries) report.entries.push_back(std::move(e));
  }
  model.set_learning(was_learning);
  return report;
}

std::string format_calibration(const PerfModel& model, const std::vector<std::string>& kernels) {
  std::size_t width = 6;
  for (const std::string& k : kernels) width = std::max(width, k.size());
  const int kw = static_cast<int>(width);
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-*s  %-7s  %8s  %12s  %16s  %12s\n", kw, "kernel", "backend",
                "samples", "latency [us]", "throughput [1/s]", "crossover n*");
  out += line;
  for (const std::string& name : kernels) {
    const auto id = model.find_kernel(name);
    if (!id) continue;
    const bool host_fit = model.fitted(*id, Backend::cpu);
    const bool cuda_fit = model.fitted(*id, Backend::cuda);
    std::string crossover = "cpu only";
    if (cuda_fit && host_fit) {
      const auto n = model.crossover(*id);
      if (n) {
        crossover = units_text(*n);
      } else {
        crossover = model.predict(*id, Backend::cuda, 1.0) < model.predict(*id, Backend::cpu, 1.0)
                        ? "none (cuda)"
                        : "none (cpu)";
      }
    } else if (cuda_fit) {
      crossover = "cuda only";
    }
    for (Backend b : {Backend::cpu, Backend::cuda}) {
      const std::uint64_t samples = model.samples(*id, b);
      if (samples == 0) continue;
      const LinearCost& cost = model.cost(*id, b);
      const bool fitted = model.fitted(*id, b);
      char throughput[32];
      if (cost.seconds_per_unit > 0.0) {
        std::snprintf(throughput, sizeof throughput, "%.3e", 1.0 / cost.seconds_per_unit);
      } else {
        std::snprintf(throughput, sizeof throughput, "inf");
      }
      std::snprintf(line, sizeof line, "%-*s  %-7s  %8llu  %12.2f  %16s  %12s%s\n", kw,
                    name.c_str(), to_string(b), static_cast<unsigned long long>(samples),
                    cost.latency * 1e6, throughput, crossover.c_str(),
                    fitted ? "" : "  (too few samples: prior)");
      out += line;
    }
  }
  return out;
}

}  // namespace fracmfg::exec
