#include "fracmfg/io/h5_writer.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/text.hpp"
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

std::string field_values_path(const std::string& name) {
  return "/fields/" + name + "/values";
}
std::string field_time_path(const std::string& name) {
  return "/fields/" + name + "/time";
}
std::string field_step_path(const std::string& name) {
  return "/fields/" + name + "/step";
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

const char* boundary_name(DMBoundaryType b) {
  switch (b) {
    case DM_BOUNDARY_PERIODIC: return "periodic";
    case DM_BOUNDARY_GHOSTED: return "ghosted";
    case DM_BOUNDARY_MIRROR: return "mirror";
    case DM_BOUNDARY_TWIST: return "twist";
    default: return "none";
  }
}

/// Chunks of at most about this many bytes: big enough that a level of a small field (an
/// ODE's components) is one of many in a chunk, and that a big field is cut in a few pieces.
constexpr std::uint64_t kChunkBytes = 1u << 20;
/// Elements per chunk of the time and step datasets (at least, and at most).
constexpr hsize_t kIndexChunkMin = 1024;
constexpr hsize_t kIndexChunkMax = 16384;

/// A time-series field: its datasets, the levels written, and the levels that wait in memory
/// for the next collective write (levels are written a chunk at a time).
struct Series {
  bool defined = false;  ///< define_field was called
  bool written = false;  ///< the datasets exist (shape known)
  bool adopted = false;  ///< taken over from a continued file
  FieldShape shape;
  FieldInfo info;
  std::array<DMBoundaryType, 3> boundary = {DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE};
  DM da = nullptr;  ///< the DMDA of the last write; another one is checked again
  detail::DmdaBox box;
  std::vector<std::int64_t> steps;  ///< every level, in the file or waiting
  std::vector<double> times;
  hsize_t in_file = 0;          ///< levels in the file
  hsize_t chunk_levels = 1;     ///< levels per chunk = levels per write
  std::vector<double> waiting;  ///< this rank's boxes of the waiting levels, level after level

  hsize_t waiting_levels() const { return static_cast<hsize_t>(steps.size()) - in_file; }
};

/// Chunk shape of a field's values: whole levels, as many as fit kChunkBytes; a level larger
/// than that is cut along its slowest axes.
std::vector<hsize_t> values_chunk(const FieldShape& shape, std::int64_t expected_levels,
                                  hsize_t* levels_per_chunk) {
  std::vector<hsize_t> dims = detail::field_dims(shape);
  std::uint64_t level_bytes = sizeof(double);
  for (hsize_t d : dims) level_bytes *= d;
  std::vector<hsize_t> chunk = {1};
  chunk.insert(chunk.end(), dims.begin(), dims.end());
  if (level_bytes <= kChunkBytes) {
    chunk[0] = std::max<hsize_t>(1, kChunkBytes / level_bytes);
    if (expected_levels > 0) chunk[0] = std::min(chunk[0], static_cast<hsize_t>(expected_levels));
  } else {
    // Halve the slowest spatial axis that is still longer than 1 until the chunk fits.
    std::uint64_t bytes = level_bytes;
    for (std::size_t a = 1; a < chunk.size() && bytes > kChunkBytes; ++a) {
      while (chunk[a] > 1 && bytes > kChunkBytes) {
        const hsize_t half = (chunk[a] + 1) / 2;
        bytes = bytes / chunk[a] * half;
        chunk[a] = half;
      }
    }
  }
  *levels_per_chunk = chunk[0];
  return chunk;
}

/// The increasing union of increasing step lists, with the time of each step's first owner.
void merge_steps(const std::vector<std::int64_t>& steps, const std::vector<double>& times,
                 std::vector<std::int64_t>& out_steps, std::vector<double>& out_times) {
  std::vector<std::int64_t> s;
  std::vector<double> t;
  s.reserve(out_steps.size() + steps.size());
  t.reserve(s.capacity());
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < out_steps.size() || j < steps.size()) {
    if (j == steps.size() || (i < out_steps.size() && out_steps[i] <= steps[j])) {
      if (j < steps.size() && out_steps[i] == steps[j]) ++j;
      s.push_back(out_steps[i]);
      t.push_back(out_times[i]);
      ++i;
    } else {
      s.push_back(steps[j]);
      t.push_back(times[j]);
      ++j;
    }
  }
  out_steps.swap(s);
  out_times.swap(t);
}

}  // namespace

struct H5Writer::Impl {
  Impl(MPI_Comm comm, const std::string& path, const H5WriterOptions& opts)
      : file(comm, path, "output", opts.problem, opts.continue_existing), options(opts) {}

