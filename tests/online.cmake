# tests/online.cmake — the online side channel with real Open MPI ranks (the MPI
# fixtures' binaries, built by tests/mpi.cmake), beside the stand-in NCCL tests in
# tests/runtime.cmake (runtime_online*).
if(TARGET mpi_fixture_op_mismatch AND TARGET mpi_fixture_count_mismatch
   AND TARGET mpi_fixture_early_finalize)
  add_test(NAME runtime_online_mpi
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/runtime/t_online_mpi.sh $<TARGET_FILE:lockstep>
                   $<TARGET_FILE:mpi_fixture_op_mismatch> $<TARGET_FILE:mpi_fixture_count_mismatch>
                   $<TARGET_FILE:mpi_fixture_early_finalize>)
  set_tests_properties(runtime_online_mpi PROPERTIES TIMEOUT 200 RUN_SERIAL TRUE
                       SKIP_RETURN_CODE 77 ENVIRONMENT "LS_TMPROOT=${CMAKE_CURRENT_BINARY_DIR}/runtime/tmp" LABELS "mpi;runtime")
endif()
