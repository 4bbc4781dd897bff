#include "fracmfg/la/tridiag_matrix.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <sstream>
#include <string>

#include "fracmfg/core/petsc_check.hpp"

namespace fracmfg::la {

namespace {

// Local problems, agreed over the communicator by taking the largest code.
enum Problem : std::int64_t {
  ok = 0,
  not_square = 1,
  ranges_differ = 2,
  not_assembled = 3,
  petsc_failed = 4,
};

constexpr std::int64_t no_violation = std::numeric_limits<std::int64_t>::max();

// Sorts the entries of one row into the three diagonals; remembers the first entry outside
// the band (as row * N + column, so the smallest key is the first row, then column).
class RowSorter {
 public:
  RowSorter(TridiagRows& rows, PetscInt first_row, PetscInt n_global)
      : rows_(rows), first_(first_row), n_(n_global) {}

  void add(PetscInt row, PetscInt col, double value) {
    const auto i = static_cast<std::size_t>(row - first_);
    if (col == row) {
      rows_.diag[i] += value;
    } else if (col == row - 1) {
      rows_.sub[i] += value;
    } else if (col == row + 1) {
      rows_.super[i] += value;
    } else if (row == 0 && col == n_ - 1) {
      rows_.sub[i] += value;  // cyclic wrap (N >= 3 here)
      if (value != 0.0) wraps_ = true;
    } else if (row == n_ - 1 && col == 0) {
      rows_.super[i] += value;
      if (value != 0.0) wraps_ = true;
    } else if (value != 0.0) {
      const std::int64_t key = static_cast<std::int64_t>(row) * n_ + col;
      violation_ = std::min(violation_, key);
    }
  }
  bool wraps() const { return wraps_; }
  std::int64_t violation() const { return violation_; }

 private:
  TridiagRows& rows_;
  PetscInt first_;
  PetscInt n_;
  bool wraps_ = false;
  std::int64_t violation_ = no_violation;
};

// SeqAIJ block in CSR form; columns are mapped to global indices by `to_global`.
template <class ColumnMap>
void read_seqaij(Mat block, PetscInt first_row, RowSorter& sorter, ColumnMap to_global) {
  PetscInt n = 0;
  const PetscInt* ia = nullptr;
  const PetscInt* ja = nullptr;
  PetscBool done = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(MatGetRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  if (!done) throw Error("extract_tridiagonal: MatGetRowIJ could not give the CSR arrays");
  const PetscScalar* values = nullptr;
  PetscErrorCode ierr = MatSeqAIJGetArrayRead(block, &values);
  if (ierr == 0) {
    for (PetscInt i = 0; i < n; ++i) {
      for (PetscInt k = ia[i]; k < ia[i + 1]; ++k) {
        sorter.add(first_row + i, to_global(ja[k]), static_cast<double>(values[k]));
      }
    }
    ierr = MatSeqAIJRestoreArrayRead(block, &values);
  }
  const PetscErrorCode ierr2 =
      MatRestoreRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done);
  FRACMFG_PETSC_CHECK(ierr);
  FRACMFG_PETSC_CHECK(ierr2);
}

void read_rows(Mat A, PetscInt rstart, PetscInt rend, PetscInt cstart, RowSorter& sorter) {
  PetscBool is_seq = PETSC_FALSE;
  PetscBool is_mpi = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(A), MATSEQAIJ, &is_seq));
  FRACMFG_PETSC_CHECK(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(A), MATMPIAIJ, &is_mpi));
  if (is_seq) {
    read_seqaij(A, rstart, sorter, [](PetscInt j) { return j; });
    return;
  }
  if (is_mpi) {
    Mat diag_block = nullptr;
    Mat off_block = nullptr;
    const PetscInt* colmap = nullptr;
    FRACMFG_PETSC_CHECK(MatMPIAIJGetSeqAIJ(A, &diag_block, &off_block, &colmap));
    read_seqaij(diag_block, rstart, sorter, [cstart](PetscInt j) { return cstart + j; });
    read_seqaij(off_block, rstart, sorter, [colmap](PetscInt j) { return colmap[j]; });
    return;
  }
  for (PetscInt row = rstart; row < rend; ++row) {
    PetscInt ncols = 0;
    const PetscInt* cols = nullptr;
    const PetscScalar* vals = nullptr;
    FRACMFG_PETSC_CHECK(MatGetRow(A, row, &ncols, &cols, &vals));
    for (PetscInt k = 0; k < ncols; ++k) sorter.add(row, cols[k], static_cast<double>(vals[k]));
    FRACMFG_PETSC_CHECK(MatRestoreRow(A, row, &ncols, &cols, &vals));
  }
}

