# tests/sanitize.cmake — what every test needs in a sanitizer build
# (-DLOCKSTEP_SANITIZE=address,undefined or =thread), applied after all fragments
# defined their tests (DEFER), so the other fragments stay sanitizer-agnostic.
#  - UBSan findings fail the test (halt_on_error), with a stack.
#  - liblockstep.so preloaded by the tests comes before libasan in the library list;
#    the programs it is preloaded into are instrumented in this build, so the runtime
#    is there: verify_asan_link_order=0 lets ASan start (documented ASan option).
#  - LeakSanitizer ignores the test doubles' deliberate leaks (tests/sanitize/lsan.supp).
#  - Tests that cannot run under the sanitizer are disabled with the reason in
#    LS_SANITIZE_EXCLUDED below, so ctest lists them as "Not Run (Disabled)".
if(LOCKSTEP_SANITIZE)
  set(LS_SANITIZE_ENV
    "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:abort_on_error=0:strict_string_checks=1"
    "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1"
    "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/sanitize/lsan.supp:print_suppressions=0"
    "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1")
  # test-name regex; reason   (one pair per entry)
  set(LS_SANITIZE_EXCLUDED)
  # Tests run with detect_leaks=0 (memory errors are still fatal): regex; reason.
  set(LS_SANITIZE_NOLEAKS "^mpi\\."
    "Open MPI leaks at MPI_Finalize and dlcloses its components, so the reports cannot even be attributed (frames in <unknown module>)")
  if(LOCKSTEP_SANITIZE MATCHES "thread")
    list(APPEND LS_SANITIZE_EXCLUDED "^mpi\\."
      "Open MPI is not TSan-instrumented and reports its own lock-order inversions and races (btl_tcp add_procs/proc_remove, btl_vader sendi, ompi_sync_wait_mt), and the recorder's threading is covered by runtime.threads and runtime.unit_recorder")
  endif()
  function(ls_sanitize_tests)
    get_property(_tests DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY TESTS)
    foreach(t ${_tests})
      get_test_property(${t} ENVIRONMENT _env)
      if(NOT _env)
        set(_env)
      endif()
      set(_san ${LS_SANITIZE_ENV})
      list(GET LS_SANITIZE_NOLEAKS 0 _re)
      if(t MATCHES "${_re}")
        list(TRANSFORM _san REPLACE "detect_leaks=1" "detect_leaks=0")
      endif()
      list(APPEND _env ${_san})
      set_tests_properties(${t} PROPERTIES ENVIRONMENT "${_env}")
    endforeach()
    list(GET LS_SANITIZE_NOLEAKS 1 _why)
    message(STATUS "sanitizer build (${LOCKSTEP_SANITIZE}): no leak checks in tests matching ${_re}: ${_why}")
    list(LENGTH LS_SANITIZE_EXCLUDED _n)
    set(_i 0)
    while(_i LESS _n)
      list(GET LS_SANITIZE_EXCLUDED ${_i} _re)
      math(EXPR _i "${_i} + 1")
      list(GET LS_SANITIZE_EXCLUDED ${_i} _why)
      math(EXPR _i "${_i} + 1")
      set(_off 0)
      foreach(t ${_tests})
        if(t MATCHES "${_re}")
          set_tests_properties(${t} PROPERTIES DISABLED TRUE)
          math(EXPR _off "${_off} + 1")
        endif()
      endforeach()
      message(STATUS "sanitizer build (${LOCKSTEP_SANITIZE}): ${_off} tests matching ${_re} disabled: ${_why}")
    endwhile()
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} CALL ls_sanitize_tests)
endif()
