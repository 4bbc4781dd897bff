#include "la/dense_lu.hpp"

#include <climits>

#include <cmath>
#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"

extern "C" {
// LAPACK: LU factorisation with partial pivoting of a general matrix, and the solve with it.
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info);
}

namespace fracmfg::la {

std::int64_t dense_lu_solve(std::size_t n, const double* a, double* b) {
  if (n == 0) return -1;
  if (n > static_cast<std::size_t>(INT_MAX) / n) {
    throw Error("dense_lu_solve: a system of " + std::to_string(n) +
                " unknowns exceeds LAPACK's int range");
  }
  // LAPACK stores column-major: factor the transpose of the row-major array's view (a copy,
  // O(n^2) beside the O(n^3) factorisation), so the pivoting is by rows of a as it reads.
  std::vector<double> col(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) col[j * n + i] = a[i * n + j];
  }
  const int m = static_cast<int>(n);
  std::vector<int> pivots(n);
  int info = 0;
  dgetrf_(&m, &m, col.data(), &m, pivots.data(), &info);
  if (info < 0)
    throw Error("dense_lu_solve: LAPACK dgetrf rejected argument " + std::to_string(-info));
  // dgetrf reports the first exactly zero pivot (info > 0, 1-based); a NaN or Inf in the
  // matrix reaches a pivot instead.
  for (std::size_t k = 0; k < n; ++k) {
    const double pivot = col[k * n + k];
    if (pivot == 0.0 || !std::isfinite(pivot)) return static_cast<std::int64_t>(k);
  }
  const char trans = 'N';
  const int one = 1;
  dgetrs_(&trans, &m, &one, col.data(), &m, pivots.data(), b, &m, &info);
  if (info < 0)
    throw Error("dense_lu_solve: LAPACK dgetrs rejected argument " + std::to_string(-info));
  return -1;
}

}  // namespace fracmfg::la
