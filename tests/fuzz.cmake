# tests/fuzz.cmake — hostile input: a short libFuzzer run of each harness (tests/fuzz/),
# and hand-made bad inputs through the real `lockstep` binary (exit 2, file and offset/key
# named). The harnesses are built by tests/fuzz/fuzz.sh with clang-19 whatever compiler
# configured this build; without clang-19 the fuzz test reports itself skipped.
# Not in sanitizer builds: the harnesses carry their own ASan/UBSan.
if(NOT LOCKSTEP_SANITIZE)
  set(LS_FUZZ_SECONDS 20 CACHE STRING "seconds each fuzz harness runs in the fuzz.short test")
  # LS_BUILD: the recorder and its test program there make real traces to seed from.
  set(_fuzz_env "LS_FUZZ_CC=clang-19" "LS_BUILD=${CMAKE_BINARY_DIR}")
  add_test(NAME fuzz.short COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz.sh ${PROJECT_SOURCE_DIR}
           ${CMAKE_CURRENT_BINARY_DIR}/fuzz_work ${LS_FUZZ_SECONDS})
  set_tests_properties(fuzz.short PROPERTIES TIMEOUT 400 SKIP_RETURN_CODE 77 ENVIRONMENT "${_fuzz_env}"
                       LABELS fuzz)
endif()

# Hand-made bad inputs through the binary; also in sanitizer builds, where a read
# past a table shows up even when it does not crash.
find_program(LS_PYTHON3 python3)
if(LS_PYTHON3 AND LOCKSTEP_ANALYZER)
  add_test(NAME fuzz.bad_inputs COMMAND ${LS_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/bad_inputs.py
           $<TARGET_FILE:lockstep> ${CMAKE_CURRENT_BINARY_DIR}/fuzz_bad_inputs)
  set_tests_properties(fuzz.bad_inputs PROPERTIES TIMEOUT 120 LABELS fuzz)
endif()
