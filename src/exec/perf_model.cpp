#include "fracmfg/exec/perf_model.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <locale>
#include <sstream>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "fracmfg/core/error.hpp"

namespace fracmfg::exec {

const char* to_string(Backend backend) {
  switch (backend) {
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
  }
  return "?";
}

std::optional<Backend> parse_backend(std::string_view text) {
  if (text == "cpu" || text == "host") return Backend::cpu;  // "host": older files
  if (text == "cuda") return Backend::cuda;
  return std::nullopt;
}

namespace {

constexpr const char* format_magic = "fracmfg-perf-model";
constexpr int format_version = 1;
constexpr double min_timed_seconds = 1e-9;  // floor of the 1/t^2 weight

bool valid_kernel_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
  }
  return true;
}

bool finite_cost(const LinearCost& c) {
  return std::isfinite(c.latency) && std::isfinite(c.seconds_per_unit) && c.latency >= 0.0 &&
         c.seconds_per_unit >= 0.0;
}

// sums <- lambda * sums + sample
void decay_add(SampleSums& s, double lambda, double w, double n, double t) {
  s.w = lambda * s.w + w;
  s.sn = lambda * s.sn + w * n;
  s.st = lambda * s.st + w * t;
  s.snn = lambda * s.snn + w * n * n;
  s.snt = lambda * s.snt + w * n * t;
  ++s.count;
}

// factor * a + b
SampleSums combine(const SampleSums& a, double factor, const SampleSums& b) {
  SampleSums s;
  s.count = a.count + b.count;
  s.w = factor * a.w + b.w;
  s.sn = factor * a.sn + b.sn;
  s.st = factor * a.st + b.st;
  s.snn = factor * a.snn + b.snn;
  s.snt = factor * a.snt + b.snt;
  return s;
}

std::string sanitise(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "unknown";
  return out;
}

struct FileEntry {
  std::string kernel;
  Backend backend = Backend::cpu;
  SampleSums sums;
};

enum class ReadStatus { ok, missing, invalid };

// Reads a performance file; on `invalid`, `why` says what is wrong (with the line).
ReadStatus read_perf_file(const std::string& path, const std::string& host,
                          const std::string& device, std::vector<FileEntry>& entries,
                          std::string& why) {
  entries.clear();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return ReadStatus::missing;
  std::ifstream in(path);
  if (!in) {
    why = std::string("cannot open: ") + std::strerror(errno);
    return ReadStatus::invalid;
  }
  std::string line;
  int line_no = 0;
  bool have_magic = false;
  bool have_host = false;
  bool have_device = false;
  auto bad = [&](const std::string& msg) {
    why = "line " + std::to_string(line_no) + ": " + msg;
    entries.clear();
    return ReadStatus::invalid;
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::size_t sp = line.find(' ');
    const std::string word = line.substr(0, sp);
    const std::string rest = sp == std::string::npos ? std::string() : line.substr(sp + 1);
    if (!have_magic) {
      if (word != format_magic) return bad("not a fracmfg performance file");
      if (rest != std::to_string(format_version)) {
        return bad("format version " + rest + ", expected " + std::to_string(format_version));
      }
      have_magic = true;
    } else if (word == "host") {
      if (rest != host) return bad("written on host '" + rest + "', this is '" + host + "'");
      have_host = true;
    } else if (word == "device") {
      if (rest != device) return bad("for device '" + rest + "', this is '" + device + "'");
      have_device = true;
    } else if (word == "entry") {
      if (!have_host || !have_device) return bad("entry before host and device lines");
      std::istringstream is(rest);
      is.imbue(std::locale::classic());
      FileEntry e;
      std::string backend;
      std::string extra;
      if (!(is >> e.kernel >> backend >> e.sums.count >> e.sums.w >> e.sums.sn >> e.sums.st >>
            e.sums.snn >> e.sums.snt) ||
          (is >> extra)) {
        return bad("malformed entry");
      }
      const auto b = parse_backend(backend);
      if (!b) return bad("unknown backend '" + backend + "'");
      e.backend = *b;
      if (!valid_kernel_name(e.kernel)) return bad("invalid kernel name");
      const SampleSums& s = e.sums;
      for (double v : {s.w, s.sn, s.st, s.snn, s.snt}) {
        if (!std::isfinite(v)) return bad("non-finite sum");
      }
      if (s.w < 0.0 || s.sn < 0.0 || s.st < 0.0 || s.snn < 0.0 || s.snt < 0.0) {
        return bad("negative sum");
      }
      for (const FileEntry& other : entries) {
        if (other.kernel == e.kernel && other.backend == e.backend) {
          return bad("duplicate entry " + e.kernel + " " + backend);
        }
      }
      entries.push_back(std::move(e));
    } else {
      return bad("unknown record '" + word + "'");
    }
  }
  if (!have_magic) {
    line_no = 1;
    return bad("empty file");
  }
  if (!have_host || !have_device) return bad("missing host or device line");
  return ReadStatus::ok;
}

