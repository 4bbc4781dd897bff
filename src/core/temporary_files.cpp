#include "core/temporary_files.hpp"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <signal.h>
#include <string>
#include <system_error>
#include <unistd.h>

namespace fracmfg::detail {

namespace {

constexpr std::size_t kSlots = 16;
constexpr std::size_t kSlotBytes = 4096;

// A slot is free (0) or holds a path (1); the handler reads only slots marked 1, and a path
// is written before its slot is marked.
struct Slot {
  volatile std::sig_atomic_t used = 0;
  char path[kSlotBytes] = {};
};
std::array<Slot, kSlots> slots;

constexpr std::array<int, 6> kFatal = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU, SIGPIPE};
std::array<struct sigaction, kFatal.size()> previous{};

// The longest tail temporary_name appends: ".tmp-" (5), a job id of up to 20 digits and
// '-', a host of up to 40 characters, '-', a pid of up to 10 digits, '-' and 8 hex digits.
constexpr std::size_t kLongestTail = 5 + 21 + 40 + 1 + 10 + 1 + 8;
// So much of a file name every temporary name keeps, after its leading '.'.
constexpr std::size_t kShortestStem = kMaxTemporaryName - 1 - kLongestTail;

extern "C" void fracmfg_remove_and_die(int signal_number) {
  remove_temporary_files();
  // The default action, so that the process ends as the signal would have ended it (the
  // launcher and the shell see the signal).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signal_number, &dfl, nullptr);
  raise(signal_number);
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "host";
  std::string h(host);
  // Only the first label, and only characters that need no quoting.
  h = h.substr(0, h.find('.'));
  for (char& c : h) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!plain) c = '_';
  }
  return h.substr(0, 40);
}

// `name` cut to at most `bytes` bytes, not inside a UTF-8 character.
std::string utf8_prefix(const std::string& name, std::size_t bytes) {
  if (name.size() <= bytes) return name;
  std::size_t n = bytes;
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
  return name.substr(0, n);
}

std::string job_prefix() {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr || *job == '\0') return "";
  std::string j(job);
  for (char c : j) {
    if (c < '0' || c > '9') return "";
  }
  return j.substr(0, 20) + "-";
}

}  // namespace

void register_temporary_file(const std::string& path) noexcept {
  if (path.empty() || path.size() >= kSlotBytes) return;
  for (Slot& s : slots) {
    if (s.used != 0) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.used = 1;
    return;
  }
}

void unregister_temporary_file(const std::string& path) noexcept {
  for (Slot& s : slots) {
    if (s.used != 0 && path == s.path) s.used = 0;
  }
}

void remove_temporary_files() noexcept {
  for (Slot& s : slots) {
    if (s.used != 0) ::unlink(s.path);
  }
}

FatalSignalCleanup::FatalSignalCleanup() {
  struct sigaction action {};
  action.sa_handler = &fracmfg_remove_and_die;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  for (std::size_t i = 0; i < kFatal.size(); ++i) {
    // A signal the parent set to be ignored (nohup, a launcher) stays ignored.
    struct sigaction now {};
    sigaction(kFatal[i], nullptr, &now);
    previous[i] = now;
    if (now.sa_handler == SIG_IGN) continue;
    sigaction(kFatal[i], &action, nullptr);
  }
}

FatalSignalCleanup::~FatalSignalCleanup() {
  for (std::size_t i = 0; i < kFatal.size(); ++i) sigaction(kFatal[i], &previous[i], nullptr);
}

std::string temporary_name(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::random_device rd;
  char tail[96];
  std::snprintf(tail, sizeof(tail), ".tmp-%s%s-%d-%08x", job_prefix().c_str(), host_name().c_str(),
                static_cast<int>(::getpid()), rd());
  const std::string name = target.filename().string();
  const std::size_t room = kMaxTemporaryName - 1 - std::strlen(tail);
  return (dir / ("." + utf8_prefix(name, room) + tail)).string();
}

int remove_stale_temporaries(const std::string& path) noexcept {
  namespace fs = std::filesystem;
  try {
    // Once per path and process: a checkpoint rewritten every few iterations would list its
    // directory each time (costly on parallel file systems), and what a dead run left is
    // gone after the first pass.
    static std::set<std::string> cleaned;
    if (!cleaned.insert(path).second) return 0;
    const fs::path target(path);
    fs::path dir = target.parent_path();
    if (dir.empty()) dir = ".";
    const std::string host = host_name();
    // Every name temporary_name gives for this path starts so (its <name> part is at least
    // as long as the shortest one it can give).
    const std::string name = target.filename().string();
    const std::string lead = "." + utf8_prefix(name, kShortestStem);
    int removed = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string f = entry.path().filename().string();
      if (f.compare(0, lead.size(), lead) != 0) continue;
      const std::size_t tmp = f.rfind(".tmp-");
      if (tmp == std::string::npos) continue;
      // The name part must be the one this path gives (a prefix of name, as temporary_name
      // cuts it), and the tail "[job-]host-pid-hex" with this host.
      const std::string stem = f.substr(1, tmp - 1);
      if (name.compare(0, stem.size(), stem) != 0) continue;
      const std::string rest = f.substr(tmp + 5);
      const std::size_t hex = rest.rfind('-');
      if (hex == std::string::npos || rest.size() - hex - 1 != 8) continue;
      const std::size_t pid_at = rest.rfind('-', hex - 1);
      if (pid_at == std::string::npos) continue;
      const std::string who = rest.substr(0, pid_at);
      const std::string pid_text = rest.substr(pid_at + 1, hex - pid_at - 1);
      if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      if (!(who == host ||
            (who.size() > host.size() &&
             who.compare(who.size() - host.size() - 1, std::string::npos, "-" + host) == 0))) {
        continue;
      }
      const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
      if (pid <= 0 || pid == static_cast<long>(::getpid())) continue;
      if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still there
      if (::unlink(entry.path().c_str()) == 0) ++removed;
    }
    return removed;
  } catch (...) {
    return 0;
  }
}

}  // namespace fracmfg::detail
