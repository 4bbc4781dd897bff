#pragma once
// Reading the three diagonals of a distributed tridiagonal PETSc matrix (what the
// "fracmfg_tridiag" preconditioner does at each setup), for use with la::TridiagSolver.
//
//   la::TridiagRows rows;
//   la::extract_tridiagonal(A, rows);        // collective on A's communicator
//   la::TridiagSolver solver(comm);
//   solver.setup(rows.local_size(), rows.sub.data(), rows.diag.data(), rows.super.data(),
//                rows.periodic);
//
// Accepted matrices: square, assembled, with each rank's row range equal to its column range
// (as DMCreateMatrix of a 1D DMDA with dof 1 gives, periodic or not); SeqAIJ and MPIAIJ are
// read straight from their CSR arrays, any other type through MatGetRow. Row i may hold
// nonzeros only in columns i-1, i, i+1, and, for the cyclic wrap, (0, N-1) and (N-1, 0).
// Explicitly stored zeros elsewhere are allowed (a wider preallocated stencil whose extra
// coefficients are zero). The matrix is periodic (cyclic) when an entry (0, N-1) or (N-1, 0)
// is nonzero (N >= 3); for N <= 2 every entry is in the band.

#include <petscmat.h>

#include <string>
#include <vector>

#include "fracmfg/core/error.hpp"

namespace fracmfg::la {

/// A matrix given as tridiagonal is not: what() names the first offending row and column,
/// e.g. "matrix is not tridiagonal: row 17 has a nonzero in column 25 (allowed columns: 16,
/// 17, 18)". Thrown on every rank, with the same row and column.
class NotTridiagonalError : public Error {
 public:
  NotTridiagonalError(const std::string& message, PetscInt row, PetscInt column)
      : Error(message), row_(row), column_(column) {}
  PetscInt row() const noexcept { return row_; }
  PetscInt column() const noexcept { return column_; }

 private:
  PetscInt row_;
  PetscInt column_;
};

/// This rank's rows of a tridiagonal matrix, in TridiagSolver's convention: row i couples
/// x[i-1], x[i], x[i+1] with sub, diag, super (cyclic neighbours for the first and last
/// global rows when periodic; otherwise sub of row 0 and super of row N-1 are 0).
struct TridiagRows {
  PetscInt global_size = 0;  ///< N
  PetscInt first_row = 0;    ///< global index of this rank's first row
  bool periodic = false;     ///< an entry (0, N-1) or (N-1, 0) is nonzero (same on all ranks)
  std::vector<double> sub, diag, super;

  PetscInt local_size() const noexcept { return static_cast<PetscInt>(diag.size()); }
};

/// Fills `rows` from A (re-using its vectors' memory when the sizes do not change).
/// Collective on A's communicator. Throws, on every rank: NotTridiagonalError for an entry
/// outside the band; Error for a non-square or unassembled matrix or row and column ranges
/// that differ; PetscError if PETSc fails.
void extract_tridiagonal(Mat A, TridiagRows& rows);

}  // namespace fracmfg::la
