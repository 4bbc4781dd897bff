// Host backend of kernels::l1_history: Kokkos loops over blocks of points (a block of the
// increment and of the history stays in cache while every mode or past level is swept),
// each block running the bodies of kernels/l1_history_item.hpp.
#include "fracmfg/kernels/l1_history.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string>

#include "fracmfg/core/error.hpp"
#include "kernels/host/kernel_checks.hpp"
#include "kernels/l1_history_item.hpp"

namespace fracmfg::kernels {

namespace {
using HostPolicy =
    Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>;
// Kokkos takes a loop's label as a const std::string&: made once, not per call.
const std::string kLabelL1Direct{"fracmfg::l1_direct"};
const std::string kLabelSoeHistory{"fracmfg::soe_history"};

/// Points per block.
constexpr std::int64_t kBlock = 512;

std::int64_t blocks_of(std::int64_t points) {
  return (points + kBlock - 1) / kBlock;
}
}  // namespace

void check_soe_history(const SoeHistoryStep& s, const char* caller) {
  const detail::Who who{caller};
  if (s.points < 0 || s.terms < 0) {
    throw Error(who + ": negative size (" + std::to_string(s.points) + " points, " +
                std::to_string(s.terms) + " terms)");
  }
  if (s.points == 0) return;
  if (s.increment == nullptr || s.history == nullptr) {
    throw Error(who + ": null increment or history array");
  }
  if (s.terms > 0 && (s.decay == nullptr || s.inject == nullptr || s.weight == nullptr)) {
    throw Error(who + ": null coefficient array");
  }
}

void check_l1_direct(const L1DirectStep& s, const char* caller) {
  const detail::Who who{caller};
  if (s.points < 0 || s.levels < 0) {
    throw Error(who + ": negative size (" + std::to_string(s.points) + " points, " +
                std::to_string(s.levels) + " levels)");
  }
  if (s.points == 0) return;
  if (s.history == nullptr) throw Error(who + ": null history array");
  if (s.levels > 0 && s.weights == nullptr) throw Error(who + ": null weights array");
}

void soe_history_host(const SoeHistoryStep& s) {
  constexpr const char* who = "soe_history_host";
  check_soe_history(s, who);
  if (s.points == 0) return;
  if (s.terms > 0 && s.modes == nullptr) throw Error(std::string(who) + ": null modes array");
  detail::require_kokkos(who);
  const SoeHistoryStep step = s;
  Kokkos::parallel_for(kLabelSoeHistory, HostPolicy(0, blocks_of(step.points)),
                       [step](const std::int64_t b) {
                         const std::int64_t i0 = b * kBlock;
                         const std::int64_t i1 = std::min(step.points, i0 + kBlock);
                         detail::soe_history_range(i0, i1, step.points, step.terms, step.decay,
                                                   step.inject, step.weight, step.increment,
                                                   step.modes, step.modes, step.history);
                       });
  Kokkos::fence();
}

void l1_direct_host(const L1DirectStep& s) {
  constexpr const char* who = "l1_direct_host";
  check_l1_direct(s, who);
  if (s.points == 0) return;
  if (s.levels > 0 && s.past == nullptr) throw Error(std::string(who) + ": null past array");
  detail::require_kokkos(who);
  const L1DirectStep step = s;
  Kokkos::parallel_for(kLabelL1Direct, HostPolicy(0, blocks_of(step.points)),
                       [step](const std::int64_t b) {
                         const std::int64_t i0 = b * kBlock;
                         const std::int64_t i1 = std::min(step.points, i0 + kBlock);
                         detail::l1_direct_range(i0, i1, step.points, step.levels, step.weights,
                                                 step.past, step.history);
                       });
  Kokkos::fence();
}

}  // namespace fracmfg::kernels
