#include "mfg/two_grid.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>

#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/mfg/grid.hpp"

namespace fracmfg::mfg::detail {

namespace {

// One term of a transfer: to[to_index] += weight * from[from_index].
struct Term {
  std::size_t to, from;
  double weight;
};

// The natural (x fastest) index of point (i, j, k) of grid g.
std::size_t natural(const Grid& g, PetscInt i, PetscInt j, PetscInt k) {
  return static_cast<std::size_t>((k * g.points[1] + j) * g.points[0] + i);
}

// The terms of linear interpolation of a field on grid `from` at the points of grid `to`:
// for every point of `to` listed by `targets` (i, j, k and the index its value goes to), the
// corners of its bracket on `from` with their weights; `source` maps a corner of `from` to
// the index its value comes from, or returns false when this rank does not hold it.
template <class Targets, class Source>
std::vector<Term> interpolation_terms(const Grid& from, const Grid& to, Targets&& targets,
                                      Source&& source) {
  std::vector<Term> terms;
  targets([&](PetscInt i, PetscInt j, PetscInt k, std::size_t index) {
    std::array<GridBracket, 3> b{};
    const std::array<PetscInt, 3> at = {i, j, k};
    for (int a = 0; a < from.dim; ++a) b[a] = bracket(from, a, to.coordinate(a, at[a]), true);
    const int corners = 1 << from.dim;
    for (int c = 0; c < corners; ++c) {
      double w = 1.0;
      std::array<PetscInt, 3> p = {0, 0, 0};
      for (int a = 0; a < from.dim; ++a) {
        const bool upper = (c >> a) & 1;
        w *= upper ? b[a].w : 1.0 - b[a].w;
        p[a] = upper ? b[a].hi : b[a].lo;
      }
      if (w == 0.0) continue;
      std::size_t src = 0;
      if (source(p[0], p[1], p[2], src)) terms.push_back({index, src, w});
    }
  });
  return terms;
}

}  // namespace

struct CoarseCorrection::Impl {
  const Model& fine;
  std::unique_ptr<Model> coarse;
  std::unique_ptr<LinearizedGame> game;
  int levels = 0;
  std::size_t coarse_size = 0;            // points of the coarse grid (all ranks)
  std::vector<Term> restrict_terms;       // fine owned -> coarse natural
  std::vector<Term> prolong_terms;        // coarse natural -> fine owned
  std::vector<std::size_t> coarse_owned;  // natural index of each owned coarse point
  std::vector<double> all;                // levels x coarse points (x 3 for the restriction)
  std::vector<VecPtr> cu, cut, cm, cw;

