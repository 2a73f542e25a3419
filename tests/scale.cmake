# Scale: the synthetic generator writes what the recorder writes (same compare output).
include(${PROJECT_SOURCE_DIR}/bench/synth/synth.cmake)
if(TARGET lockstep_preload AND TARGET ls_standin_nccl AND TARGET ls_fake_cuda AND NOT LOCKSTEP_SANITIZE)
  add_executable(ls_pattern_prog ${CMAKE_CURRENT_SOURCE_DIR}/scale/pattern_prog.c)
  target_include_directories(ls_pattern_prog PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload
                             ${PROJECT_SOURCE_DIR}/tests/runtime/standin ${PROJECT_SOURCE_DIR}/bench/synth)
  target_compile_options(ls_pattern_prog PRIVATE ${LOCKSTEP_WARNINGS} -Wno-missing-prototypes)
  target_link_libraries(ls_pattern_prog PRIVATE ls_standin_nccl)
  add_test(NAME scale.synth_matches_recorder COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scale/synth_check.sh)
  set_tests_properties(scale.synth_matches_recorder PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 ENVIRONMENT
    "LS_LIB=$<TARGET_FILE:lockstep_preload>;LS_BIN=$<TARGET_FILE:lockstep>;LS_PROG=$<TARGET_FILE:ls_pattern_prog>;LS_GEN=$<TARGET_FILE:ls_gen_traces>;LS_DUMP=$<TARGET_FILE:ls_trace_dump>;LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda;LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/scale_work;LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()

if(TEST scale.synth_matches_recorder)
  add_test(NAME scale.synth_block3 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scale/synth_check.sh)
  set_tests_properties(scale.synth_block3 PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 ENVIRONMENT
    "LOCKSTEP_COMPARE_BLOCK=3;LS_LIB=$<TARGET_FILE:lockstep_preload>;LS_BIN=$<TARGET_FILE:lockstep>;LS_PROG=$<TARGET_FILE:ls_pattern_prog>;LS_GEN=$<TARGET_FILE:ls_gen_traces>;LS_DUMP=$<TARGET_FILE:ls_trace_dump>;LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda;LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/scale_work_block3;LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()
if(TARGET ls_gen_traces AND TARGET lockstep)
  add_test(NAME scale.export_filters COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scale/export_check.sh)
  set_tests_properties(scale.export_filters PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 ENVIRONMENT
    "LS_BIN=$<TARGET_FILE:lockstep>;LS_GEN=$<TARGET_FILE:ls_gen_traces>;LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/scale_export;LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()
if(TEST scale.synth_matches_recorder)
  add_test(NAME scale.index COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scale/index_check.sh)
  set_tests_properties(scale.index PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 ENVIRONMENT
    "LS_LIB=$<TARGET_FILE:lockstep_preload>;LS_BIN=$<TARGET_FILE:lockstep>;LS_PROG=$<TARGET_FILE:ls_pattern_prog>;LS_GEN=$<TARGET_FILE:ls_gen_traces>;LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda;LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/scale_index;LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()
