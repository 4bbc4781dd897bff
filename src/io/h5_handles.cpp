#include "io/h5_handles.hpp"

#include <algorithm>
#include <sstream>

#include "fracmfg/core/guarded_main.hpp"

namespace fracmfg::io::detail {

H5ErrorSilencer::H5ErrorSilencer() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

H5ErrorSilencer::~H5ErrorSilencer() {
  H5Eset_auto2(H5E_DEFAULT, func_, data_);
}

namespace {
struct StackText {
  std::vector<std::string> entries;
};

herr_t collect_entry(unsigned /*n*/, const H5E_error2_t* err, void* client) {
  auto* text = static_cast<StackText*>(client);
  std::string entry;
  if (err->func_name != nullptr) entry += err->func_name;
  char minor[256] = {0};
  if (H5Eget_msg(err->min_num, nullptr, minor, sizeof(minor)) < 0) minor[0] = '\0';
  if (err->desc != nullptr && *err->desc != '\0') {
    entry += entry.empty() ? "" : ": ";
    entry += err->desc;
  }
  if (minor[0] != '\0') {
    entry += " (";
    entry += minor;
    entry += ")";
  }
  if (!entry.empty()) text->entries.push_back(entry);
  return 0;
}
}  // namespace

std::string h5_error_stack() {
  StackText text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, &collect_entry, &text);
  H5Eclear2(H5E_DEFAULT);
  if (text.entries.empty()) return "HDF5 reported an error without details";
  // Downward: the API call first, the innermost cause last. Keep the call and the two
  // innermost causes, which say what actually went wrong.
  std::ostringstream os;
  const std::size_t n = text.entries.size();
  os << text.entries.front();
  const std::size_t from = std::max<std::size_t>(1, n >= 2 ? n - 2 : 1);
  if (from > 1) os << " ...";
  for (std::size_t i = from; i < n; ++i) os << " <- " << text.entries[i];
  return os.str();
}

void throw_h5(const std::string& what) {
  throw H5Failure(what + ": " + h5_error_stack());
}

H5PropList make_file_access(MPI_Comm comm, const std::string& file) {
  const std::string ctx = "cannot set up parallel access to '" + file + "'";
  H5PropList fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), ctx));
  check_status(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), ctx);
  check_status(H5Pset_all_coll_metadata_ops(fapl.get(), 1), ctx);
  check_status(H5Pset_coll_metadata_write(fapl.get(), 1), ctx);
  check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), ctx);
  return fapl;
}

H5PropList make_collective_transfer(const std::string& file) {
  const std::string ctx = "cannot set up collective transfer for '" + file + "'";
  H5PropList dxpl(check_id(H5Pcreate(H5P_DATASET_XFER), ctx));
  check_status(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), ctx);
  return dxpl;
}

std::string where(const std::string& file, const std::string& object) {
  return "'" + object + "' in '" + file + "'";
}

std::string normalize_path(const std::string& object) {
  std::string out;
  std::size_t pos = 0;
  while (pos <= object.size()) {
    const std::size_t next = std::min(object.find('/', pos), object.size());
    const std::string part = object.substr(pos, next - pos);
    if (part == "." || part == "..") {
      throw IoError("invalid HDF5 object path '" + object + "': '.' and '..' are not allowed");
    }
    if (!part.empty()) out += "/" + part;
    pos = next + 1;
  }
  return out.empty() ? "/" : out;
}

bool object_exists(hid_t file, const std::string& object, const std::string& file_name) {
  const std::string path = normalize_path(object);
  if (path == "/") return true;
  // H5Lexists needs every parent to exist: test the path one component at a time.
  std::size_t pos = 1;
  while (pos <= path.size()) {
    const std::size_t next = std::min(path.find('/', pos), path.size());
    const std::string link = path.substr(0, next);
    if (!check_tri(H5Lexists(file, link.c_str(), H5P_DEFAULT),
                   "cannot look up " + where(file_name, link))) {
      return false;
    }
    pos = next + 1;
  }
  return true;
}

std::vector<hsize_t> dataset_dims(hid_t dataset, const std::string& what) {
  H5Dataspace space(check_id(H5Dget_space(dataset), what));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) throw_h5(what);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) check_status(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), what);
  return dims;
}

std::string format_dims(const std::vector<hsize_t>& dims) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < dims.size(); ++i) os << (i ? ", " : "") << dims[i];
  os << ']';
  return os.str();
}

H5Type make_string_type(const std::string& what) {
  H5Type type(check_id(H5Tcopy(H5T_C_S1), what));
  check_status(H5Tset_size(type.get(), H5T_VARIABLE), what);
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), what);
  return type;
}

