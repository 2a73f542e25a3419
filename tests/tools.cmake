# Trace tools (compare / trace export / confirm) on hand-made traces: one ctest
# entry per group of cases, each its own process with a timeout. The test
# program is built with -g -O0 so the call sites it writes resolve to its lines.
add_executable(ls_tools_test ${CMAKE_CURRENT_SOURCE_DIR}/tools/tools_test.c)
target_include_directories(ls_tools_test PRIVATE ${PROJECT_SOURCE_DIR}/runtime)
target_compile_options(ls_tools_test PRIVATE ${LOCKSTEP_WARNINGS} -g -O0)
target_link_libraries(ls_tools_test PRIVATE cjson)
foreach(case consistent mismatches p2p skip errors damaged partial export confirm)
  add_test(NAME tools.${case}
           COMMAND ls_tools_test ${case} $<TARGET_FILE:lockstep> ${CMAKE_CURRENT_BINARY_DIR}/tools_work)
  set_tests_properties(tools.${case} PROPERTIES TIMEOUT 120
                       ENVIRONMENT "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endforeach()
