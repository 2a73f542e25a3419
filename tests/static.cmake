# tests/static.cmake — static checks of analyzer/ and runtime/: clang-tidy 19
# with the checked-in .clang-tidy over the compile_commands.json of this build, and
# cppcheck with tests/static/cppcheck.{cfg,supp}. A finding fails the test; a missing
# tool skips it (exit 77; .ci/setup installs both). Not repeated in sanitizer builds.
if(NOT LOCKSTEP_SANITIZE)
  foreach(tool tidy cppcheck)
    add_test(NAME static.${tool} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/static/static_checks.sh ${tool}
             ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR})
    set_tests_properties(static.${tool} PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77 LABELS static)
  endforeach()
endif()
