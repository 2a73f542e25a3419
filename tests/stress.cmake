# tests/stress.cmake — issue 9: the recorder never changes the program's behavior under
# stress (tests/runtime/stress_nccl.c against the stand-in libnccl.so.2): many threads
# x communicators, fork after init, signal storms, exit with live communicators,
# ncclCommAbort from another thread. Named runtime_stress_* so the TSan stage of
# .ci/test (-R '^(runtime|...)') runs them too. Uses tests/runtime.cmake's targets.
add_executable(ls_stress_nccl ${LS_RT_DIR}/stress_nccl.c)
set_target_properties(ls_stress_nccl PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_include_directories(ls_stress_nccl PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload)
target_compile_options(ls_stress_nccl PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(ls_stress_nccl PRIVATE ls_standin_nccl Threads::Threads)

set(LS_STRESS_ENV ${LS_RT_ENV} "LS_STRESS=$<TARGET_FILE:ls_stress_nccl>"
    "LS_STRESS_CHECK=${LS_RT_DIR}/stress_check.py")
foreach(t threads fork signals exit abort)
  add_test(NAME runtime_stress_${t} COMMAND sh ${LS_RT_DIR}/t_stress_${t}.sh)
  set_tests_properties(runtime_stress_${t} PROPERTIES TIMEOUT 120 ENVIRONMENT "${LS_STRESS_ENV}"
                       SKIP_RETURN_CODE 77 LABELS stress)
endforeach()
