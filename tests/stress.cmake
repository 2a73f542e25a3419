# tests/stress.cmake — the recorder never changes the program's behavior under
# stress (tests/runtime/stress_nccl.c against the stand-in libnccl.so.2): many threads
# x communicators, fork after init, signal storms, exit with live communicators,
# ncclCommAbort from another thread. Named runtime.stress_* so the TSan stage of
# .ci/test (-R '^(runtime|tools|analyzer)\.') runs them too. Uses tests/runtime.cmake's targets.
ls_program(ls_stress_nccl SOURCES ${LS_RT_DIR}/stress_nccl.c DIR ${LS_RT_BIN}
  INCLUDES ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/tests/runtime/standin
  LIBS ls_standin_nccl Threads::Threads)

set(LS_STRESS_ENV ${LS_RT_ENV} "LS_STRESS=$<TARGET_FILE:ls_stress_nccl>"
    "LS_STRESS_CHECK=${LS_RT_DIR}/stress_check.py")
foreach(t threads fork signals exit abort)
  ls_test(runtime.stress_${t} COMMAND sh ${LS_RT_DIR}/t_stress_${t}.sh
    TIMEOUT 240 SKIP_RC 77 LABELS stress ENV ${LS_STRESS_ENV})
endforeach()

# The commands' out-of-memory policy (common/xalloc.h) under a realloc-failing shim.
ls_program(ls_fail_realloc SHARED SOURCES ${LS_RT_DIR}/fail_realloc.c DIR ${LS_RT_BIN}
  LIBS ${CMAKE_DL_LIBS})
# lint is among the commands these two tests check (each_document_command in lib.sh)
set(LS_LINT_FIXTURE_ENV)
if(LOCKSTEP_ANALYZER)
  set(LS_LINT_FIXTURE_ENV "LS_LINT_FIXTURE=${PROJECT_SOURCE_DIR}/fixtures/nccl/abort_one_rank.c")
endif()
set(LS_OOM_ENV ${LS_RT_ENV} "LS_FAILREALLOC=$<TARGET_FILE:ls_fail_realloc>" ${LS_LINT_FIXTURE_ENV})
ls_test(tools.oom_realloc COMMAND sh ${LS_RT_DIR}/t_oom_realloc.sh
  TIMEOUT 300 SKIP_RC 77 ENV ${LS_OOM_ENV})

# The commands' write-error policy (cli/main.c): output to a full disk
# (/dev/full) is exit 2, never status 0 with a truncated document.
set(LS_WRITE_ENV ${LS_STRESS_ENV} ${LS_LINT_FIXTURE_ENV})
ls_test(tools.write_error COMMAND sh ${LS_RT_DIR}/t_write_error.sh
  TIMEOUT 120 SKIP_RC 77 ENV ${LS_WRITE_ENV})

# fallocate interrupted by a signal (EINTR) while the recorder reserves blocks.
ls_program(ls_eintr_shim SHARED SOURCES ${LS_RT_DIR}/eintr_shim.c DIR ${LS_RT_BIN})
ls_test(runtime.stress_eintr COMMAND sh ${LS_RT_DIR}/t_stress_eintr.sh
  TIMEOUT 60 SKIP_RC 77 LABELS stress ENV ${LS_RT_ENV} "LS_EINTRSHIM=$<TARGET_FILE:ls_eintr_shim>")