std::string format_perf_file(const std::string& host, const std::string& device,
                             std::vector<FileEntry> entries) {
  std::sort(entries.begin(), entries.end(), [](const FileEntry& a, const FileEntry& b) {
    return a.kernel != b.kernel ? a.kernel < b.kernel : a.backend < b.backend;
  });
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os.precision(17);
  os << format_magic << ' ' << format_version << '\n'
     << "# fracmfg performance model: t(n) = latency + n * seconds_per_unit, fitted by\n"
     << "# weighted least squares; entry <kernel> <backend> <count> <W> <Sn> <St> <Snn> <Snt>\n"
     << "host " << host << '\n'
     << "device " << device << '\n';
  for (const FileEntry& e : entries) {
    os << "entry " << e.kernel << ' ' << to_string(e.backend) << ' ' << e.sums.count << ' '
       << e.sums.w << ' ' << e.sums.sn << ' ' << e.sums.st << ' ' << e.sums.snn << ' ' << e.sums.snt
       << '\n';
  }
  return os.str();
}

// A rank without a device was named "host" (file <host>__host.perf, line "device host")
// before the backend had one name; such a file is read when none of the name "cpu" exists,
// and the next save writes its samples, merged, under the new name.
constexpr const char* legacy_cpu_device = "host";

// read_perf_file on `file`, falling back to the older file of a "cpu" device when `file`
// is missing; `file` becomes the path that was read.
ReadStatus read_perf_file_or_legacy(std::string& file, const std::string& directory,
                                    const std::string& host, const std::string& device,
                                    std::vector<FileEntry>& entries, std::string& why) {
  const ReadStatus st = read_perf_file(file, host, device, entries, why);
  if (st != ReadStatus::missing || device != to_string(Backend::cpu)) return st;
  const std::string legacy =
      (std::filesystem::path(directory) / PerfModel::file_name(host, legacy_cpu_device)).string();
  const ReadStatus old = read_perf_file(legacy, host, legacy_cpu_device, entries, why);
  if (old != ReadStatus::missing) file = legacy;
  return old;
}

// An exclusive flock on a lock file, held for the object's lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw IoError("cannot open lock file " + path + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd_);
      throw IoError("cannot lock " + path + ": " + std::strerror(err));
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

 private:
  int fd_ = -1;
};

// Writes text to a temporary file next to `path` and renames it over `path`.
void write_atomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  std::string tmpl =
      (target.parent_path() / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0)
    throw IoError("cannot create a temporary file for " + path + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw IoError("cannot write " + tmpl + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::close(fd) != 0 || ::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw IoError("cannot replace " + path + ": " + std::strerror(err));
  }
}

}  // namespace

