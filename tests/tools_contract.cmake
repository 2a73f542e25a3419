# tests/tools_contract.cmake — compare's contract classes (not-ready, after-abort)
# on real traces of tests/tools/contract_prog.c under `lockstep run`, with
# the stand-in NCCL and fake CUDA driver.
ls_standin_test(tools.contract SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/tools/contract.sh
  PROGRAM ls_tools_contract SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/tools/contract_prog.c
  WORK ${CMAKE_CURRENT_BINARY_DIR}/tools_work/contract CLASSES not-ready after-abort async-error)
