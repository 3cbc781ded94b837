# SPDX-License-Identifier: MIT
# install(EXPORT) and mailroomConfig.cmake so that find_package(mailroom) gives mailroom::mailroom
# and mailroom::matrix (the sparse-matrix library, on the same export set).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
# (mailroom_options, the warnings and sanitizers of mailroom's own build, is not installed: a
# user's project chooses its own, and it carried a path of the building machine.)
install(TARGETS mailroom mailroom_matrix EXPORT mailroomTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/mailroom DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT mailroomTargets NAMESPACE mailroom::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mailroom)
configure_package_config_file(cmake/mailroomConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/mailroomConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mailroom)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/mailroomConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mailroomConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/mailroomConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mailroom)

# pkg-config, for builds that do not use CMake: `mpicxx -std=c++20 main.cpp $(pkg-config --cflags
# --libs mailroom)` (MPI comes from the compiler wrapper, as MPI programs are usually built). The
# file finds the prefix from where it lies, so an installed tree may be moved. One file for both
# libraries: it links mailroom_matrix before mailroom, and a program that uses no matrix takes
# nothing from that archive.
file(RELATIVE_PATH _mailroom_pc_up /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
# (A sanitized library needs its users to link the sanitizer runtimes, as the CMake target says.)
set(_mailroom_pc_link "")
if(MAILROOM_SANITIZE)
  set(_mailroom_pc_link " -fsanitize=${MAILROOM_SANITIZE}")
endif()
configure_file(cmake/mailroom.pc.in ${CMAKE_CURRENT_BINARY_DIR}/mailroom.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mailroom.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