  explicit Impl(const Model& f) : fine(f) {}
};

CoarseCorrection::CoarseCorrection(const Model& fine, int coarse_points)
    : impl_(std::make_unique<Impl>(fine)) {
  Impl& d = *impl_;
  Problem p = fine.problem();
  for (auto& n : p.grid.points) n = std::min(n, coarse_points);
  d.coarse = std::make_unique<Model>(fine.comm(), p);
  d.game = std::make_unique<LinearizedGame>(*d.coarse);
  d.levels = fine.steps() + 1;
  const Grid& gf = fine.grid();
  const Grid& gc = d.coarse->grid();
  d.coarse_size = static_cast<std::size_t>(gc.size());
  const OwnedBox fb = fine.box();
  const OwnedBox cb = d.coarse->box();
  // Restriction: every coarse point, from the fine corners this rank owns.
  d.restrict_terms = interpolation_terms(
      gf, gc,
      [&](auto&& visit) {
        for (PetscInt k = 0; k < gc.points[2]; ++k)
          for (PetscInt j = 0; j < gc.points[1]; ++j)
            for (PetscInt i = 0; i < gc.points[0]; ++i) visit(i, j, k, natural(gc, i, j, k));
      },
      [&](PetscInt i, PetscInt j, PetscInt k, std::size_t& src) {
        if (i < fb.xs || i >= fb.xs + fb.xm || j < fb.ys || j >= fb.ys + fb.ym || k < fb.zs ||
            k >= fb.zs + fb.zm) {
          return false;
        }
        src = static_cast<std::size_t>(((k - fb.zs) * fb.ym + (j - fb.ys)) * fb.xm + (i - fb.xs));
        return true;
      });
  // Prolongation: this rank's fine points, from the replicated coarse grid.
  d.prolong_terms = interpolation_terms(
      gc, gf,
      [&](auto&& visit) {
        for (PetscInt k = 0; k < fb.zm; ++k)
          for (PetscInt j = 0; j < fb.ym; ++j)
            for (PetscInt i = 0; i < fb.xm; ++i) {
              visit(fb.xs + i, fb.ys + j, fb.zs + k,
                    static_cast<std::size_t>((k * fb.ym + j) * fb.xm + i));
            }
      },
      [&](PetscInt i, PetscInt j, PetscInt k, std::size_t& src) {
        src = natural(gc, i, j, k);
        return true;
      });
  for (PetscInt k = 0; k < cb.zm; ++k)
    for (PetscInt j = 0; j < cb.ym; ++j)
      for (PetscInt i = 0; i < cb.xm; ++i) {
        d.coarse_owned.push_back(natural(gc, cb.xs + i, cb.ys + j, cb.zs + k));
      }
  DM cdm = d.coarse->dm();
  for (auto* f : {&d.cu, &d.cut, &d.cm, &d.cw}) {
    for (int n = 0; n < d.levels; ++n) f->push_back(global_vec(cdm));
  }
}

CoarseCorrection::~CoarseCorrection() = default;

const Model& CoarseCorrection::coarse_model() const {
  return *impl_->coarse;
}

int CoarseCorrection::correct(const std::vector<VecPtr>& u, const std::vector<VecPtr>& ut,
                              const std::vector<VecPtr>& m, std::vector<VecPtr>& u_next,
                              double rtol) {
  Impl& d = *impl_;
  const std::size_t nc = d.coarse_size;
  const auto levels = static_cast<std::size_t>(d.levels);
  MPI_Comm comm = d.fine.comm();
  // R U, R Psi(U), R M(U): each rank adds its fine points' terms, one sum over the ranks.
  d.all.assign(3 * levels * nc, 0.0);
  const std::vector<VecPtr>* fields[3] = {&u, &ut, &m};
  for (std::size_t f = 0; f < 3; ++f) {
    for (std::size_t n = 0; n < levels; ++n) {
      ReadArray a((*fields[f])[n].get());
      double* out = d.all.data() + (f * levels + n) * nc;
      for (const Term& t : d.restrict_terms)
        out[t.to] += t.weight * a[static_cast<PetscInt>(t.from)];
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, d.all.data(), static_cast<int>(d.all.size()), MPI_DOUBLE, MPI_SUM,
                comm);
  std::vector<VecPtr>* coarse_fields[3] = {&d.cu, &d.cut, &d.cm};
  for (std::size_t f = 0; f < 3; ++f) {
    for (std::size_t n = 0; n < levels; ++n) {
      WriteArray c((*coarse_fields[f])[n].get());
      const double* in = d.all.data() + (f * levels + n) * nc;
      for (std::size_t q = 0; q < d.coarse_owned.size(); ++q) {
        c[static_cast<PetscInt>(q)] = in[d.coarse_owned[q]];
      }
    }
  }
  // (I - K_c) w = R Psi(U) - R U.
  d.game->linearise(&d.cu, &d.cut, &d.cm);
  const int its = d.game->solve(d.cw, rtol);
  // z = w - R r on the owned coarse points, replicated by one sum over the ranks.
  d.all.assign(levels * nc, 0.0);
  for (std::size_t n = 0; n < levels; ++n) {
    ReadArray w(d.cw[n].get());
    ReadArray cu(d.cu[n].get());
    ReadArray cut(d.cut[n].get());
    double* out = d.all.data() + n * nc;
    for (std::size_t q = 0; q < d.coarse_owned.size(); ++q) {
      const auto k = static_cast<PetscInt>(q);
      out[d.coarse_owned[q]] = w[k] - (cut[k] - cu[k]);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, d.all.data(), static_cast<int>(d.all.size()), MPI_DOUBLE, MPI_SUM,
                comm);
  // U_next = Psi(U) + P z.
  for (std::size_t n = 0; n < levels; ++n) {
    FRACMFG_PETSC_CHECK(VecCopy(ut[n].get(), u_next[n].get()));
    WriteArray a(u_next[n].get());
    const double* z = d.all.data() + n * nc;
    for (const Term& t : d.prolong_terms) a[static_cast<PetscInt>(t.to)] += t.weight * z[t.from];
  }
  return its;
}

}  // namespace fracmfg::mfg::detail
