#include "io/h5_datasets.hpp"

#include <petscdmda.h>

#include <algorithm>
#include <type_traits>

#include "fracmfg/core/petsc_check.hpp"

namespace fracmfg::io::detail {

static_assert(std::is_same_v<PetscScalar, double>,
              "fracmfg's HDF5 output expects PETSc built with real double scalars");

namespace {

H5PropList make_link_create(const std::string& what) {
  H5PropList lcpl(check_id(H5Pcreate(H5P_LINK_CREATE), what));
  check_status(H5Pset_create_intermediate_group(lcpl.get(), 1), what);
  return lcpl;
}

/// Selects the hyperslab [start, start + count) of the file space and a matching memory
/// space; a rank with nothing to transfer selects nothing (it still takes part in the
/// collective call).
struct Selection {
  H5Dataspace file;
  H5Dataspace memory;
};

Selection select(hid_t dataset, const std::vector<hsize_t>& start,
                 const std::vector<hsize_t>& count, const std::string& what) {
  Selection sel;
  sel.file = H5Dataspace(check_id(H5Dget_space(dataset), what));
  hsize_t n = 1;
  for (hsize_t c : count) n *= c;
  if (n == 0) {
    check_status(H5Sselect_none(sel.file.get()), what);
    const hsize_t one[1] = {1};
    sel.memory = H5Dataspace(check_id(H5Screate_simple(1, one, nullptr), what));
    check_status(H5Sselect_none(sel.memory.get()), what);
  } else {
    check_status(H5Sselect_hyperslab(sel.file.get(), H5S_SELECT_SET, start.data(), nullptr,
                                     count.data(), nullptr),
                 what);
    const hsize_t dims[1] = {n};
    sel.memory = H5Dataspace(check_id(H5Screate_simple(1, dims, nullptr), what));
  }
  return sel;
}

void write_selection(hid_t dataset, hid_t mem_type, const void* data,
                     const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                     const std::string& file_name, const std::string& what) {
  Selection sel = select(dataset, start, count, what);
  H5PropList dxpl = make_collective_transfer(file_name);
  static const double dummy = 0.0;  // HDF5 wants a buffer even for an empty selection
  check_status(H5Dwrite(dataset, mem_type, sel.memory.get(), sel.file.get(), dxpl.get(),
                        data != nullptr ? data : &dummy),
               what);
}

void read_selection(hid_t dataset, hid_t mem_type, void* data, const std::vector<hsize_t>& start,
                    const std::vector<hsize_t>& count, const std::string& file_name,
                    const std::string& what) {
  Selection sel = select(dataset, start, count, what);
  H5PropList dxpl = make_collective_transfer(file_name);
  double dummy = 0.0;
  check_status(H5Dread(dataset, mem_type, sel.memory.get(), sel.file.get(), dxpl.get(),
                       data != nullptr ? data : &dummy),
               what);
}

herr_t collect_name(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

std::vector<std::int64_t> shape_sizes(const FieldShape& shape) {
  std::vector<std::int64_t> sizes;
  for (int d = 0; d < shape.dim; ++d) sizes.push_back(shape.size[static_cast<std::size_t>(d)]);
  return sizes;
}

herr_t collect_attribute_name(hid_t /*object*/, const char* name, const H5A_info_t* /*info*/,
                              void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

}  // namespace

VecReadAccess::VecReadAccess(Vec v) : v_(v) {
  FRACMFG_PETSC_CHECK(VecGetArrayRead(v_, &data_));
}
VecReadAccess::~VecReadAccess() {
  VecRestoreArrayRead(v_, &data_);
}
VecWriteAccess::VecWriteAccess(Vec v) : v_(v) {
  FRACMFG_PETSC_CHECK(VecGetArray(v_, &data_));
}
VecWriteAccess::~VecWriteAccess() {
  VecRestoreArray(v_, &data_);
}

std::size_t DmdaBox::local_size() const {
  return static_cast<std::size_t>(count[0]) * static_cast<std::size_t>(count[1]) *
         static_cast<std::size_t>(count[2]) * static_cast<std::size_t>(shape.dof);
}

std::vector<hsize_t> DmdaBox::file_start() const {
  std::vector<hsize_t> s;
  for (int d = shape.dim - 1; d >= 0; --d) {
    s.push_back(static_cast<hsize_t>(start[static_cast<std::size_t>(d)]));
  }
  if (shape.dof > 1) s.push_back(0);
  return s;
}

std::vector<hsize_t> DmdaBox::file_count() const {
  std::vector<hsize_t> c;
  for (int d = shape.dim - 1; d >= 0; --d) {
    c.push_back(static_cast<hsize_t>(count[static_cast<std::size_t>(d)]));
  }
  if (shape.dof > 1) c.push_back(static_cast<hsize_t>(shape.dof));
  return c;
}

namespace {
DmdaBox local_dmda_box(MPI_Comm comm, DM da, Vec v, const std::string& what) {
  MPI_Comm da_comm = MPI_COMM_NULL;
  FRACMFG_PETSC_CHECK(PetscObjectGetComm(reinterpret_cast<PetscObject>(da), &da_comm));
  int same = MPI_UNEQUAL;
  MPI_Comm_compare(comm, da_comm, &same);
  if (same != MPI_IDENT && same != MPI_CONGRUENT) {
    throw IoError(what + ": the DMDA lives on another communicator than the file");
  }
  PetscBool is_da = PETSC_FALSE;
  FRACMFG_PETSC_CHECK(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(da), DMDA, &is_da));
  if (!is_da) throw IoError(what + ": the DM is not a DMDA");
  DmdaBox box;
  PetscInt dim = 0;
  PetscInt dof = 0;
  FRACMFG_PETSC_CHECK(DMDAGetInfo(da, &dim, &box.shape.size[0], &box.shape.size[1],
                                  &box.shape.size[2], nullptr, nullptr, nullptr, &dof, nullptr,
                                  &box.boundary[0], &box.boundary[1], &box.boundary[2], nullptr));
  box.shape.dim = static_cast<int>(dim);
  box.shape.dof = dof;
  for (int d = box.shape.dim; d < 3; ++d) box.shape.size[static_cast<std::size_t>(d)] = 1;
  FRACMFG_PETSC_CHECK(DMDAGetCorners(da, &box.start[0], &box.start[1], &box.start[2], &box.count[0],
                                     &box.count[1], &box.count[2]));
  for (int d = box.shape.dim; d < 3; ++d) {
    box.start[static_cast<std::size_t>(d)] = 0;
    box.count[static_cast<std::size_t>(d)] = 1;
  }
  if (v == nullptr) return box;
  PetscInt local = 0;
  FRACMFG_PETSC_CHECK(VecGetLocalSize(v, &local));
  if (static_cast<std::size_t>(local) != box.local_size()) {
    throw IoError(what + ": the Vec is not a global vector of the DMDA (local size " +
                  std::to_string(local) + ", the DMDA owns " + std::to_string(box.local_size()) +
                  " values on this rank)");
  }
  return box;
}
}  // namespace

DmdaBox dmda_box(MPI_Comm comm, DM da, Vec v, const std::string& what) {
  DmdaBox box;
  agree(comm, [&] { box = local_dmda_box(comm, da, v, what); });
  return box;
}

std::vector<hsize_t> field_dims(const FieldShape& shape) {
  std::vector<hsize_t> dims;
  for (int d = shape.dim - 1; d >= 0; --d) {
    dims.push_back(static_cast<hsize_t>(shape.size[static_cast<std::size_t>(d)]));
  }
  if (shape.dof > 1) dims.push_back(static_cast<hsize_t>(shape.dof));
  return dims;
}

H5Dataset create_dataset(hid_t file, const std::string& path, hid_t file_type,
                         const std::vector<hsize_t>& dims, const std::string& file_name) {
  const std::string what = "cannot create dataset " + where(file_name, path);
  if (object_exists(file, path, file_name)) throw IoError(what + ": it exists already");
  H5Dataspace space(
      check_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), what));
  H5PropList lcpl = make_link_create(what);
  H5PropList dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), what));
  // Every element is written right away: skip HDF5's fill pass over the whole dataset.
  check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), what);
  return H5Dataset(check_id(
      H5Dcreate2(file, path.c_str(), file_type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
      what));
}

