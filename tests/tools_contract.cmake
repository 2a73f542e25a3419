# tests/tools_contract.cmake — compare's contract classes (not-ready, after-abort)
# on real traces of tests/tools/contract_prog.c under `lockstep run`, with
# the stand-in NCCL and fake CUDA driver (tests/runtime.cmake builds both).
if(TARGET lockstep_preload AND TARGET ls_standin_nccl AND TARGET ls_fake_cuda AND NOT LOCKSTEP_SANITIZE)
  add_executable(ls_tools_contract ${CMAKE_CURRENT_SOURCE_DIR}/tools/contract_prog.c)
  target_include_directories(ls_tools_contract PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/tests/runtime/standin)
  target_compile_options(ls_tools_contract PRIVATE ${LOCKSTEP_WARNINGS} -g -O0)
  target_link_libraries(ls_tools_contract PRIVATE ls_standin_nccl)
  add_dependencies(ls_tools_contract lockstep_preload ls_fake_cuda)
  add_test(NAME tools.contract COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/contract.sh)
  set_tests_properties(tools.contract PROPERTIES TIMEOUT 120 ENVIRONMENT
    "LS_BIN=$<TARGET_FILE:lockstep>;LS_PROG=$<TARGET_FILE:ls_tools_contract>;LS_SRC=${CMAKE_CURRENT_SOURCE_DIR}/tools/contract_prog.c;LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda;LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/tools_work/contract;LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()
