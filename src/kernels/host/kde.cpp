// Host backend of kernels::kde: Kokkos loops over samples (binning) and grid points (exact
// sum) running the bodies of kernels/kde_item.hpp, FFTW for the convolution.
#include "fracmfg/kernels/kde.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "kernels/fftw_handles.hpp"
#include "kernels/host/kde_plan.hpp"
#include "kernels/host/kernel_checks.hpp"
#include "kernels/kde_item.hpp"

namespace fracmfg::kernels {

namespace {

using HostPolicy =
    Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<std::int64_t>>;
// Kokkos takes a loop's label as a const std::string&: made once, not per call.
const std::string kLabelKdeBinHost{"fracmfg::kde_bin_host"};
const std::string kLabelKdeExactHost{"fracmfg::kde_exact_host"};

void check_axis(const KdeAxis& a, detail::Who who, const char* name) {
  const std::string axis = who + ": axis " + name + ": ";
  if (a.points < 1) throw Error(axis + "needs at least one grid point");
  if (!(std::isfinite(a.origin))) throw Error(axis + "origin is not finite");
  if (!(std::isfinite(a.spacing) && a.spacing > 0.0)) {
    throw Error(axis + "spacing must be positive and finite");
  }
  if (!(std::isfinite(a.bandwidth) && a.bandwidth > 0.0)) {
    throw Error(axis + "bandwidth must be positive and finite");
  }
  if (a.boundary != KdeBoundary::open && a.boundary != KdeBoundary::reflecting &&
      a.boundary != KdeBoundary::periodic) {
    throw Error(axis + "unknown boundary");
  }
  if (a.points > (std::int64_t{1} << 40)) throw Error(axis + "too many grid points");
  // The kernel spans 2 floor(c h / dx) + 1 grid offsets; keep that countable.
  if (a.bandwidth / a.spacing > 1e7) {
    throw Error(axis + "bandwidth/spacing ratio above 1e7");
  }
}

// Atomic accumulation only when the host space runs several threads.
template <bool Atomic>
void bin_samples(const detail::KdePlan& plan, const KdeSamples& s, double* work) {
  const detail::KdeAxisPlan px = plan.x;
  const detail::KdeAxisPlan py = plan.y;
  const int dim = plan.dim;
  const double* x = s.x;
  const double* y = s.y;
  const double* w = s.weight;
  Kokkos::parallel_for(kLabelKdeBinHost, HostPolicy(0, s.count), [=](const std::int64_t i) {
    detail::kde_bin_sample(px, py, dim, x[i], dim == 2 ? y[i] : 0.0, w != nullptr ? w[i] : 1.0,
                           [&](std::int64_t q, double v) {
                             if constexpr (Atomic) {
                               Kokkos::atomic_add(&work[q], v);
                             } else {
                               work[q] += v;
                             }
                           });
  });
}

// Reflecting axes: extend the binned data by its mirror image (period 2G), so that the
// circular convolution adds the reflected kernel tails.
void mirror_extend(const detail::KdePlan& plan, double* work) {
  const std::int64_t mx = plan.x.work;
  const std::int64_t my = plan.y.work;
  if (plan.x.mode == detail::kde_reflecting) {
    const std::int64_t g = plan.x.points;
    for (std::int64_t qy = 0; qy < my; ++qy) {
      double* row = work + qy * mx;
      for (std::int64_t qx = g; qx < 2 * g; ++qx) row[qx] = row[2 * g - 1 - qx];
    }
  }
  if (plan.dim == 2 && plan.y.mode == detail::kde_reflecting) {
    const std::int64_t g = plan.y.points;
    for (std::int64_t qy = g; qy < 2 * g; ++qy) {
      std::copy_n(work + (2 * g - 1 - qy) * mx, mx, work + qy * mx);
    }
  }
}

}  // namespace

void check_kde(const KdeGrid& grid, const KdeSamples& samples, const double* density,
               const KdeOptions& options, const char* caller) {
  const detail::Who who{caller};
  if (grid.dim != 1 && grid.dim != 2) {
    throw Error(who + ": dimension must be 1 or 2, got " + std::to_string(grid.dim));
  }
  check_axis(grid.axes[0], who, "x");
  if (grid.dim == 2) check_axis(grid.axes[1], who, "y");
  if (!(options.truncation >= 1.0 && options.truncation <= 40.0)) {
    throw Error(who + ": truncation must lie in [1, 40] bandwidths");
  }
  if (options.sample_chunks < 1) {
    throw Error(who + ": sample_chunks must be >= 1");
  }
  if (samples.count < 0) throw Error(who + ": negative sample count");
  if (samples.count > 0 && samples.x == nullptr) throw Error(who + ": null x coordinates");
  if (samples.count > 0 && grid.dim == 2 && samples.y == nullptr) {
    throw Error(who + ": null y coordinates for a 2D estimate");
  }
  if (density == nullptr) throw Error(who + ": null density array");
}

void kde_binned_host(const KdeGrid& grid, const KdeSamples& samples, double* density,
                     const KdeOptions& options) {
  constexpr const char* who = "kde_binned_host";
  check_kde(grid, samples, density, options, who);
  detail::require_kokkos(who);
  const detail::KdePlan plan = detail::make_kde_plan(grid, options, true);
  const std::int64_t mx = plan.x.work;
  const std::int64_t my = plan.y.work;

  auto work = detail::fftw_real_array(static_cast<std::size_t>(plan.work_size()));
  auto spectrum = detail::fftw_complex_array(static_cast<std::size_t>(plan.spectrum_size()));
  const int n[2] = {static_cast<int>(grid.dim == 2 ? my : mx), static_cast<int>(mx)};
  const detail::FftwPlan forward(
      fftw_plan_dft_r2c(grid.dim, n, work.get(), spectrum.get(), FFTW_ESTIMATE));
  const detail::FftwPlan backward(
      fftw_plan_dft_c2r(grid.dim, n, spectrum.get(), work.get(), FFTW_ESTIMATE));
  if (!forward || !backward) throw Error(std::string(who) + ": FFTW could not plan the transform");

  std::fill_n(work.get(), plan.work_size(), 0.0);
  if (Kokkos::DefaultHostExecutionSpace::concurrency() > 1) {
    bin_samples<true>(plan, samples, work.get());
  } else {
    bin_samples<false>(plan, samples, work.get());
  }
  mirror_extend(plan, work.get());

  fftw_execute(forward.get());
  const std::int64_t hx = mx / 2 + 1;
  for (std::int64_t ky = 0; ky < my; ++ky) {
    const double sy = plan.spectrum_y[ky];
    for (std::int64_t kx = 0; kx < hx; ++kx) {
      const double k = plan.spectrum_x[kx] * sy;
      spectrum[ky * hx + kx][0] *= k;
      spectrum[ky * hx + kx][1] *= k;
    }
  }
  fftw_execute(backward.get());

  const std::int64_t gx = plan.x.points;
  const std::int64_t gy = plan.y.points;
  for (std::int64_t jy = 0; jy < gy; ++jy) {
    const double* row = work.get() + (plan.y.offset + jy) * mx + plan.x.offset;
    std::copy_n(row, gx, density + jy * gx);
  }
}

void kde_exact_host(const KdeGrid& grid, const KdeSamples& samples, double* density,
                    const KdeOptions& options) {
  constexpr const char* who = "kde_exact_host";
  check_kde(grid, samples, density, options, who);
  detail::require_kokkos(who);
  const detail::KdePlan plan = detail::make_kde_plan(grid, options, false);
  const detail::KdeAxisPlan px = plan.x;
  const detail::KdeAxisPlan py = plan.y;
  const std::int64_t count = samples.count;
  const double* x = samples.x;
  const double* y = samples.y;
  const double* w = samples.weight;
  const std::int64_t gx = plan.x.points;
  if (grid.dim == 1) {
    Kokkos::parallel_for(kLabelKdeExactHost, HostPolicy(0, gx), [=](const std::int64_t j) {
      density[j] = detail::kde_exact_point_1d(px, j, count, x, w);
    });
  } else {
    Kokkos::parallel_for(
        kLabelKdeExactHost, HostPolicy(0, gx * plan.y.points), [=](const std::int64_t j) {
          density[j] = detail::kde_exact_point_2d(px, py, j % gx, j / gx, count, x, y, w);
        });
  }
}

double silverman_bandwidth(const double* x, const double* weight, std::int64_t count) {
  const std::string who = "silverman_bandwidth";
  if (count < 1) throw Error(who + ": needs at least one sample");
  if (x == nullptr) throw Error(who + ": null coordinates");
  const auto w = [&](std::int64_t i) { return weight != nullptr ? weight[i] : 1.0; };
  double sum_w = 0.0;
  double sum_w2 = 0.0;
  double sum_wx = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    if (!(std::isfinite(x[i]) && std::isfinite(w(i)) && w(i) >= 0.0)) {
      throw Error(who + ": sample " + std::to_string(i) +
                  " has a non-finite coordinate or a negative or non-finite weight");
    }
    sum_w += w(i);
    sum_w2 += w(i) * w(i);
    sum_wx += w(i) * x[i];
  }
  if (!(sum_w > 0.0)) throw Error(who + ": the weights sum to zero");
  const double mean = sum_wx / sum_w;
  double sum_wd2 = 0.0;
  for (std::int64_t i = 0; i < count; ++i) sum_wd2 += w(i) * (x[i] - mean) * (x[i] - mean);
  const double sigma = std::sqrt(sum_wd2 / sum_w);