  detail::AtomicH5File file;
  H5WriterOptions options;
  std::vector<std::string> field_order;  ///< first-define/write order
  std::map<std::string, Series> fields;
  Series* last = nullptr;  ///< the series of the last write (most writes repeat a name)
  std::string last_name;

  MPI_Comm comm() const { return file.comm(); }
  const std::string& name() const { return file.path(); }

  Series& record(const std::string& field) {
    if (last != nullptr && field == last_name) return *last;
    auto it = fields.find(field);
    if (it == fields.end()) {
      check_field_name(field, file.path());
      field_order.push_back(field);
      it = fields.emplace(field, Series{}).first;
    }
    last = &it->second;
    last_name = field;
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

  /// Creates the datasets of a field at its first write, with the geometry attributes.
  void create_series(const std::string& name, Series& r) {
    const std::string& label = file.label();
    detail::open_or_create_group(file.id(), "/fields/" + name, label);
    const std::vector<hsize_t> chunk =
        values_chunk(r.shape, r.info.expected_levels, &r.chunk_levels);
    // No dataset stays open between calls: a failed write closes the file, which HDF5 does
    // not do while objects in it are open.
    const detail::H5Dataset values =
        detail::create_extendible_dataset(file.id(), field_values_path(name), H5T_IEEE_F64LE,
                                          detail::field_dims(r.shape), chunk, label);
    const hsize_t index_chunk = std::clamp(r.chunk_levels, kIndexChunkMin, kIndexChunkMax);
    detail::create_extendible_dataset(file.id(), field_time_path(name), H5T_IEEE_F64LE, {},
                                      {index_chunk}, label);
    detail::create_extendible_dataset(file.id(), field_step_path(name), H5T_STD_I64LE, {},
                                      {index_chunk}, label);
    const std::string ctx = detail::where(label, field_values_path(name));
    std::string axes = "level";
    static const char* const axis_names[] = {"x", "y", "z"};
    std::vector<std::int64_t> sizes;
    std::vector<double> origin;
    std::vector<double> spacing;
    std::vector<std::string> boundary;
    for (int d = r.shape.dim - 1; d >= 0; --d) axes += std::string(",") + axis_names[d];
    if (r.shape.dof > 1) axes += ",component";
    for (int d = 0; d < r.shape.dim; ++d) {
      const auto k = static_cast<std::size_t>(d);
      sizes.push_back(r.shape.size[k]);
      origin.push_back(r.info.grid.origin[k]);
      spacing.push_back(r.info.grid.spacing[k]);
      boundary.emplace_back(boundary_name(r.boundary[k]));
    }
    const hid_t v = values.get();
    detail::write_attribute(v, "axes", axes, ctx);
    detail::write_attribute(v, "dim", static_cast<std::int64_t>(r.shape.dim), ctx);
    detail::write_attribute(v, "global_size", sizes, ctx);
    detail::write_attribute(v, "dof", static_cast<std::int64_t>(r.shape.dof), ctx);
    detail::write_attribute(v, "component_names", r.info.component_names, ctx);
    detail::write_attribute(v, "origin", origin, ctx);
    detail::write_attribute(v, "spacing", spacing, ctx);
    detail::write_attribute(v, "centring", std::string("node"), ctx);
    detail::write_attribute(v, "boundary", boundary, ctx);
  }

  /// Writes the waiting levels of a field: one collective hyperslab write of every rank's
  /// boxes, then their times and steps (rank 0). Collective.
  void flush(const std::string& name, Series& r) {
    const hsize_t n = r.waiting_levels();
    if (n == 0) return;
    const std::string& label = file.label();
    const std::string what = "cannot write field " + detail::where(label, field_values_path(name));
    const hsize_t levels = r.in_file + n;
    const hid_t id = file.id();
    const detail::H5Dataset values = detail::open_dataset(id, field_values_path(name), label);
    const detail::H5Dataset time = detail::open_dataset(id, field_time_path(name), label);
    const detail::H5Dataset step = detail::open_dataset(id, field_step_path(name), label);
    detail::set_levels(values.get(), levels, what);
    std::vector<hsize_t> start = {r.in_file};
    std::vector<hsize_t> count = {n};
    const std::vector<hsize_t> box_start = r.box.file_start();
    const std::vector<hsize_t> box_count = r.box.file_count();
    start.insert(start.end(), box_start.begin(), box_start.end());
    count.insert(count.end(), box_count.begin(), box_count.end());
    const bool empty = r.box.local_size() == 0;
    detail::write_hyperslab(values.get(), H5T_NATIVE_DOUBLE, empty ? nullptr : r.waiting.data(),
                            start, empty ? std::vector<hsize_t>(count.size(), 0) : count, label,
                            what);
    const bool root = file.rank() == 0;
    detail::set_levels(time.get(), levels, what);
    detail::write_hyperslab(time.get(), H5T_NATIVE_DOUBLE, r.times.data() + r.in_file, {r.in_file},
                            {root ? n : 0}, label, what);
    detail::set_levels(step.get(), levels, what);
    detail::write_hyperslab(step.get(), H5T_NATIVE_INT64, r.steps.data() + r.in_file, {r.in_file},
                            {root ? n : 0}, label, what);
    r.in_file = levels;
    r.waiting.clear();
  }

  /// A continued file: takes over its fields, keeping the levels before
  /// options.continue_at_step and dropping the others. Collective.
  void adopt_existing_fields() {
    const std::string& label = file.label();
    const hid_t id = file.id();
    if (detail::object_exists(id, "/fields", label)) {
      for (const std::string& name : detail::list_group(id, "/fields", label)) {
        Series& r = record(name);
        const std::string vpath = field_values_path(name);
        const std::string ctx = detail::where(label, vpath);
        const detail::H5Dataset values = detail::open_dataset(id, vpath, label);
        const hid_t v = values.get();
        const std::int64_t dim = detail::read_attribute_int64(v, "dim", ctx);
        const std::vector<std::int64_t> sizes =
            detail::read_attribute_int64s(v, "global_size", ctx);
        const std::vector<double> origin = detail::read_attribute_doubles(v, "origin", ctx);
        const std::vector<double> spacing = detail::read_attribute_doubles(v, "spacing", ctx);
        if (dim < 1 || dim > 3 || sizes.size() != static_cast<std::size_t>(dim) ||
            origin.size() != sizes.size() || spacing.size() != sizes.size()) {
          throw IoError("cannot continue " + ctx + ": inconsistent dim/global_size attributes");
        }
        r.shape.dim = static_cast<int>(dim);
        r.shape.dof = static_cast<PetscInt>(detail::read_attribute_int64(v, "dof", ctx));
        for (std::size_t k = 0; k < sizes.size(); ++k) {
          r.shape.size[k] = static_cast<PetscInt>(sizes[k]);
          r.info.grid.origin[k] = origin[k];
          r.info.grid.spacing[k] = spacing[k];
        }
        r.info.component_names = detail::read_attribute_strings(v, "component_names", ctx);
        values_chunk(r.shape, r.info.expected_levels, &r.chunk_levels);
        const hsize_t stored = detail::dataset_length(id, field_step_path(name), label);
        r.steps.resize(static_cast<std::size_t>(stored));
        r.times.resize(static_cast<std::size_t>(stored));
        detail::read_block_dataset(comm(), id, field_step_path(name), H5T_NATIVE_INT64,
                                   r.steps.data(), 0, stored, label);
        detail::read_block_dataset(comm(), id, field_time_path(name), H5T_NATIVE_DOUBLE,
                                   r.times.data(), 0, stored, label);
        const auto keep = static_cast<std::size_t>(
            std::lower_bound(r.steps.begin(), r.steps.end(), options.continue_at_step) -
            r.steps.begin());
        r.steps.resize(keep);
        r.times.resize(keep);
        r.in_file = keep;
        const std::string what = "cannot continue " + ctx;
        detail::set_levels(v, keep, what);
        detail::set_levels(detail::open_dataset(id, field_time_path(name), label).get(), keep,
                           what);
        detail::set_levels(detail::open_dataset(id, field_step_path(name), label).get(), keep,
                           what);
        r.defined = true;
        r.written = true;
        r.adopted = true;
      }
    }
    // The step index is written again at commit.
    for (const char* index : {"/time", "/step"}) {
      if (detail::object_exists(id, index, label)) {
        detail::check_status(H5Ldelete(id, index, H5P_DEFAULT),
                             "cannot continue '" + label + "': removing " + index);
      }
    }
    detail::write_attribute(id, "continued_at_step", options.continue_at_step,
                            "the root group of '" + label + "'");
  }

  void write_index() {
    std::vector<std::int64_t> steps;
    std::vector<double> times;
    const std::string* first = nullptr;  // a field written at every step of the index
    bool same = true;
    for (const auto& name : field_order) {
      const Series& r = fields.at(name);
      if (!r.written) continue;
      if (first == nullptr) {
        first = &name;
        steps = r.steps;
        times = r.times;
      } else {
        same = same && r.steps == steps;
        merge_steps(r.steps, r.times, steps, times);
      }
    }
    int shared = first != nullptr && same ? 1 : 0;
    MPI_Bcast(&shared, 1, MPI_INT, 0, comm());
    if (shared != 0) {
      // Every field has the same levels: the index is that of the first field, linked, not
      // copied (a long series would otherwise be written twice).
      const std::string what = "cannot write the step index of '" + file.label() + "'";
      detail::check_status(H5Lcreate_hard(file.id(), field_time_path(*first).c_str(), file.id(),
                                          "/time", H5P_DEFAULT, H5P_DEFAULT),
                           what);
      detail::check_status(H5Lcreate_hard(file.id(), field_step_path(*first).c_str(), file.id(),
                                          "/step", H5P_DEFAULT, H5P_DEFAULT),
                           what);
      return;
    }
    const bool root = file.rank() == 0;
    unsigned long long n = steps.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm());
    detail::write_block_dataset(file.id(), "/time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, times.data(),
                                0, root ? n : 0, n, file.label());
    detail::write_block_dataset(file.id(), "/step", H5T_STD_I64LE, H5T_NATIVE_INT64, steps.data(),
                                0, root ? n : 0, n, file.label());
  }

