// CPU-vs-GPU benchmark of every calibration kernel (exec/calibration_kernels.hpp), the
// measuring half of scripts/gpu-check. Needs no MPI: it builds in the kernel-only project
// (cmake/kernels_only) as well as in the full build.
//
//   kernels_gpu_bench                                  # 1e2..1e7, report on stdout
//   kernels_gpu_bench --max 1e6 --out gpu-check.md --model-dir perf-model
//   kernels_gpu_bench --kernels kde_binned_1d,history_fft --repeats 5
//   kernels_gpu_bench --probe     # "cuda device 0: <name>" (exit 0) or why none (exit 3)
//
// Steps: (1) probe CUDA, (2) per kernel and size build the inputs once, time one warm-up
// and --repeats calls on the cpu and (with a device) on cuda, (3) record every timed call in
// a PerfModel named like the Selector's (host name, device name) and save it under
// --model-dir, (4) write the Markdown report (exec/kernel_benchmark.hpp). Exit code 0 when
// every call ran, 1 when a cuda call failed (the report says which), 2 for bad arguments.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/calibration_kernels.hpp"
#include "fracmfg/exec/cuda_devices.hpp"
#include "fracmfg/exec/kernel_benchmark.hpp"
#include "fracmfg/exec/perf_model.hpp"
#include "fracmfg/kernels/cuda_resources.hpp"

namespace fe = fracmfg::exec;

