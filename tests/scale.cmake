# Scale: the synthetic generator writes what the recorder writes (same compare output).
include(${PROJECT_SOURCE_DIR}/bench/synth/synth.cmake)
if(TARGET lockstep_preload AND TARGET ls_standin_nccl AND TARGET ls_fake_cuda AND NOT LOCKSTEP_SANITIZE)
  ls_program(ls_pattern_prog SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/scale/pattern_prog.c
    INCLUDES ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/tests/runtime/standin
             ${PROJECT_SOURCE_DIR}/bench/synth
    # -g in every build type: compare symbolizes its call sites, and without debug info it adds a
    # note the recorder's and the generator's outputs would not share
    OPTIONS -Wno-missing-prototypes -g LIBS ls_standin_nccl)
  ls_test(scale.synth_matches_recorder COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scale/synth_check.sh TIMEOUT 300 SKIP_RC 77
    ENV "LS_LIB=$<TARGET_FILE:lockstep_preload>" "LS_BIN=$<TARGET_FILE:lockstep>"
        "LS_PROG=$<TARGET_FILE:ls_pattern_prog>" "LS_GEN=$<TARGET_FILE:ls_gen_traces>"
        "LS_DUMP=$<TARGET_FILE:ls_trace_dump>"
        "LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda"
        "LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/scale_work"
        "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()

if(TEST scale.synth_matches_recorder)
  ls_test(scale.synth_block3 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scale/synth_check.sh TIMEOUT 300 SKIP_RC 77
    ENV "LOCKSTEP_COMPARE_BLOCK=3" "LS_LIB=$<TARGET_FILE:lockstep_preload>"
        "LS_BIN=$<TARGET_FILE:lockstep>" "LS_PROG=$<TARGET_FILE:ls_pattern_prog>"
        "LS_GEN=$<TARGET_FILE:ls_gen_traces>" "LS_DUMP=$<TARGET_FILE:ls_trace_dump>"
        "LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda"
        "LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/scale_work_block3"
        "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()
if(TARGET ls_gen_traces AND TARGET lockstep)
  ls_test(scale.export_filters COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scale/export_check.sh TIMEOUT 120 SKIP_RC 77
    ENV "LS_BIN=$<TARGET_FILE:lockstep>" "LS_GEN=$<TARGET_FILE:ls_gen_traces>"
        "LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/scale_export"
        "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()
if(TEST scale.synth_matches_recorder)
  ls_test(scale.index COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scale/index_check.sh TIMEOUT 300 SKIP_RC 77
    ENV "LS_LIB=$<TARGET_FILE:lockstep_preload>" "LS_BIN=$<TARGET_FILE:lockstep>"
        "LS_PROG=$<TARGET_FILE:ls_pattern_prog>" "LS_GEN=$<TARGET_FILE:ls_gen_traces>"
        "LS_FAKECUDA=${CMAKE_CURRENT_BINARY_DIR}/runtime/fakecuda"
        "LS_WORK=${CMAKE_CURRENT_BINARY_DIR}/scale_index"
        "LOCKSTEP_RULES_DIR=${PROJECT_SOURCE_DIR}/rules")
endif()