PerfModel::PerfModel(std::string host_name, std::string device_name, PerfModelOptions options,
                     core::Logger log)
    : host_name_(std::move(host_name)),
      device_name_(std::move(device_name)),
      options_(options),
      log_(log) {
  if (!(options_.forgetting > 0.0 && options_.forgetting <= 1.0)) {
    throw Error("performance model: forgetting factor must be in (0, 1]");
  }
  if (options_.min_fit_samples < 2) {
    throw Error("performance model: at least 2 samples are needed for a fit");
  }
  if (!finite_cost(options_.host_prior) || !finite_cost(options_.cuda_prior)) {
    throw Error("performance model: priors must be finite and non-negative");
  }
  // Names end up on one line of the file.
  for (char& c : host_name_) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  for (char& c : device_name_) {
    if (c == '\n' || c == '\r') c = ' ';
  }
}

void PerfModel::unknown_kernel(KernelId id) {
  throw Error("kernel id " + std::to_string(id.index) + " was not registered with this model");
}

KernelId PerfModel::kernel(std::string_view name) {
  if (auto id = find_kernel(name)) return *id;
  if (!valid_kernel_name(name)) {
    throw Error("invalid kernel name '" + std::string(name) +
                "' (1 to 64 characters, no spaces or control characters)");
  }
  names_.emplace_back(name);
  std::array<Entry, backend_count> e;
  e[static_cast<int>(Backend::cpu)].prior = options_.host_prior;
  e[static_cast<int>(Backend::cuda)].prior = options_.cuda_prior;
  for (Entry& x : e) refit(x);
  entries_.push_back(e);
  return KernelId{static_cast<std::uint32_t>(names_.size() - 1)};
}

std::optional<KernelId> PerfModel::find_kernel(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return KernelId{static_cast<std::uint32_t>(i)};
  }
  return std::nullopt;
}

const std::string& PerfModel::kernel_name(KernelId id) const {
  if (id.index >= names_.size()) unknown_kernel(id);
  return names_[id.index];
}

void PerfModel::add_sample(KernelId id, Backend backend, double n, double seconds) {
  Entry& e = entry(id, backend);
  if (!options_.learning) return;
  if (!(n >= 0.0) || !(seconds >= 0.0) || !std::isfinite(n) || !std::isfinite(seconds)) return;
  const double tw = std::max(seconds, min_timed_seconds);
  const double w = 1.0 / (tw * tw);
  decay_add(e.total, options_.forgetting, w, n, seconds);
  decay_add(e.unsaved, options_.forgetting, w, n, seconds);
  refit(e);
}

void PerfModel::refit(Entry& e) const {
  const SampleSums& s = e.total;
  if (s.count < static_cast<std::uint64_t>(options_.min_fit_samples) || !(s.w > 0.0)) {
    e.fit = e.prior;
    e.fitted = false;
    return;
  }
  const double mean_n = s.sn / s.w;
  const double mean_t = s.st / s.w;
  const double var_n = s.snn / s.w - mean_n * mean_n;
  const double cov = s.snt / s.w - mean_n * mean_t;
  LinearCost f;
  const double spread = 1e-3 * mean_n;
  if (var_n > spread * spread && var_n > 0.0) {
    f.seconds_per_unit = cov / var_n;
  } else {
    f.seconds_per_unit = e.prior.seconds_per_unit;  // sizes too alike to fix a slope
  }
  f.latency = mean_t - f.seconds_per_unit * mean_n;
  if (f.seconds_per_unit < 0.0) {
    f.seconds_per_unit = 0.0;
    f.latency = mean_t;
  }
  if (f.latency < 0.0) {
    f.latency = 0.0;
    f.seconds_per_unit = s.snn > 0.0 ? s.snt / s.snn : 0.0;
  }
  if (!finite_cost(f)) {
    e.fit = e.prior;
    e.fitted = false;
    return;
  }
  e.fit = f;
  e.fitted = true;
}

std::optional<double> PerfModel::crossover(KernelId id) const {
  const LinearCost& h = cost(id, Backend::cpu);
  const LinearCost& c = cost(id, Backend::cuda);
  const double dslope = h.seconds_per_unit - c.seconds_per_unit;
  const double dlat = c.latency - h.latency;
  if (dslope == 0.0) return std::nullopt;
  const double n = dlat / dslope;
  if (!(n > 0.0) || !std::isfinite(n)) return std::nullopt;
  return n;
}

