# tests/tools_contract.cmake — compare's contract classes (not-ready, after-abort)
# on real traces of tests/tools/contract_prog.c under `lockstep run`, with
# the stand-in NCCL and fake CUDA driver (tests/runtime.cmake builds both).
if(TARGET lockstep_preload AND TARGET ls_standin_nccl AND TARGET ls_fake_cuda AND NOT LOCKSTEP_SANITIZE)
  ls_program(ls_tools_contract SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tools/contract_prog.c
    INCLUDES ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/tests/runtime/standin
    OPTIONS -g -O0 LIBS ls_standin_nccl DEPENDS lockstep_preload ls_fake_cuda)
  ls_test(tools.contract COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/contract.sh TIMEOUT 120
    CLASSES not-ready after-abort async-error
    ENV "LS_BIN=$<TARGET_FILE:lockstep>" "LS_PROG=$<TARGET_FILE:ls_tools_contract>"
        "LS_SRC=${CMAKE_CURRENT_SOURCE_DIR}/tools/contract_prog.c"
        "LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda"
        "LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/tools_work/contract" "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()