H5Dataset open_dataset(hid_t file, const std::string& path, const std::string& file_name) {
  const std::string what = "cannot open dataset " + where(file_name, path);
  if (!object_exists(file, path, file_name)) throw IoError(what + ": no such dataset");
  return H5Dataset(check_id(H5Dopen2(file, path.c_str(), H5P_DEFAULT), what));
}

H5Group open_group(hid_t file, const std::string& path, const std::string& file_name) {
  const std::string what = "cannot open group " + where(file_name, path);
  if (!object_exists(file, path, file_name)) throw IoError(what + ": no such group");
  return H5Group(check_id(H5Gopen2(file, path.c_str(), H5P_DEFAULT), what));
}

H5Group open_or_create_group(hid_t file, const std::string& path, const std::string& file_name) {
  if (object_exists(file, path, file_name)) return open_group(file, path, file_name);
  const std::string what = "cannot create group " + where(file_name, path);
  H5PropList lcpl = make_link_create(what);
  return H5Group(
      check_id(H5Gcreate2(file, path.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), what));
}

H5Object open_object(hid_t file, const std::string& path, const std::string& file_name) {
  const std::string what = "cannot open " + where(file_name, path);
  if (!object_exists(file, path, file_name)) throw IoError(what + ": no such object");
  return H5Object(check_id(H5Oopen(file, path.c_str(), H5P_DEFAULT), what));
}