H5Type make_fixed_string_type(std::size_t size, const std::string& what) {
  H5Type type(check_id(H5Tcopy(H5T_C_S1), what));
  check_status(H5Tset_size(type.get(), std::max<std::size_t>(size, 1)), what);
  check_status(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), what);
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), what);
  return type;
}

namespace {
H5Attribute recreate_attribute(hid_t object, const std::string& name, hid_t type, hid_t space,
                               const std::string& what) {
  if (check_tri(H5Aexists(object, name.c_str()), what)) {
    check_status(H5Adelete(object, name.c_str()), what);
  }
  return H5Attribute(
      check_id(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), what));
}

template <class T>
void write_numeric_attribute(hid_t object, const std::string& name, hid_t file_type, hid_t mem_type,
                             const T* values, std::size_t n, bool scalar, const std::string& ctx) {
  const std::string what = "cannot write attribute '" + name + "' of " + ctx;
  H5Dataspace space;
  if (scalar) {
    space = H5Dataspace(check_id(H5Screate(H5S_SCALAR), what));
  } else if (n == 0) {
    space = H5Dataspace(check_id(H5Screate(H5S_NULL), what));
  } else {
    const hsize_t dims[1] = {static_cast<hsize_t>(n)};
    space = H5Dataspace(check_id(H5Screate_simple(1, dims, nullptr), what));
  }
  H5Attribute attr = recreate_attribute(object, name, file_type, space.get(), what);
  if (scalar || n > 0) check_status(H5Awrite(attr.get(), mem_type, values), what);
}

H5Attribute open_attribute(hid_t object, const std::string& name, const std::string& ctx) {
  const std::string what = "cannot open attribute '" + name + "' of " + ctx;
  if (!check_tri(H5Aexists(object, name.c_str()), what)) {
    throw IoError(what + ": no such attribute");
  }
  return H5Attribute(check_id(H5Aopen(object, name.c_str(), H5P_DEFAULT), what));
}

template <class T>
std::vector<T> read_numeric_attribute(hid_t object, const std::string& name, hid_t mem_type,
                                      const std::string& ctx) {
  const std::string what = "cannot read attribute '" + name + "' of " + ctx;
  H5Attribute attr = open_attribute(object, name, ctx);
  H5Type type(check_id(H5Aget_type(attr.get()), what));
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) throw IoError(what + ": it is not numeric");
  H5Dataspace space(check_id(H5Aget_space(attr.get()), what));
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n < 0) throw_h5(what);
  std::vector<T> values(static_cast<std::size_t>(n));
  if (n > 0) check_status(H5Aread(attr.get(), mem_type, values.data()), what);
  return values;
}
}  // namespace

void write_attribute(hid_t object, const std::string& name, double value, const std::string& ctx) {
  write_numeric_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, 1, true, ctx);
}

void write_attribute(hid_t object, const std::string& name, std::int64_t value,
                     const std::string& ctx) {
  write_numeric_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, 1, true, ctx);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values,
                     const std::string& ctx) {
  write_numeric_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data(),
                          values.size(), false, ctx);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<std::int64_t>& values,
                     const std::string& ctx) {
  write_numeric_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, values.data(),
                          values.size(), false, ctx);
}

void write_attribute(hid_t object, const std::string& name, const std::string& value,
                     const std::string& ctx) {
  const std::string what = "cannot write attribute '" + name + "' of " + ctx;
  H5Type type = make_string_type(what);
  H5Dataspace space(check_id(H5Screate(H5S_SCALAR), what));
  H5Attribute attr = recreate_attribute(object, name, type.get(), space.get(), what);
  const char* text = value.c_str();
  check_status(H5Awrite(attr.get(), type.get(), &text), what);
}

void write_attribute(hid_t object, const std::string& name, const std::vector<std::string>& values,
                     const std::string& ctx) {
  const std::string what = "cannot write attribute '" + name + "' of " + ctx;
  H5Type type = make_string_type(what);
  H5Dataspace space;
  if (values.empty()) {
    space = H5Dataspace(check_id(H5Screate(H5S_NULL), what));
  } else {
    const hsize_t dims[1] = {static_cast<hsize_t>(values.size())};
    space = H5Dataspace(check_id(H5Screate_simple(1, dims, nullptr), what));
  }
  H5Attribute attr = recreate_attribute(object, name, type.get(), space.get(), what);
  if (values.empty()) return;
  std::vector<const char*> text;
  text.reserve(values.size());
  for (const auto& v : values) text.push_back(v.c_str());
  check_status(H5Awrite(attr.get(), type.get(), text.data()), what);
}

