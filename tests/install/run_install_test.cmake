# Script behind the install test (cmake -P). Fails on the first step that does not work.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "$ ${ARGN}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: command failed (${rc}): ${ARGN}")
  endif()
  set(LAST_OUTPUT "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${WORK_DIR}")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}")
foreach(f include/fracmfg/config.hpp include/fracmfg/core/environment.hpp
          lib/cmake/fracmfg/fracmfgConfig.cmake lib/cmake/fracmfg/fracmfgConfigVersion.cmake
          lib/pkgconfig/fracmfg.pc bin/fracmfg)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "install test: ${f} was not installed")
  endif()
endforeach()
# Nothing private is installed.
file(GLOB_RECURSE _installed_src RELATIVE "${PREFIX}" "${PREFIX}/include/*.cpp" "${PREFIX}/include/*.cu")
if(_installed_src)
  message(FATAL_ERROR "install test: sources were installed: ${_installed_src}")
endif()

# 0. The installed command runs as a user starts it: no LD_LIBRARY_PATH, from a prefix that
#    has been moved elsewhere since (its RUNPATH is relative: $ORIGIN/../lib).
set(_plain_env ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH)
execute_process(COMMAND readelf -d "${PREFIX}/bin/fracmfg" OUTPUT_VARIABLE _dyn RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT _dyn MATCHES "RUNPATH[^\n]*\\$ORIGIN/\\.\\./lib")
  message(FATAL_ERROR "install test: bin/fracmfg has no RUNPATH $ORIGIN/../lib:\n${_dyn}")
endif()
run(${_plain_env} "${PREFIX}/bin/fracmfg" --version)
if(NOT LAST_OUTPUT MATCHES "fracmfg [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "install test: unexpected output of the installed fracmfg --version")
endif()
set(_moved "${WORK_DIR}/moved-prefix")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(COPY "${PREFIX}/" DESTINATION "${_moved}" USE_SOURCE_PERMISSIONS)
set(_deck "${WORK_DIR}/relax.yaml")
file(WRITE "${_deck}" "problem: fode\nfode:\n  order: 0.5\n  horizon: 1.0\n  steps: 64\n  rhs: [\"-y1\"]\n  initial: [1.0]\noutput: {file: ${WORK_DIR}/relax.h5}\n")
run(${_plain_env} "${_moved}/bin/fracmfg" validate "${_deck}")
run(${_plain_env} ${MPIEXEC} ${MPIEXEC_FLAGS} -n 2 "${_moved}/bin/fracmfg" run "${_deck}")
if(NOT EXISTS "${WORK_DIR}/relax.h5")
  message(FATAL_ERROR "install test: the installed fracmfg wrote no results file")
endif()

# 1. find_package(fracmfg) from a separate CMake project.
run(${CMAKE_COMMAND} -S "${CONSUMER_SRC}" -B "${WORK_DIR}/cmake" -DCMAKE_PREFIX_PATH=${PREFIX}
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/cmake")
run(${_plain_env} ${MPIEXEC} ${MPIEXEC_FLAGS} -n 2 "${WORK_DIR}/cmake/consumer")
if(NOT LAST_OUTPUT MATCHES "consumer: 2 ranks, sum 3, fracmfg [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "install test: unexpected consumer output")
endif()

# 2. The same program built with pkg-config only.
set(ENV{PKG_CONFIG_PATH} "${PREFIX}/lib/pkgconfig:$ENV{PKG_CONFIG_PATH}")
execute_process(COMMAND pkg-config --cflags --libs fracmfg OUTPUT_VARIABLE pc_flags
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install test: pkg-config does not know fracmfg")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run(${CXX} -std=c++17 "${CONSUMER_SRC}/consumer.cpp" -o "${WORK_DIR}/consumer_pc" ${pc_flags}
    "-Wl,-rpath,${PREFIX}/lib")
run(${_plain_env} ${MPIEXEC} ${MPIEXEC_FLAGS} -n 2 "${WORK_DIR}/consumer_pc")
if(NOT LAST_OUTPUT MATCHES "consumer: 2 ranks, sum 3")
  message(FATAL_ERROR "install test: unexpected output of the pkg-config build")
endif()

# 3. The example project of the documentation (docs/examples/fode_lambda): a code that owns
#    MPI, splits MPI_COMM_WORLD in two and solves a fractional ODE system on each half.
run(${CMAKE_COMMAND} -S "${EXAMPLE_SRC}" -B "${WORK_DIR}/example" -DCMAKE_PREFIX_PATH=${PREFIX}
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/example")
run(${_plain_env} ${MPIEXEC} ${MPIEXEC_FLAGS} -n 2 "${WORK_DIR}/example/fode_lambda")
foreach(pattern "half 0 \\(1 rank\\(s\\)\\): a = 0.5 abm, [^\n]* ok\n"
                "half 1 \\(1 rank\\(s\\)\\): a = 0.8 trapezoidal, [^\n]* ok\n"
                "half 0: L1 Caputo derivative [^\n]* ok\n"
                "half 1: L1 Caputo derivative [^\n]* ok\n"
                "fode_lambda: all checks passed")
  if(NOT LAST_OUTPUT MATCHES "${pattern}")
    message(FATAL_ERROR "install test: the example's output lacks '${pattern}'")
  endif()
endforeach()

# 4. The coupling example (docs/examples/mfg_coupled): a host code that gives fracmfg the first
#    max(1, size - 1) ranks, passes its arrays as the game's data and reads the fields back as
#    arrays. At 1 rank (fracmfg on all of MPI_COMM_WORLD) and 2 (one solver rank, one host
#    rank that receives u(t = 0)).
run(${CMAKE_COMMAND} -S "${MFG_EXAMPLE_SRC}" -B "${WORK_DIR}/mfg_example"
    -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/mfg_example")
foreach(np 1 2)
  run(${_plain_env} ${MPIEXEC} ${MPIEXEC_FLAGS} -n ${np} "${WORK_DIR}/mfg_example/mfg_coupled")
  set(_patterns "mfg_coupled: 1 solver rank\\(s\\): converged after [0-9]+ iterations [^\n]* ok\n"
                "mfg_coupled: u\\(t=0\\) and m\\(T\\) on 101 points, finite ok\n"
                "mfg_coupled: mass of m\\(T\\) = 1 [^\n]* ok\n"
                "mfg_coupled: all checks passed")
  if(np EQUAL 2)
    list(APPEND _patterns "mfg_coupled: host rank 1 received u\\(t=0\\): 101 values [^\n]* ok\n")
  endif()
  foreach(pattern IN LISTS _patterns)
    if(NOT LAST_OUTPUT MATCHES "${pattern}")
      message(FATAL_ERROR "install test: mfg_coupled at ${np} rank(s): the output lacks '${pattern}'")
    endif()
  endforeach()
endforeach()
