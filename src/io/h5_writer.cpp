#include "fracmfg/io/h5_writer.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "fracmfg/core/petsc_check.hpp"
#include "io/h5_datasets.hpp"
#include "io/h5_files.hpp"
#include "io/xdmf_writer.hpp"

namespace fracmfg::io {

std::string to_string(const FieldShape& shape) {
  std::ostringstream os;
  os << '[';
  for (int d = shape.dim - 1; d >= 0; --d) {
    os << shape.size[static_cast<std::size_t>(d)] << (d > 0 ? ", " : "");
  }
  if (shape.dof > 1) os << ", " << shape.dof;
  os << ']';
  return os.str();
}

std::string field_dataset_path(const std::string& name, std::int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%06lld", static_cast<long long>(step));
  return "/fields/" + name + "/" + buf;
}

namespace {

void check_field_name(const std::string& name, const std::string& file) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    throw IoError("invalid field name '" + name + "' for '" + file +
                  "': a field name is one non-empty HDF5 link name without '/'");
  }
}

std::vector<std::string> default_components(const std::string& name, PetscInt dof) {
  if (dof == 1) return {name};
  std::vector<std::string> out;
  for (PetscInt c = 0; c < dof; ++c) out.push_back(name + "_" + std::to_string(c));
  return out;
}

struct FieldRecord {
  bool defined = false;  ///< define_field was called
  bool written = false;  ///< at least one step written (shape known)
  FieldShape shape;
  FieldInfo info;
  std::vector<std::int64_t> steps;
  std::vector<double> times;
};

}  // namespace

struct H5Writer::Impl {
  Impl(MPI_Comm comm, const std::string& path, const H5WriterOptions& opts)
      : file(comm, path, "output", opts.problem), options(opts) {}

  detail::AtomicH5File file;
  H5WriterOptions options;
  std::vector<std::string> field_order;  ///< first-define/write order
  std::map<std::string, FieldRecord> fields;
  std::vector<std::int64_t> index_steps;  ///< distinct steps, first-write order
  std::vector<double> index_times;

  MPI_Comm comm() const { return file.comm(); }
  const std::string& name() const { return file.path(); }

  FieldRecord& record(const std::string& field) {
    auto it = fields.find(field);
    if (it == fields.end()) {
      field_order.push_back(field);
      it = fields.emplace(field, FieldRecord{}).first;
    }
    return it->second;
  }

  /// Offset of this rank's block and the total, for blocks in rank order.
  std::pair<hsize_t, hsize_t> block_layout(std::size_t count) const {
    unsigned long long mine = count;
    unsigned long long offset = 0;
    unsigned long long total = 0;
    MPI_Exscan(&mine, &offset, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm());
    if (file.rank() == 0) offset = 0;  // MPI_Exscan leaves rank 0's result undefined
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm());
    return {offset, total};
  }

  void write_index() {
    const std::string ctx = "the root group of '" + file.label() + "'";
    const bool root = file.rank() == 0;
    const auto n = static_cast<hsize_t>(index_steps.size());
    detail::write_block_dataset(file.id(), "/time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                index_times.data(), 0, root ? n : 0, n, file.label());
    detail::write_block_dataset(file.id(), "/step", H5T_STD_I64LE, H5T_NATIVE_INT64,
                                index_steps.data(), 0, root ? n : 0, n, file.label());
    for (const auto& name : field_order) {
      const FieldRecord& r = fields.at(name);
      if (!r.written) continue;
      const std::string path = "/fields/" + name;
      detail::H5Group group = detail::open_or_create_group(file.id(), path, file.label());
      const std::string gctx = detail::where(file.label(), path);
      std::vector<std::int64_t> sizes;
      std::vector<double> origin;
      std::vector<double> spacing;
      for (int d = 0; d < r.shape.dim; ++d) {
        const auto k = static_cast<std::size_t>(d);
        sizes.push_back(r.shape.size[k]);
        origin.push_back(r.info.grid.origin[k]);
        spacing.push_back(r.info.grid.spacing[k]);
      }
      detail::write_attribute(group.get(), "dim", static_cast<std::int64_t>(r.shape.dim), gctx);
      detail::write_attribute(group.get(), "global_size", sizes, gctx);
      detail::write_attribute(group.get(), "dof", static_cast<std::int64_t>(r.shape.dof), gctx);
      detail::write_attribute(group.get(), "component_names", r.info.component_names, gctx);
      detail::write_attribute(group.get(), "origin", origin, gctx);
      detail::write_attribute(group.get(), "spacing", spacing, gctx);
      detail::write_attribute(group.get(), "steps", r.steps, gctx);
      detail::write_attribute(group.get(), "times", r.times, gctx);
    }
  }

  std::string xdmf_path() const {
    std::filesystem::path p(file.path());
    p.replace_extension(".xmf");
    return p.string();
  }

  std::string render_xdmf() const {
    std::vector<detail::XdmfField> xf;
    for (const auto& name : field_order) {
      const FieldRecord& r = fields.at(name);
      if (!r.written) continue;
      xf.push_back({name, r.shape, r.info.grid, r.info.component_names, r.steps, r.times});
    }
    return detail::render_xdmf(std::filesystem::path(file.path()).filename().string(), xf);
  }
};

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " B";
  static const char* const units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  double value = static_cast<double>(bytes) / 1000.0;
  std::size_t u = 0;
  while (value >= 999.95 && u + 1 < sizeof(units) / sizeof(units[0])) {
    value /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", value, units[u]);
  return buf;
}

