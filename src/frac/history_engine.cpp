#include "frac/history_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "fracmfg/core/error.hpp"
#include "fracmfg/exec/kernel_workloads.hpp"
#include "fracmfg/frac/convolution.hpp"

namespace fracmfg::frac::detail {

namespace {

// Cost model of `automatic` for one square (m signal rows, p output rows, c components), in
// nanoseconds on one core, fitted to the timings of the history kernels (Release build):
// a multiply-add of the direct sum costs about kDirectNs per rule; an FFT square costs
// (1 + rules) transforms of length L at about kFftNs L log2 L each, kPassNs per element for
// the passes around them (pad, multiply, extract) and a fixed kCallNs per call. The
// constants sit inside the timings' range; the FFT's cost per L log2 L varies most, higher
// for small L and for large batches. The choice only affects speed, never the result beyond
// round-off.
constexpr double kDirectNs = 1.0;
constexpr double kFftNs = 0.5;
constexpr double kPassNs = 1.5;
constexpr double kCallNs = 1500.0;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::int64_t HistoryEngine::padded_points(std::int64_t points, HistoryMode mode,
                                          std::int64_t block) {
  if (mode == HistoryMode::direct || points <= block) return std::max<std::int64_t>(points, 1);
  std::int64_t s = block;
  while (s < points) s *= 2;
  return s;
}

std::int64_t HistoryEngine::weight_count(std::int64_t points, HistoryMode mode) {
  if (mode == HistoryMode::direct) return std::max<std::int64_t>(points, 1) + 1;
  return static_cast<std::int64_t>(frac::next_fast_fft_size(static_cast<std::size_t>(points))) + 1;
}

namespace {

/// The rank's device and cuFFT plan cache from the selector (the caller's options win when
/// it has no selector).
kernels::HistoryOptions on_selector_device(kernels::HistoryOptions o, exec::Selector* selector) {
  if (selector != nullptr) {
    o.cuda_device = selector->device().device;
    if (o.cuda_resources == nullptr) o.cuda_resources = selector->cuda_resources();
  }
  return o;
}

}  // namespace

HistoryEngine::HistoryEngine(std::int64_t points, std::int64_t components, int rules,
                             HistoryMode mode, std::int64_t block, std::vector<HistoryGroup> groups,
                             exec::Selector* selector, kernels::HistoryOptions kernel_options)
    : points_(points),
      components_(components),
      rules_(rules),
      mode_(mode),
      block_(mode == HistoryMode::direct ? std::max<std::int64_t>(points, 1) : block),
      padded_(padded_points(points, mode, block)),
      groups_(std::move(groups)),
      selector_(selector),
      workspace_(on_selector_device(kernel_options, selector)) {
  if (points < 1) throw Error("HistoryEngine: needs at least one point");
  if (components < 0) throw Error("HistoryEngine: negative component count");
  if (rules != 1 && rules != 2) throw Error("HistoryEngine: rules must be 1 or 2");
  if (block < 1) throw Error("HistoryEngine: the base block must be >= 1");
  std::int64_t covered = 0;
  const std::int64_t needed = weight_count(points, mode);
  for (const HistoryGroup& g : groups_) {
    if (g.begin != covered || g.end < g.begin) {
      throw Error("HistoryEngine: groups must cover the components in order");
    }
    covered = g.end;
    for (int r = 0; r < rules; ++r) {
      if (static_cast<std::int64_t>(g.weights[r].size()) < needed) {
        throw Error("HistoryEngine: a group holds " + std::to_string(g.weights[r].size()) +
                    " weights, " + std::to_string(needed) + " are needed");
      }
    }
  }
  if (covered != components) throw Error("HistoryEngine: groups do not cover every component");
  if (components > 0 && points > std::numeric_limits<std::int64_t>::max() / 8 / components) {
    throw Error("HistoryEngine: " + std::to_string(points) + " steps of " +
                std::to_string(components) + " components exceed the index range");
  }
  const auto size = static_cast<std::size_t>(points * components);
  f_.assign(size, 0.0);
  for (int r = 0; r < rules; ++r) sums_[r].assign(size, 0.0);
  spectra_.resize(groups_.size());
  for (auto& g : spectra_) g.resize(static_cast<std::size_t>(rules));
  if (selector_ != nullptr) kernel_id_ = selector_->kernel("history_fft");
}

void HistoryEngine::run(const std::function<void(std::int64_t)>& step) {
  for (int r = 0; r < rules_; ++r) std::fill(sums_[r].begin(), sums_[r].end(), 0.0);
  counters_ = HistoryCounters{};
  run_block(0, padded_, step);
}

void HistoryEngine::run_block(std::int64_t lo, std::int64_t size,
                              const std::function<void(std::int64_t)>& step) {
  if (lo >= points_) return;
  if (size <= block_) {
    base_block(lo, std::min(lo + size, points_), step);
    return;
  }
  const std::int64_t half = size / 2;
  const std::int64_t mid = lo + half;
  run_block(lo, half, step);
  if (mid < points_) add_square(lo, half, std::min(half, points_ - mid));
  run_block(mid, half, step);
}

kernels::HistoryBlock HistoryEngine::block_of(const HistoryGroup& g, std::int64_t lo,
                                              std::int64_t m, std::int64_t n0, std::int64_t p) {
  kernels::HistoryBlock b;
  b.components = g.end - g.begin;
  b.stride = components_;
  b.signal_rows = m;
  b.output_rows = p;
  b.offset = n0 - lo;
  b.rules = rules_;
  b.signal = f_.data() + lo * components_ + g.begin;
  for (int r = 0; r < rules_; ++r) b.output[r] = sums_[r].data() + n0 * components_ + g.begin;
  return b;
}

void HistoryEngine::base_block(std::int64_t lo, std::int64_t hi,
                               const std::function<void(std::int64_t)>& step) {
  for (std::int64_t n = lo; n < hi; ++n) {
    if (n > lo && components_ > 0) {
      const auto t0 = std::chrono::steady_clock::now();
      for (const HistoryGroup& g : groups_) {
        if (g.end == g.begin) continue;
        kernels::HistoryWeights w;
        for (int r = 0; r < rules_; ++r) w.weights[r] = g.weights[r].data();
        w.count = static_cast<std::int64_t>(g.weights[0].size());
        kernels::history_direct_host(block_of(g, lo, n - lo, n, 1), w);
        ++counters_.local_sums;
      }
      counters_.local_seconds += seconds_since(t0);
    }
    step(n);
  }
}

const std::vector<double>& HistoryEngine::spectrum(std::size_t group, int rule,
                                                   std::int64_t length) {
  auto& cache = spectra_[group][static_cast<std::size_t>(rule)];
  auto it = cache.find(length);
  if (it == cache.end()) {
    it =
        cache
            .emplace(length, kernels::history_spectrum(groups_[group].weights[rule].data(), length))
            .first;
  }
  return it->second;
}

void HistoryEngine::add_square(std::int64_t lo, std::int64_t m, std::int64_t p) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::int64_t mid = lo + m;
  // The shortest fast length without wrap-around in the wanted outputs (kernels/history.hpp):
  // 2m for a full square of a power-of-two base block, less for the last, partial squares.
  const std::int64_t length =
      static_cast<std::int64_t>(frac::next_fast_fft_size(static_cast<std::size_t>(m + p - 1)));
  const double log_length = std::log2(static_cast<double>(length));
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    const HistoryGroup& g = groups_[gi];
    const std::int64_t c = g.end - g.begin;
    if (c == 0) continue;
    const kernels::HistoryBlock b = block_of(g, lo, m, mid, p);
    bool use_fft = mode_ == HistoryMode::fft;
    if (mode_ == HistoryMode::automatic) {
      const double cd = static_cast<double>(c);
      const double direct_ns = kDirectNs * static_cast<double>(m) * static_cast<double>(p) * cd *
                               static_cast<double>(rules_);
      const double fft_ns = cd * static_cast<double>(length) *
                                ((1 + rules_) * kFftNs * log_length + (1 + 2 * rules_) * kPassNs) +
                            kCallNs;
      use_fft = fft_ns < direct_ns;
    }
    if (!use_fft) {
      kernels::HistoryWeights w;
      for (int r = 0; r < rules_; ++r) w.weights[r] = g.weights[r].data();
      w.count = static_cast<std::int64_t>(g.weights[0].size());
      kernels::history_direct_host(b, w);
      ++counters_.direct_squares;
      continue;
    }
    kernels::HistorySpectra s;
    s.fft_length = length;
    for (int r = 0; r < rules_; ++r) s.spectrum[r] = spectrum(gi, r, length).data();
    if (selector_ == nullptr) {
      kernels::history_fft_host(b, s, workspace_);
    } else {
      const exec::Workload w = exec::history_fft_workload(kernel_id_, c, length, m, p, rules_);
      selector_->run(
          w, [&] { kernels::history_fft_host(b, s, workspace_); },
          [&](const exec::Decision& d) { kernels::history_fft_cuda(b, s, workspace_, d.chunks); });
    }
    ++counters_.fft_squares;
  }
  counters_.square_seconds += seconds_since(t0);
}

}  // namespace fracmfg::frac::detail
