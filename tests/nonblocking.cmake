# tests/nonblocking.cmake — lint's non-blocking communicator checks (
# nonblocking-not-ready, poll-without-error-check, continue-after-abort's asynchronous half)
# beyond the fixtures' own --verify entries: small good_/warn_ cases, the findings' notes and
# sites, the rules driving the checks (an edited `nonblocking` key changes what is flagged), and a
# malformed `nonblocking` key.
if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(_nb_mpi_flags ${LS_MPI_INCLUDE_FLAGS})
  if(Python3_Interpreter_FOUND)
    ls_test(nonblocking.lint TIMEOUT 180 LABELS analyzer nonblocking
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/nonblocking/check_nonblocking.py
                     $<TARGET_FILE:lockstep> ${PROJECT_SOURCE_DIR} ${LOCKSTEP_CUDA_INCLUDE_DIR} ${_nb_mpi_flags})
  endif()
  ls_test(nonblocking.cases TIMEOUT 60 LABELS analyzer nonblocking
           COMMAND $<TARGET_FILE:lockstep> lint --verify ${CMAKE_CURRENT_SOURCE_DIR}/nonblocking/cases.c
                   -- -I${LOCKSTEP_CUDA_INCLUDE_DIR})
  ls_test(nonblocking.helper_across_tus TIMEOUT 60 LABELS analyzer nonblocking
           COMMAND $<TARGET_FILE:lockstep> lint --verify ${CMAKE_CURRENT_SOURCE_DIR}/nonblocking/helper_tu_a.c
                   ${CMAKE_CURRENT_SOURCE_DIR}/nonblocking/helper_tu_b.c -- -I${LOCKSTEP_CUDA_INCLUDE_DIR})
  ls_test(nonblocking.rules_bad_key TIMEOUT 60 LABELS analyzer nonblocking
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/analyzer/expect.sh 2
                   "bad_nonblocking\\.json: error: nonblocking: \"value\" must be an integer"
                   -- $<TARGET_FILE:lockstep> lint --rules ${CMAKE_CURRENT_SOURCE_DIR}/nonblocking/bad_nonblocking.json
                   ${CMAKE_CURRENT_SOURCE_DIR}/analyzer/inputs/clean.c)
endif()
