# tests/docs.cmake — the front page stays true: README.md's pasted `lockstep lint` output of the
# bundled examples must match what lint prints now (finding lines, in order). And
# tests/README.md's index: every lint rule and compare class has tests labelled with its name.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  set(_ti_partial)
  if(NOT LOCKSTEP_ANALYZER OR NOT LOCKSTEP_MPI OR LOCKSTEP_SANITIZE)
    set(_ti_partial --partial) # some of the labelled tests are not registered in this build
  endif()
  ls_test(docs.test_index TIMEOUT 60 SKIP_RC 77 LABELS docs
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_test_index.py
            ${CMAKE_CTEST_COMMAND} ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${_ti_partial})
endif()
if(NOT LOCKSTEP_ANALYZER OR NOT TARGET lockstep)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter QUIET)
if(NOT Python3_Interpreter_FOUND)
  message(WARNING "python3 not found: docs.readme_lint is not registered")
  return()
endif()
add_test(NAME docs.readme_lint
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_readme_lint.py
                 $<TARGET_FILE:lockstep> ${PROJECT_SOURCE_DIR}/README.md
                 ${PROJECT_SOURCE_DIR}/fixtures/examples ${LOCKSTEP_CUDA_INCLUDE_DIR}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(docs.readme_lint PROPERTIES TIMEOUT 300 LABELS "docs")