std::uint64_t space_needed(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = 1u << 20;
  return bytes + bytes / 10 + kMiB;
}

void H5Writer::check_output_path(MPI_Comm comm, const std::string& path,
                                 std::uint64_t expected_bytes) {
  detail::AtomicH5File::check_output_paths(comm, {{path, expected_bytes}});
}

void H5Writer::check_output_paths(MPI_Comm comm, const std::vector<OutputSpace>& files) {
  detail::AtomicH5File::check_output_paths(comm, files);
}

H5Writer::H5Writer(MPI_Comm comm, const std::string& path, const H5WriterOptions& options) {
  detail::H5ErrorSilencer quiet;
  impl_ = std::make_unique<Impl>(comm, path, options);
  std::string deck = options.deck;
  std::string resolved = options.resolved_deck;
  detail::bcast_string(comm, deck);
  detail::bcast_string(comm, resolved);
  int write_xdmf = options.write_xdmf ? 1 : 0;
  MPI_Bcast(&write_xdmf, 1, MPI_INT, 0, comm);
  impl_->options.write_xdmf = write_xdmf != 0;
  const std::string ctx = "the root group of '" + impl_->file.label() + "'";
  impl_->file.write([&] {
    detail::write_attribute(impl_->file.id(), "deck", deck, ctx);
    detail::write_attribute(impl_->file.id(), "resolved_deck", resolved, ctx);
  });
}

H5Writer::~H5Writer() {
  if (impl_) {
    detail::H5ErrorSilencer quiet;
    impl_.reset();
  }
}

H5Writer::H5Writer(H5Writer&&) noexcept = default;
H5Writer& H5Writer::operator=(H5Writer&&) noexcept = default;

const std::string& H5Writer::path() const {
  return impl_->file.path();
}
const std::string& H5Writer::temporary_path() const {
  return impl_->file.temporary_path();
}
bool H5Writer::committed() const {
  return impl_->file.committed();
}
MPI_Comm H5Writer::comm() const {
  return impl_->comm();
}

void H5Writer::define_field(const std::string& name, const FieldInfo& info) {
  impl_->file.require_open("define field '" + name + "'");
  check_field_name(name, path());
  FieldRecord& r = impl_->record(name);
  if (r.written) {
    throw IoError("cannot define field '" + name + "' of '" + path() +
                  "': it has been written already");
  }
  r.defined = true;
  r.info = info;
  // Rank 0's geometry and names go into the file: make every rank hold the same.
  std::vector<double> geometry(info.grid.origin.begin(), info.grid.origin.end());
  geometry.insert(geometry.end(), info.grid.spacing.begin(), info.grid.spacing.end());
  detail::bcast_doubles(comm(), geometry);
  for (std::size_t k = 0; k < 3; ++k) {
    r.info.grid.origin[k] = geometry[k];
    r.info.grid.spacing[k] = geometry[3 + k];
  }
  unsigned long long n = info.component_names.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm());
  r.info.component_names.resize(static_cast<std::size_t>(n));
  for (auto& c : r.info.component_names) detail::bcast_string(comm(), c);
}

