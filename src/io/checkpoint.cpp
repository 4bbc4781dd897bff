#include "fracmfg/io/checkpoint.hpp"

#include <petscdmda.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "fracmfg/core/guarded_main.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "io/h5_datasets.hpp"
#include "io/h5_files.hpp"

namespace fracmfg::io {

namespace {

void check_item_name(const std::string& kind, const std::string& name, const std::string& file) {
  if (name.empty() || name.front() == '/' || name.back() == '/' ||
      name.find("//") != std::string::npos) {
    throw IoError("invalid checkpoint " + kind + " name '" + name + "' for '" + file +
                  "': use a relative HDF5 path such as \"u\" or \"particles/x\"");
  }
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

/// Offsets of consecutive blocks in rank order.
std::pair<unsigned long long, unsigned long long> block_layout(MPI_Comm comm, std::size_t count) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  unsigned long long mine = count;
  unsigned long long offset = 0;
  unsigned long long total = 0;
  MPI_Exscan(&mine, &offset, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  if (rank == 0) offset = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
  return {offset, total};
}

/// Datasets below a group, as paths relative to it ("x", "particles/x").
void collect_datasets(hid_t file, const std::string& group, const std::string& prefix,
                      const std::string& file_name, std::vector<std::string>& out) {
  for (const auto& member : detail::list_group(file, group, file_name)) {
    const std::string path = group + "/" + member;
    H5I_type_t type = H5I_BADID;
    {
      detail::H5Object object = detail::open_object(file, path, file_name);
      type = H5Iget_type(object.get());
    }
    if (type == H5I_GROUP) {
      collect_datasets(file, path, prefix + member + "/", file_name, out);
    } else if (type == H5I_DATASET) {
      out.push_back(prefix + member);
    }
  }
}

}  // namespace

// --- writer ------------------------------------------------------------------------------

struct CheckpointWriter::Impl {
  Impl(MPI_Comm comm, const std::string& path, const std::string& problem)
      : file(comm, path, "checkpoint", problem) {}
  detail::AtomicH5File file;
};

CheckpointWriter::CheckpointWriter(MPI_Comm comm, const std::string& path, std::int64_t step,
                                   double time, const std::string& problem) {
  detail::H5ErrorSilencer quiet;
  impl_ = std::make_unique<Impl>(comm, path, problem);
  MPI_Bcast(&step, 1, MPI_INT64_T, 0, comm);
  MPI_Bcast(&time, 1, MPI_DOUBLE, 0, comm);
  const std::string ctx = "the root group of '" + impl_->file.label() + "'";
  impl_->file.write([&] {
    detail::write_attribute(impl_->file.id(), "checkpoint_format", kCheckpointFormat, ctx);
    detail::write_attribute(impl_->file.id(), "step", step, ctx);
    detail::write_attribute(impl_->file.id(), "time", time, ctx);
    detail::open_or_create_group(impl_->file.id(), "/scalars", impl_->file.label());
  });
}

CheckpointWriter::~CheckpointWriter() {
  detail::reset_quietly(impl_);
}

CheckpointWriter::CheckpointWriter(CheckpointWriter&&) noexcept = default;
CheckpointWriter& CheckpointWriter::operator=(CheckpointWriter&&) noexcept = default;

const std::string& CheckpointWriter::path() const {
  return impl_->file.path();
}
const std::string& CheckpointWriter::temporary_path() const {
  return impl_->file.temporary_path();
}

void CheckpointWriter::add_field(const std::string& name, DM da, Vec v) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("add field '" + name + "'");
  impl_->file.write([&] {
    check_item_name("field", name, path());
    detail::write_dmda_dataset(impl_->file.comm(), impl_->file.id(), "/fields/" + name, da, v,
                               impl_->file.label());
  });
}

void CheckpointWriter::add_array(const std::string& name, const double* local, std::size_t count) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("add array '" + name + "'");
  impl_->file.write([&] {
    check_item_name("array", name, path());
    const auto [offset, total] = block_layout(impl_->file.comm(), count);
    detail::write_block_dataset(impl_->file.id(), "/arrays/" + name, H5T_IEEE_F64LE,
                                H5T_NATIVE_DOUBLE, local, offset, count, total,
                                impl_->file.label());
  });
}

