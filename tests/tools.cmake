# Trace tools (compare / trace export / confirm) on hand-made traces: one ctest
# entry per group of cases, each its own process with a timeout. The test
# program is built with -g -O0 so the call sites it writes resolve to its lines.
add_executable(ls_tools_test ${CMAKE_CURRENT_SOURCE_DIR}/tools/tools_test.c)
target_include_directories(ls_tools_test PRIVATE ${PROJECT_SOURCE_DIR}/runtime)
target_compile_options(ls_tools_test PRIVATE ${LOCKSTEP_WARNINGS} -g -O0)
target_link_libraries(ls_tools_test PRIVATE cjson)
foreach(case consistent mismatches p2p skip errors damaged partial incomplete export confirm)
  add_test(NAME tools.${case}
           COMMAND ls_tools_test ${case} $<TARGET_FILE:lockstep> ${CMAKE_CURRENT_BINARY_DIR}/tools_work)
  set_tests_properties(tools.${case} PROPERTIES TIMEOUT 120
                       ENVIRONMENT "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endforeach()

# End to end on real traces: needs the recorder and its test doubles (tests/runtime.cmake).
# Not under a sanitizer: a sanitized liblockstep.so cannot be preloaded into `sh`.
if(TARGET lockstep_preload AND TARGET ls_standin_nccl AND TARGET ls_fake_cuda AND NOT LOCKSTEP_SANITIZE)
  add_executable(ls_tools_e2e ${CMAKE_CURRENT_SOURCE_DIR}/tools/e2e_prog.c)
  target_include_directories(ls_tools_e2e PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/tests/runtime/standin)
  target_compile_options(ls_tools_e2e PRIVATE ${LOCKSTEP_WARNINGS} -g -O0)
  target_link_libraries(ls_tools_e2e PRIVATE ls_standin_nccl)
  add_dependencies(ls_tools_e2e lockstep_preload ls_fake_cuda)
  add_test(NAME tools.e2e COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/e2e.sh)
  set_tests_properties(tools.e2e PROPERTIES TIMEOUT 120 ENVIRONMENT
    "LS_BIN=$<TARGET_FILE:lockstep>;LS_E2E=$<TARGET_FILE:ls_tools_e2e>;LS_SRC=${CMAKE_CURRENT_SOURCE_DIR}/tools/e2e_prog.c;LS_INC=${PROJECT_SOURCE_DIR}/runtime/preload;LS_INC_STANDIN=${PROJECT_SOURCE_DIR}/tests/runtime/standin;LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda;LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/tools_work/e2e;LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()

# compare's windows and block starts, refilled at every call: the trace tools' cases with
# blocks of 2 calls, and one worker thread, must give the verdicts they give by default.
foreach(case consistent mismatches p2p skip errors damaged partial export confirm)
  add_test(NAME scale.block2.${case}
           COMMAND ls_tools_test ${case} $<TARGET_FILE:lockstep> ${CMAKE_CURRENT_BINARY_DIR}/tools_work_block2)
  set_tests_properties(scale.block2.${case} PROPERTIES TIMEOUT 120 ENVIRONMENT
                       "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules;LOCKSTEP_COMPARE_BLOCK=2;LOCKSTEP_THREADS=1")
endforeach()
