# tests/online.cmake — the online side channel: with real Open MPI ranks (the MPI
# fixtures' binaries, built by tests/mpi.cmake), across simulated hosts (the shared
# directory's logs), the policies, beside the stand-in NCCL tests in
# tests/runtime.cmake (runtime.online*).
ls_program(ls_prog_online SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/runtime/prog_online.c
  DIR ${CMAKE_CURRENT_BINARY_DIR}/runtime INCLUDES ${PROJECT_SOURCE_DIR}/runtime/preload
  LIBS ls_standin_nccl)

set(LS_ONLINE_ENV
  "LS_ONLINE_PROG=$<TARGET_FILE:ls_prog_online>"
  "LS_LIB=$<TARGET_FILE:lockstep_preload>"
  "LS_PROG=$<TARGET_FILE:ls_prog_nccl>"
  "LS_DUMP=$<TARGET_FILE:ls_trace_dump>"
  "LS_BIN=$<TARGET_FILE:lockstep>"
  "LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda"
  "LS_TMPROOT=${CMAKE_CURRENT_BINARY_DIR}/runtime/tmp")
foreach(t online_xhost online_xhost_reject online_abort)
  ls_test(runtime.${t} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/runtime/t_${t}.sh
          TIMEOUT 60 SKIP_RC 77 ENV ${LS_ONLINE_ENV})
endforeach()

if(TARGET mpi_fixture_op_mismatch AND TARGET mpi_fixture_count_mismatch
   AND TARGET mpi_fixture_early_finalize)
  ls_test(runtime.online_mpi
          COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/runtime/t_online_mpi.sh $<TARGET_FILE:lockstep>
                  $<TARGET_FILE:mpi_fixture_op_mismatch> $<TARGET_FILE:mpi_fixture_count_mismatch>
                  $<TARGET_FILE:mpi_fixture_early_finalize>
          TIMEOUT 200 RUN_SERIAL SKIP_RC 77 LABELS mpi runtime
          ENV "LS_TMPROOT=${CMAKE_CURRENT_BINARY_DIR}/runtime/tmp")
  ls_test(runtime.online_xhost_mpi
          COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/runtime/t_online_xhost_mpi.sh $<TARGET_FILE:lockstep>
                  $<TARGET_FILE:mpi_fixture_op_mismatch>
          TIMEOUT 150 RUN_SERIAL SKIP_RC 77 LABELS mpi runtime
          ENV "LS_TMPROOT=${CMAKE_CURRENT_BINARY_DIR}/runtime/tmp")
endif()
