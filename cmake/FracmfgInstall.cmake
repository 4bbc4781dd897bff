# Installation: headers, library, CMake package (fracmfgConfig.cmake + version file +
# exported target fracmfg::fracmfg) and a pkg-config file.
include(CMakePackageConfigHelpers)
set(FRACMFG_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/fracmfg")

# Dependencies outside the system directories stay found after installation.
set_target_properties(fracmfg PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS fracmfg EXPORT fracmfgTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/fracmfg" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
install(FILES "${PROJECT_BINARY_DIR}/include/fracmfg/config.hpp"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fracmfg)
install(EXPORT fracmfgTargets NAMESPACE fracmfg:: DESTINATION ${FRACMFG_CMAKE_DIR})

configure_package_config_file(cmake/fracmfgConfig.cmake.in
  "${PROJECT_BINARY_DIR}/fracmfgConfig.cmake" INSTALL_DESTINATION ${FRACMFG_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/fracmfgConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/fracmfgConfig.cmake"
              "${PROJECT_BINARY_DIR}/fracmfgConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/FindPETSc.cmake"
        DESTINATION ${FRACMFG_CMAKE_DIR})

file(RELATIVE_PATH FRACMFG_PC_RELATIVE_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" FRACMFG_PC_RELATIVE_PREFIX "${FRACMFG_PC_RELATIVE_PREFIX}")
configure_file(cmake/fracmfg.pc.in "${PROJECT_BINARY_DIR}/fracmfg.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/fracmfg.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
