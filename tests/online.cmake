# tests/online.cmake — the online side channel: with real Open MPI ranks (the MPI
# fixtures' binaries, built by tests/mpi.cmake), across simulated hosts (the shared
# directory's logs), the policies, beside the stand-in NCCL tests in
# tests/runtime.cmake (runtime.online*).
add_executable(ls_prog_online ${CMAKE_CURRENT_SOURCE_DIR}/runtime/prog_online.c)
set_target_properties(ls_prog_online PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${CMAKE_CURRENT_BINARY_DIR}/runtime)
target_include_directories(ls_prog_online PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload)
target_compile_options(ls_prog_online PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(ls_prog_online PRIVATE ls_standin_nccl)

set(LS_ONLINE_ENV
  "LS_ONLINE_PROG=$<TARGET_FILE:ls_prog_online>"
  "LS_LIB=$<TARGET_FILE:lockstep_preload>"
  "LS_PROG=$<TARGET_FILE:ls_prog_nccl>"
  "LS_DUMP=$<TARGET_FILE:ls_trace_dump>"
  "LS_BIN=$<TARGET_FILE:lockstep>"
  "LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda"
  "LS_TMPROOT=${CMAKE_CURRENT_BINARY_DIR}/runtime/tmp")
foreach(t online_xhost online_xhost_reject online_abort)
  add_test(NAME runtime.${t} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/runtime/t_${t}.sh)
  set_tests_properties(runtime.${t} PROPERTIES TIMEOUT 60 ENVIRONMENT "${LS_ONLINE_ENV}"
                       SKIP_RETURN_CODE 77)
endforeach()

if(TARGET mpi_fixture_op_mismatch AND TARGET mpi_fixture_count_mismatch
   AND TARGET mpi_fixture_early_finalize)
  add_test(NAME runtime.online_mpi
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/runtime/t_online_mpi.sh $<TARGET_FILE:lockstep>
                   $<TARGET_FILE:mpi_fixture_op_mismatch> $<TARGET_FILE:mpi_fixture_count_mismatch>
                   $<TARGET_FILE:mpi_fixture_early_finalize>)
  set_tests_properties(runtime.online_mpi PROPERTIES TIMEOUT 200 RUN_SERIAL TRUE
                       SKIP_RETURN_CODE 77 ENVIRONMENT "LS_TMPROOT=${CMAKE_CURRENT_BINARY_DIR}/runtime/tmp" LABELS "mpi;runtime")
  add_test(NAME runtime.online_xhost_mpi
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/runtime/t_online_xhost_mpi.sh $<TARGET_FILE:lockstep>
                   $<TARGET_FILE:mpi_fixture_op_mismatch>)
  set_tests_properties(runtime.online_xhost_mpi PROPERTIES TIMEOUT 150 RUN_SERIAL TRUE
                       SKIP_RETURN_CODE 77 ENVIRONMENT "LS_TMPROOT=${CMAKE_CURRENT_BINARY_DIR}/runtime/tmp" LABELS "mpi;runtime")
endif()
