#pragma once
// Small dense linear systems, solved by LAPACK's LU with partial pivoting (dgetrf, dgetrs):
// the fode solver's local Newton systems and the mfg fixed point's Anderson systems.
// Not collective; reentrant (a call touches only its arguments and its own workspace).

#include <cstddef>
#include <cstdint>

namespace fracmfg::la {

/// Solves a x = b for the n x n matrix a, stored row-major (a[i * n + j] = a_ij; left
/// unchanged), by LU with partial (row) pivoting; b holds x on return. Returns -1 on
/// success, else the 0-based column of the first pivot that is zero or not finite (a
/// singular matrix, or NaN/Inf in it), b then unchanged. n = 0 solves nothing. Throws Error
/// when n * n exceeds LAPACK's int range.
std::int64_t dense_lu_solve(std::size_t n, const double* a, double* b);

}  // namespace fracmfg::la