void H5Writer::write_field(const std::string& name, DM da, Vec v, std::int64_t step, double time) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("write field '" + name + "'");
  impl_->file.write([&] {
    check_field_name(name, path());
    const std::string dataset = field_dataset_path(name, step);
    const detail::DmdaBox box =
        detail::dmda_box(comm(), da, v, "cannot write field " + detail::where(path(), dataset));
    FieldRecord& r = impl_->record(name);
    if (r.written && r.shape != box.shape) {
      throw IoError("cannot write field " + detail::where(path(), dataset) +
                    ": earlier steps of this field have shape " + to_string(r.shape) +
                    ", this one has " + to_string(box.shape));
    }
    if (!r.info.component_names.empty() &&
        r.info.component_names.size() != static_cast<std::size_t>(box.shape.dof)) {
      throw IoError("cannot write field " + detail::where(path(), dataset) + ": " +
                    std::to_string(r.info.component_names.size()) +
                    " component names were defined for " + std::to_string(box.shape.dof) +
                    " components");
    }
    if (r.info.component_names.empty())
      r.info.component_names = default_components(name, box.shape.dof);
    MPI_Bcast(&time, 1, MPI_DOUBLE, 0, comm());

    detail::write_dmda_dataset(impl_->file.comm(), impl_->file.id(), dataset, da, v,
                               impl_->file.label());
    detail::H5Dataset ds = detail::open_dataset(impl_->file.id(), dataset, impl_->file.label());
    const std::string ctx = detail::where(impl_->file.label(), dataset);
    detail::write_attribute(ds.get(), "time", time, ctx);
    detail::write_attribute(ds.get(), "step", step, ctx);

    r.written = true;
    r.shape = box.shape;
    r.steps.push_back(step);
    r.times.push_back(time);
    bool seen = false;
    for (std::int64_t s : impl_->index_steps) seen = seen || s == step;
    if (!seen) {
      impl_->index_steps.push_back(step);
      impl_->index_times.push_back(time);
    }
  });
}

void H5Writer::write_dmda(const std::string& dataset, DM da, Vec v) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("write dataset '" + dataset + "'");
  impl_->file.write([&] {
    detail::write_dmda_dataset(impl_->file.comm(), impl_->file.id(),
                               detail::normalize_path(dataset), da, v, impl_->file.label());
  });
}

void H5Writer::write_distributed(const std::string& dataset, const double* local,
                                 std::size_t count) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("write dataset '" + dataset + "'");
  impl_->file.write([&] {
    const auto [offset, total] = impl_->block_layout(count);
    detail::write_block_dataset(impl_->file.id(), detail::normalize_path(dataset), H5T_IEEE_F64LE,
                                H5T_NATIVE_DOUBLE, local, offset, count, total,
                                impl_->file.label());
  });
}

void H5Writer::write_distributed(const std::string& dataset, const std::int64_t* local,
                                 std::size_t count) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("write dataset '" + dataset + "'");
  impl_->file.write([&] {
    const auto [offset, total] = impl_->block_layout(count);
    detail::write_block_dataset(impl_->file.id(), detail::normalize_path(dataset), H5T_STD_I64LE,
                                H5T_NATIVE_INT64, local, offset, count, total, impl_->file.label());
  });
}

void H5Writer::write_vec(const std::string& dataset, Vec v) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("write dataset '" + dataset + "'");
  impl_->file.write([&] {
    PetscInt lo = 0;
    PetscInt hi = 0;
    PetscInt n = 0;
    FRACMFG_PETSC_CHECK(VecGetOwnershipRange(v, &lo, &hi));
    FRACMFG_PETSC_CHECK(VecGetSize(v, &n));
    detail::VecReadAccess array(v);
    detail::write_block_dataset(impl_->file.id(), detail::normalize_path(dataset), H5T_IEEE_F64LE,
                                H5T_NATIVE_DOUBLE, array.data(), static_cast<hsize_t>(lo),
                                static_cast<hsize_t>(hi - lo), static_cast<hsize_t>(n),
                                impl_->file.label());
  });
}

