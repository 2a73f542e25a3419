# tests/stress.cmake — the recorder never changes the program's behavior under
# stress (tests/runtime/stress_nccl.c against the stand-in libnccl.so.2): many threads
# x communicators, fork after init, signal storms, exit with live communicators,
# ncclCommAbort from another thread. Named runtime.stress_* so the TSan stage of
# .ci/test (-R '^(runtime|tools|analyzer)\.') runs them too. Uses tests/runtime.cmake's targets.
add_executable(ls_stress_nccl ${LS_RT_DIR}/stress_nccl.c)
set_target_properties(ls_stress_nccl PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_include_directories(ls_stress_nccl PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/tests/runtime/standin)
target_compile_options(ls_stress_nccl PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(ls_stress_nccl PRIVATE ls_standin_nccl Threads::Threads)

set(LS_STRESS_ENV ${LS_RT_ENV} "LS_STRESS=$<TARGET_FILE:ls_stress_nccl>"
    "LS_STRESS_CHECK=${LS_RT_DIR}/stress_check.py")
foreach(t threads fork signals exit abort)
  add_test(NAME runtime.stress_${t} COMMAND sh ${LS_RT_DIR}/t_stress_${t}.sh)
  set_tests_properties(runtime.stress_${t} PROPERTIES TIMEOUT 240 ENVIRONMENT "${LS_STRESS_ENV}"
                       SKIP_RETURN_CODE 77 LABELS stress)
endforeach()

# The commands' out-of-memory policy (common/xalloc.h) under a realloc-failing shim.
add_library(ls_fail_realloc SHARED ${LS_RT_DIR}/fail_realloc.c)
set_target_properties(ls_fail_realloc PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_compile_options(ls_fail_realloc PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(ls_fail_realloc PRIVATE ${CMAKE_DL_LIBS})
# lint is among the commands these two tests check (each_document_command in lib.sh)
set(LS_LINT_FIXTURE_ENV)
if(LOCKSTEP_ANALYZER)
  set(LS_LINT_FIXTURE_ENV "LS_LINT_FIXTURE=${PROJECT_SOURCE_DIR}/fixtures/nccl/abort_one_rank.c")
endif()
set(LS_OOM_ENV ${LS_RT_ENV} "LS_FAILREALLOC=$<TARGET_FILE:ls_fail_realloc>" ${LS_LINT_FIXTURE_ENV})
add_test(NAME tools.oom_realloc COMMAND sh ${LS_RT_DIR}/t_oom_realloc.sh)
set_tests_properties(tools.oom_realloc PROPERTIES TIMEOUT 300 ENVIRONMENT "${LS_OOM_ENV}"
                     SKIP_RETURN_CODE 77)

# The commands' write-error policy (cli/main.c): output to a full disk
# (/dev/full) is exit 2, never status 0 with a truncated document.
set(LS_WRITE_ENV ${LS_STRESS_ENV} ${LS_LINT_FIXTURE_ENV})
add_test(NAME tools.write_error COMMAND sh ${LS_RT_DIR}/t_write_error.sh)
set_tests_properties(tools.write_error PROPERTIES TIMEOUT 120 ENVIRONMENT "${LS_WRITE_ENV}"
                     SKIP_RETURN_CODE 77)

# fallocate interrupted by a signal (EINTR) while the recorder reserves blocks.
add_library(ls_eintr_shim SHARED ${LS_RT_DIR}/eintr_shim.c)
set_target_properties(ls_eintr_shim PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_compile_options(ls_eintr_shim PRIVATE ${LOCKSTEP_WARNINGS})
add_test(NAME runtime.stress_eintr COMMAND sh ${LS_RT_DIR}/t_stress_eintr.sh)
set_tests_properties(runtime.stress_eintr PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77 LABELS stress
                     ENVIRONMENT "${LS_RT_ENV};LS_EINTRSHIM=$<TARGET_FILE:ls_eintr_shim>")
