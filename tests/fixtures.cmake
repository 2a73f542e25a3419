# tests/fixtures.cmake — the NCCL fixtures (fixtures/{nccl,clean,examples}) as ctest entries.
# Per fixture: a compile check (the fixture must stay a real MPI + NCCL program: mpicc for
# .c, nvcc for .cu; skipped visibly, exit 77, where the compiler or NCCL headers are absent)
# and `lockstep lint --verify` against its inline expectations; plus one check of the set.
# fixtures/mpi/ has its own fragment.

get_filename_component(_fx_cuda_root "${LOCKSTEP_CUDA_INCLUDE_DIR}" DIRECTORY)
set(LOCKSTEP_CUDA_LIB_DIR "${_fx_cuda_root}/lib64")
if(NOT EXISTS "${LOCKSTEP_CUDA_LIB_DIR}/libnccl.so")
  set(LOCKSTEP_CUDA_LIB_DIR "${_fx_cuda_root}/lib")
endif()
find_program(LOCKSTEP_NVCC nvcc HINTS ENV CUDA_HOME /usr/local/cuda PATH_SUFFIXES bin)

# MPI: the top level looks for it when LOCKSTEP_MPI is on; look again quietly otherwise,
# the fixtures need mpi.h whatever the recorder is built with.
if(NOT MPI_C_FOUND)
  find_package(MPI COMPONENTS C QUIET)
endif()
set(_fx_mpicc "${MPI_C_COMPILER}")
set(_fx_mpi_includes ${MPI_C_INCLUDE_DIRS})
if(NOT _fx_mpi_includes AND _fx_mpicc)
  execute_process(COMMAND ${_fx_mpicc} --showme:incdirs OUTPUT_VARIABLE _fx_out
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _fx_rc)
  if(_fx_rc EQUAL 0)
    separate_arguments(_fx_mpi_includes UNIX_COMMAND "${_fx_out}")
  endif()
endif()

set(_fx_lint_flags -I${LOCKSTEP_CUDA_INCLUDE_DIR})
foreach(_d ${_fx_mpi_includes})
  list(APPEND _fx_lint_flags -I${_d})
endforeach()

file(GLOB LOCKSTEP_FIXTURES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/fixtures/nccl/*.c ${PROJECT_SOURCE_DIR}/fixtures/nccl/*.cu
     ${PROJECT_SOURCE_DIR}/fixtures/clean/*.c ${PROJECT_SOURCE_DIR}/fixtures/clean/*.cu
     ${PROJECT_SOURCE_DIR}/fixtures/examples/*.c ${PROJECT_SOURCE_DIR}/fixtures/examples/*.cu)

set(_fx_have_lint OFF)
if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  set(_fx_have_lint ON)
endif()

foreach(_fx ${LOCKSTEP_FIXTURES})
  file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR}/fixtures ${_fx})
  string(REGEX REPLACE "\\.[^./]*$" "" _name "${_rel}")   # case: the file name without extension
  string(REPLACE "/" "." _name "${_name}")
  ls_test(fixture.compile.${_name} TIMEOUT 180 SKIP_RC 77 LABELS fixtures compile
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/fixtures/compile_fixture.sh ${_fx}
                   ${CMAKE_CURRENT_BINARY_DIR}/fixtures_bin ${LOCKSTEP_CUDA_INCLUDE_DIR}
                   ${LOCKSTEP_CUDA_LIB_DIR} "${_fx_mpicc}" "${LOCKSTEP_NVCC}" ${_fx_mpi_includes})
  if(_fx_have_lint)
    ls_test(fixture.verify.${_name} COMMAND lockstep lint --verify ${_fx} -- ${_fx_lint_flags}
            WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} TIMEOUT 120 LABELS fixtures verify)
  endif()
endforeach()

# README command 1 lints all examples in one run: each file must get its own findings.
if(_fx_have_lint)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    ls_test(fixture.demo TIMEOUT 300 LABELS fixtures verify
             COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/fixtures/check_demo.py
                     $<TARGET_FILE:lockstep> ${PROJECT_SOURCE_DIR}/fixtures/examples
                     ${LOCKSTEP_CUDA_INCLUDE_DIR}
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  endif()
endif()

if(NOT _fx_have_lint)
  # Visible in ctest's summary instead of silently missing.
  ls_test(fixture.verify.unavailable TIMEOUT 60 SKIP_RC 77
          COMMAND sh -c "echo 'SKIP: lockstep was built without the analyzer (LOCKSTEP_ANALYZER=OFF)'; exit 77")
endif()

# The set as a whole: >= 40 fixtures, >= 1/3 expecting no finding, a RUNTIME line in each.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  ls_test(fixture.set TIMEOUT 60 SKIP_RC 77 LABELS fixtures
          COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/fixtures/check_fixtures.py
                  ${PROJECT_SOURCE_DIR}/fixtures)
else()
  ls_test(fixture.set TIMEOUT 60 SKIP_RC 77 LABELS fixtures
          COMMAND sh -c "echo 'SKIP: python3 not found'; exit 77")
endif()
