# cmake/install.cmake — what `cmake --install` adds to the binary, liblockstep.so and the
# rules (installed where they are built): the man page, the trace-format header (the
# contract for trace readers), and a CMake package config and a pkg-config file for the
# runtime library. Both find the prefix relative to themselves, so an install tree can be
# moved (and `cmake --install --prefix` works whatever the configured prefix was).
include(CMakePackageConfigHelpers)
install(FILES ${PROJECT_SOURCE_DIR}/doc/lockstep.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
if(TARGET lockstep_preload)
  install(FILES ${PROJECT_SOURCE_DIR}/runtime/trace_format.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/lockstep)
  set(_ls_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/lockstep)
  configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/lockstepConfig.cmake.in
    ${CMAKE_BINARY_DIR}/lockstepConfig.cmake
    INSTALL_DESTINATION ${_ls_cmakedir}
    PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR CMAKE_INSTALL_DATADIR)
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/lockstepConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/lockstepConfig.cmake ${CMAKE_BINARY_DIR}/lockstepConfigVersion.cmake
          DESTINATION ${_ls_cmakedir})
  # pkg-config: prefix relative to the .pc file's own directory (${pcfiledir})
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(LOCKSTEP_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    set(LOCKSTEP_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
  else()
    file(RELATIVE_PATH _up "/_p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/_p")
    string(REGEX REPLACE "/$" "" _up "${_up}")
    set(LOCKSTEP_PC_PREFIX "\${pcfiledir}/${_up}")
    set(LOCKSTEP_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(LOCKSTEP_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
  else()
    set(LOCKSTEP_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  if(IS_ABSOLUTE "${CMAKE_INSTALL_DATADIR}")
    set(LOCKSTEP_PC_DATADIR "${CMAKE_INSTALL_DATADIR}")
  else()
    set(LOCKSTEP_PC_DATADIR "\${prefix}/${CMAKE_INSTALL_DATADIR}")
  endif()
  configure_file(${CMAKE_CURRENT_LIST_DIR}/lockstep.pc.in ${CMAKE_BINARY_DIR}/lockstep.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/lockstep.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