bool attribute_exists(hid_t object, const std::string& name, const std::string& ctx) {
  return check_tri(H5Aexists(object, name.c_str()),
                   "cannot look up attribute '" + name + "' of " + ctx);
}

double read_attribute_double(hid_t object, const std::string& name, const std::string& ctx) {
  auto v = read_numeric_attribute<double>(object, name, H5T_NATIVE_DOUBLE, ctx);
  if (v.size() != 1) {
    throw IoError("attribute '" + name + "' of " + ctx + " holds " + std::to_string(v.size()) +
                  " values, expected one");
  }
  return v.front();
}

std::int64_t read_attribute_int64(hid_t object, const std::string& name, const std::string& ctx) {
  auto v = read_numeric_attribute<std::int64_t>(object, name, H5T_NATIVE_INT64, ctx);
  if (v.size() != 1) {
    throw IoError("attribute '" + name + "' of " + ctx + " holds " + std::to_string(v.size()) +
                  " values, expected one");
  }
  return v.front();
}

std::vector<double> read_attribute_doubles(hid_t object, const std::string& name,
                                           const std::string& ctx) {
  return read_numeric_attribute<double>(object, name, H5T_NATIVE_DOUBLE, ctx);
}

std::vector<std::int64_t> read_attribute_int64s(hid_t object, const std::string& name,
                                                const std::string& ctx) {
  return read_numeric_attribute<std::int64_t>(object, name, H5T_NATIVE_INT64, ctx);
}

std::vector<std::string> read_attribute_strings(hid_t object, const std::string& name,
                                                const std::string& ctx) {
  const std::string what = "cannot read attribute '" + name + "' of " + ctx;
  H5Attribute attr = open_attribute(object, name, ctx);
  H5Type type(check_id(H5Aget_type(attr.get()), what));
  if (H5Tget_class(type.get()) != H5T_STRING) throw IoError(what + ": it is not a string");
  H5Dataspace space(check_id(H5Aget_space(attr.get()), what));
  const hssize_t npoints = H5Sget_simple_extent_npoints(space.get());
  if (npoints < 0) throw_h5(what);
  const auto n = static_cast<std::size_t>(npoints);
  std::vector<std::string> out;
  out.reserve(n);
  if (n == 0) return out;
  const htri_t variable = H5Tis_variable_str(type.get());
  if (variable < 0) throw_h5(what);
  if (variable > 0) {
    H5Type mem = make_string_type(what);
    std::vector<char*> text(n, nullptr);
    check_status(H5Aread(attr.get(), mem.get(), text.data()), what);
    const std::vector<H5String> owned(text.begin(), text.end());
    for (const H5String& t : owned) out.emplace_back(t ? t.get() : "");
  } else {
    const std::size_t size = H5Tget_size(type.get());
    if (size == 0) throw_h5(what);
    H5Type mem = make_fixed_string_type(size, what);
    std::vector<char> buf(size * n, '\0');
    check_status(H5Aread(attr.get(), mem.get(), buf.data()), what);
    for (std::size_t i = 0; i < n; ++i) {
      std::string s(buf.data() + i * size, size);
      s.erase(std::find(s.begin(), s.end(), '\0'), s.end());
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::string read_attribute_string(hid_t object, const std::string& name, const std::string& ctx) {
  auto v = read_attribute_strings(object, name, ctx);
  if (v.size() != 1) {
    throw IoError("attribute '" + name + "' of " + ctx + " holds " + std::to_string(v.size()) +
                  " strings, expected one");
  }
  return v.front();
}

void agree_impl(MPI_Comm comm, const std::string& local_error, bool failed) {
  try {
    core::collective(comm, [&] {
      if (failed) throw IoError(local_error);
    });
  } catch (const core::CollectiveError& e) {
    throw IoError(e.what());
  }
}

void bcast_string(MPI_Comm comm, std::string& text) {
  unsigned long long n = text.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  text.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, comm);
}

void bcast_doubles(MPI_Comm comm, std::vector<double>& values) {
  unsigned long long n = values.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  values.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(values.data(), static_cast<int>(n), MPI_DOUBLE, 0, comm);
}

void bcast_int64s(MPI_Comm comm, std::vector<std::int64_t>& values) {
  unsigned long long n = values.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  values.resize(static_cast<std::size_t>(n));
  if (n > 0) MPI_Bcast(values.data(), static_cast<int>(n), MPI_INT64_T, 0, comm);
}

}  // namespace fracmfg::io::detail
