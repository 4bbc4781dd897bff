#pragma once
// The forward (Fokker-Planck) sweep as the solver sees it, with one implementation per
// deck method: fdm (mfg::FokkerPlanckFdm) and particles (mfg::ParticleFokkerPlanck).
#include <petscvec.h>

#include <memory>

#include "fracmfg/core/logger.hpp"
#include "fracmfg/exec/selector.hpp"
#include "fracmfg/mfg/fokker_planck.hpp"
#include "fracmfg/mfg/model.hpp"

namespace fracmfg::mfg::detail {

class ForwardMethod {
 public:
  virtual ~ForwardMethod() = default;
  /// Starts a sweep from the model's initial density (level 0). Collective.
  virtual void begin() = 0;
  /// Level n -> n + 1 with the drift of u = U^n: writes the density m^{n+1} into m_next.
  /// m is the density at level n as the solver keeps it (the previous m_next after its
  /// checks). guess: an estimate of m^{n+1} (the previous outer iteration's), or nullptr;
  /// methods that iterate start from it. Collective.
  virtual void advance(int n, Vec u, Vec m, Vec m_next, Vec guess) = 0;
  /// advance() with the drift evaluated at the density the step computes (the congestion
  /// Hamiltonian; FokkerPlanckFdm::step_at_own_density: Newton's method in m^{n+1} to the
  /// relative change tol, at most max_iterations). fdm only: the others throw Error.
  /// Collective.
  virtual FokkerPlanckFdm::DensityStep advance_at_own_density(int n, Vec u, Vec m, Vec m_next,
                                                              Vec guess, double tol,
                                                              int max_iterations);
  /// The density at which a congestion Hamiltonian is linearised by the next advance()
  /// (the HJB step's m, see HjbSolver::set_density). Not collective.
  virtual void set_density(Vec) {}
  /// Accuracy wanted of the following advance() calls, relative (methods that iterate).
  virtual void set_tolerance(double) {}
  /// The mass that left through the exits in the last advance() (0 without exits).
  virtual double outflow() const { return 0.0; }
  /// Whether advance() iterates from its guess (a Krylov solve), so that a better guess
  /// saves work. Not collective.
  virtual bool uses_guess() const { return false; }
};

/// The method the model's problem asks for. Collective.
std::unique_ptr<ForwardMethod> make_forward_method(const Model& model, exec::Selector* selector,
                                                   core::Logger log);

}  // namespace fracmfg::mfg::detail
