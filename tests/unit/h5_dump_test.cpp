// The output files are plain HDF5 that the standard tools read: h5dump -H exits 0 and lists
// the documented layout (root attributes, /time, /step, /fields/<name>/{values,time,step}
// with their shapes), and a deck larger than HDF5's 64 KiB compact-attribute limit is stored whole.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>

#include "fracmfg/io/h5_reader.hpp"
#include "fracmfg/io/h5_writer.hpp"
#include "mpi/h5_helpers/h5_test_util.hpp"

using fracmfg::io::H5Reader;
using fracmfg::io::H5Writer;
using fracmfg::test::count_of;
using fracmfg::test::DaField;
using fracmfg::test::make_field;

namespace {

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult run(const std::string& command) {
  CommandResult r;
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) r.output.append(buf, n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

std::string write_sample(const std::string& dir, const std::string& deck) {
  const std::string path = dir + "/sample.h5";
  fracmfg::io::H5WriterOptions opts;
  opts.problem = "mfg";
  opts.deck = deck;
  opts.resolved_deck = deck + "\n# resolved\n";
  H5Writer w(MPI_COMM_WORLD, path, opts);
  DaField uv;
  make_field(uv, PETSC_COMM_WORLD, 2, 9, 7, 1, 2);
  DaField m;
  make_field(m, PETSC_COMM_WORLD, 1, 40, 1, 1, 1);
  for (int step = 0; step <= 2; ++step) {
    fracmfg::test::fill_known(uv, 0, step);
    fracmfg::test::fill_known(m, 1, step);
    w.write_field("uv", uv.da, uv.v, step, 0.1 * step);
    w.write_field("m", m.da, m.v, step, 0.1 * step);
  }
  std::vector<double> x(12, 0.5);
  w.write_distributed("particles/x", x.data(), x.size());
  w.commit();
  return path;
}

}  // namespace

TEST(H5Dump, HeaderListsTheDocumentedLayout) {
  const std::string dir = fracmfg::test::scratch_dir(MPI_COMM_WORLD, "dump_header");
  const std::string path = write_sample(dir, "problem: mfg\n");
  const CommandResult r = run("h5dump -H '" + path + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string& out = r.output;
  for (const char* attr : {"layout_version", "fracmfg_version", "git_revision", "mpi_ranks",
                           "created", "problem", "deck", "resolved_deck", "file_kind", "origin",
                           "spacing", "centring", "boundary", "axes"}) {
    EXPECT_NE(out.find("ATTRIBUTE \"" + std::string(attr) + "\""), std::string::npos) << attr;
  }
  EXPECT_NE(out.find("DATASET \"time\""), std::string::npos);
  EXPECT_NE(out.find("DATASET \"step\""), std::string::npos);
  EXPECT_NE(out.find("GROUP \"fields\""), std::string::npos);
  EXPECT_NE(out.find("GROUP \"uv\""), std::string::npos);
  EXPECT_NE(out.find("GROUP \"m\""), std::string::npos);
  // One dataset per field with the three levels first, then the global natural shape:
  // [levels][ny][nx][dof] and [levels][nx], extendible along the levels; beside each, the
  // time and step of every level.
  EXPECT_EQ(count_of(out, "DATASET \"values\""), 2u);
  EXPECT_EQ(count_of(out, "DATASPACE  SIMPLE { ( 3, 7, 9, 2 ) / ( H5S_UNLIMITED, 7, 9, 2 ) }"), 1u);
  EXPECT_EQ(count_of(out, "DATASPACE  SIMPLE { ( 3, 40 ) / ( H5S_UNLIMITED, 40 ) }"), 1u);
  EXPECT_EQ(count_of(out, "DATASPACE  SIMPLE { ( 3 ) / ( H5S_UNLIMITED ) }"), 4u);
  EXPECT_NE(out.find("DATASET \"x\""), std::string::npos);
  EXPECT_NE(out.find("DATASPACE  SIMPLE { ( 12 ) / ( 12 ) }"), std::string::npos);
  EXPECT_NE(out.find("H5T_IEEE_F64LE"), std::string::npos);

  // And the values h5dump prints are the stored ones.
  const CommandResult d = run("h5dump -d /step '" + path + "'");
  ASSERT_EQ(d.status, 0) << d.output;
  EXPECT_NE(d.output.find("(0): 0, 1, 2"), std::string::npos) << d.output;
  // A level of a field is a hyperslab: the first row of m at level 2 (step 2).
  const CommandResult m = run("h5dump -d /fields/m/values -s 2,0 -c 1,40 '" + path + "'");
  ASSERT_EQ(m.status, 0) << m.output;
  EXPECT_NE(m.output.find("(2,0):"), std::string::npos) << m.output;
}

TEST(H5Dump, DeckLargerThanTheCompactAttributeLimitIsStoredWhole) {
  const std::string dir = fracmfg::test::scratch_dir(MPI_COMM_WORLD, "dump_large_deck");
  std::string deck = "problem: mfg\n";
  while (deck.size() < 200000)
    deck += "# a long comment line that makes the deck big, on purpose\n";
  const std::string path = write_sample(dir, deck);
  H5Reader r(MPI_COMM_WORLD, path);
  EXPECT_EQ(r.attribute_string("/", "deck"), deck);
  EXPECT_EQ(r.attribute_string("/", "resolved_deck"), deck + "\n# resolved\n");
  const CommandResult h = run("h5dump -H '" + path + "'");
  EXPECT_EQ(h.status, 0) << h.output;
}
