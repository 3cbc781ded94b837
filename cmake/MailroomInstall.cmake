# install(EXPORT) and mailroomConfig.cmake so that find_package(mailroom) gives mailroom::mailroom.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
install(TARGETS mailroom mailroom_options EXPORT mailroomTargets
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
