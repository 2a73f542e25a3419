# tests/docs_run.cmake — the front page's divergent run stays true: README.md's section
# "A divergent run, start to finish" (run, exit status, compare, lint, confirm) must be what
# the tools print on a real 4-rank Open MPI run of fixtures/mpi/op_mismatch.c.
# Without MPI (LOCKSTEP_MPI off, as tests/mpi.cmake) or lint, nothing is registered.
if(NOT LOCKSTEP_MPI OR NOT LOCKSTEP_ANALYZER OR NOT TARGET lockstep OR NOT TARGET lockstep_preload)
  message(STATUS "docs.readme_run not registered: it needs MPI and the analyzer")
  return()
endif()
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT Python3_Interpreter_FOUND)
  message(WARNING "python3 not found: docs.readme_run is not registered")
  return()
endif()
set(_docs_mpirun "${MPIEXEC_EXECUTABLE}")
if(NOT _docs_mpirun)
  set(_docs_mpirun mpirun)
endif()
set(_docs_mpi_flags)
foreach(_d ${MPI_C_INCLUDE_DIRS})
  list(APPEND _docs_mpi_flags -I${_d})
endforeach()
# mpi_fixture_op_mismatch is tests/mpi.cmake's build of fixtures/mpi/op_mismatch.c (-g).
add_test(NAME docs.readme_run
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_readme_run.py
                 $<TARGET_FILE:lockstep> ${PROJECT_SOURCE_DIR}/README.md
                 $<TARGET_FILE:mpi_fixture_op_mismatch> ${_docs_mpirun}
                 ${CMAKE_CURRENT_BINARY_DIR}/docs/readme_run ${_docs_mpi_flags}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# Serial, as the MPI runs: 4 ranks oversubscribe a CI machine, and the README's 3 s
# watchdog must not fire because other tests starve the ranks.
set_tests_properties(docs.readme_run PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE LABELS "docs;mpi")
