# tests/online_pause.cmake — lockstep_online_set_enabled (the side channel paused and
# resumed inside one process; gpu_allreduce_bench measures online on/off with it),
# against the stand-in NCCL of tests/runtime.cmake.
ls_program(ls_prog_online_pause SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/runtime/prog_online_pause.c
  DIR ${CMAKE_CURRENT_BINARY_DIR}/runtime
  INCLUDES ${PROJECT_SOURCE_DIR}/runtime/preload ${CMAKE_CURRENT_SOURCE_DIR}/runtime/standin
  LIBS ls_standin_nccl ${CMAKE_DL_LIBS})
ls_test(runtime.online_pause COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/runtime/t_online_pause.sh
  TIMEOUT 60 SKIP_RC 77
  ENV "LS_PAUSE_PROG=$<TARGET_FILE:ls_prog_online_pause>" "LS_LIB=$<TARGET_FILE:lockstep_preload>"
      "LS_DUMP=$<TARGET_FILE:ls_trace_dump>" "LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda"
      "LS_TMPROOT=${CMAKE_CURRENT_BINARY_DIR}/runtime/tmp")
