#pragma once
// exec::Workload: how one call of a node-local kernel describes itself to the rank's
// Selector, and the small value types shared by the selector and its performance model.
//
//   const exec::KernelId tri = selector.kernel("tridiag_batched");   // once
//   exec::Workload w;
//   w.kernel = tri;
//   w.elements = systems * points;          // the model's size variable (times repeats)
//   w.bytes = 5.0 * 8 * w.elements;         // memory traffic of the kernel itself
//   w.transfer_bytes = 4.0 * 8 * w.elements;  // host<->device copies of the cuda path
//   w.flops = 8.0 * w.elements;
//   selector.run(w, host_fn, cuda_fn);

#include <cstdint>
#include <optional>
#include <string_view>

namespace fracmfg::exec {

/// Where a kernel call runs.
enum class Backend : std::uint8_t { cpu = 0, cuda = 1 };
inline constexpr int backend_count = 2;

/// "cpu" | "cuda": the words of decks, reports, logs and performance files.
const char* to_string(Backend backend);
/// "cpu" | "cuda" -> Backend; also "host", the word for cpu in files written before the
/// backend had one name (performance models), read as cpu. nullopt for anything else.
std::optional<Backend> parse_backend(std::string_view text);

/// A kernel name interned by PerfModel::kernel / Selector::kernel: a small index, valid for
/// the object that issued it. Register names once (not on a hot path); pass ids afterwards.
struct KernelId {
  std::uint32_t index = 0;
  friend bool operator==(KernelId a, KernelId b) { return a.index == b.index; }
  friend bool operator!=(KernelId a, KernelId b) { return a.index != b.index; }
};

/// One call of a kernel. All amounts are totals for the whole call (all repeats).
struct Workload {
  KernelId kernel;
  /// Work items per repeat (grid points, particles, systems x points, ...).
  std::int64_t elements = 0;
  /// How many times the call applies the kernel to the same data (an iterative kernel sets
  /// this to its iteration count; values < 1 count as 1). The performance model's size
  /// variable is elements x repeats, so latency is paid once per call.
  std::int64_t repeats = 1;
  /// Bytes the kernel reads and writes in memory (all repeats).
  double bytes = 0.0;
  /// Bytes the cuda path copies between host and device (0 when the data is resident on the
  /// device). Together with `bytes` this is the data moved by a cuda call.
  double transfer_bytes = 0.0;
  /// Floating-point operations (all repeats).
  double flops = 0.0;
  /// Bytes that must be resident on the device at once for the cuda path; 0 skips the
  /// memory check.
  double device_bytes = 0.0;
  /// True when the cuda path can process the data in chunks that fit the device; a working
  /// set that does not fit then yields Decision::chunks > 1 instead of a cpu run.
  bool chunkable = false;

  /// The performance model's size variable n = elements x max(repeats, 1).
  double units() const {
    return static_cast<double>(elements) * static_cast<double>(repeats < 1 ? 1 : repeats);
  }
};

}  // namespace fracmfg::exec
