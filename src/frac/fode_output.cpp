#include "fracmfg/frac/fode_output.hpp"

#include <petscdmda.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "fracmfg/core/error.hpp"
#include "fracmfg/core/petsc_check.hpp"
#include "fracmfg/la/petsc_handles.hpp"

namespace fracmfg::frac {

namespace {

struct CommFree {
  void operator()(MPI_Comm* c) const noexcept {
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
    delete c;
  }
};

}  // namespace

struct FodeOutput::Impl {
  std::string path;
  std::int64_t written = 0;
  std::size_t local = 0;
  std::vector<double> orders;  // the rank's components
  FodeMethod method = FodeMethod::abm;
  FodeHistory history = FodeHistory::automatic;
  std::int64_t steps = 0;
  double horizon = 0.0;
  double step_size = 0.0;
  double grading = 1.0;
  // Only on ranks that own components (the members of `comm`):
  std::unique_ptr<MPI_Comm, CommFree> comm;
  la::DmHandle da;
  std::unique_ptr<io::H5Writer> writer;  // destroyed before the DM and the communicator
  bool member() const { return writer != nullptr; }
};

FodeSeries fode_series(const FodeSolver& solver) {
  FodeSeries series;
  series.comm = solver.comm();
  series.local_sizes = solver.local_sizes();
  for (PetscInt k = 0; k < solver.local_size(); ++k) {
    series.orders.push_back(solver.order(static_cast<std::size_t>(k)));
  }
  series.method = solver.options().method;
  series.history = solver.options().history;
  series.steps = solver.steps();
  series.horizon = solver.horizon();
  series.step_size = solver.step_size();
  series.grading = solver.grading();
  return series;
}

FodeSeries fode_series(const MultiTermSolver& solver) {
  FodeSeries series = fode_series(solver.system());
  std::fill(series.local_sizes.begin(), series.local_sizes.end(), 0);
  series.local_sizes.front() = 1;
  int rank = 0;
  MPI_Comm_rank(series.comm, &rank);
  series.orders.clear();
  if (rank == 0) series.orders.push_back(solver.highest_order());
  return series;
}

FodeOutput::FodeOutput(const FodeSolver& solver, const std::string& path,
                       const io::H5WriterOptions& options, std::int64_t expected_levels)
    : FodeOutput(fode_series(solver), path, options, expected_levels) {}

FodeOutput::FodeOutput(const FodeSeries& series, const std::string& path,
                       const io::H5WriterOptions& options, std::int64_t expected_levels)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.path = path;
  s.orders = series.orders;
  s.local = series.orders.size();
  s.method = series.method;
  s.history = series.history;
  s.steps = series.steps;
  s.horizon = series.horizon;
  s.step_size = series.step_size;
  s.grading = series.grading;

  // The writers: the ranks that own components, in rank order.
  int rank = 0;
  MPI_Comm_rank(series.comm, &rank);
  s.comm.reset(new MPI_Comm(MPI_COMM_NULL));
  MPI_Comm_split(series.comm, s.local > 0 ? 0 : MPI_UNDEFINED, rank, s.comm.get());
  if (*s.comm == MPI_COMM_NULL) return;

  std::vector<PetscInt> ranges;
  PetscInt global = 0;
  for (PetscInt n : series.local_sizes) {
    if (n > 0) ranges.push_back(n);
    global += n;
  }
  DM da = nullptr;
  FRACMFG_PETSC_CHECK(DMDACreate1d(*s.comm, DM_BOUNDARY_NONE, global, 1, 0, ranges.data(), &da));
  s.da.reset(da);
  FRACMFG_PETSC_CHECK(DMSetUp(da));
  io::H5Writer::check_output_path(*s.comm, path);
  // No XDMF sidecar: the components are no spatial grid, and a temporal collection of
  // every step of a long solve would be larger than the data.
  io::H5WriterOptions h5 = options;
  h5.write_xdmf = false;
  s.writer = std::make_unique<io::H5Writer>(*s.comm, path, h5);
  io::FieldInfo info;
  info.grid.origin = {1.0, 0.0, 0.0};
  info.grid.spacing = {1.0, 1.0, 1.0};
  info.component_names = {"y"};
  info.expected_levels = expected_levels;
  s.writer->define_field("y", info);
}

FodeOutput::~FodeOutput() {
  if (impl_) impl_->writer.reset();
}
FodeOutput::FodeOutput(FodeOutput&&) noexcept = default;
FodeOutput& FodeOutput::operator=(FodeOutput&&) noexcept = default;

void FodeOutput::write(const FodeStepView& step) {
  Impl& s = *impl_;
  ++s.written;
  if (!s.member()) return;
  if (step.local_size != s.local) {
    throw Error("FodeOutput::write: " + std::to_string(step.local_size) +
                " components given, the solver's rank owns " + std::to_string(s.local));
  }
  // The rank's components are its box of the component grid, in order.
  s.writer->write_field("y", s.da.get(), step.y, step.step, step.time);
}

void FodeOutput::commit() {
  Impl& s = *impl_;
  if (!s.member()) return;
  io::H5Writer& w = *s.writer;
  if (s.written > 0) w.set_attribute_string("/fields/y", "kind", "components");
  w.write_distributed("/order", s.orders.data(), s.orders.size());
  w.set_attribute_string("/", "fode_method", to_string(s.method));
  w.set_attribute_string("/", "fode_history", to_string(s.history));
  w.set_attribute_int64("/", "fode_steps", s.steps);
  w.set_attribute_double("/", "fode_horizon", s.horizon);
  w.set_attribute_double("/", "fode_step_size", s.step_size);
  w.set_attribute_double("/", "fode_grading", s.grading);
  w.commit();
}

std::int64_t FodeOutput::written() const {
  return impl_->written;
}
const std::string& FodeOutput::path() const {
  return impl_->path;
}

}  // namespace fracmfg::frac
