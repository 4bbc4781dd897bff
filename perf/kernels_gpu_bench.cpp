// CPU-vs-GPU benchmark of every calibration kernel (exec/calibration_kernels.hpp), the
// measuring half of scripts/gpu-check. Needs no MPI: it builds in the kernel-only project
// (cmake/kernels_only) as well as in the full build.
//
//   kernels_gpu_bench                                  # 1e2..1e7, report on stdout
//   kernels_gpu_bench --max 1e6 --out gpu-check.md --model-dir perf-model
//   kernels_gpu_bench --kernels kde_binned_1d,history_fft --repeats 5
//   kernels_gpu_bench --probe     # "cuda device 0: <name>" (exit 0) or why none (exit 3)
//   kernels_gpu_bench --tridiag-methods   # only the CUDA tridiagonal methods compared
//
// With a device the report ends with the CUDA tridiagonal methods (one thread per system
// against cuSPARSE gtsv2StridedBatch, strided and interleaved batches) side by side with the
// host, each checked against the host's solution: the measurement that picks
// TridiagOptions::cuda_method's default.
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
#include "fracmfg/kernels/tridiag_batched.hpp"

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
  bool tridiag_only = false;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "kernels_gpu_bench: %s\nusage: kernels_gpu_bench [--min N] [--max N] "
               "[--per-decade K] [--repeats R] [--max-seconds S] [--kernels a,b] [--out FILE] "
               "[--model-dir DIR] | --probe | --tridiag-methods\n",
               why.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    if (opt == "-h" || opt == "--help") usage("CPU-vs-GPU timings of the calibration kernels");
    if (opt == "--tridiag-methods") {
      a.tridiag_only = true;
      continue;
    }
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

// The CUDA tridiagonal methods against each other and the host: per (systems, size) and
// layout the median of `repeats` calls (each call copies in and out, as the solvers' calls
// do) and the largest difference from the host's solution. Returns the Markdown section.
std::string compare_tridiag_methods(int device, fracmfg::kernels::CudaResources* resources,
                                    int repeats, int* code) {
  namespace fk = fracmfg::kernels;
  struct Shape {
    std::int64_t systems, size;
  };
  const Shape shapes[] = {{1000, 128},  {10000, 128},  {100000, 128},
                          {1000, 1024}, {10000, 1024}, {100, 10000}};
  std::ostringstream md;
  md << "\n## CUDA tridiagonal methods (TridiagOptions::cuda_method)\n\n"
     << "Median of " << repeats << " calls after one warm-up; each call copies the batch in and "
     << "the solution out. Diagonally dominant systems (4, -1, -1), random right-hand sides; "
     << "\"max diff\": largest |x_cuda - x_host|.\n\n"
     << "| systems x size | layout | host | cuda thomas | cuda cusparse | thomas/cusparse | "
        "max diff (thomas, cusparse) |\n|---|---|---|---|---|---|---|\n";
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  for (const Shape& sh : shapes) {
    for (fk::TridiagLayout layout : {fk::TridiagLayout::strided, fk::TridiagLayout::interleaved}) {
      const auto count = static_cast<std::size_t>(sh.systems * sh.size);
      std::vector<double> sub(count, -1.0), diag(count, 4.0), super(count, -1.0), rhs0(count);
      std::uint64_t state = 0x9e3779b97f4a7c15ULL ^ count;
      for (double& x : rhs0) {  // xorshift: values in [-1, 1)
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        x = static_cast<double>(state >> 11) * 0x1.0p-52 - 1.0;
      }
      std::vector<double> work(fk::tridiag_workspace_size(sh.systems, sh.size, false));
      std::vector<double> x(count);
      fk::TridiagBatch b;
      b.layout = layout;
      b.systems = sh.systems;
      b.size = sh.size;
      b.sub = sub.data();
      b.diag = diag.data();
      b.super = super.data();
      b.rhs = x.data();
      b.workspace = work.data();
      auto run = [&](bool cuda, fk::TridiagCudaMethod method, std::vector<double>* result) {
        fk::TridiagOptions o;
        o.cuda_method = method;
        o.cuda_device = device;
        o.cuda_resources = resources;
        std::vector<double> t;
        for (int r = 0; r <= repeats; ++r) {
          x = rhs0;  // solve in place from the same right-hand side every call
          const double t0 = now();
          if (cuda) {
            fk::tridiag_batched_cuda(b, o);
          } else {
            fk::tridiag_batched_host(b, o);
          }
          if (r > 0) t.push_back(now() - t0);
        }
        *result = x;
        return median(t);
      };
      std::vector<double> xh, xt, xc;
      char row[320];
      try {
        const double th = run(false, fk::TridiagCudaMethod::thomas, &xh);
        const double tt = run(true, fk::TridiagCudaMethod::thomas, &xt);
        const double tc = run(true, fk::TridiagCudaMethod::cusparse, &xc);
        double dt = 0.0, dc = 0.0;
        for (std::size_t i = 0; i < count; ++i) {
          dt = std::max(dt, std::abs(xt[i] - xh[i]));
          dc = std::max(dc, std::abs(xc[i] - xh[i]));
        }
        if (!(dt < 1e-12) || !(dc < 1e-12)) *code = 1;
        std::snprintf(row, sizeof row,
                      "| %lld x %lld | %s | %.3g ms | %.3g ms | %.3g ms | %.2f | %.1e, %.1e |\n",
                      static_cast<long long>(sh.systems), static_cast<long long>(sh.size),
                      layout == fk::TridiagLayout::strided ? "strided" : "interleaved", 1e3 * th,
                      1e3 * tt, 1e3 * tc, tt / tc, dt, dc);
      } catch (const std::exception& e) {
        *code = 1;
        std::snprintf(row, sizeof row, "| %lld x %lld | %s | FAILED: %.200s |||||\n",
                      static_cast<long long>(sh.systems), static_cast<long long>(sh.size),
                      layout == fk::TridiagLayout::strided ? "strided" : "interleaved", e.what());
      }
      md << row;
      std::fprintf(stderr, "kernels_gpu_bench: tridiag methods %s", row);
    }
  }
  return md.str();
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

    fracmfg::kernels::CudaResources resources;
    if (args.tridiag_only) {
      if (!have_device) {
        std::fprintf(stderr, "kernels_gpu_bench: --tridiag-methods needs a device (%s)\n",
                     ctx.cuda_status.c_str());
        return 3;
      }
      std::cout << compare_tridiag_methods(device, &resources, args.repeats, &code);
      return code;
    }

    // (2) the timings
    const auto kernels = fe::select_kernels(fe::calibration_kernels(), args.kernels);
    std::vector<fe::KernelTiming> timings;
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
    std::string md = fe::format_benchmark_report(model, timings, ctx);
    if (have_device) md += compare_tridiag_methods(device, &resources, args.repeats, &code);
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