std::vector<std::string> list_group(hid_t file, const std::string& path,
                                    const std::string& file_name) {
  H5Group group = open_group(file, path, file_name);
  std::vector<std::string> names;
  check_status(H5Literate(group.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, &collect_name, &names),
               "cannot list group " + where(file_name, path));
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> list_attributes(hid_t file, const std::string& path,
                                         const std::string& file_name) {
  H5Object object = open_object(file, path, file_name);
  std::vector<std::string> names;
  check_status(H5Aiterate2(object.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
                           &collect_attribute_name, &names),
               "cannot list the attributes of " + where(file_name, path));
  std::sort(names.begin(), names.end());
  return names;
}

void write_dmda_dataset(MPI_Comm comm, hid_t file, const std::string& path, DM da, Vec v,
                        const std::string& file_name) {
  const std::string what = "cannot write field " + where(file_name, path);
  const DmdaBox box = dmda_box(comm, da, v, what);
  H5Dataset dataset = create_dataset(file, path, H5T_IEEE_F64LE, field_dims(box.shape), file_name);
  {
    VecReadAccess array(v);
    // The rank's part of a DMDA global Vec is its box in natural order (x fastest, dof
    // innermost): exactly the hyperslab's memory order, so it goes out without a copy.
    write_selection(dataset.get(), H5T_NATIVE_DOUBLE, array.data(), box.file_start(),
                    box.file_count(), file_name, what);
  }
  const std::string ctx = where(file_name, path);
  write_attribute(dataset.get(), "dim", static_cast<std::int64_t>(box.shape.dim), ctx);
  write_attribute(dataset.get(), "global_size", shape_sizes(box.shape), ctx);
  write_attribute(dataset.get(), "dof", static_cast<std::int64_t>(box.shape.dof), ctx);
}

void read_dmda_dataset(MPI_Comm comm, hid_t file, const std::string& path, DM da, Vec v,
                       const std::string& file_name) {
  const std::string what = "cannot read field " + where(file_name, path);
  const DmdaBox box = dmda_box(comm, da, v, what);
  H5Dataset dataset = open_dataset(file, path, file_name);
  const std::vector<hsize_t> stored = dataset_dims(dataset.get(), what);
  const std::vector<hsize_t> expected = field_dims(box.shape);
  if (stored != expected) {
    throw IoError("cannot read dataset " + where(file_name, path) + " into the DMDA: the dataset" +
                  " has shape " + format_dims(stored) + ", the DMDA (dim " +
                  std::to_string(box.shape.dim) + ", dof " + std::to_string(box.shape.dof) +
                  ") needs " + format_dims(expected));
  }
  VecWriteAccess array(v);
  read_selection(dataset.get(), H5T_NATIVE_DOUBLE, array.data(), box.file_start(), box.file_count(),
                 file_name, what);
}

namespace {
FieldShape shape_attributes(hid_t dataset, const std::string& ctx) {
  if (!attribute_exists(dataset, "dim", ctx) || !attribute_exists(dataset, "dof", ctx)) {
    throw IoError("dataset " + ctx + " has no dim/dof attributes: it was not written from a DMDA");
  }
  FieldShape shape;
  const std::int64_t dim = read_attribute_int64(dataset, "dim", ctx);
  const std::vector<std::int64_t> sizes = read_attribute_int64s(dataset, "global_size", ctx);
  const std::int64_t dof = read_attribute_int64(dataset, "dof", ctx);
  if (dim < 1 || dim > 3 || dof < 1 || sizes.size() != static_cast<std::size_t>(dim)) {
    throw IoError("dataset " + ctx + " has inconsistent dim/global_size/dof attributes");
  }
  shape.dim = static_cast<int>(dim);
  shape.dof = static_cast<PetscInt>(dof);
  for (std::size_t d = 0; d < sizes.size(); ++d) shape.size[d] = static_cast<PetscInt>(sizes[d]);
  return shape;
}
}  // namespace

FieldShape read_series_shape(hid_t file, const std::string& path, const std::string& file_name) {
  H5Dataset dataset = open_dataset(file, path, file_name);
  const std::string ctx = where(file_name, path);
  const FieldShape shape = shape_attributes(dataset.get(), ctx);
  std::vector<hsize_t> stored = dataset_dims(dataset.get(), "cannot read " + ctx);
  if (stored.empty() ||
      std::vector<hsize_t>(stored.begin() + 1, stored.end()) != field_dims(shape)) {
    throw IoError("dataset " + ctx + " has shape " + format_dims(stored) +
                  " but its attributes describe levels of " + to_string(shape));
  }
  return shape;
}

void read_series_level(MPI_Comm comm, hid_t file, const std::string& path, hsize_t level, DM da,
                       Vec v, const std::string& file_name) {
  const std::string what = "cannot read field " + where(file_name, path);
  const DmdaBox box = dmda_box(comm, da, v, what);
  const FieldShape stored = read_series_shape(file, path, file_name);
  if (stored != box.shape) {
    throw IoError("cannot read " + where(file_name, path) +
                  " into the DMDA: its levels have shape " + to_string(stored) +
                  ", the DMDA (dim " + std::to_string(box.shape.dim) + ", dof " +
                  std::to_string(box.shape.dof) + ") needs " + to_string(box.shape));
  }
  H5Dataset dataset = open_dataset(file, path, file_name);
  const hsize_t levels = dataset_dims(dataset.get(), what)[0];
  if (level >= levels) {
    throw IoError(what + ": level " + std::to_string(level) + " requested, the dataset has " +
                  std::to_string(levels));
  }
  std::vector<hsize_t> start = {level};
  std::vector<hsize_t> count = {1};
  for (hsize_t s : box.file_start()) start.push_back(s);
  for (hsize_t c : box.file_count()) count.push_back(c);
  VecWriteAccess array(v);
  read_selection(dataset.get(), H5T_NATIVE_DOUBLE, array.data(), start, count, file_name, what);
}

FieldShape read_field_shape(hid_t file, const std::string& path, const std::string& file_name) {
  H5Dataset dataset = open_dataset(file, path, file_name);
  const std::string ctx = where(file_name, path);
  if (!attribute_exists(dataset.get(), "dim", ctx) ||
      !attribute_exists(dataset.get(), "dof", ctx)) {
    throw IoError("dataset " + ctx + " has no dim/dof attributes: it was not written from a DMDA");
  }
  FieldShape shape;
  const std::int64_t dim = read_attribute_int64(dataset.get(), "dim", ctx);
  const std::vector<std::int64_t> sizes = read_attribute_int64s(dataset.get(), "global_size", ctx);
  const std::int64_t dof = read_attribute_int64(dataset.get(), "dof", ctx);
  if (dim < 1 || dim > 3 || dof < 1 || sizes.size() != static_cast<std::size_t>(dim)) {
    throw IoError("dataset " + ctx + " has inconsistent dim/global_size/dof attributes");
  }
  shape.dim = static_cast<int>(dim);
  shape.dof = static_cast<PetscInt>(dof);
  for (std::size_t d = 0; d < sizes.size(); ++d) shape.size[d] = static_cast<PetscInt>(sizes[d]);
  const std::vector<hsize_t> stored = dataset_dims(dataset.get(), "cannot read " + ctx);
  if (stored != field_dims(shape)) {
    throw IoError("dataset " + ctx + " has shape " + format_dims(stored) +
                  " but its attributes describe " + to_string(shape));
  }
  return shape;
}

void write_hyperslab(hid_t dataset, hid_t mem_type, const void* data,
                     const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                     const std::string& file_name, const std::string& what) {
  write_selection(dataset, mem_type, data, start, count, file_name, what);
}

void read_hyperslab(hid_t dataset, hid_t mem_type, void* data, const std::vector<hsize_t>& start,
                    const std::vector<hsize_t>& count, const std::string& file_name,
                    const std::string& what) {
  read_selection(dataset, mem_type, data, start, count, file_name, what);
}

H5Dataset create_extendible_dataset(hid_t file, const std::string& path, hid_t file_type,
                                    const std::vector<hsize_t>& level_dims,
                                    const std::vector<hsize_t>& chunk,
                                    const std::string& file_name) {
  const std::string what = "cannot create dataset " + where(file_name, path);
  if (object_exists(file, path, file_name)) throw IoError(what + ": it exists already");
  std::vector<hsize_t> dims = {0};
  std::vector<hsize_t> max_dims = {H5S_UNLIMITED};
  dims.insert(dims.end(), level_dims.begin(), level_dims.end());
  max_dims.insert(max_dims.end(), level_dims.begin(), level_dims.end());
  H5Dataspace space(check_id(
      H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims.data()), what));
  H5PropList lcpl = make_link_create(what);
  H5PropList dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), what));
  check_status(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), what);
  // Levels are written whole before anyone reads them: no fill pass over new chunks.
  check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), what);
  return H5Dataset(check_id(
      H5Dcreate2(file, path.c_str(), file_type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
      what));
}

