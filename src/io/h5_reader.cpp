#include "fracmfg/io/h5_reader.hpp"

#include <algorithm>

#include "fracmfg/core/petsc_check.hpp"
#include "io/h5_datasets.hpp"
#include "io/h5_files.hpp"

namespace fracmfg::io {

struct H5Reader::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::string path;
  detail::H5File file;

  ~Impl() { detail::close_after_reading(file); }

  std::string ctx(const std::string& object) const { return detail::where(path, object); }

  template <class Fn>
  auto with_object(const std::string& object, Fn&& fn) const {
    const std::string p = detail::normalize_path(object);
    detail::H5Object obj = detail::open_object(file.get(), p, path);
    return fn(obj.get(), ctx(p));
  }
};

H5Reader::H5Reader(MPI_Comm comm, const std::string& path) : impl_(std::make_unique<Impl>()) {
  detail::H5ErrorSilencer quiet;
  impl_->comm = comm;
  impl_->path = path;
  impl_->file = detail::open_for_reading(comm, path);
}

H5Reader::~H5Reader() {
  detail::reset_quietly(impl_);
}

H5Reader::H5Reader(H5Reader&&) noexcept = default;
H5Reader& H5Reader::operator=(H5Reader&&) noexcept = default;

const std::string& H5Reader::path() const {
  return impl_->path;
}
MPI_Comm H5Reader::comm() const {
  return impl_->comm;
}

bool H5Reader::exists(const std::string& object) const {
  detail::H5ErrorSilencer quiet;
  return detail::object_exists(impl_->file.get(), object, impl_->path);
}

std::vector<std::string> H5Reader::list(const std::string& group) const {
  detail::H5ErrorSilencer quiet;
  return detail::list_group(impl_->file.get(), detail::normalize_path(group), impl_->path);
}

std::vector<std::uint64_t> H5Reader::shape(const std::string& dataset) const {
  detail::H5ErrorSilencer quiet;
  const std::string p = detail::normalize_path(dataset);
  detail::H5Dataset ds = detail::open_dataset(impl_->file.get(), p, impl_->path);
  const auto dims = detail::dataset_dims(ds.get(), "cannot read the shape of " + impl_->ctx(p));
  return {dims.begin(), dims.end()};
}

FieldShape H5Reader::field_shape(const std::string& dataset) const {
  detail::H5ErrorSilencer quiet;
  return detail::read_field_shape(impl_->file.get(), detail::normalize_path(dataset), impl_->path);
}

void H5Reader::read_field(const std::string& dataset, DM da, Vec v) const {
  detail::H5ErrorSilencer quiet;
  detail::read_dmda_dataset(impl_->comm, impl_->file.get(), detail::normalize_path(dataset), da, v,
                            impl_->path);
}

std::vector<std::int64_t> H5Reader::field_steps(const std::string& name) const {
  return read_array_int64(field_step_path(name));
}

std::vector<double> H5Reader::field_times(const std::string& name) const {
  return read_array(field_time_path(name));
}

FieldShape H5Reader::series_shape(const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return detail::read_series_shape(impl_->file.get(), field_values_path(name), impl_->path);
}

void H5Reader::read_level(const std::string& name, std::int64_t step, DM da, Vec v) const {
  const std::vector<std::int64_t> steps = field_steps(name);
  const auto it = std::lower_bound(steps.begin(), steps.end(), step);
  detail::H5ErrorSilencer quiet;
  const std::string path = field_values_path(name);
  if (it == steps.end() || *it != step) {
    throw IoError("cannot read field '" + name + "' at step " + std::to_string(step) + " from '" +
                  impl_->path + "': no level was written at that step");
  }
  detail::read_series_level(impl_->comm, impl_->file.get(), path,
                            static_cast<hsize_t>(it - steps.begin()), da, v, impl_->path);
}

std::vector<double> H5Reader::read_level_values(const std::string& name,
                                                std::uint64_t level) const {
  detail::H5ErrorSilencer quiet;
  const std::string path = field_values_path(name);
  const std::string what = "cannot read field " + impl_->ctx(path);
  detail::H5Dataset dataset = detail::open_dataset(impl_->file.get(), path, impl_->path);
  std::vector<hsize_t> count = detail::dataset_dims(dataset.get(), what);
  if (count.empty() || level >= count[0]) {
    throw IoError(what + ": level " + std::to_string(level) + " requested, the dataset has " +
                  std::to_string(count.empty() ? 0 : count[0]));
  }
  std::vector<hsize_t> start(count.size(), 0);
  start[0] = level;
  count[0] = 1;
  std::size_t n = 1;
  for (hsize_t c : count) n *= static_cast<std::size_t>(c);
  std::vector<double> out(n);
  detail::read_hyperslab(dataset.get(), H5T_NATIVE_DOUBLE, out.data(), start, count, impl_->path,
                         what);
  return out;
}