void CheckpointWriter::add_array(const std::string& name, const std::int64_t* local,
                                 std::size_t count) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("add array '" + name + "'");
  impl_->file.write([&] {
    check_item_name("array", name, path());
    const auto [offset, total] = block_layout(impl_->file.comm(), count);
    detail::write_block_dataset(impl_->file.id(), "/arrays/" + name, H5T_STD_I64LE,
                                H5T_NATIVE_INT64, local, offset, count, total, impl_->file.label());
  });
}

void CheckpointWriter::add_scalar_double(const std::string& name, double value) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("add scalar '" + name + "'");
  impl_->file.write([&] {
    check_item_name("scalar", name, path());
    MPI_Bcast(&value, 1, MPI_DOUBLE, 0, impl_->file.comm());
    detail::H5Group g = detail::open_group(impl_->file.id(), "/scalars", impl_->file.label());
    detail::write_attribute(g.get(), name, value, detail::where(impl_->file.label(), "/scalars"));
  });
}

void CheckpointWriter::add_scalar_int64(const std::string& name, std::int64_t value) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("add scalar '" + name + "'");
  impl_->file.write([&] {
    check_item_name("scalar", name, path());
    MPI_Bcast(&value, 1, MPI_INT64_T, 0, impl_->file.comm());
    detail::H5Group g = detail::open_group(impl_->file.id(), "/scalars", impl_->file.label());
    detail::write_attribute(g.get(), name, value, detail::where(impl_->file.label(), "/scalars"));
  });
}

void CheckpointWriter::add_scalar_string(const std::string& name, const std::string& value) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("add scalar '" + name + "'");
  impl_->file.write([&] {
    check_item_name("scalar", name, path());
    std::string text = value;
    detail::bcast_string(impl_->file.comm(), text);
    detail::H5Group g = detail::open_group(impl_->file.id(), "/scalars", impl_->file.label());
    detail::write_attribute(g.get(), name, text, detail::where(impl_->file.label(), "/scalars"));
  });
}

void CheckpointWriter::commit() {
  detail::H5ErrorSilencer quiet;
  impl_->file.commit();
}

// --- reader ------------------------------------------------------------------------------

namespace {
// A checkpoint holds the state of a run that was going well: a value that is not finite
// (a run that had diverged, a damaged or edited file) would be resumed and written to the
// results. Collective on comm: every rank throws the same CollectiveError (exit code io).
void require_finite(MPI_Comm comm, const double* values, std::size_t n, const std::string& what,
                    const std::string& path) {
  int bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) {
      bad = 1;
      break;
    }
  }
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
  if (any != 0) {
    throw core::CollectiveError("cannot resume from checkpoint '" + path + "': " + what +
                                    " holds a value that is not finite (NaN or infinite); the "
                                    "run that wrote it had diverged, or the file is damaged",
                                ExitCode::io, 0);
  }
}
}  // namespace

struct CheckpointReader::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::string path;
  detail::H5File file;
  std::int64_t format = 0;
  std::int64_t step = 0;
  double time = 0.0;
  int ranks = 0;

  ~Impl() { detail::close_after_reading(file); }

  hid_t id() const { return file.get(); }

  std::string item(const std::string& kind, const std::string& name) const {
    check_item_name(kind, name, path);
    return (kind == "field" ? "/fields/" : "/arrays/") + name;
  }

  void require_scalar(const std::string& name) const {
    detail::H5Group g = detail::open_group(id(), "/scalars", path);
    if (!detail::attribute_exists(g.get(), name, detail::where(path, "/scalars"))) {
      throw IoError("checkpoint '" + path + "' has no scalar '" + name +
                    "' (it has: " + join(detail::list_attributes(id(), "/scalars", path)) + ")");
    }
  }

  std::vector<std::string> datasets_below(const std::string& group) const {
    std::vector<std::string> out;
    if (detail::object_exists(id(), group, path)) collect_datasets(id(), group, "", path, out);
    return out;
  }

  std::uint64_t checked_block_offset(const std::string& name, std::size_t count) const {
    const auto [offset, total] = block_layout(comm, count);
    const hsize_t length = detail::dataset_length(id(), item("array", name), path);
    if (total != length) {
      throw IoError("cannot read array '" + name + "' of checkpoint '" + path +
                    "' in blocks: the " + "ranks ask for " + std::to_string(total) +
                    " elements in all, the array has " + std::to_string(length));
    }
    return offset;
  }
};

