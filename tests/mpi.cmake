# tests/mpi.cmake — MPI end to end under real Open MPI ranks (4, as root, oversubscribed):
# per fixtures/mpi/ program, `lockstep lint --verify` against its annotations and a run
# whose `lockstep compare` must match its RUNTIME line and whose traces `lockstep confirm`
# must find confirming every lint finding; plus programs proving that the
# PMPI wrappers pass return codes through and complete requests in every wait call.
if(NOT LOCKSTEP_MPI OR NOT TARGET lockstep OR NOT TARGET lockstep_preload)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT Python3_Interpreter_FOUND)
  message(WARNING "python3 not found: MPI runtime tests are not registered")
  return()
endif()
set(_mpi_run "${MPIEXEC_EXECUTABLE}")
if(NOT _mpi_run)
  set(_mpi_run mpirun)
endif()

# Lint gaps that the rules cannot express: such a test stays registered and is expected to
# fail until the analyzer closes the gap (then ctest reports it, and it leaves this list).
# (split_subset and counts_mismatch left it: lint compares "collective": true calls and
# checks "counts" arrays.)
set(LOCKSTEP_MPI_LINT_KNOWN_TO_FAIL)
# Runs the watchdog must end (exit 86, a timeout in compare's report).
set(LOCKSTEP_MPI_WATCHDOG hang nonblocking_hang early_finalize finalize_in_branch p2p_collective_cross split_subset)

set(_mpi_lint_flags)
foreach(_d ${MPI_C_INCLUDE_DIRS})
  list(APPEND _mpi_lint_flags -I${_d})
endforeach()
set(_mpi_bin ${CMAKE_CURRENT_BINARY_DIR}/mpi)
string(REPLACE ";" " " _mpi_lint_flags_str "${_mpi_lint_flags}")
set(_mpi_env "LS_MPIRUN=${_mpi_run}" "LS_LINT_FLAGS=${_mpi_lint_flags_str}")

file(GLOB _mpi_fixtures CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fixtures/mpi/*.c)
foreach(_fx ${_mpi_fixtures})
  get_filename_component(_name ${_fx} NAME_WE)
  ls_program(mpi_fixture_${_name} SOURCES ${_fx} DIR ${_mpi_bin} OUTPUT_NAME ${_name}
    OPTIONS -g LIBS MPI::MPI_C)

  if(LOCKSTEP_ANALYZER)
    ls_test(mpi.verify.${_name} COMMAND lockstep lint --verify ${_fx} -- ${_mpi_lint_flags}
            WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} TIMEOUT 120 LABELS mpi verify)
    if(_name IN_LIST LOCKSTEP_MPI_LINT_KNOWN_TO_FAIL)
      set_tests_properties(mpi.verify.${_name} PROPERTIES WILL_FAIL TRUE)
    endif()
  endif()

  set(_flags)
  if(_name IN_LIST LOCKSTEP_MPI_WATCHDOG)
    list(APPEND _flags --watchdog)
  endif()
  if(LOCKSTEP_ANALYZER AND NOT _name IN_LIST LOCKSTEP_MPI_LINT_KNOWN_TO_FAIL)
    list(APPEND _flags --confirm) # lint's findings must be confirmed by this very run
  endif()
  # Serial: 4 ranks already oversubscribe a CI machine, and the watchdog's 3 s must not
  # fire on a correct program because other tests starve it.
  set(_env ${_mpi_env})
  if(_name IN_LIST LOCKSTEP_MPI_WATCHDOG)
    # These test the watchdog's path: the online check (t_online_mpi) would end the
    # run first under --policy exit.
    list(APPEND _env "LOCKSTEP_ONLINE=0")
  endif()
  # run_fixture.py asserts the RUNTIME line's class (the watchdog's runs also a timeout)
  file(STRINGS ${_fx} _cls REGEX "^// RUNTIME: [a-z-]+ seq=")
  string(REGEX REPLACE "^// RUNTIME: ([a-z-]+) seq=.*$" "\\1" _cls "${_cls}")
  if(_name IN_LIST LOCKSTEP_MPI_WATCHDOG)
    list(APPEND _cls timeout)
    list(REMOVE_DUPLICATES _cls)
  endif()
  ls_test(mpi.run.${_name}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_fixture.py
            $<TARGET_FILE:lockstep> ${_fx} $<TARGET_FILE:mpi_fixture_${_name}>
            ${_mpi_bin}/work/${_name} ${_flags}
    TIMEOUT 90 RUN_SERIAL ENV ${_env} LABELS mpi runtime CLASSES ${_cls})
endforeach()

foreach(_prog rc_passthrough wait_family threads_many)
  ls_program(mpi_test_${_prog} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/mpi/${_prog}.c DIR ${_mpi_bin}
    OUTPUT_NAME ${_prog} OPTIONS -g LIBS MPI::MPI_C Threads::Threads)
endforeach()
# case, check_program.py mode, program, work folder, extra arguments
foreach(_c "passthrough;passthrough;rc_passthrough;rc" "wait_family;completion;wait_family;wf"
           "threads_many;completion;threads_many;tm;500" "off;off;wait_family;off")
  list(POP_FRONT _c _case _mode _prog _work)
  ls_test(mpi.${_case}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/mpi/check_program.py ${_mode}
            $<TARGET_FILE:lockstep> $<TARGET_FILE:mpi_test_${_prog}> ${_mpi_bin}/work/${_work} ${_c}
    TIMEOUT 150 RUN_SERIAL ENV ${_mpi_env} LABELS mpi runtime)
endforeach()

# The front page's divergent run stays true: README.md's section "A divergent run, start to
# finish" (run, exit status, compare, lint, confirm) must be what the tools print on a real
# 4-rank run of fixtures/mpi/op_mismatch.c (tests/docs/check_readme_run.py; docs.readme_lint
# in tests/docs.cmake guards the lint block). Serial, as the runs above.
if(LOCKSTEP_ANALYZER)
  ls_test(docs.readme_run TIMEOUT 120 RUN_SERIAL LABELS docs mpi
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_readme_run.py
                   $<TARGET_FILE:lockstep> ${PROJECT_SOURCE_DIR}/README.md
                   $<TARGET_FILE:mpi_fixture_op_mismatch> ${_mpi_run}
                   ${CMAKE_CURRENT_BINARY_DIR}/docs/readme_run ${_mpi_lint_flags}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()

# The overhead benchmark (bench/mpi_overhead.sh): one short round keeps it working.
include(${PROJECT_SOURCE_DIR}/bench/mpi_overhead.cmake)
ls_test(mpi.bench_smoke COMMAND sh ${PROJECT_SOURCE_DIR}/bench/mpi_overhead.sh ${CMAKE_BINARY_DIR} 1 1
  TIMEOUT 180 RUN_SERIAL LABELS mpi bench)
