// The top of the deck schema and the sections every problem shares (execution, output,
// logging, petsc). Problem sections live in deck_schema_{mfg,fode,fpde}.cpp.
#include <algorithm>
#include <filesystem>

#include "core/petsc_option_rules.hpp"
#include "fracmfg/core/expression.hpp"
#include "io/deck_schema_sections.hpp"

namespace fracmfg::io {

namespace detail {

using namespace schema;

// Schema tables: one line per field (clang-format would split them).
// clang-format off
Field execution_schema() {
  return section("execution", "Where and how node-local kernels run.", {
    choice("backend", {"cpu", "cuda", "auto"}, "cpu, cuda, or auto: chosen per kernel call by the performance model").def("auto"),
    boolean("learn", "update the performance model with every measured kernel call").def(true),
    boolean("report", "print a table of kernel calls per backend at the end of the run").def(false),
    integer("max_ranks_per_gpu", "most ranks sharing one GPU; further ranks on a node use the cpu backend").at_least(1).def(4),
    section("balance", "Re-splitting the grid over the ranks in proportion to each rank's measured speed: fpde between time steps, mfg between outer iterations.", {
      boolean("grid", "re-split the grid by measured rank speed (false: PETSc's even split throughout)").def(false),
      integer("interval", "observe the ranks' work times, and possibly re-split, every this many time steps (fpde) or outer iterations (mfg)").at_least(1).optional("10 time steps (fpde), 1 outer iteration (mfg)"),
      real("threshold", "imbalance (slowest rank's time / mean time - 1) above which an observation counts as imbalanced").at_least(0.0).def(0.2),
      integer("patience", "consecutive imbalanced observations before a re-split").at_least(1).def(2),
    }).only_when("problem", {"fpde", "mfg"}),
  });
}

Field output_schema() {
  return section("output", "Results and checkpoints (parallel HDF5).", {
    text("file", "results file; its directory is created").optional("`results/<deck stem>.h5`"),
    integer("every", "write the solution every this many time steps (MFG: outer iterations)").at_least(1).def(1),
    integer("checkpoint_every", "write a checkpoint every this many steps; 0: never").at_least(0).def(0),
    text("checkpoint_file", "checkpoint file").optional("`file` with `.h5` replaced by `.chk.h5`"),
  });
}

Field logging_schema() {
  return section("logging", "Log messages (FRACMFG_LOG_LEVEL and FRACMFG_LOG_RANKS override these).", {
    choice("level", {"error", "warn", "info", "debug"}, "least severe level written").def("info"),
    boolean("all_ranks", "every rank writes, each line tagged with its rank (else rank 0 only)").def(false),
  });
}

Field petsc_schema() {
  return section("petsc", "PETSc settings.", {
    text("options", "options for PETSc's options database, e.g. \"-ksp_type gmres -ksp_rtol 1e-10\"").def(""),
  });
}
// clang-format on

void check_petsc_section(const Value& root, const std::string& file) {
  const Value& options = root.at("petsc.options");
  const std::string why =
      core::first_refused_petsc_option(options.text, core::PetscOptionSource::deck);
  if (!why.empty()) fail(file, options.pos, options.path, why);
}

namespace {
// A default taken from the deck's own name: the value is inserted where the schema puts it.
void put_default(Value& section, const std::string& name, const std::string& text) {
  if (section.child(name) != nullptr) return;
  const Field* f = section.field->child(name);
  Value v;
  v.field = f;
  v.path = section.path + "." + name;
  v.given = false;
  v.key_pos = section.key_pos;
  v.pos = section.key_pos;
  v.text = text;
  section.children.push_back(std::move(v));
  const auto& order = section.field->children();
  const auto rank = [&order](const Value& x) {
    return std::find_if(order.begin(), order.end(),
                        [&x](const Field& c) { return &c == x.field; }) -
           order.begin();
  };
  std::stable_sort(section.children.begin(), section.children.end(),
                   [&](const Value& a, const Value& b) { return rank(a) < rank(b); });
}
}  // namespace

void fill_output_defaults(Value& root, const std::string& file) {
  Value& output = *root.child("output");
  std::string stem = std::filesystem::path(file).stem().string();
  if (stem.empty()) stem = "deck";
  put_default(output, "file", "results/" + stem + ".h5");
  std::filesystem::path checkpoint(output.child("file")->text);
  checkpoint.replace_extension(".chk.h5");
  put_default(output, "checkpoint_file", checkpoint.string());
}

}  // namespace detail

// clang-format off
const Field& deck_schema() {
  using namespace schema;
  static const Field root = section("", "The keys at the top of a deck.", {
    choice("problem", {"mfg", "fode", "fpde"}, "which solver the deck drives; the deck must have the section of that name").required(),
    detail::mfg_schema().only_when("problem", {"mfg"}),
    detail::fode_schema().only_when("problem", {"fode"}),
    detail::fpde_schema().only_when("problem", {"fpde"}),
    detail::execution_schema(),
    detail::output_schema(),
    detail::logging_schema(),
    detail::petsc_schema(),
  });
  return root;
}
// clang-format on

}  // namespace fracmfg::io