namespace {

struct Args {
  double min_size = 1e2;
  double max_size = 1e7;
  int per_decade = 2;
  int repeats = 5;
  double max_seconds = 5.0;  // per (kernel, backend)
  std::vector<std::string> kernels;
  std::string out;
  std::string model_dir;
  bool probe = false;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "kernels_gpu_bench: %s\nusage: kernels_gpu_bench [--min N] [--max N] "
               "[--per-decade K] [--repeats R] [--max-seconds S] [--kernels a,b] [--out FILE] "
               "[--model-dir DIR] | --probe\n",
               why.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    if (opt == "-h" || opt == "--help") usage("CPU-vs-GPU timings of the calibration kernels");
    if (opt == "--probe") {
      a.probe = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value after " + opt);
    const std::string v = argv[++i];
    try {
      if (opt == "--min") {
        a.min_size = std::stod(v);
      } else if (opt == "--max") {
        a.max_size = std::stod(v);
      } else if (opt == "--per-decade") {
        a.per_decade = std::stoi(v);
      } else if (opt == "--repeats") {
        a.repeats = std::stoi(v);
      } else if (opt == "--max-seconds") {
        a.max_seconds = std::stod(v);
      } else if (opt == "--kernels") {
        std::stringstream ss(v);
        for (std::string k; std::getline(ss, k, ',');) {
          if (!k.empty()) a.kernels.push_back(k);
        }
      } else if (opt == "--out") {
        a.out = v;
      } else if (opt == "--model-dir") {
        a.model_dir = v;
      } else {
        usage("unknown option " + opt);
      }
    } catch (const std::logic_error&) {
      usage("bad value '" + v + "' for " + opt);
    }
  }
  if (!(a.min_size >= 1.0) || !(a.max_size >= a.min_size) || a.per_decade < 1 || a.repeats < 1 ||
      !(a.max_seconds > 0.0)) {
    usage("need 1 <= min <= max, per-decade >= 1, repeats >= 1, max-seconds > 0");
  }
  return a;
}

// Log-spaced sizes as `fracmfg calibrate` visits them (exec::calibration_sizes).
std::vector<std::int64_t> sizes(const Args& a) {
  std::vector<std::int64_t> s;
  const int steps =
      static_cast<int>(std::floor(std::log10(a.max_size / a.min_size) * a.per_decade + 1e-9));
  for (int k = 0; k <= steps; ++k) {
    s.push_back(std::llround(a.min_size * std::pow(10.0, static_cast<double>(k) / a.per_decade)));
  }
  if (s.back() < std::llround(a.max_size)) s.push_back(std::llround(a.max_size));
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The name exec::Hardware::probe gives this host (the performance file is keyed by it).
std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown-host";
  return buf;
}

template <class F>
fe::KernelTiming time_calls(const std::string& kernel, fe::Backend b, double units, int repeats,
                            F&& call) {
  fe::KernelTiming t;
  t.kernel = kernel;
  t.backend = b;
  t.units = units;
  try {
    call();  // warm-up: plans, caches, first touch
    for (int r = 0; r < repeats; ++r) {
      const double t0 = now();
      call();
      t.seconds.push_back(now() - t0);
    }
  } catch (const std::exception& e) {
    t.failure = e.what();
    t.seconds.clear();
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  if (args.probe) {  // the device query of scripts/gpu-check where nvidia-smi is missing
    const fe::CudaStatus s = fe::probe_cuda();
    for (const fe::CudaDevice& d : s.devices)
      std::printf("cuda device %d: %s\n", d.id, d.name.c_str());
    if (s.devices.empty()) std::printf("no cuda device (%s)\n", s.status.c_str());
    return s.devices.empty() ? 3 : 0;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  int code = 0;
  try {
    // (1) the device
    const fe::CudaStatus cuda = fe::probe_cuda();
    fe::BenchmarkContext ctx;
    ctx.host_name = host_name();
    const bool have_device = !cuda.devices.empty();
    const int device = have_device ? cuda.devices.front().id : -1;
    ctx.device_name = have_device ? cuda.devices.front().name : "cpu";
    ctx.cuda_status = !cuda.compiled ? "not compiled in this build"
                      : have_device  ? "runtime " + std::to_string(cuda.runtime_version) +
                                          ", driver " + std::to_string(cuda.driver_version) +
                                          ", device " + std::to_string(device) + " of " +
                                          std::to_string(cuda.devices.size())
                                    : "no device (" + cuda.status + ")";
    if (!have_device) ctx.notes.push_back("cpu timings only: " + ctx.cuda_status);

    // (2) the timings
    const auto kernels = fe::select_kernels(fe::calibration_kernels(), args.kernels);
    std::vector<fe::KernelTiming> timings;
    fracmfg::kernels::CudaResources resources;
    for (const fe::CalibratedKernel& k : kernels) {
      double spent[2] = {0.0, 0.0};
      bool stopped[2] = {false, !have_device};
      for (std::int64_t n : sizes(args)) {
        if (stopped[0] && stopped[1]) break;
        fe::CalibrationCase c = k.make_case(n);
        const double units = c.workload.units();
        for (int b = 0; b < 2; ++b) {
          if (stopped[b]) continue;
          const auto backend = static_cast<fe::Backend>(b);
          if (backend == fe::Backend::cuda && !c.cuda) {
            ctx.notes.push_back(k.name + ": no cuda path");
            stopped[b] = true;
            continue;
          }
          const double t0 = now();
          fe::KernelTiming t =
              backend == fe::Backend::cpu
                  ? time_calls(k.name, backend, units, args.repeats, [&] { c.host(); })
                  : time_calls(k.name, backend, units, args.repeats,
                               [&] { c.cuda(device, &resources); });
          spent[b] += now() - t0;
          std::fprintf(stderr, "kernels_gpu_bench: %-22s %-4s n = %-10.3g %s\n", k.name.c_str(),
                       fe::to_string(backend), units,
                       t.failure.empty() ? "ok" : ("FAILED: " + t.failure).c_str());
          if (!t.failure.empty()) {
            code = 1;
            stopped[b] = true;
          }
          timings.push_back(std::move(t));
          if (spent[b] > args.max_seconds) {
            ctx.notes.push_back(k.name + " on " + fe::to_string(backend) + ": sizes above " +
                                std::to_string(n) + " skipped (time cap " +
                                std::to_string(args.max_seconds) + " s)");
            stopped[b] = true;
          }
        }
      }
    }

    // (3) the performance model, named like the Selector's
    fe::PerfModel model(ctx.host_name, ctx.device_name);
    fe::record_timings(model, timings);
    if (!args.model_dir.empty()) {
      model.save(args.model_dir);
      ctx.model_file = model.path(args.model_dir);
    }

    // (4) the report
    const std::string md = fe::format_benchmark_report(model, timings, ctx);
    if (args.out.empty()) {
      std::cout << md;
    } else {
      std::ofstream out(args.out);
      out << md;
      if (!out) throw fracmfg::IoError("cannot write " + args.out);
      std::fprintf(stderr, "kernels_gpu_bench: report written to %s\n", args.out.c_str());
    }
  } catch (const fracmfg::Error& e) {
    std::fprintf(stderr, "kernels_gpu_bench: %s\n", e.what());
    return static_cast<int>(e.exit_code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernels_gpu_bench: %s\n", e.what());
    return 1;
  }
  return code;
}
