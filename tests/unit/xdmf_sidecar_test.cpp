// The XDMF sidecar written at commit: every HDF5 reference points at an existing dataset of
// the committed file (by a name relative to the .xmf) with the right dimensions; one
// temporal collection per grid with one grid per written step at the right time, each a
// hyperslab (level, component) of the field's one dataset; the geometry is the caller's
// origin and spacing; and ParaView's own XDMF reader (pvpython, Debian's paraview) reads
// every level, 1D and 2D, one and two components, as the HDF5 file holds it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "fracmfg/io/h5_reader.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

namespace fs = std::filesystem;
using fracmfg::io::FieldInfo;
using fracmfg::io::H5Reader;
using fracmfg::io::H5Writer;
using fracmfg::test::count_of;
using fracmfg::test::DaField;
using fracmfg::test::make_field;

namespace {

/// 1D density "m" (steps 0, 10, 20) on x0 = 0.5, dx = 0.25; 2D velocity "uv" (dof 2) and
/// pressure "p" on the same 2D grid, written at steps 10 and 20 only.
std::string write_series(const std::string& dir) {
  const std::string path = dir + "/series.h5";
  H5Writer w(MPI_COMM_WORLD, path);
  FieldInfo line;
  line.grid.origin = {0.5, 0.0, 0.0};
  line.grid.spacing = {0.25, 1.0, 1.0};
  w.define_field("m", line);
  FieldInfo plane;
  plane.grid.origin = {-1.0, 2.0, 0.0};
  plane.grid.spacing = {0.125, 0.5, 1.0};
  plane.component_names = {"u", "v"};
  w.define_field("uv", plane);
  plane.component_names = {};
  w.define_field("p", plane);
  DaField m;
  make_field(m, PETSC_COMM_WORLD, 1, 33, 1, 1, 1);
  DaField uv;
  make_field(uv, PETSC_COMM_WORLD, 2, 8, 5, 1, 2);
  DaField p;
  make_field(p, PETSC_COMM_WORLD, 2, 8, 5, 1, 1);
  for (int step : {0, 10, 20}) {
    const double t = 0.01 * step;
    fracmfg::test::fill_known(m, 0, step);  // distinct values per field, point and step
    fracmfg::test::fill_known(uv, 1, step);
    fracmfg::test::fill_known(p, 2, step);
    w.write_field("m", m.da, m.v, step, t);
    if (step > 0) {
      w.write_field("uv", uv.da, uv.v, step, t);
      w.write_field("p", p.da, p.v, step, t);
    }
  }
  w.commit();
  return path;
}

}  // namespace

TEST(XdmfSidecar, ReferencesExistingDatasetsWithTheirDimensions) {
  const std::string dir = fracmfg::test::scratch_dir(MPI_COMM_WORLD, "xdmf_refs");
  const std::string path = write_series(dir);
  const std::string xmf_path = dir + "/series.xmf";
  ASSERT_TRUE(fs::exists(xmf_path));
  const std::string xml = fracmfg::test::read_text(xmf_path);
  const auto refs = fracmfg::test::xdmf_hdf_references(xml);
  // m: 3 steps; uv: 2 steps x 2 components; p: 2 steps.
  ASSERT_EQ(refs.size(), 3u + 4u + 2u);
  H5Reader r(MPI_COMM_WORLD, path);
  for (const auto& ref : refs) {
    SCOPED_TRACE(ref.file + ":" + ref.dataset);
    EXPECT_EQ(ref.file, "series.h5");  // relative to the .xmf, which sits next to it
    EXPECT_TRUE(fs::exists(dir + "/" + ref.file));
    ASSERT_TRUE(r.exists(ref.dataset));
    const auto shape = r.shape(ref.dataset);
    EXPECT_EQ(std::vector<std::uint64_t>(ref.dims.begin(), ref.dims.end()), shape);
  }
  EXPECT_EQ(count_of(xml, ".tmp-"), 0u) << "the temporary file name leaked into the sidecar";
}