  // Weighted quartiles: sample i (sorted, positive weight) sits at p_i = (S_i - w_i/2) / W.
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    if (w(i) > 0.0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](std::int64_t a, std::int64_t b) { return x[a] < x[b]; });
  std::vector<double> p(order.size());
  double cumulative = 0.0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    cumulative += w(order[k]);
    p[k] = (cumulative - 0.5 * w(order[k])) / sum_w;
  }
  const auto quantile = [&](double q) {
    if (q <= p.front()) return x[order.front()];
    if (q >= p.back()) return x[order.back()];
    const std::size_t k = static_cast<std::size_t>(std::upper_bound(p.begin(), p.end(), q) -
                                                   p.begin());  // p[k-1] <= q < p[k]
    const double t = (q - p[k - 1]) / (p[k] - p[k - 1]);
    return x[order[k - 1]] + t * (x[order[k]] - x[order[k - 1]]);
  };
  const double iqr = quantile(0.75) - quantile(0.25);
  const double spread = iqr > 0.0 ? std::min(sigma, iqr / 1.34) : sigma;
  if (!(spread > 0.0)) {
    throw NumericalError(who + ": the samples have no spread (all at one point)");
  }
  const double n_eff = sum_w * sum_w / sum_w2;
  return 0.9 * spread * std::pow(n_eff, -0.2);
}

}  // namespace fracmfg::kernels
