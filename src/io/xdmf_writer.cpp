#include "io/xdmf_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <tuple>
#include <unistd.h>

#include "core/temporary_files.hpp"
#include "fracmfg/core/error.hpp"
#include "fracmfg/io/output_paths.hpp"

namespace fracmfg::io::detail {

namespace {

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

/// Grid identity: fields are put in one temporal collection when these agree.
using GridKey =
    std::tuple<int, std::array<PetscInt, 3>, std::array<double, 3>, std::array<double, 3>>;

GridKey key_of(const XdmfField& f) {
  return {f.shape.dim, f.shape.size, f.grid.origin, f.grid.spacing};
}

/// XDMF lists CoRectMesh dimensions, origin and spacing slowest axis first (z y x). Every
/// grid is a 3DCoRectMesh, a 1D or 2D one a single point thick in the missing axes: ParaView's
/// XDMF reader (5.11) reads a 2DCoRectMesh "ny nx" as a grid in its y-z plane, with x along
/// y, and a 1D field given as a 2DCoRectMesh "1 nx" against nx values as one value.
struct Mesh {
  std::string dims;
  std::string origin;
  std::string spacing;
};

Mesh mesh_of(const XdmfField& f) {
  Mesh m;
  std::ostringstream dims;
  std::ostringstream origin;
  std::ostringstream spacing;
  for (int d = 2; d >= 0; --d) {
    const auto k = static_cast<std::size_t>(d);
    const bool used = d < f.shape.dim;
    const char* sep = d == 2 ? "" : " ";
    dims << sep << (used ? f.shape.size[k] : 1);
    origin << sep << number(used ? f.grid.origin[k] : 0.0);
    spacing << sep << number(used ? f.grid.spacing[k] : 1.0);
  }
  m.dims = dims.str();
  m.origin = origin.str();
  m.spacing = spacing.str();
  return m;
}

/// Dataset dimensions as XDMF text (slowest first, + dof).
std::string data_dims(const FieldShape& s, bool with_dof) {
  std::ostringstream os;
  for (int d = s.dim - 1; d >= 0; --d) {
    os << (d == s.dim - 1 ? "" : " ") << s.size[static_cast<std::size_t>(d)];
  }
  if (with_dof) os << ' ' << s.dof;
  return os.str();
}

/// One Attribute per component: a HyperSlab (start, stride, count, each of the values
/// dataset's rank) picking level `level` (and component c of a trailing dof axis) out of
/// /fields/<name>/values. The slab's Dimensions are the mesh's, so the reader takes it as
/// one value per mesh point.
void write_attribute(std::ostringstream& os, const std::string& h5, const XdmfField& f,
                     std::size_t level, const Mesh& mesh) {
  const std::string source = xml_escape(h5) + ":" + xml_escape(field_values_path(f.name));
  const std::string indent = "        ";
  const bool with_dof = f.shape.dof > 1;
  const int rank = 1 + f.shape.dim + (with_dof ? 1 : 0);
  for (PetscInt c = 0; c < f.shape.dof; ++c) {
    std::ostringstream start;
    std::ostringstream stride;
    std::ostringstream count;
    start << level;
    stride << 1;
    count << 1;
    for (int d = f.shape.dim - 1; d >= 0; --d) {
      start << ' ' << 0;
      stride << ' ' << 1;
      count << ' ' << f.shape.size[static_cast<std::size_t>(d)];
    }
    if (with_dof) {
      start << ' ' << c;
      stride << ' ' << 1;
      count << ' ' << 1;
    }
    os << indent << "<Attribute Name=\""
       << xml_escape(f.component_names.at(static_cast<std::size_t>(c)))
       << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
       << indent << "  <DataItem ItemType=\"HyperSlab\" Dimensions=\"" << mesh.dims
       << "\" Type=\"HyperSlab\">\n"
       << indent << "    <DataItem Dimensions=\"3 " << rank << "\" Format=\"XML\">" << start.str()
       << ' ' << stride.str() << ' ' << count.str() << "</DataItem>\n"
       << indent << "    <DataItem Dimensions=\"" << f.steps.size() << ' '
       << data_dims(f.shape, with_dof) << "\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">"
       << source << "</DataItem>\n"
       << indent << "  </DataItem>\n"
       << indent << "</Attribute>\n";
  }
}

}  // namespace

std::string render_xdmf(const std::string& h5_file_name, const std::vector<XdmfField>& fields) {
  // Group the fields by grid, keeping the order in which grids first appear.
  std::vector<GridKey> order;
  std::map<GridKey, std::vector<const XdmfField*>> groups;
  for (const auto& f : fields) {
    if (f.steps.empty()) continue;
    const GridKey k = key_of(f);
    if (groups.find(k) == groups.end()) order.push_back(k);
    groups[k].push_back(&f);
  }

  std::ostringstream os;
  os << "<?xml version=\"1.0\" ?>\n"
     << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
     << "<Xdmf Version=\"2.0\">\n"
     << "  <Domain>\n";
  for (const GridKey& k : order) {
    const auto& members = groups[k];
    std::string name;
    for (const XdmfField* f : members) name += (name.empty() ? "" : "+") + f->name;
    // Steps of the collection: every step any member was written at (each member's steps
    // increase), in increasing order.
    std::vector<std::pair<std::int64_t, double>> steps;
    for (const XdmfField* f : members) {
      std::vector<std::pair<std::int64_t, double>> mine;
      for (std::size_t i = 0; i < f->steps.size(); ++i) mine.emplace_back(f->steps[i], f->times[i]);
      std::vector<std::pair<std::int64_t, double>> merged;
      std::merge(steps.begin(), steps.end(), mine.begin(), mine.end(), std::back_inserter(merged),
                 [](const auto& a, const auto& b) { return a.first < b.first; });
      merged.erase(std::unique(merged.begin(), merged.end(),
                               [](const auto& a, const auto& b) { return a.first == b.first; }),
                   merged.end());
      steps.swap(merged);
    }
    const Mesh mesh = mesh_of(*members.front());
    os << "    <Grid Name=\"" << xml_escape(name)
       << "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (const auto& [step, time] : steps) {
      os << "      <Grid Name=\"" << xml_escape(name) << "_" << step << "\" GridType=\"Uniform\">\n"
         << "        <Time Value=\"" << number(time) << "\"/>\n"
         << "        <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << mesh.dims << "\"/>\n"
         << "        <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
         << "          <DataItem Name=\"Origin\" Dimensions=\"3\" NumberType=\"Float\" "
         << "Precision=\"8\" Format=\"XML\">" << mesh.origin << "</DataItem>\n"
         << "          <DataItem Name=\"Spacing\" Dimensions=\"3\" NumberType=\"Float\" "
         << "Precision=\"8\" Format=\"XML\">" << mesh.spacing << "</DataItem>\n"
         << "        </Geometry>\n";
      for (const XdmfField* f : members) {
        const auto it = std::lower_bound(f->steps.begin(), f->steps.end(), step);
        if (it != f->steps.end() && *it == step) {
          write_attribute(os, h5_file_name, *f, static_cast<std::size_t>(it - f->steps.begin()),
                          mesh);
        }
      }
      os << "      </Grid>\n";
    }
    os << "    </Grid>\n";
  }
  os << "  </Domain>\n"
     << "</Xdmf>\n";
  return os.str();
}

void fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) {
    throw IoError("cannot open '" + path + "' to flush it: " + std::strerror(errno));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems do not support fsync on directories (EINVAL): nothing to flush there.
  if (rc != 0 && !(directory && (err == EINVAL || err == EBADF))) {
    throw IoError("cannot flush '" + path + "' to disk: " + std::strerror(err));
  }
}

void write_text_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  fracmfg::detail::remove_stale_temporaries(path);
  const fs::path tmp = fracmfg::detail::temporary_name(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wx");
  if (f == nullptr) {
    throw IoError("cannot create '" + tmp.string() + "' (for '" + path +
                  "'): " + std::strerror(errno));
  }
  fracmfg::detail::register_temporary_file(tmp.string());
  struct Forget {
    std::string path;
    ~Forget() { fracmfg::detail::unregister_temporary_file(path); }
  } forget{tmp.string()};
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_errno = errno;
  const bool flushed = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const bool closed = std::fclose(f) == 0;
  if (!written || !flushed || !closed) {
    std::remove(tmp.c_str());
    throw IoError("cannot write '" + path + "': " + std::strerror(written ? errno : write_errno));
  }
  try {
    require_replaceable(path);  // never a device node, FIFO or directory
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw IoError("cannot rename '" + tmp.string() + "' to '" + path + "': " + std::strerror(err));
  }
  fsync_path(dir.string(), true);
}

}  // namespace fracmfg::io::detail
