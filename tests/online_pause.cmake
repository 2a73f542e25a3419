# tests/online_pause.cmake — lockstep_online_set_enabled (the side channel paused and
# resumed inside one process; gpu_allreduce_bench measures online on/off with it),
# against the stand-in NCCL of tests/runtime.cmake.
add_executable(ls_prog_online_pause ${CMAKE_CURRENT_SOURCE_DIR}/runtime/prog_online_pause.c)
set_target_properties(ls_prog_online_pause PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${CMAKE_CURRENT_BINARY_DIR}/runtime)
target_include_directories(ls_prog_online_pause PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload
                           ${CMAKE_CURRENT_SOURCE_DIR}/runtime/standin)
target_compile_options(ls_prog_online_pause PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(ls_prog_online_pause PRIVATE ls_standin_nccl ${CMAKE_DL_LIBS})
add_test(NAME runtime.online_pause COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/runtime/t_online_pause.sh)
set_tests_properties(runtime.online_pause PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77 ENVIRONMENT
  "LS_PAUSE_PROG=$<TARGET_FILE:ls_prog_online_pause>;LS_LIB=$<TARGET_FILE:lockstep_preload>;LS_DUMP=$<TARGET_FILE:ls_trace_dump>;LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda;LS_TMPROOT=${CMAKE_CURRENT_BINARY_DIR}/runtime/tmp")