CheckpointReader::CheckpointReader(MPI_Comm comm, const std::string& path)
    : impl_(std::make_unique<Impl>()) {
  detail::H5ErrorSilencer quiet;
  impl_->comm = comm;
  impl_->path = path;
  impl_->file = detail::open_for_reading(comm, path);
  const std::string ctx = "the root group of '" + path + "'";
  if (!detail::attribute_exists(impl_->id(), "checkpoint_format", ctx)) {
    throw IoError("'" + path + "' is not a fracmfg checkpoint (no checkpoint_format attribute)");
  }
  impl_->format = detail::read_attribute_int64(impl_->id(), "checkpoint_format", ctx);
  if (impl_->format != kCheckpointFormat) {
    throw IoError("checkpoint '" + path + "' has format version " + std::to_string(impl_->format) +
                  "; this build of fracmfg reads version " + std::to_string(kCheckpointFormat));
  }
  impl_->step = detail::read_attribute_int64(impl_->id(), "step", ctx);
  impl_->time = detail::read_attribute_double(impl_->id(), "time", ctx);
  impl_->ranks = static_cast<int>(detail::read_attribute_int64(impl_->id(), "mpi_ranks", ctx));
}

CheckpointReader::~CheckpointReader() {
  detail::reset_quietly(impl_);
}

CheckpointReader::CheckpointReader(CheckpointReader&&) noexcept = default;
CheckpointReader& CheckpointReader::operator=(CheckpointReader&&) noexcept = default;

const std::string& CheckpointReader::path() const {
  return impl_->path;
}
std::int64_t CheckpointReader::step() const {
  return impl_->step;
}
double CheckpointReader::time() const {
  return impl_->time;
}
std::int64_t CheckpointReader::format() const {
  return impl_->format;
}
int CheckpointReader::written_by_ranks() const {
  return impl_->ranks;
}

std::vector<std::string> CheckpointReader::field_names() const {
  detail::H5ErrorSilencer quiet;
  return impl_->datasets_below("/fields");
}

std::vector<std::string> CheckpointReader::array_names() const {
  detail::H5ErrorSilencer quiet;
  return impl_->datasets_below("/arrays");
}

std::vector<std::string> CheckpointReader::scalar_names() const {
  detail::H5ErrorSilencer quiet;
  if (!detail::object_exists(impl_->id(), "/scalars", impl_->path)) return {};
  return detail::list_attributes(impl_->id(), "/scalars", impl_->path);
}

FieldShape CheckpointReader::field_shape(const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return detail::read_field_shape(impl_->id(), impl_->item("field", name), impl_->path);
}

void CheckpointReader::read_field(const std::string& name, DM da, Vec v) const {
  detail::H5ErrorSilencer quiet;
  detail::read_dmda_dataset(impl_->comm, impl_->id(), impl_->item("field", name), da, v,
                            impl_->path);
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(v, &n));
  const PetscScalar* values = nullptr;
  FRACMFG_PETSC_CHECK(VecGetArrayRead(v, &values));
  try {
    require_finite(impl_->comm, values, static_cast<std::size_t>(n), "field '" + name + "'",
                   impl_->path);
  } catch (...) {
    VecRestoreArrayRead(v, &values);
    throw;
  }
  FRACMFG_PETSC_CHECK(VecRestoreArrayRead(v, &values));
}

std::uint64_t CheckpointReader::array_size(const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return detail::dataset_length(impl_->id(), impl_->item("array", name), impl_->path);
}

std::vector<double> CheckpointReader::read_array(const std::string& name, std::uint64_t offset,
                                                 std::uint64_t count) const {
  detail::H5ErrorSilencer quiet;
  std::vector<double> out(static_cast<std::size_t>(count));
  detail::read_block_dataset(impl_->comm, impl_->id(), impl_->item("array", name),
                             H5T_NATIVE_DOUBLE, out.data(), offset, count, impl_->path);
  require_finite(impl_->comm, out.data(), out.size(), "array '" + name + "'", impl_->path);
  return out;
}

std::vector<std::int64_t> CheckpointReader::read_array_int64(const std::string& name,
                                                             std::uint64_t offset,
                                                             std::uint64_t count) const {
  detail::H5ErrorSilencer quiet;
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  detail::read_block_dataset(impl_->comm, impl_->id(), impl_->item("array", name), H5T_NATIVE_INT64,
                             out.data(), offset, count, impl_->path);
  return out;
}

std::vector<double> CheckpointReader::read_array_block(const std::string& name,
                                                       std::size_t count) const {
  detail::H5ErrorSilencer quiet;
  const std::uint64_t offset = impl_->checked_block_offset(name, count);
  return read_array(name, offset, count);
}

