#pragma once
// Splitting work in proportion to speed: ownership counts for a DMDA (contiguous ranges
// per rank, as DMDACreate1d/2d take them in lx/ly) and the general bounded apportionment
// they are built on. Pure functions, not collective: every rank computes the same answer
// from the same (gathered) weights.
//
// Method. With real shares x_i = clamp(lambda * w_i, min, max), lambda chosen so that
// sum x_i = total (the proportional split, with ranks that would fall below the minimum or
// above the maximum held there and the rest rescaled), each count is floor(x_i) and the
// remaining units go one each to the largest fractional parts (largest-remainder or
// Hamilton rounding), ties to the lower index. Equal weights therefore give PETSc's own
// split: total/p each, the first total%p ranks one more.

#include <petscsys.h>

#include <cstdint>
#include <vector>

namespace fracmfg::exec {

/// Integer counts c_i, sum exactly `total`, min_each <= c_i <= max_each (max_each < 0: no
/// upper bound), proportional to weights as described above. Throws Error when weights is
/// empty, a weight is not finite and > 0, min_each < 0, or the bounds cannot be met
/// (total < p*min_each or total > p*max_each).
std::vector<std::int64_t> apportion(const std::vector<double>& weights, std::int64_t total,
                                    std::int64_t min_each, std::int64_t max_each = -1);

/// Ownership counts of n grid points over weights.size() ranks (contiguous ranges, in rank
/// order), each >= min_per_rank, sum exactly n. Same errors as apportion().
std::vector<PetscInt> partition(const std::vector<double>& weights, PetscInt n,
                                PetscInt min_per_rank = 1);

/// lx (px entries, sum nx) and ly (py entries, sum ny) for DMDACreate2d.
struct Partition2d {
  std::vector<PetscInt> lx;
  std::vector<PetscInt> ly;
};

/// Splits an nx x ny grid over a px x py process grid from per-rank weights (speeds) given
/// in PETSc's rank order, rank = i + px * j (i the x index). A tensor-product split can only
/// follow a rank-one weight pattern w_ij = a_i b_j exactly; column i gets weight
/// sum_j w_ij and row j gets sum_i w_ij, which is exact in that case and otherwise the
/// best rank-one proxy by row/column totals. Throws Error when rank_weights.size() !=
/// px*py or the 1D splits fail.
Partition2d partition_2d(const std::vector<double>& rank_weights, int px, int py, PetscInt nx,
                         PetscInt ny, PetscInt min_per_rank = 1);

/// The same for a process grid of any dimension d (procs[a] ranks and points[a] grid points
/// along axis a; a 3D DMDA's px x py x pz): rank r = i0 + procs[0] (i1 + procs[1] i2 ...)
/// in PETSc's order; the ranges along axis a follow the totals of the rank weights over the
/// slabs i_a = const, which is exact for weights w = a_i0 b_i1 c_i2. Returns d vectors of
/// ownership counts (lx, ly, lz). Throws Error as partition_2d().
std::vector<std::vector<PetscInt>> partition_grid(const std::vector<double>& rank_weights,
                                                  const std::vector<int>& procs,
                                                  const std::vector<PetscInt>& points,
                                                  PetscInt min_per_rank = 1);

}  // namespace fracmfg::exec