void set_levels(hid_t dataset, hsize_t levels, const std::string& what) {
  std::vector<hsize_t> dims = dataset_dims(dataset, what);
  if (dims.empty()) throw IoError(what + ": the dataset is a scalar");
  if (dims[0] == levels) return;
  dims[0] = levels;
  check_status(H5Dset_extent(dataset, dims.data()), what);
}

void write_block_dataset(hid_t file, const std::string& path, hid_t file_type, hid_t mem_type,
                         const void* data, hsize_t offset, hsize_t count, hsize_t total,
                         const std::string& file_name) {
  const std::string what = "cannot write dataset " + where(file_name, path);
  H5Dataset dataset = create_dataset(file, path, file_type, {total}, file_name);
  // An empty dataset has no storage to write to (the same on every rank: total is global).
  if (total == 0) return;
  write_selection(dataset.get(), mem_type, data, {offset}, {count}, file_name, what);
}

hsize_t dataset_length(hid_t file, const std::string& path, const std::string& file_name) {
  H5Dataset dataset = open_dataset(file, path, file_name);
  const std::vector<hsize_t> dims =
      dataset_dims(dataset.get(), "cannot read " + where(file_name, path));
  if (dims.size() != 1) {
    throw IoError("dataset " + where(file_name, path) + " has shape " + format_dims(dims) +
                  ", expected a 1D array");
  }
  return dims[0];
}