void H5Writer::write_array(const std::string& dataset, const std::vector<double>& values) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("write dataset '" + dataset + "'");
  impl_->file.write([&] {
    unsigned long long n = values.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm());
    const bool root = impl_->file.rank() == 0;
    detail::write_block_dataset(impl_->file.id(), detail::normalize_path(dataset), H5T_IEEE_F64LE,
                                H5T_NATIVE_DOUBLE, root ? values.data() : nullptr, 0, root ? n : 0,
                                n, impl_->file.label());
  });
}

void H5Writer::write_array(const std::string& dataset, const std::vector<std::int64_t>& values) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("write dataset '" + dataset + "'");
  impl_->file.write([&] {
    unsigned long long n = values.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm());
    const bool root = impl_->file.rank() == 0;
    detail::write_block_dataset(impl_->file.id(), detail::normalize_path(dataset), H5T_STD_I64LE,
                                H5T_NATIVE_INT64, root ? values.data() : nullptr, 0, root ? n : 0,
                                n, impl_->file.label());
  });
}

void H5Writer::write_string(const std::string& dataset, const std::string& text) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("write dataset '" + dataset + "'");
  impl_->file.write([&] {
    std::string value = text;
    detail::bcast_string(comm(), value);
    detail::write_string_dataset(impl_->file.id(), detail::normalize_path(dataset), value,
                                 impl_->file.rank() == 0, impl_->file.label());
  });
}

void H5Writer::set_attribute_double(const std::string& object, const std::string& name,
                                    double value) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("set attribute '" + name + "'");
  impl_->file.write([&] {
    MPI_Bcast(&value, 1, MPI_DOUBLE, 0, comm());
    const std::string path = detail::normalize_path(object);
    detail::H5Object obj = detail::open_object(impl_->file.id(), path, impl_->file.label());
    detail::write_attribute(obj.get(), name, value, detail::where(impl_->file.label(), path));
  });
}

void H5Writer::set_attribute_int64(const std::string& object, const std::string& name,
                                   std::int64_t value) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("set attribute '" + name + "'");
  impl_->file.write([&] {
    MPI_Bcast(&value, 1, MPI_INT64_T, 0, comm());
    const std::string path = detail::normalize_path(object);
    detail::H5Object obj = detail::open_object(impl_->file.id(), path, impl_->file.label());
    detail::write_attribute(obj.get(), name, value, detail::where(impl_->file.label(), path));
  });
}

void H5Writer::set_attribute_string(const std::string& object, const std::string& name,
                                    const std::string& value) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("set attribute '" + name + "'");
  impl_->file.write([&] {
    std::string text = value;
    detail::bcast_string(comm(), text);
    const std::string path = detail::normalize_path(object);
    detail::H5Object obj = detail::open_object(impl_->file.id(), path, impl_->file.label());
    detail::write_attribute(obj.get(), name, text, detail::where(impl_->file.label(), path));
  });
}

void H5Writer::set_attribute_doubles(const std::string& object, const std::string& name,
                                     const std::vector<double>& values) {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("set attribute '" + name + "'");
  impl_->file.write([&] {
    std::vector<double> v = values;
    detail::bcast_doubles(comm(), v);
    const std::string path = detail::normalize_path(object);
    detail::H5Object obj = detail::open_object(impl_->file.id(), path, impl_->file.label());
    detail::write_attribute(obj.get(), name, v, detail::where(impl_->file.label(), path));
  });
}

void H5Writer::commit() {
  detail::H5ErrorSilencer quiet;
  impl_->file.require_open("commit");
  impl_->file.write([&] { impl_->write_index(); });
  if (impl_->options.write_xdmf && !impl_->field_order.empty()) {
    impl_->file.commit(
        [this] { detail::write_text_file_atomically(impl_->xdmf_path(), impl_->render_xdmf()); });
  } else {
    impl_->file.commit();
  }
}

}  // namespace fracmfg::io
