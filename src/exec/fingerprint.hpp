#pragma once
// Agreement checks across ranks: a cheap fingerprint of a decision or of a split, and the
// test that every rank of a communicator holds the same one. Used where every rank computes
// the same thing from gathered data (the balance decision, a migration's new counts).

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fracmfg::exec {

// 64-bit FNV-1a over raw bytes: a cheap fingerprint to compare decisions across ranks.
class Fingerprint {
 public:
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
      h_ ^= p[i];
      h_ *= 1099511628211ULL;
    }
  }
  template <class T>
  void add(const T& value) {
    add(&value, sizeof(T));
  }
  template <class T>
  void add(const std::vector<T>& values) {
    const std::uint64_t n = values.size();
    add(n);
    if (!values.empty()) add(values.data(), values.size() * sizeof(T));
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 1469598103934665603ULL;
};

// True on every rank when the fingerprint is the same on every rank.
inline bool same_on_all_ranks(MPI_Comm comm, std::uint64_t h) {
  std::uint64_t in[2] = {h, ~h};
  std::uint64_t out[2] = {0, 0};
  MPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_MAX, comm);
  return out[0] == h && ~out[1] == h;  // max == min
}

}  // namespace fracmfg::exec