  std::string xdmf_path() const {
    std::filesystem::path p(file.path());
    p.replace_extension(".xmf");
    return p.string();
  }

  std::string render_xdmf() const {
    std::vector<detail::XdmfField> xf;
    for (const auto& name : field_order) {
      const Series& r = fields.at(name);
      if (!r.written || r.steps.empty()) continue;
      xf.push_back({name, r.shape, r.info.grid, r.info.component_names, r.steps, r.times});
    }
    return detail::render_xdmf(std::filesystem::path(file.path()).filename().string(), xf);
  }

  /// The first write of a field, or a write with another DMDA: checks (agreed by every
  /// rank) and, at the first write, creates the datasets. Collective.
  void prepare(const std::string& name, Series& r, DM da, Vec v) {
    const std::string what =
        "cannot write field " + detail::where(name_of_file(), "/fields/" + name);
    check_field_name(name, file.path());
    const detail::DmdaBox box = detail::dmda_box(comm(), da, v, what);
    if (r.written && r.shape != box.shape) {
      throw IoError(what + ": earlier levels of this field have shape " + to_string(r.shape) +
                    ", this one has " + to_string(box.shape));
    }
    if (!r.info.component_names.empty() &&
        r.info.component_names.size() != static_cast<std::size_t>(box.shape.dof)) {
      throw IoError(what + ": " + std::to_string(r.info.component_names.size()) +
                    " component names were defined for " + std::to_string(box.shape.dof) +
                    " components");
    }
    if (r.info.component_names.empty())
      r.info.component_names = default_components(name, box.shape.dof);
    // A DMDA of another split (a load-balance re-split): the levels waiting for their chunk
    // were copied from the old boxes and go to the file with them first. waiting_levels()
    // is the same on every rank, so all ranks take part in the reduction and the flush.
    if (r.written && r.waiting_levels() > 0) {
      int moved = box.file_start() != r.box.file_start() || box.file_count() != r.box.file_count();
      int any = 0;
      MPI_Allreduce(&moved, &any, 1, MPI_INT, MPI_LOR, comm());
      if (any != 0) flush(name, r);
    }
    r.box = box;
    r.da = da;
    if (!r.written) {
      r.shape = box.shape;
      r.boundary = box.boundary;
      create_series(name, r);
      r.written = true;
    }
  }

