#pragma once
// Shared pieces of the HDF5 I/O tests: a scratch directory in the build tree, DMDA fields
// filled with a known function of the global index, and a small reader for the XDMF
// sidecar's dataset references.

#include <mpi.h>
#include <petscdmda.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "fracmfg/core/petsc_check.hpp"

namespace fracmfg::test {

/// An empty directory <build>/tests/h5_scratch/<name> (the system temp directory outside
/// ctest), the same path on every rank of comm; with fresh = false an existing directory
/// keeps its content. Collective.
inline std::string scratch_dir(MPI_Comm comm, const std::string& name, bool fresh = true) {
  namespace fs = std::filesystem;
  const char* bin = std::getenv("FRACMFG_BINARY_DIR");
  const fs::path base = bin != nullptr && *bin != '\0' ? fs::path(bin) / "tests" / "h5_scratch"
                                                       : fs::temp_directory_path() / "fracmfg_h5";
  const fs::path dir = base / name;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    if (fresh) fs::remove_all(dir);
    fs::create_directories(dir);
  }
  MPI_Barrier(comm);
  return dir.string();
}

/// The value stored at global point (i, j, k), component c, of test field `id` at `step`:
/// distinct for every index, not exactly representable in few bits, the same on any rank.
inline double known_value(int id, PetscInt i, PetscInt j, PetscInt k, PetscInt c,
                          std::int64_t step) {
  return std::sin(0.37 * static_cast<double>(i) + 1.13 * static_cast<double>(j) +
                  0.71 * static_cast<double>(k) + 0.29 * static_cast<double>(c)) +
         1000.0 * static_cast<double>(c) + 0.001 * static_cast<double>(step) +
         static_cast<double>(id) / 3.0;
}

/// A DMDA and one global Vec on it; destroyed together.
struct DaField {
  DM da = nullptr;
  Vec v = nullptr;
  DaField() = default;
  DaField(const DaField&) = delete;
  DaField& operator=(const DaField&) = delete;
  ~DaField() {
    if (v != nullptr) VecDestroy(&v);
    if (da != nullptr) DMDestroy(&da);
  }
};

/// A 1D, 2D or 3D DMDA with `procs` ranks per direction (PETSC_DECIDE where 0) and, when
/// given, the ownership ranges lx (1D only), for decompositions other than the default.
inline void make_field(DaField& f, MPI_Comm comm, int dim, PetscInt nx, PetscInt ny, PetscInt nz,
                       PetscInt dof, std::vector<PetscInt> procs = {},
                       const std::vector<PetscInt>& lx = {}) {
  procs.resize(3, PETSC_DECIDE);
  for (auto& p : procs) p = p == 0 ? PETSC_DECIDE : p;
  const DMBoundaryType none = DM_BOUNDARY_NONE;
  if (dim == 1) {
    FRACMFG_PETSC_CHECK(
        DMDACreate1d(comm, none, nx, dof, 1, lx.empty() ? nullptr : lx.data(), &f.da));
  } else if (dim == 2) {
    FRACMFG_PETSC_CHECK(DMDACreate2d(comm, none, none, DMDA_STENCIL_STAR, nx, ny, procs[0],
                                     procs[1], dof, 1, nullptr, nullptr, &f.da));
  } else {
    FRACMFG_PETSC_CHECK(DMDACreate3d(comm, none, none, none, DMDA_STENCIL_STAR, nx, ny, nz,
                                     procs[0], procs[1], procs[2], dof, 1, nullptr, nullptr,
                                     nullptr, &f.da));
  }
  FRACMFG_PETSC_CHECK(DMSetUp(f.da));
  FRACMFG_PETSC_CHECK(DMCreateGlobalVector(f.da, &f.v));
}

/// Calls fn(i, j, k, c, value&) for every owned entry of the Vec, in array order.
template <class Fn>
void for_each_owned(DaField& f, Fn&& fn) {
  PetscInt xs, ys, zs, xm, ym, zm, dof;
  FRACMFG_PETSC_CHECK(DMDAGetCorners(f.da, &xs, &ys, &zs, &xm, &ym, &zm));
  FRACMFG_PETSC_CHECK(DMDAGetInfo(f.da, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                  nullptr, &dof, nullptr, nullptr, nullptr, nullptr, nullptr));
  PetscScalar* a = nullptr;
  FRACMFG_PETSC_CHECK(VecGetArray(f.v, &a));
  std::size_t n = 0;
  for (PetscInt k = zs; k < zs + zm; ++k)
    for (PetscInt j = ys; j < ys + ym; ++j)
      for (PetscInt i = xs; i < xs + xm; ++i)
        for (PetscInt c = 0; c < dof; ++c) fn(i, j, k, c, a[n++]);
  FRACMFG_PETSC_CHECK(VecRestoreArray(f.v, &a));
}

inline void fill_known(DaField& f, int id, std::int64_t step) {
  for_each_owned(f, [&](PetscInt i, PetscInt j, PetscInt k, PetscInt c, PetscScalar& x) {
    x = known_value(id, i, j, k, c, step);
  });
}

inline void fill_with(DaField& f, double value) {
  FRACMFG_PETSC_CHECK(VecSet(f.v, value));
}

/// Number of owned entries whose bits differ from known_value (summed over comm).
inline long long count_mismatches(DaField& f, MPI_Comm comm, int id, std::int64_t step) {
  long long bad = 0;
  for_each_owned(f, [&](PetscInt i, PetscInt j, PetscInt k, PetscInt c, PetscScalar& x) {
    const double want = known_value(id, i, j, k, c, step);
    if (std::memcmp(&want, &x, sizeof(double)) != 0) ++bad;
  });
  long long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
  return total;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A Format="HDF" DataItem of an XDMF file: "file.h5:/path" and its Dimensions.
struct XdmfReference {
  std::string file;
  std::string dataset;
  std::vector<unsigned long long> dims;
};

inline std::vector<XdmfReference> xdmf_hdf_references(const std::string& xml) {
  std::vector<XdmfReference> out;
  const std::regex item(
      R"re(<DataItem\s+Dimensions="([0-9 ]+)"[^>]*Format="HDF"[^>]*>([^<]+)</DataItem>)re");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), item); it != std::sregex_iterator();
       ++it) {
    XdmfReference r;
    std::istringstream dims((*it)[1].str());
    for (unsigned long long d; dims >> d;) r.dims.push_back(d);
    const std::string ref = (*it)[2].str();
    const auto colon = ref.find(':');
    r.file = ref.substr(0, colon);
    r.dataset = colon == std::string::npos ? "" : ref.substr(colon + 1);
    out.push_back(r);
  }
  return out;
}

/// Occurrences of `needle` in `text`.
inline std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

}  // namespace fracmfg::test
