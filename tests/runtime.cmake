# tests/runtime.cmake — CPU tests of liblockstep.so against a stand-in libnccl.so.2
# and a fake libcuda.so.1 (test doubles built here). Each test is a shell script run
# by ctest with a timeout; the scripts get every path through the environment.
set(LS_RT_DIR ${CMAKE_CURRENT_SOURCE_DIR}/runtime)
set(LS_RT_BIN ${CMAKE_CURRENT_BINARY_DIR}/runtime)

add_library(ls_standin_nccl SHARED ${LS_RT_DIR}/standin/standin_nccl.c)
set_target_properties(ls_standin_nccl PROPERTIES OUTPUT_NAME nccl SOVERSION 2 VERSION 2.28.0
  C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${LS_RT_BIN}/standin)
target_include_directories(ls_standin_nccl PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload)

# Its own folder: tests choose whether dlopen("libcuda.so.1") finds it (LD_LIBRARY_PATH).
add_library(ls_fake_cuda SHARED ${LS_RT_DIR}/standin/fake_cuda.c)
set_target_properties(ls_fake_cuda PROPERTIES OUTPUT_NAME cuda SOVERSION 1 VERSION 1
  C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${LS_RT_BIN}/fakecuda)
target_include_directories(ls_fake_cuda PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload)

ls_program(ls_prog_nccl SOURCES ${LS_RT_DIR}/prog_nccl.c DIR ${LS_RT_BIN}
  INCLUDES ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/tests/runtime/standin
  OPTIONS -Wno-missing-prototypes LIBS ls_standin_nccl Threads::Threads)
ls_program(ls_trace_dump SOURCES ${LS_RT_DIR}/trace_dump.c DIR ${LS_RT_BIN}
  INCLUDES ${PROJECT_SOURCE_DIR}/runtime)

# Unit test of the recorder core, linked from its objects.
# -fno-omit-frame-pointer as the wrappers: the caller walk tests need real frame chains.
ls_program(ls_unit_recorder SOURCES ${LS_RT_DIR}/unit_recorder.c $<TARGET_OBJECTS:lockstep_recorder_obj>
  DIR ${LS_RT_BIN} INCLUDES ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/runtime
  OPTIONS -fno-omit-frame-pointer LIBS Threads::Threads ${CMAKE_DL_LIBS})
ls_test(runtime.unit_recorder COMMAND ls_unit_recorder ${LS_RT_BIN}/tmp/unit_recorder TIMEOUT 60)

# PyTorch's situation: NCCL used by a library that is dlopen'ed RTLD_LOCAL.
add_library(ls_dl_user SHARED ${LS_RT_DIR}/dl_user.c)
set_target_properties(ls_dl_user PROPERTIES C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_include_directories(ls_dl_user PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload)
target_link_libraries(ls_dl_user PRIVATE ls_standin_nccl)
ls_program(ls_dl_main SOURCES ${LS_RT_DIR}/dl_main.c DIR ${LS_RT_BIN} LIBS ${CMAKE_DL_LIBS})

# Logs liblockstep's getenv calls (t_config_once.sh).
ls_program(ls_getenv_log SHARED SOURCES ${LS_RT_DIR}/getenv_log.c DIR ${LS_RT_BIN}
  LIBS ${CMAKE_DL_LIBS})

set(LS_RT_ENV
  "LS_LIB=$<TARGET_FILE:lockstep_preload>"
  "LS_PROG=$<TARGET_FILE:ls_prog_nccl>"
  "LS_DUMP=$<TARGET_FILE:ls_trace_dump>"
  "LS_BIN=$<TARGET_FILE:lockstep>"
  "LS_FAKECUDA=${LS_RT_BIN}/fakecuda"
  "LS_TMPROOT=${LS_RT_BIN}/tmp"
  "LS_DLMAIN=$<TARGET_FILE:ls_dl_main>"
  "LS_DLUSER=$<TARGET_FILE:ls_dl_user>"
  "LS_GETENV_SHIM=$<TARGET_FILE:ls_getenv_log>")

foreach(t preload_silent rc_passthrough depth groups threads identity sigkill
          watchdog_report watchdog_abort watchdog_exit run_cmd disable overflow ring mpirun diverge
          dlopen_local capture exec watchdog_multi disk_full online online_skip defer device_off idle_tail
          online_policy online_reject online_nodir run_signals run_end config_once backoff)
  set(_cls)
  if(t STREQUAL "diverge") # compare on real traces of each mismatch the stand-in can make
    set(_cls op-mismatch count-mismatch dtype-mismatch redop-mismatch root-mismatch skip)
  elseif(t STREQUAL "ring") # compare on ring traces whose first differing block was overwritten
    set(_cls overwritten)
  endif()
  ls_test(runtime.${t} COMMAND sh ${LS_RT_DIR}/t_${t}.sh TIMEOUT 60 SKIP_RC 77 CLASSES ${_cls} ENV ${LS_RT_ENV})
endforeach()

# The overhead benchmark binary (bench/runtime_overhead.sh runs it); a short smoke
# run keeps it working.
include(${PROJECT_SOURCE_DIR}/bench/runtime_overhead.cmake)
ls_test(runtime.bench_smoke COMMAND sh ${PROJECT_SOURCE_DIR}/bench/runtime_overhead.sh
        ${CMAKE_BINARY_DIR} 20000 2 TIMEOUT 60)
# and its group mode (bench/recorder_instr.sh's program): every call of the interval succeeds
ls_test(runtime.bench_group COMMAND ls_runtime_overhead group 100 TIMEOUT 60)
# the driver calls per interposed call (the fake driver counts them) do not come back
ls_test(runtime.driver_calls COMMAND sh ${LS_RT_DIR}/t_driver_calls.sh TIMEOUT 60 SKIP_RC 77
        ENV ${LS_RT_ENV} "LS_BENCH=$<TARGET_FILE:ls_runtime_overhead>")
ls_test(runtime.hostcost_ab COMMAND sh ${LS_RT_DIR}/t_hostcost_ab.sh TIMEOUT 60 SKIP_RC 77
        ENV ${LS_RT_ENV} "LS_AB=$<TARGET_FILE:ls_gpu_hostcost_ab>")
