#pragma once
// frac::FodeOutput: a FodeSolver's solution written to an HDF5 file with io::H5Writer
// (layout: fracmfg/io/h5_layout.hpp).
//
//   frac::FodeOutput out(solver, "results/relaxation.h5", {"fode", deck_text, resolved});
//   solver.solve([&](const frac::FodeStepView& v) { out.write(v); }, every);
//   out.commit();    // the file appears only now (atomic rename)
//
// Contents: the time-series field "y" on the 1D "component grid" of d points (origin 1,
// spacing 1: point i is component y_i): /fields/y/values of shape [levels][d], one level
// per written step, with /fields/y/time and /fields/y/step, and group attribute kind =
// "components" (the plot script draws trajectories or a (component, t) heat map); /time and
// /step (the written steps); /order, the order of every component; root attributes
// fode_method, fode_history, fode_steps, fode_horizon, fode_step_size, fode_grading; and the deck
// text and resolved deck given in the options. No XDMF sidecar (the components are no spatial
// grid). A multi-term equation (frac/multi_term_solver.hpp) is written the same way as one
// component y (rank 0), its /order the highest order, through FodeSeries. Levels are gathered in
// memory and written a chunk (about 1 MiB) at a time, so a long solve written at every step costs
// little more than the solve.
//
// The grid is a 1D DMDA over the ranks that own components (a DMDA needs at least one point
// per rank), with the solver's ownership ranges, so each rank writes its own components
// straight from its block; ranks without components create no file handle and return at
// once from every call. Collective on solver.comm() (every rank calls every member function
// in the same order); an I/O error is the same IoError on every rank that owns components:
// wrap calls in core::collective() to share it with the others.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fracmfg/frac/fode_solver.hpp"
#include "fracmfg/frac/multi_term_solver.hpp"
#include "fracmfg/io/h5_writer.hpp"

namespace fracmfg::frac {

/// What FodeOutput writes about a series of components: their layout and the solve.
struct FodeSeries {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<PetscInt> local_sizes;  ///< components of every rank of comm (rank order)
  std::vector<double> orders;         ///< of the rank's components
  FodeMethod method = FodeMethod::abm;
  FodeHistory history = FodeHistory::automatic;
  std::int64_t steps = 0;
  double horizon = 0.0;
  double step_size = 0.0;
  double grading = 1.0;
};

/// The solver's own components.
FodeSeries fode_series(const FodeSolver& solver);
/// The unknown y of a multi-term equation: one component on rank 0 of the system's comm.
FodeSeries fode_series(const MultiTermSolver& solver);

class FodeOutput {
 public:
  /// Checks the output path and creates the temporary file. expected_levels: how many steps
  /// will be written, when known (0: unknown; it sizes the chunks). Collective.
  FodeOutput(const FodeSolver& solver, const std::string& path,
             const io::H5WriterOptions& options = {}, std::int64_t expected_levels = 0);
  /// The same for any series (write() then takes the rank's components of the series).
  FodeOutput(const FodeSeries& series, const std::string& path,
             const io::H5WriterOptions& options = {}, std::int64_t expected_levels = 0);
  /// Uncommitted: the temporary file is removed (see io::H5Writer).
  ~FodeOutput();
  FodeOutput(FodeOutput&&) noexcept;
  FodeOutput& operator=(FodeOutput&&) noexcept;
  FodeOutput(const FodeOutput&) = delete;
  FodeOutput& operator=(const FodeOutput&) = delete;

  /// Appends the rank's components of one step as the next level of /fields/y. Collective.
  void write(const FodeStepView& step);
  /// Writes the attributes and /order, then commits the file. Collective.
  void commit();

  /// Steps written so far.
  std::int64_t written() const;
  /// The final file name.
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fracmfg::frac