std::vector<double> H5Reader::read_block(const std::string& dataset, std::uint64_t offset,
                                         std::uint64_t count) const {
  detail::H5ErrorSilencer quiet;
  std::vector<double> out(static_cast<std::size_t>(count));
  detail::read_block_dataset(impl_->comm, impl_->file.get(), detail::normalize_path(dataset),
                             H5T_NATIVE_DOUBLE, out.data(), offset, count, impl_->path);
  return out;
}

std::vector<std::int64_t> H5Reader::read_block_int64(const std::string& dataset,
                                                     std::uint64_t offset,
                                                     std::uint64_t count) const {
  detail::H5ErrorSilencer quiet;
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  detail::read_block_dataset(impl_->comm, impl_->file.get(), detail::normalize_path(dataset),
                             H5T_NATIVE_INT64, out.data(), offset, count, impl_->path);
  return out;
}

void H5Reader::read_vec(const std::string& dataset, Vec v) const {
  detail::H5ErrorSilencer quiet;
  const std::string p = detail::normalize_path(dataset);
  PetscInt lo = 0;
  PetscInt hi = 0;
  PetscInt n = 0;
  FRACMFG_PETSC_CHECK(VecGetOwnershipRange(v, &lo, &hi));
  FRACMFG_PETSC_CHECK(VecGetSize(v, &n));
  const hsize_t length = detail::dataset_length(impl_->file.get(), p, impl_->path);
  if (length != static_cast<hsize_t>(n)) {
    throw IoError("cannot read dataset " + impl_->ctx(p) +
                  " into the Vec: the dataset has shape [" + std::to_string(length) +
                  "], the Vec has global size [" + std::to_string(n) + "]");
  }
  detail::VecWriteAccess array(v);
  detail::read_block_dataset(impl_->comm, impl_->file.get(), p, H5T_NATIVE_DOUBLE, array.data(),
                             static_cast<hsize_t>(lo), static_cast<hsize_t>(hi - lo), impl_->path);
}

std::vector<double> H5Reader::read_array(const std::string& dataset) const {
  detail::H5ErrorSilencer quiet;
  const std::string p = detail::normalize_path(dataset);
  const hsize_t n = detail::dataset_length(impl_->file.get(), p, impl_->path);
  std::vector<double> out(static_cast<std::size_t>(n));
  detail::read_block_dataset(impl_->comm, impl_->file.get(), p, H5T_NATIVE_DOUBLE, out.data(), 0, n,
                             impl_->path);
  return out;
}

std::vector<std::int64_t> H5Reader::read_array_int64(const std::string& dataset) const {
  detail::H5ErrorSilencer quiet;
  const std::string p = detail::normalize_path(dataset);
  const hsize_t n = detail::dataset_length(impl_->file.get(), p, impl_->path);
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  detail::read_block_dataset(impl_->comm, impl_->file.get(), p, H5T_NATIVE_INT64, out.data(), 0, n,
                             impl_->path);
  return out;
}

std::string H5Reader::read_string(const std::string& dataset) const {
  detail::H5ErrorSilencer quiet;
  return detail::read_string_dataset(impl_->file.get(), detail::normalize_path(dataset),
                                     impl_->path);
}

bool H5Reader::has_attribute(const std::string& object, const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return impl_->with_object(object, [&](hid_t obj, const std::string& ctx) {
    return detail::attribute_exists(obj, name, ctx);
  });
}

double H5Reader::attribute_double(const std::string& object, const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return impl_->with_object(object, [&](hid_t obj, const std::string& ctx) {
    return detail::read_attribute_double(obj, name, ctx);
  });
}

std::int64_t H5Reader::attribute_int64(const std::string& object, const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return impl_->with_object(object, [&](hid_t obj, const std::string& ctx) {
    return detail::read_attribute_int64(obj, name, ctx);
  });
}

std::string H5Reader::attribute_string(const std::string& object, const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return impl_->with_object(object, [&](hid_t obj, const std::string& ctx) {
    return detail::read_attribute_string(obj, name, ctx);
  });
}

std::vector<double> H5Reader::attribute_doubles(const std::string& object,
                                                const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return impl_->with_object(object, [&](hid_t obj, const std::string& ctx) {
    return detail::read_attribute_doubles(obj, name, ctx);
  });
}

std::vector<std::int64_t> H5Reader::attribute_int64s(const std::string& object,
                                                     const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return impl_->with_object(object, [&](hid_t obj, const std::string& ctx) {
    return detail::read_attribute_int64s(obj, name, ctx);
  });
}

std::vector<std::string> H5Reader::attribute_strings(const std::string& object,
                                                     const std::string& name) const {
  detail::H5ErrorSilencer quiet;
  return impl_->with_object(object, [&](hid_t obj, const std::string& ctx) {
    return detail::read_attribute_strings(obj, name, ctx);
  });
}

}  // namespace fracmfg::io
