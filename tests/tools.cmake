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

# End to end on real traces: needs the recorder and its test doubles (tests/runtime.cmake).
# Not under a sanitizer: a sanitized liblockstep.so cannot be preloaded into `sh`.
if(TARGET lockstep_preload AND TARGET ls_standin_nccl AND TARGET ls_fake_cuda AND NOT LOCKSTEP_SANITIZE)
  ls_program(ls_tools_e2e SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tools/e2e_prog.c
    INCLUDES ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/tests/runtime/standin
    OPTIONS -g -O0 LIBS ls_standin_nccl DEPENDS lockstep_preload ls_fake_cuda)
  ls_test(tools.e2e COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/e2e.sh TIMEOUT 120
    ENV "LS_BIN=$<TARGET_FILE:lockstep>" "LS_E2E=$<TARGET_FILE:ls_tools_e2e>"
        "LS_SRC=${CMAKE_CURRENT_SOURCE_DIR}/tools/e2e_prog.c" "LS_INC=${PROJECT_SOURCE_DIR}/runtime/preload"
        "LS_INC_STANDIN=${PROJECT_SOURCE_DIR}/tests/runtime/standin"
        "LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda"
        "LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/tools_work/e2e" "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()

# compare's windows and block starts, refilled at every call: the trace tools' cases with
# blocks of 2 calls, and one worker thread, must give the verdicts they give by default.
foreach(case consistent mismatches p2p skip errors damaged partial export confirm)
  ls_test(scale.block2.${case}
    COMMAND ls_tools_test ${case} $<TARGET_FILE:lockstep> ${CMAKE_CURRENT_BINARY_DIR}/tools_work_block2
    TIMEOUT 120 CLASSES ${_tools_classes_${case}}
    ENV "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules" LOCKSTEP_COMPARE_BLOCK=2 LOCKSTEP_THREADS=1)
endforeach()
