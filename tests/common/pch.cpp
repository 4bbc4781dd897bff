// The program that compiles the test programs' precompiled header (tests/CMakeLists.txt,
// FRACMFG_TEST_PCH): no tests of its own, its main is tests/common/gtest_mpi_main.cpp's.