void PerfModel::set_prior(KernelId id, Backend backend, LinearCost prior) {
  Entry& e = entry(id, backend);
  if (!finite_cost(prior)) throw Error("performance model: a prior must be finite and >= 0");
  e.prior = prior;
  refit(e);
}

void PerfModel::reset() {
  for (auto& pair : entries_) {
    for (Entry& e : pair) {
      e.total = SampleSums{};
      e.unsaved = SampleSums{};
      refit(e);
    }
  }
}

std::string PerfModel::default_directory() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
  };
  if (std::string d = env("FRACMFG_PERF_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty()) return d + "/fracmfg";
  if (std::string d = env("HOME"); !d.empty()) return d + "/.cache/fracmfg";
  return ".fracmfg-cache";
}

std::string PerfModel::file_name(const std::string& host_name, const std::string& device_name) {
  return sanitise(host_name) + "__" + sanitise(device_name) + ".perf";
}

std::string PerfModel::path(const std::string& directory) const {
  return (std::filesystem::path(directory) / file_name(host_name_, device_name_)).string();
}

bool PerfModel::load(const std::string& directory) {
  std::string file = path(directory);
  std::vector<FileEntry> entries;
  std::string why;
  const ReadStatus st =
      read_perf_file_or_legacy(file, directory, host_name_, device_name_, entries, why);
  if (st == ReadStatus::missing) {
    log_.debug("no performance file ", file, " yet");
    return false;
  }
  if (st == ReadStatus::invalid) {
    log_.warn("ignoring performance file ", file, ": ", why);
    return false;
  }
  for (const FileEntry& fe : entries) {
    Entry& e = entry(kernel(fe.kernel), fe.backend);
    const double keep = std::pow(options_.forgetting, static_cast<double>(e.unsaved.count));
    e.total = combine(fe.sums, keep, e.unsaved);
    refit(e);
  }
  log_.debug("loaded ", entries.size(), " performance entries from ", file);
  return true;
}

void PerfModel::save(const std::string& directory) {
  bool any = false;
  for (const auto& pair : entries_) {
    for (const Entry& e : pair) any = any || e.unsaved.count > 0;
  }
  if (!any) return;
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) throw IoError("cannot create performance directory " + directory + ": " + ec.message());
  const std::string file = path(directory);

  const FileLock lock(file + ".lock");
  std::vector<FileEntry> entries;
  std::string why;
  std::string read_from = file;
  if (read_perf_file_or_legacy(read_from, directory, host_name_, device_name_, entries, why) ==
      ReadStatus::invalid) {
    log_.warn("replacing performance file ", read_from, ": ", why);
  }
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    for (int b = 0; b < backend_count; ++b) {
      const Entry& e = entries_[k][static_cast<std::size_t>(b)];
      if (e.unsaved.count == 0) continue;
      const auto backend = static_cast<Backend>(b);
      auto it = std::find_if(entries.begin(), entries.end(), [&](const FileEntry& fe) {
        return fe.kernel == names_[k] && fe.backend == backend;
      });
      if (it == entries.end()) {
        entries.push_back(FileEntry{names_[k], backend, SampleSums{}});
        it = entries.end() - 1;
      }
      const double keep = std::pow(options_.forgetting, static_cast<double>(e.unsaved.count));
      it->sums = combine(it->sums, keep, e.unsaved);
    }
  }
  write_atomically(file, format_perf_file(host_name_, device_name_, entries));

  // The file now holds everything known on this node: adopt it.
  for (auto& pair : entries_) {
    for (Entry& e : pair) e.unsaved = SampleSums{};
  }
  for (const FileEntry& fe : entries) {
    Entry& e = entry(kernel(fe.kernel), fe.backend);
    e.total = fe.sums;
    refit(e);
  }
  log_.debug("saved ", entries.size(), " performance entries to ", file);
}

}  // namespace fracmfg::exec
