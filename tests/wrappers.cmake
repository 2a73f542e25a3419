# tests/wrappers.cmake — a project's own wrappers (lockstep-wrappers.json beside the
# compilation database, or --rules FILE): what they let lint see, and the input-error
# contract of a bad file (exit 2, the file and the key named). The thin wrappers lint finds
# by itself are fixtures (fixtures/{nccl,clean}/wrapper_*).
if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  add_test(NAME wrappers.project
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/wrappers/wrappers_test.sh $<TARGET_FILE:lockstep>
                   ${CMAKE_CURRENT_SOURCE_DIR}/wrappers ${CMAKE_CURRENT_BINARY_DIR}/wrappers_work)
  set_tests_properties(wrappers.project PROPERTIES TIMEOUT 180 LABELS "analyzer;wrappers")
endif()
