# The `lockstep` binary: the subcommand front end (cli/main.c), the trace tools in
# runtime/tools (cJSON only, so they build on GPU nodes) and, when enabled, the
# analyzer library (libclang).
file(GLOB LOCKSTEP_TOOLS_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/runtime/tools/*.c)
add_library(lockstep_tools STATIC ${LOCKSTEP_TOOLS_SOURCES} ${PROJECT_SOURCE_DIR}/runtime/trace_index.c)
target_include_directories(lockstep_tools PUBLIC ${PROJECT_SOURCE_DIR}/runtime ${PROJECT_SOURCE_DIR}/runtime/tools
                           PRIVATE ${PROJECT_SOURCE_DIR}/cli ${PROJECT_SOURCE_DIR}/analyzer/checks) # rule_ids.h
target_compile_options(lockstep_tools PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(lockstep_tools PUBLIC lockstep_rules lockstep_common cjson Threads::Threads ${CMAKE_DL_LIBS})
target_compile_definitions(lockstep_tools PRIVATE
  LOCKSTEP_VERSION="${PROJECT_VERSION}"
  LOCKSTEP_BUILD_LIBDIR="${CMAKE_BINARY_DIR}/runtime"
  LOCKSTEP_INSTALL_LIBDIR="${CMAKE_INSTALL_FULL_LIBDIR}")

add_executable(lockstep ${CMAKE_CURRENT_LIST_DIR}/main.c)
target_compile_options(lockstep PRIVATE ${LOCKSTEP_WARNINGS})
target_compile_definitions(lockstep PRIVATE LOCKSTEP_VERSION="${PROJECT_VERSION}")
target_link_libraries(lockstep PRIVATE lockstep_tools)
if(LOCKSTEP_ANALYZER)
  target_link_libraries(lockstep PRIVATE lockstep_analyzer)
else()
  target_sources(lockstep PRIVATE ${CMAKE_CURRENT_LIST_DIR}/no_analyzer.c)
endif()
install(TARGETS lockstep RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/rules/ DESTINATION ${CMAKE_INSTALL_DATADIR}/lockstep/rules
        FILES_MATCHING PATTERN "*.json")
