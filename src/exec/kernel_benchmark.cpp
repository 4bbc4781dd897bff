#include "fracmfg/exec/kernel_benchmark.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace fracmfg::exec {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

std::string seconds_text(double s) {
  if (!std::isfinite(s)) return "-";
  char buf[32];
  if (s < 1e-3) {
    std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  } else if (s < 1.0) {
    std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  }
  return buf;
}

std::string number_text(double x, const char* format = "%.3g") {
  if (!std::isfinite(x)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

// Per kernel (in first-seen order), per size: median cpu and cuda times.
struct SizeRow {
  double cpu = nan;
  double cuda = nan;
};

}  // namespace

double median_seconds(const KernelTiming& t) {
  if (!t.failure.empty() || t.seconds.empty()) return nan;
  std::vector<double> s = t.seconds;
  std::sort(s.begin(), s.end());
  const std::size_t m = s.size() / 2;
  return s.size() % 2 == 1 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

void record_timings(PerfModel& model, const std::vector<KernelTiming>& timings) {
  const bool was_learning = model.learning();
  model.set_learning(true);
  for (const KernelTiming& t : timings) {
    if (!t.failure.empty()) continue;
    const KernelId id = model.kernel(t.kernel);
    for (double s : t.seconds) model.add_sample(id, t.backend, t.units, s);
  }
  model.set_learning(was_learning);
}

Backend model_choice(const PerfModel& model, KernelId kernel, double n) {
  if (!model.fitted(kernel, Backend::cpu) || !model.fitted(kernel, Backend::cuda)) {
    return Backend::cpu;
  }
  return model.predict(kernel, Backend::cuda, n) < model.predict(kernel, Backend::cpu, n)
             ? Backend::cuda
             : Backend::cpu;
}

std::string format_benchmark_report(const PerfModel& model,
                                    const std::vector<KernelTiming>& timings,
                                    const BenchmarkContext& context) {
  std::vector<std::string> kernels;
  std::map<std::string, std::map<double, SizeRow>> rows;
  std::vector<std::string> failures;
  for (const KernelTiming& t : timings) {
    if (std::find(kernels.begin(), kernels.end(), t.kernel) == kernels.end()) {
      kernels.push_back(t.kernel);
    }
    SizeRow& r = rows[t.kernel][t.units];
    (t.backend == Backend::cpu ? r.cpu : r.cuda) = median_seconds(t);
    if (!t.failure.empty()) {
      failures.push_back(t.kernel + " on " + to_string(t.backend) +
                         " at n = " + number_text(t.units) + ": " + t.failure);
    }
  }

  std::string md = "# fracmfg GPU check\n\n";
  md += "- host: `" + context.host_name + "`\n";
  md += "- device: `" + context.device_name + "`\n";
  md += "- CUDA: " + context.cuda_status + "\n";
  if (!context.model_file.empty()) {
    md += "- performance model: `" + context.model_file +
          "` (the Selector of this host and device loads it; copy it into `FRACMFG_PERF_DIR` "
          "or `~/.cache/fracmfg`)\n";
  }
  md +=
      "\nTimes are medians of the timed calls after one warm-up call, n is the performance "
      "model's size (Workload::units()), speed-up is cpu time / cuda time, and the decision "
      "is the Selector's model rule for backend auto (memory limits and explicit choices "
      "aside).\n";

  md += "\n## Summary\n\n";
  md +=
      "| kernel | cpu latency | cpu throughput [n/s] | cuda latency | cuda throughput [n/s] | "
      "crossover n* | best speed-up (at n) |\n";
  md += "|---|---|---|---|---|---|---|\n";
  for (const std::string& k : kernels) {
    const auto id = model.find_kernel(k);
    if (!id) continue;
    const LinearCost& hc = model.cost(*id, Backend::cpu);
    const LinearCost& cc = model.cost(*id, Backend::cuda);
    const bool hf = model.fitted(*id, Backend::cpu);
    const bool cf = model.fitted(*id, Backend::cuda);
    std::string crossover = "-";
    if (hf && cf) {
      if (const auto n = model.crossover(*id)) {
        crossover = number_text(*n);
      } else {
        crossover = model_choice(model, *id, 1.0) == Backend::cuda ? "none (cuda always)"
                                                                   : "none (cpu always)";
      }
    } else {
      crossover = cf ? "cuda only" : "cpu only";
    }
    double best = nan;
    double best_n = nan;
    for (const auto& [n, r] : rows[k]) {
      const double s = r.cpu / r.cuda;
      if (std::isfinite(s) && !(s <= best)) {
        best = s;
        best_n = n;
      }
    }
    auto throughput = [](const LinearCost& c) {
      return c.seconds_per_unit > 0.0 ? number_text(1.0 / c.seconds_per_unit) : "inf";
    };
    md += "| " + k + " | " + (hf ? seconds_text(hc.latency) : "-") + " | " +
          (hf ? throughput(hc) : "-") + " | " + (cf ? seconds_text(cc.latency) : "-") + " | " +
          (cf ? throughput(cc) : "-") + " | " + crossover + " | " +
          (std::isfinite(best) ? number_text(best, "%.2f") + "x (" + number_text(best_n) + ")"
                               : "-") +
          " |\n";
  }

  for (const std::string& k : kernels) {
    md += "\n## " + k + "\n\n";
    md += "| n | cpu | cuda | speed-up | faster (measured) | selector (model) |\n";
    md += "|---|---|---|---|---|---|\n";
    const auto id = model.find_kernel(k);
    for (const auto& [n, r] : rows[k]) {
      const double s = r.cpu / r.cuda;
      std::string faster = "-";
      if (std::isfinite(s)) faster = s > 1.0 ? "cuda" : "cpu";
      const std::string decision = id ? to_string(model_choice(model, *id, n)) : "-";
      md += "| " + number_text(n) + " | " + seconds_text(r.cpu) + " | " + seconds_text(r.cuda) +
            " | " + (std::isfinite(s) ? number_text(s, "%.2f") + "x" : "-") + " | " + faster +
            " | " + decision + " |\n";
    }
  }

  if (!failures.empty() || !context.notes.empty()) {
    md += "\n## Fallbacks and notes\n\n";
    for (const std::string& f : failures)
      md += "- failed (the selector would fall back to cpu): " + f + "\n";
    for (const std::string& n : context.notes) md += "- " + n + "\n";
  }
  return md;
}

}  // namespace fracmfg::exec