  const std::string& name_of_file() const { return file.path(); }
};

std::string format_bytes(std::uint64_t bytes) {
  return fracmfg::detail::format_bytes(bytes);
}

std::uint64_t series_bytes(std::uint64_t levels, std::uint64_t values) {
  const std::uint64_t data = levels * values * sizeof(double);
  // Chunks of about kChunkBytes (the last one allocated whole), and the time and step
  // chunks (at least kIndexChunkMin elements each).
  const std::uint64_t chunks = data / kChunkBytes + 1 + 2 * (levels / kIndexChunkMin + 1);
  const std::uint64_t index_tail = 2 * kIndexChunkMin * sizeof(double);  // a last, part chunk
  return data + std::min(data, kChunkBytes) + levels * (sizeof(double) + sizeof(std::int64_t)) +
         index_tail + chunks * kH5ChunkOverhead + 4 * kH5DatasetOverhead;
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
  std::int64_t at_step = options.continue_at_step;
  MPI_Bcast(&at_step, 1, MPI_INT64_T, 0, comm);
  impl_ = std::make_unique<Impl>(comm, path, options);
  impl_->options.continue_at_step = at_step;
  if (impl_->file.continued()) impl_->file.write([&] { impl_->adopt_existing_fields(); });
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
  detail::reset_quietly(impl_);
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

bool H5Writer::continued() const {
  return impl_->file.continued();
}

std::int64_t H5Writer::field_levels(const std::string& name) const {
  const auto it = impl_->fields.find(name);
  return it == impl_->fields.end() ? 0 : static_cast<std::int64_t>(it->second.steps.size());
}

void H5Writer::define_field(const std::string& name, const FieldInfo& info) {
  impl_->file.require_open("define field '" + name + "'");
  check_field_name(name, path());
  Series& r = impl_->record(name);
  if (r.written && !(r.adopted && r.steps.size() == r.in_file)) {
    throw IoError("cannot define field '" + name + "' of '" + path() +
                  "': it has been written already");
  }
  r.defined = true;
  // A field continued from the file keeps the geometry stored with it.
  if (r.adopted) return;
  r.info = info;
  // Rank 0's geometry and names go into the file: make every rank hold the same.
  std::vector<double> geometry(info.grid.origin.begin(), info.grid.origin.end());
  geometry.insert(geometry.end(), info.grid.spacing.begin(), info.grid.spacing.end());
  detail::bcast_doubles(comm(), geometry);
  for (std::size_t k = 0; k < 3; ++k) {
    r.info.grid.origin[k] = geometry[k];
    r.info.grid.spacing[k] = geometry[3 + k];
  }
  // Every rank must cut the same chunks (it decides when the collective writes happen).
  MPI_Bcast(&r.info.expected_levels, 1, MPI_INT64_T, 0, comm());
  unsigned long long n = info.component_names.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm());
  r.info.component_names.resize(static_cast<std::size_t>(n));
  for (auto& c : r.info.component_names) detail::bcast_string(comm(), c);
}

