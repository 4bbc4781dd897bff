#include "driver_calibrate.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "driver_info.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/exec/calibrate.hpp"
#include "fracmfg/exec/hardware.hpp"
#include "fracmfg/exec/selector.hpp"

namespace fracmfg::driver {

namespace {

double parse_size(const std::string& text) {
  std::size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    throw UsageError("--sizes: '" + text + "' is not a number (expected e.g. 1e2:1e7)");
  }
  return v;
}

exec::CalibrationOptions options_from(const CalibrateArgs& a) {
  exec::CalibrationOptions o;
  const std::size_t colon = a.sizes.find(':');
  if (colon == std::string::npos) {
    o.min_size = o.max_size = parse_size(a.sizes);
  } else {
    o.min_size = parse_size(a.sizes.substr(0, colon));
    o.max_size = parse_size(a.sizes.substr(colon + 1));
  }
  o.per_decade = a.per_decade;
  o.repeats = a.repeats;
  o.max_seconds_per_kernel = a.max_seconds;
  if (a.backend == "cpu") {
    o.cuda = false;
  } else if (a.backend == "cuda") {
    o.cpu = false;
  } else if (a.backend != "all") {
    throw UsageError("--backend: unknown backend '" + a.backend + "' (expected cpu, cuda or all)");
  }
  exec::calibration_sizes(o);  // checks the sizes
  if (o.repeats < 1) throw UsageError("--repeats must be >= 1");
  if (!(o.max_seconds_per_kernel > 0.0)) throw UsageError("--max-seconds must be positive");
  return o;
}

// This rank's part of the output: a key naming its performance file, then its notes.
struct RankView {
  std::string file;
  std::string table;
  std::string notes;
};

std::string encode(const RankView& v) {
  return v.file + '\x1f' + v.table + '\x1f' + v.notes;
}

RankView decode(const std::string& s) {
  RankView v;
  const std::size_t a = s.find('\x1f');
  const std::size_t b = s.find('\x1f', a + 1);
  v.file = s.substr(0, a);
  v.table = s.substr(a + 1, b - a - 1);
  v.notes = s.substr(b + 1);
  return v;
}

}  // namespace

int run_calibrate(core::Environment& env, const CalibrateArgs& args) {
  // 1. Check the arguments (the same on every rank: errors are reported once).
  exec::CalibrationOptions options;
  std::vector<exec::CalibratedKernel> kernels;
  core::collective(env.comm(), [&] {
    options = options_from(args);
    kernels = exec::select_kernels(exec::calibration_kernels(), args.kernels);
  });

  // 2. The rank's selector: probed hardware and GPU placement, the performance file loaded.
  exec::SelectorConfig config = exec::with_environment(exec::SelectorConfig{}, env.log());
  if (!args.output.empty()) config.perf_dir = args.output;
  config.use_environment = false;
  config.learn = true;
  if (!options.cuda) config.backend = exec::BackendChoice::cpu;  // no device activation
  std::optional<exec::Selector> selector;
  core::collective(env.comm(), [&] {
    exec::Hardware hw = exec::Hardware::probe(env.comm());
    if (options.cuda && !options.cpu && !hw.cuda_compiled) {
      throw NotCompiled("the cuda backend (requested by --backend cuda)",
                        exec::available_backends(false));
    }
    selector.emplace(std::move(hw), config, env.log());
  });
  const std::string dir = selector->perf_directory();
  env.log().info("calibrating ", kernels.size(), " kernel(s), sizes ", args.sizes, ", into ", dir);

  // 3. Measure (each rank its own backends).
  const exec::CalibrationReport report = exec::calibrate(*selector, kernels, options);
  int measured = 0;
  for (const exec::CalibrationEntry& e : report.entries) measured += e.samples > 0 ? 1 : 0;
  int measured_anywhere = 0;
  MPI_Allreduce(&measured, &measured_anywhere, 1, MPI_INT, MPI_SUM, env.comm());

  // 4. Merge into the node's file (atomic, under a lock), then read back what every rank of
  //    the node wrote.
  core::collective(env.comm(), [&] { selector->model().save(dir); });
  MPI_Barrier(env.comm());
  selector->model().load(dir);

  // 5. Report: one table per distinct performance file, notes per rank.
  RankView mine;
  mine.file = selector->model().path(dir);
  std::vector<std::string> names;
  for (const exec::CalibratedKernel& k : kernels) names.push_back(k.name);
  mine.table = exec::format_calibration(selector->model(), names);
  std::ostringstream notes;
  for (const std::string& n : report.notes) notes << "    " << n << '\n';
  for (const exec::CalibrationEntry& e : report.entries) {
    for (const std::string& n : e.notes) {
      notes << "    " << e.kernel << " (" << exec::to_string(e.backend) << "): " << n << '\n';
    }
  }
  mine.notes = notes.str();
  const std::vector<std::string> all = gather_strings(env.comm(), encode(mine));
  if (env.rank() == 0) {
    std::map<std::string, std::vector<int>> ranks_of;
    std::map<std::string, std::string> table_of;
    std::vector<std::string> order;
    for (std::size_t r = 0; r < all.size(); ++r) {
      const RankView v = decode(all[r]);
      if (ranks_of.find(v.file) == ranks_of.end()) {
        order.push_back(v.file);
        table_of[v.file] = v.table;
      }
      ranks_of[v.file].push_back(static_cast<int>(r));
    }
    std::printf("fracmfg calibrate: sizes %s (%d per decade), %d repeat(s), %d rank(s)\n",
                args.sizes.c_str(), options.per_decade, options.repeats, env.size());
    for (const std::string& file : order) {
      std::string ranks;
      for (int r : ranks_of[file]) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
      std::printf("\nperformance model %s (rank%s %s):\n%s", file.c_str(),
                  ranks_of[file].size() > 1 ? "s" : "", ranks.c_str(), table_of[file].c_str());
    }
    bool header = false;
    for (std::size_t r = 0; r < all.size(); ++r) {
      const RankView v = decode(all[r]);
      if (v.notes.empty()) continue;
      if (!header) std::printf("\nnotes:\n");
      header = true;
      std::printf("  rank %zu:\n%s", r, v.notes.c_str());
    }
    std::printf(
        "\nlatency and throughput: t(n) = latency + n / throughput, n in work units; "
        "crossover n*: cuda is predicted faster above it.\n");
  }
  if (measured_anywhere == 0) {
    throw core::CollectiveError("calibrate: nothing was measured on any rank (see the notes)",
                                ExitCode::not_compiled, 0);
  }
  return 0;
}

}  // namespace fracmfg::driver
