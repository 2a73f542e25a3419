# tests/integ.cmake — lockstep where it is used: SARIF validated with the real jsonschema,
# rule docs (`rules`, `explain`), baselines and rule selection, pre-commit with the real
# framework, compilation databases from CMake and bear, -j, and `cmake --install`.
# Python tools come from PyPI into one venv in the build tree (fixture integ.venv).
set(_ig ${CMAKE_CURRENT_SOURCE_DIR}/integ)
set(_ig_venv ${CMAKE_CURRENT_BINARY_DIR}/integ-venv)
if(LOCKSTEP_ANALYZER AND TARGET lockstep) # only lint's tests need Python tools
  add_test(NAME integ.venv COMMAND bash ${_ig}/pyvenv.sh ${_ig_venv} jsonschema pre-commit)
  set_tests_properties(integ.venv PROPERTIES TIMEOUT 300 FIXTURES_SETUP integ_venv LABELS integ)
endif()

if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  add_test(NAME integ.sarif
           COMMAND bash ${_ig}/sarif_test.sh $<TARGET_FILE:lockstep> ${_ig_venv} ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/integ_sarif)
  set_tests_properties(integ.sarif PROPERTIES TIMEOUT 180 FIXTURES_REQUIRED integ_venv LABELS integ)
endif()

if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  add_test(NAME integ.adopt
           COMMAND bash ${_ig}/adopt_test.sh $<TARGET_FILE:lockstep> ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/integ_adopt)
  set_tests_properties(integ.adopt PROPERTIES TIMEOUT 180 LABELS integ)
endif()

if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  add_test(NAME integ.pre_commit
           COMMAND bash ${_ig}/precommit_test.sh $<TARGET_FILE:lockstep> ${_ig_venv} ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/integ_pre_commit)
  set_tests_properties(integ.pre_commit PROPERTIES TIMEOUT 300 FIXTURES_REQUIRED integ_venv LABELS integ)
endif()

if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  add_test(NAME integ.build_systems
           COMMAND bash ${_ig}/buildsys_test.sh $<TARGET_FILE:lockstep> ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/integ_build_systems)
  set_tests_properties(integ.build_systems PROPERTIES TIMEOUT 300 LABELS integ)
endif()

# installs the build tree into a temporary prefix and lints with the installed binary
if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  add_test(NAME integ.install
           COMMAND bash ${_ig}/install_test.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/integ_install)
  set_tests_properties(integ.install PROPERTIES TIMEOUT 300 LABELS integ)
endif()

if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  add_test(NAME integ.fixit
           COMMAND bash ${_ig}/fixit_test.sh $<TARGET_FILE:lockstep> ${_ig_venv} ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/integ_fixit)
  set_tests_properties(integ.fixit PROPERTIES TIMEOUT 120 FIXTURES_REQUIRED integ_venv LABELS integ)
endif()