TEST(XdmfSidecar, OneTemporalCollectionPerGridWithOneGridPerStep) {
  const std::string dir = fracmfg::test::scratch_dir(MPI_COMM_WORLD, "xdmf_structure");
  write_series(dir);
  const std::string xml = fracmfg::test::read_text(dir + "/series.xmf");
  EXPECT_EQ(count_of(xml, "<Grid "), count_of(xml, "</Grid>"));
  EXPECT_EQ(count_of(xml, "<Attribute "), count_of(xml, "</Attribute>"));
  EXPECT_EQ(count_of(xml, "CollectionType=\"Temporal\""), 2u);
  EXPECT_EQ(count_of(xml, "GridType=\"Uniform\""), 3u + 2u);
  EXPECT_NE(xml.find("<Grid Name=\"m\" GridType=\"Collection\""), std::string::npos);
  EXPECT_NE(xml.find("<Grid Name=\"uv+p\" GridType=\"Collection\""), std::string::npos);
  EXPECT_EQ(count_of(xml, "<Time Value=\"0\"/>"), 1u);
  EXPECT_EQ(count_of(xml, "<Time Value=\"0.10000000000000001\"/>"), 2u);
  EXPECT_EQ(count_of(xml, "<Time Value=\"0.20000000000000001\"/>"), 2u);

  // Geometry, slowest axis first: every grid is a 3D mesh, one point thick in the axes it
  // does not have (what ParaView reads as intended).
  EXPECT_EQ(count_of(xml, "TopologyType=\"3DCoRectMesh\" Dimensions=\"1 1 33\""), 3u);
  EXPECT_EQ(count_of(xml, "TopologyType=\"3DCoRectMesh\" Dimensions=\"1 5 8\""), 2u);
  EXPECT_EQ(count_of(xml, ">0 0 0.5</DataItem>"), 3u);
  EXPECT_EQ(count_of(xml, ">1 1 0.25</DataItem>"), 3u);
  EXPECT_EQ(count_of(xml, ">0 2 -1</DataItem>"), 2u);
  EXPECT_EQ(count_of(xml, ">1 0.5 0.125</DataItem>"), 2u);

  // Components by name, each a hyperslab (start, stride, count) picking its level of the
  // field's dataset and its index of the trailing dof dimension; uv's steps 10 and 20 are
  // its levels 0 and 1, m's step 20 its level 2.
  EXPECT_EQ(count_of(xml, "<Attribute Name=\"u\""), 2u);
  EXPECT_EQ(count_of(xml, "<Attribute Name=\"v\""), 2u);
  EXPECT_EQ(count_of(xml, "<Attribute Name=\"p\""), 2u);
  EXPECT_EQ(count_of(xml, "<Attribute Name=\"m\""), 3u);
  EXPECT_EQ(count_of(xml, ">0 0 0 0 1 1 1 1 1 5 8 1</DataItem>"), 1u);
  EXPECT_EQ(count_of(xml, ">1 0 0 1 1 1 1 1 1 5 8 1</DataItem>"), 1u);
  EXPECT_EQ(count_of(xml, ">2 0 1 1 1 33</DataItem>"), 1u);
  EXPECT_EQ(count_of(xml, ">1 0 0 1 1 1 1 5 8</DataItem>"), 1u);
  EXPECT_EQ(count_of(xml, "series.h5:/fields/uv/values"), 4u);
}

TEST(XdmfSidecar, ParaViewReadsEveryLevelAsTheFileHoldsIt) {
  const std::string dir = fracmfg::test::scratch_dir(MPI_COMM_WORLD, "xdmf_paraview");
  write_series(dir);
  if (std::system("command -v pvpython >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "pvpython not found: install Debian's paraview (scripts/setup-deps) to "
                    "check the sidecar with ParaView's reader";
  }
  const char* source = std::getenv("FRACMFG_SOURCE_DIR");
  ASSERT_NE(source, nullptr) << "FRACMFG_SOURCE_DIR is not set (run through ctest)";
  const std::string command = std::string("pvpython '") + source +
                              "/tests/regression/xdmf_paraview_check.py' '" + dir +
                              "/series.xmf' --levels 3 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) output.append(buf, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  // Every component of every field was compared at each of its levels.
  EXPECT_NE(output.find("m: 3 level(s)"), std::string::npos) << output;
  EXPECT_NE(output.find("u: 2 level(s)"), std::string::npos) << output;
  EXPECT_NE(output.find("v: 2 level(s)"), std::string::npos) << output;
  EXPECT_NE(output.find("p: 2 level(s)"), std::string::npos) << output;
}

TEST(XdmfSidecar, NoSidecarWhenDisabledOrWithoutFields) {
  const std::string dir = fracmfg::test::scratch_dir(MPI_COMM_WORLD, "xdmf_none");
  {
    fracmfg::io::H5WriterOptions opts;
    opts.write_xdmf = false;
    H5Writer w(MPI_COMM_WORLD, dir + "/off.h5", opts);
    DaField m;
    make_field(m, PETSC_COMM_WORLD, 1, 10, 1, 1, 1);
    w.write_field("m", m.da, m.v, 0, 0.0);
    w.commit();
  }
  {
    H5Writer w(MPI_COMM_WORLD, dir + "/nofields.h5");
    w.write_string("note", "no fields here");
    w.commit();
  }
  EXPECT_TRUE(fs::exists(dir + "/off.h5"));
  EXPECT_FALSE(fs::exists(dir + "/off.xmf"));
  EXPECT_TRUE(fs::exists(dir + "/nofields.h5"));
  EXPECT_FALSE(fs::exists(dir + "/nofields.xmf"));
}