std::vector<std::int64_t> CheckpointReader::read_array_block_int64(const std::string& name,
                                                                   std::size_t count) const {
  detail::H5ErrorSilencer quiet;
  const std::uint64_t offset = impl_->checked_block_offset(name, count);
  return read_array_int64(name, offset, count);
}

bool CheckpointReader::has_scalar(const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  detail::H5Group g = detail::open_group(impl_->id(), "/scalars", impl_->path);
  return detail::attribute_exists(g.get(), name, detail::where(impl_->path, "/scalars"));
}

double CheckpointReader::scalar_double(const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  impl_->require_scalar(name);
  detail::H5Group g = detail::open_group(impl_->id(), "/scalars", impl_->path);
  return detail::read_attribute_double(g.get(), name, detail::where(impl_->path, "/scalars"));
}

std::int64_t CheckpointReader::scalar_int64(const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  impl_->require_scalar(name);
  detail::H5Group g = detail::open_group(impl_->id(), "/scalars", impl_->path);
  return detail::read_attribute_int64(g.get(), name, detail::where(impl_->path, "/scalars"));
}

std::string CheckpointReader::scalar_string(const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  impl_->require_scalar(name);
  detail::H5Group g = detail::open_group(impl_->id(), "/scalars", impl_->path);
  return detail::read_attribute_string(g.get(), name, detail::where(impl_->path, "/scalars"));
}

namespace {

constexpr const char* kSplitArrays[3] = {"split/x", "split/y", "split/z"};

}  // namespace

DmdaSplit split_of(DM da) {
  PetscInt dim = 0, px = 1, py = 1, pz = 1;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da, &dim, nullptr, nullptr, nullptr, &px, &py, &pz, nullptr,
                                  nullptr, nullptr, nullptr, nullptr, nullptr));
  const PetscInt* lx = nullptr;
  const PetscInt* ly = nullptr;
  const PetscInt* lz = nullptr;
  FRACMFG_PETSC_CHECK(DMDAGetOwnershipRanges(da, &lx, &ly, &lz));
  DmdaSplit s;
  s.x.assign(lx, lx + px);
  if (dim >= 2) s.y.assign(ly, ly + py);
  if (dim >= 3) s.z.assign(lz, lz + pz);
  return s;
}

void add_split(CheckpointWriter& checkpoint, DM da) {
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(da));
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const DmdaSplit s = split_of(da);
  for (const auto& [name, ranges] :
       {std::pair{kSplitArrays[0], &s.x}, std::pair{kSplitArrays[1], &s.y},
        std::pair{kSplitArrays[2], &s.z}}) {
    const std::vector<std::int64_t> v(ranges->begin(), ranges->end());
    checkpoint.add_array(name, v.data(), rank == 0 ? v.size() : 0);
  }
}

std::optional<DmdaSplit> split_to_restore(const CheckpointReader& checkpoint, DM da) {
  MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(da));
  int size = 0;
  MPI_Comm_size(comm, &size);
  const std::vector<std::string> names = checkpoint.array_names();
  for (const char* name : kSplitArrays) {
    if (std::find(names.begin(), names.end(), name) == names.end()) return std::nullopt;
  }
  if (checkpoint.written_by_ranks() != size) return std::nullopt;
  const DmdaSplit now = split_of(da);
  DmdaSplit saved;
  bool fits = true;
  const std::vector<PetscInt>* current[3] = {&now.x, &now.y, &now.z};
  std::vector<PetscInt>* stored[3] = {&saved.x, &saved.y, &saved.z};
  for (int a = 0; a < 3; ++a) {
    for (std::int64_t c :
         checkpoint.read_array_int64(kSplitArrays[a], 0, checkpoint.array_size(kSplitArrays[a]))) {
      stored[a]->push_back(static_cast<PetscInt>(c));
    }
    const auto total = [](const std::vector<PetscInt>& v) {
      return std::accumulate(v.begin(), v.end(), PetscInt{0});
    };
    fits = fits && stored[a]->size() == current[a]->size() &&
           total(*stored[a]) == total(*current[a]) &&
           std::all_of(stored[a]->begin(), stored[a]->end(), [](PetscInt c) { return c > 0; });
  }
  if (!fits || saved == now) return std::nullopt;
  return saved;
}

}  // namespace fracmfg::io
