# Trace tools (compare / trace export / confirm) on hand-made traces: one ctest
# entry per group of cases, each its own process with a timeout. The test
# program is built with -g -O0 so the call sites it writes resolve to its lines.
ls_program(ls_tools_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tools/tools_test.c
  INCLUDES ${PROJECT_SOURCE_DIR}/runtime OPTIONS -g -O0 LIBS cjson)
# The compare classes each case asserts as a divergence's class (its labels, tests/README.md).
set(_tools_classes_mismatches op-mismatch count-mismatch dtype-mismatch root-mismatch redop-mismatch)
set(_tools_classes_p2p peer-mismatch op-mismatch count-mismatch)
set(_tools_classes_skip skip extra-call)
set(_tools_classes_errors api-error root-mismatch async-error incomplete timeout)
set(_tools_classes_confirm skip api-error)
foreach(case consistent mismatches p2p skip errors damaged partial incomplete export confirm)
  ls_test(tools.${case}
    COMMAND ls_tools_test ${case} $<TARGET_FILE:lockstep> ${CMAKE_CURRENT_BINARY_DIR}/tools_work
    TIMEOUT 120 CLASSES ${_tools_classes_${case}} ENV "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endforeach()

# Every option the trace tools' --help texts name is accepted; lockstep --help's commands answer.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  ls_test(tools.help_options TIMEOUT 60
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tools/help_options.py $<TARGET_FILE:lockstep>)
endif()

# End to end on real traces of the recorder.
ls_standin_test(tools.e2e SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/tools/e2e.sh
  PROGRAM ls_tools_e2e SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/tools/e2e_prog.c
  WORK ${CMAKE_CURRENT_BINARY_DIR}/tools_work/e2e
  ENV "LS_INC=${PROJECT_SOURCE_DIR}/runtime/preload" "LS_INC_STANDIN=${PROJECT_SOURCE_DIR}/tests/runtime/standin")

# compare's windows and block starts, refilled at every call: the trace tools' cases with
# blocks of 2 calls, and one worker thread, must give the verdicts they give by default.
foreach(case consistent mismatches p2p skip errors damaged partial export confirm)
  ls_test(scale.block2.${case}
    COMMAND ls_tools_test ${case} $<TARGET_FILE:lockstep> ${CMAKE_CURRENT_BINARY_DIR}/tools_work_block2
    TIMEOUT 120 CLASSES ${_tools_classes_${case}}
    ENV "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules" LOCKSTEP_COMPARE_BLOCK=2 LOCKSTEP_THREADS=1)
endforeach()