std::string allowed_columns(PetscInt row, PetscInt n) {
  std::vector<PetscInt> cols;
  for (PetscInt c : {row - 1, row, row + 1}) {
    if (c >= 0 && c < n) cols.push_back(c);
  }
  if (row == 0 && n >= 3) cols.push_back(n - 1);
  if (row == n - 1 && n >= 3) cols.insert(cols.begin(), 0);
  std::ostringstream os;
  for (std::size_t k = 0; k < cols.size(); ++k) os << (k ? ", " : "") << cols[k];
  return os.str();
}

}  // namespace

void extract_tridiagonal(Mat A, TridiagRows& rows) {
  static_assert(sizeof(PetscScalar) == sizeof(double), "fracmfg needs PETSc with real double");
  MPI_Comm comm = MPI_COMM_NULL;
  FRACMFG_PETSC_CHECK(PetscObjectGetComm(reinterpret_cast<PetscObject>(A), &comm));
  PetscInt m_global = 0;
  PetscInt n_global = 0;
  PetscInt rstart = 0;
  PetscInt rend = 0;
  PetscInt cstart = 0;
  PetscInt cend = 0;
  PetscBool assembled = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(MatGetSize(A, &m_global, &n_global));
  FRACMFG_PETSC_CHECK(MatGetOwnershipRange(A, &rstart, &rend));
  FRACMFG_PETSC_CHECK(MatGetOwnershipRangeColumn(A, &cstart, &cend));
  FRACMFG_PETSC_CHECK(MatAssembled(A, &assembled));

  std::int64_t problem = ok;
  std::string local_message;
  bool wraps = false;
  std::int64_t violation = no_violation;
  if (m_global != n_global) {
    problem = not_square;
  } else if (rstart != cstart || rend != cend) {
    problem = ranges_differ;
  } else if (!assembled) {
    problem = not_assembled;
  } else {
    try {
      const auto n = static_cast<std::size_t>(rend - rstart);
      rows.sub.assign(n, 0.0);
      rows.diag.assign(n, 0.0);
      rows.super.assign(n, 0.0);
      RowSorter sorter(rows, rstart, n_global);
      read_rows(A, rstart, rend, cstart, sorter);
      wraps = sorter.wraps();
      violation = sorter.violation();
    } catch (const std::exception& e) {
      problem = petsc_failed;
      local_message = e.what();
    }
  }

  // One reduction agrees on everything: the worst problem, the first violation and whether
  // any rank saw a cyclic entry.
  std::int64_t local[3] = {-problem, violation, wraps ? -1 : 0};
  std::int64_t global[3] = {0, 0, 0};
  if (MPI_Allreduce(local, global, 3, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS) {
    throw Error("extract_tridiagonal: MPI_Allreduce failed");
  }
  switch (-global[0]) {
    case ok: break;
    case not_square:
      throw Error("extract_tridiagonal: the matrix is not square (" + std::to_string(m_global) +
                  " x " + std::to_string(n_global) + ")");
    case ranges_differ:
      throw Error(
          "extract_tridiagonal: on some rank the owned row range differs from the owned column "
          "range; the tridiagonal solver needs them equal (as a 1D DMDA gives)");
    case not_assembled: throw Error("extract_tridiagonal: the matrix is not assembled");
    default:
      if (problem == petsc_failed) throw Error("extract_tridiagonal: " + local_message);
      throw Error("extract_tridiagonal: reading the matrix failed on another rank");
  }
  if (global[1] != no_violation) {
    const auto row = static_cast<PetscInt>(global[1] / n_global);
    const auto col = static_cast<PetscInt>(global[1] % n_global);
    std::ostringstream os;
    os << "matrix is not tridiagonal: row " << row << " has a nonzero in column " << col
       << " (allowed columns: " << allowed_columns(row, n_global) << ")";
    throw NotTridiagonalError(os.str(), row, col);
  }
  rows.global_size = n_global;
  rows.first_row = rstart;
  rows.periodic = global[2] != 0;
}

}  // namespace fracmfg::la
