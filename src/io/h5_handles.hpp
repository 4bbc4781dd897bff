#pragma once
// Private HDF5 plumbing for fracmfg::io: one RAII owner per kind of HDF5 identifier, error
// capture (HDF5's automatic stack printing is switched off around every public call and the
// stack is turned into the message of a fracmfg::IoError), and small helpers shared by the
// writer, the reader and the checkpoint code. Never included from a public header.

#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"

namespace fracmfg::io::detail {

/// Owner of one HDF5 identifier; Close is the matching H5?close function.
template <herr_t (*Close)(hid_t)>
class H5Handle {
 public:
  H5Handle() = default;
  explicit H5Handle(hid_t id) : id_(id) {}
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  H5Handle(H5Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  H5Handle& operator=(H5Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  ~H5Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now; returns false when HDF5 reported an error while closing.
  bool reset() noexcept {
    herr_t status = 0;
    if (id_ >= 0) status = Close(id_);
    id_ = H5I_INVALID_HID;
    return status >= 0;
  }
  /// Gives up ownership without closing.
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using H5File = H5Handle<&H5Fclose>;
using H5Group = H5Handle<&H5Gclose>;
using H5Dataset = H5Handle<&H5Dclose>;
using H5Dataspace = H5Handle<&H5Sclose>;
using H5PropList = H5Handle<&H5Pclose>;
using H5Attribute = H5Handle<&H5Aclose>;
using H5Type = H5Handle<&H5Tclose>;
using H5Object = H5Handle<&H5Oclose>;  ///< a group or dataset opened with H5Oopen

/// Memory HDF5 allocated for the caller (a variable-length string read back), released
/// with H5free_memory.
struct H5FreeMemory {
  void operator()(void* p) const noexcept {
    if (p != nullptr) H5free_memory(p);
  }
};
using H5String = std::unique_ptr<char, H5FreeMemory>;

/// Switches HDF5's automatic error printing off for its lifetime and restores the previous
/// setting afterwards, so a host code that uses HDF5 itself keeps its own behaviour.
class H5ErrorSilencer {
 public:
  H5ErrorSilencer();
  H5ErrorSilencer(const H5ErrorSilencer&) = delete;
  H5ErrorSilencer& operator=(const H5ErrorSilencer&) = delete;
  ~H5ErrorSilencer();

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

/// Destroys the implementation object of a public io class (which owns HDF5 handles) with
/// HDF5's error printing off: what a destructor's close reports, nobody can act on.
template <class Impl>
void reset_quietly(std::unique_ptr<Impl>& impl) noexcept {
  if (!impl) return;
  const H5ErrorSilencer quiet;
  impl.reset();
}

/// The current HDF5 error stack as one line (innermost cause last), then cleared.
std::string h5_error_stack();

/// An IoError raised by a failed HDF5 call (as opposed to one fracmfg raised itself, such as
/// a bad name or a shape mismatch): the file may be damaged (a write that did not reach the
/// disk, metadata that could not be flushed).
class H5Failure : public IoError {
 public:
  using IoError::IoError;
};

/// Throws H5Failure("<what>: <HDF5 error stack>").
[[noreturn]] void throw_h5(const std::string& what);

/// Returns id when valid, else throws IoError naming what failed.
inline hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) throw_h5(what);
  return id;
}
inline void check_status(herr_t status, const std::string& what) {
  if (status < 0) throw_h5(what);
}
/// For H5Lexists-like calls returning htri_t.
inline bool check_tri(htri_t value, const std::string& what) {
  if (value < 0) throw_h5(what);
  return value > 0;
}

/// File access property list for the MPI-IO driver on comm, with collective metadata reads
/// and writes and the HDF5 1.8 file format (readable by every HDF5 >= 1.8 and h5py; it
/// also lifts the 64 KiB limit on attribute size, which the deck text may exceed).
H5PropList make_file_access(MPI_Comm comm, const std::string& file);
/// Data transfer property list for collective MPI-IO.
H5PropList make_collective_transfer(const std::string& file);

/// "'<object>' in '<file>'" for messages.
std::string where(const std::string& file, const std::string& object);

/// "/a/b" from "a//b/" and the like: absolute, no empty components; "." and ".." are an
/// IoError. "/" for the root.
std::string normalize_path(const std::string& object);

/// True when every component of the path `object` exists in file.
bool object_exists(hid_t file, const std::string& object, const std::string& file_name);

/// Dataset dimensions (slowest first).
std::vector<hsize_t> dataset_dims(hid_t dataset, const std::string& what);

/// "[a, b, c]"
std::string format_dims(const std::vector<hsize_t>& dims);

/// A variable-length UTF-8 string type.
H5Type make_string_type(const std::string& what);
/// A fixed-length (at least 1 byte) null-padded UTF-8 string type.
H5Type make_fixed_string_type(std::size_t size, const std::string& what);

/// Scalar attribute writers (replace an existing attribute of the same name). Collective
/// when the file is open with the MPI-IO driver; every rank must pass the same value.
void write_attribute(hid_t object, const std::string& name, double value, const std::string& ctx);
void write_attribute(hid_t object, const std::string& name, std::int64_t value,
                     const std::string& ctx);
void write_attribute(hid_t object, const std::string& name, const std::string& value,
                     const std::string& ctx);
void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values,
                     const std::string& ctx);
void write_attribute(hid_t object, const std::string& name, const std::vector<std::int64_t>& values,
                     const std::string& ctx);
void write_attribute(hid_t object, const std::string& name, const std::vector<std::string>& values,
                     const std::string& ctx);

/// Attribute readers; the stored type is converted by HDF5 (an integer attribute reads as
/// double and vice versa); a string read from a non-string attribute is an IoError.
double read_attribute_double(hid_t object, const std::string& name, const std::string& ctx);
std::int64_t read_attribute_int64(hid_t object, const std::string& name, const std::string& ctx);
std::string read_attribute_string(hid_t object, const std::string& name, const std::string& ctx);
std::vector<double> read_attribute_doubles(hid_t object, const std::string& name,
                                           const std::string& ctx);
std::vector<std::int64_t> read_attribute_int64s(hid_t object, const std::string& name,
                                                const std::string& ctx);
std::vector<std::string> read_attribute_strings(hid_t object, const std::string& name,
                                                const std::string& ctx);
bool attribute_exists(hid_t object, const std::string& name, const std::string& ctx);

/// Runs fn on every rank of comm; when any rank throws, every rank throws an IoError with
/// the message of the lowest failing rank (so no rank is left waiting in the next
/// collective call). Collective.
template <class Fn>
void agree(MPI_Comm comm, Fn&& fn);

void agree_impl(MPI_Comm comm, const std::string& local_error, bool failed);

template <class Fn>
void agree(MPI_Comm comm, Fn&& fn) {
  std::string message;
  bool failed = false;
  try {
    std::forward<Fn>(fn)();
  } catch (const std::exception& e) {
    message = e.what();
    failed = true;
  } catch (...) {
    message = "unknown exception";
    failed = true;
  }
  agree_impl(comm, message, failed);
}

/// Broadcasts rank 0's value of x to every rank of comm.
void bcast_string(MPI_Comm comm, std::string& text);
void bcast_doubles(MPI_Comm comm, std::vector<double>& values);
void bcast_int64s(MPI_Comm comm, std::vector<std::int64_t>& values);

}  // namespace fracmfg::io::detail