void H5Writer::write_field(const std::string& name, DM da, Vec v, std::int64_t step, double time) {
  impl_->file.require_open("write field '" + name + "'");
  Series& r = impl_->record(name);
  {
    detail::H5ErrorSilencer quiet;
    // Every write of a Vec is checked on every rank (the Vec of another DMDA, a field of
    // another shape): such writes are few and large, the check is cheap beside them.
    impl_->file.write([&] { impl_->prepare(name, r, da, v); });
  }
  detail::VecReadAccess array(v);
  write_field(name, da, array.data(), step, time);
}

void H5Writer::write_field(const std::string& name, DM da, const PetscScalar* local,
                           std::int64_t step, double time) {
  // Called once per level (2^20 times for a long ODE): the message is built only on failure.
  if (!impl_->file.writable()) impl_->file.require_open("write field '" + name + "'");
  Series& r = impl_->record(name);
  if (!r.written || r.da != da) {
    detail::H5ErrorSilencer quiet;
    impl_->file.write([&] { impl_->prepare(name, r, da, nullptr); });
  }
  // The same arguments on every rank: every rank sees the same error, without a message.
  if (!r.steps.empty() && step <= r.steps.back()) {
    throw IoError("cannot write field '" + name + "' of '" + path() + "' at step " +
                  std::to_string(step) + ": the steps of a field must increase, and step " +
                  std::to_string(r.steps.back()) + " is written already");
  }
  const std::size_t n = r.box.local_size();
  if (n > 0) r.waiting.insert(r.waiting.end(), local, local + n);
  r.steps.push_back(step);
  r.times.push_back(time);
  if (r.waiting_levels() >= r.chunk_levels) {
    detail::H5ErrorSilencer quiet;
    impl_->file.write([&] { impl_->flush(name, r); });
  }
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
  impl_->file.write([&] {
    for (const auto& name : impl_->field_order) impl_->flush(name, impl_->fields.at(name));
    impl_->write_index();
  });
  bool any = false;
  for (const auto& [name, r] : impl_->fields) any = any || !r.steps.empty();
  if (impl_->options.write_xdmf && any) {
    impl_->file.commit(
        [this] { detail::write_text_file_atomically(impl_->xdmf_path(), impl_->render_xdmf()); });
  } else {
    impl_->file.commit();
  }
}

}  // namespace fracmfg::io