void read_block_dataset(MPI_Comm comm, hid_t file, const std::string& path, hid_t mem_type,
                        void* data, hsize_t offset, hsize_t count, const std::string& file_name) {
  const std::string what = "cannot read dataset " + where(file_name, path);
  H5Dataset dataset = open_dataset(file, path, file_name);
  const std::vector<hsize_t> dims = dataset_dims(dataset.get(), what);
  if (dims.size() != 1) {
    throw IoError(what + ": it has shape " + format_dims(dims) + ", expected a 1D array");
  }
  agree(comm, [&] {
    if (offset + count > dims[0]) {
      throw IoError(what + ": elements [" + std::to_string(offset) + ", " +
                    std::to_string(offset + count) + ") requested, the dataset has " +
                    std::to_string(dims[0]));
    }
  });
  if (dims[0] == 0) return;  // no storage to read from (the same on every rank)
  read_selection(dataset.get(), mem_type, data, {offset}, {count}, file_name, what);
}

void write_string_dataset(hid_t file, const std::string& path, const std::string& text, bool writer,
                          const std::string& file_name) {
  const std::string what = "cannot write string dataset " + where(file_name, path);
  if (object_exists(file, path, file_name)) throw IoError(what + ": it exists already");
  H5Type type = make_fixed_string_type(text.size(), what);
  H5Dataspace space(check_id(H5Screate(H5S_SCALAR), what));
  H5PropList lcpl = make_link_create(what);
  H5Dataset dataset(check_id(
      H5Dcreate2(file, path.c_str(), type.get(), space.get(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
      what));
  H5Dataspace file_space(check_id(H5Dget_space(dataset.get()), what));
  H5Dataspace mem_space(check_id(H5Screate(H5S_SCALAR), what));
  if (!writer) {
    check_status(H5Sselect_none(file_space.get()), what);
    check_status(H5Sselect_none(mem_space.get()), what);
  }
  H5PropList dxpl = make_collective_transfer(file_name);
  std::string buffer = text;
  buffer.resize(std::max<std::size_t>(text.size(), 1), '\0');
  check_status(H5Dwrite(dataset.get(), type.get(), mem_space.get(), file_space.get(), dxpl.get(),
                        buffer.data()),
               what);
}

std::string read_string_dataset(hid_t file, const std::string& path, const std::string& file_name) {
  const std::string what = "cannot read string dataset " + where(file_name, path);
  H5Dataset dataset = open_dataset(file, path, file_name);
  H5Type type(check_id(H5Dget_type(dataset.get()), what));
  if (H5Tget_class(type.get()) != H5T_STRING) throw IoError(what + ": it is not a string");
  const htri_t variable = H5Tis_variable_str(type.get());
  if (variable < 0) throw_h5(what);
  H5PropList dxpl = make_collective_transfer(file_name);
  if (variable > 0) {
    H5Type mem = make_string_type(what);
    char* text = nullptr;
    check_status(H5Dread(dataset.get(), mem.get(), H5S_ALL, H5S_ALL, dxpl.get(), &text), what);
    const H5String owned(text);
    return std::string(owned ? owned.get() : "");
  }
  const std::size_t size = H5Tget_size(type.get());
  if (size == 0) throw_h5(what);
  H5Type mem = make_fixed_string_type(size, what);
  std::string out(size, '\0');
  check_status(H5Dread(dataset.get(), mem.get(), H5S_ALL, H5S_ALL, dxpl.get(), out.data()), what);
  out.erase(std::find(out.begin(), out.end(), '\0'), out.end());
  return out;
}

}  // namespace fracmfg::io::detail
