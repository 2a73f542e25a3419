# tests/integ.cmake — lockstep where it is used: SARIF validated with the real jsonschema,
# rule docs (`rules`, `explain`), baselines and rule selection, pre-commit with the real
# framework, compilation databases from CMake and bear, -j, and `cmake --install`.
# Python tools come from PyPI into one venv in the build tree (fixture integ.venv).
if(NOT LOCKSTEP_ANALYZER OR NOT TARGET lockstep) # every test here is about lint
  return()
endif()
set(_ig ${CMAKE_CURRENT_SOURCE_DIR}/integ)
set(_ig_venv ${CMAKE_CURRENT_BINARY_DIR}/integ-venv)
add_test(NAME integ.venv COMMAND bash ${_ig}/pyvenv.sh ${_ig_venv} jsonschema pre-commit)
set_tests_properties(integ.venv PROPERTIES TIMEOUT 300 FIXTURES_SETUP integ_venv LABELS integ)

# integ_test(NAME TIMEOUT USES_VENV FIRST_ARG): runs integ/NAME_test.sh FIRST_ARG [venv]
# SOURCE_DIR WORK_DIR; a test that uses the venv waits for integ.venv.
macro(integ_test name timeout uses_venv first)
  set(_venv_arg)
  if(${uses_venv})
    set(_venv_arg ${_ig_venv})
  endif()
  add_test(NAME integ.${name}
           COMMAND bash ${_ig}/${name}_test.sh ${first} ${_venv_arg} ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/integ_${name})
  set_tests_properties(integ.${name} PROPERTIES TIMEOUT ${timeout} LABELS integ)
  if(${uses_venv})
    set_tests_properties(integ.${name} PROPERTIES FIXTURES_REQUIRED integ_venv)
  endif()
endmacro()

integ_test(sarif 180 TRUE $<TARGET_FILE:lockstep>)
integ_test(adopt 180 FALSE $<TARGET_FILE:lockstep>)
integ_test(precommit 300 TRUE $<TARGET_FILE:lockstep>)
integ_test(buildsys 300 FALSE $<TARGET_FILE:lockstep>)
# installs the build tree into a temporary prefix and lints with the installed binary
integ_test(install 300 FALSE ${CMAKE_BINARY_DIR})
integ_test(fixit 120 TRUE $<TARGET_FILE:lockstep>)
