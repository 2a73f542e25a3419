# tests/threads.cmake — lint's host-side contract rules (analyzer/checks/threads.c):
# group-across-threads and completion-assumed-at-group-end on edge cases beyond the fixtures
# (tests/threads/*, checked with --verify), OpenMP code linted with and without -fopenmp,
# rules/host.json's keys rejected with a message when malformed, and the rules staying
# data-driven (without host.json neither rule fires).
if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  set(_th ${CMAKE_CURRENT_SOURCE_DIR}/threads)
  set(_th_expect bash ${CMAKE_CURRENT_SOURCE_DIR}/analyzer/expect.sh)
  set(_th_flags -I/usr/local/cuda/include)
  macro(threads_test name rc regex)
    ls_test(threads.${name} COMMAND ${_th_expect} ${rc} "${regex}" -- $<TARGET_FILE:lockstep> ${ARGN}
      TIMEOUT 60 LABELS analyzer threads)
  endmacro()
  threads_test(spawn_variants 0 "verified .7 expected" lint --verify ${_th}/spawn_variants.cpp -- ${_th_flags})
  threads_test(omp_regions 0 "verified .6 expected" lint --verify ${_th}/omp_regions.c -- ${_th_flags})
  threads_test(omp_regions_fopenmp 0 "verified .6 expected"
               lint --verify ${_th}/omp_regions.c -- ${_th_flags} -fopenmp)
  threads_test(completion_cases 0 "verified .7 expected" lint --verify ${_th}/completion_cases.c -- ${_th_flags})
  threads_test(explain_group 0 "thread-local" explain group-across-threads)
  threads_test(explain_completion 0 "cudaStreamNonBlocking" explain completion-assumed-at-group-end)
  threads_test(rules_regions 2 "bad_regions\\.json: error: thread_regions: must be an array of strings"
               lint --rules ${_th}/bad_regions.json ${_th}/omp_regions.c)
  threads_test(rules_flag 2 "bad_flag\\.json: error: stream_nonblocking_flag: must be a positive integer"
               lint --rules ${_th}/bad_flag.json ${_th}/omp_regions.c)
  threads_test(rules_streams 2 "bad_streams\\.json: error: default_streams.legacy: must hold only integers"
               lint --rules ${_th}/bad_streams.json ${_th}/omp_regions.c)
  # a host-only rules file is a rules file; with nccl.json alone there is nothing to flag
  threads_test(rules_host_only 0 "^$"
               lint -q --rules ${_th}/regions_only.json ${_th}/omp_regions.c -- ${_th_flags})
  threads_test(data_driven_completion 0 "^$"
               lint -q --rules ${PROJECT_SOURCE_DIR}/rules/nccl.json ${_th}/completion_cases.c -- ${_th_flags})
  ls_test(threads.data_driven_group TIMEOUT 60 LABELS analyzer threads
           COMMAND sh -c "out=$($<TARGET_FILE:lockstep> lint -q --rules ${PROJECT_SOURCE_DIR}/rules/nccl.json ${_th}/omp_regions.c ${_th}/spawn_variants.cpp -- ${_th_flags} 2>&1); echo \"$out\"; ! echo \"$out\" | grep -q .group-across-threads.$")
endif()
