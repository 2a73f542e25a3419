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

add_executable(ls_prog_nccl ${LS_RT_DIR}/prog_nccl.c)
set_target_properties(ls_prog_nccl PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_include_directories(ls_prog_nccl PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload ${PROJECT_SOURCE_DIR}/tests/runtime/standin)
target_compile_options(ls_prog_nccl PRIVATE ${LOCKSTEP_WARNINGS} -Wno-missing-prototypes)
target_link_libraries(ls_prog_nccl PRIVATE ls_standin_nccl Threads::Threads)

add_executable(ls_trace_dump ${LS_RT_DIR}/trace_dump.c)
set_target_properties(ls_trace_dump PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_include_directories(ls_trace_dump PRIVATE ${PROJECT_SOURCE_DIR}/runtime)
target_compile_options(ls_trace_dump PRIVATE ${LOCKSTEP_WARNINGS})

# Unit test of the recorder core, linked from its objects.
add_executable(ls_unit_recorder ${LS_RT_DIR}/unit_recorder.c $<TARGET_OBJECTS:lockstep_recorder_obj>)
set_target_properties(ls_unit_recorder PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_include_directories(ls_unit_recorder PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload
                           ${PROJECT_SOURCE_DIR}/runtime)
target_compile_options(ls_unit_recorder PRIVATE ${LOCKSTEP_WARNINGS} -fno-omit-frame-pointer) # as the wrappers: the caller walk tests need real frame chains
target_link_libraries(ls_unit_recorder PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
add_test(NAME runtime.unit_recorder COMMAND ls_unit_recorder ${LS_RT_BIN}/tmp/unit_recorder)
set_tests_properties(runtime.unit_recorder PROPERTIES TIMEOUT 60)

# PyTorch's situation: NCCL used by a library that is dlopen'ed RTLD_LOCAL.
add_library(ls_dl_user SHARED ${LS_RT_DIR}/dl_user.c)
set_target_properties(ls_dl_user PROPERTIES C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_include_directories(ls_dl_user PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload)
target_link_libraries(ls_dl_user PRIVATE ls_standin_nccl)
add_executable(ls_dl_main ${LS_RT_DIR}/dl_main.c)
set_target_properties(ls_dl_main PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_compile_options(ls_dl_main PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(ls_dl_main PRIVATE ${CMAKE_DL_LIBS})

# Logs liblockstep's getenv calls (t_config_once.sh).
add_library(ls_getenv_log SHARED ${LS_RT_DIR}/getenv_log.c)
set_target_properties(ls_getenv_log PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${LS_RT_BIN})
target_compile_options(ls_getenv_log PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(ls_getenv_log PRIVATE ${CMAKE_DL_LIBS})

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
          watchdog_report watchdog_abort watchdog_exit run_cmd disable overflow mpirun diverge
          dlopen_local capture exec watchdog_multi disk_full online online_skip defer device_off idle_tail
          online_policy online_reject online_nodir run_signals run_end config_once)
  add_test(NAME runtime.${t} COMMAND sh ${LS_RT_DIR}/t_${t}.sh)
  set_tests_properties(runtime.${t} PROPERTIES TIMEOUT 60 ENVIRONMENT "${LS_RT_ENV}"
                       SKIP_RETURN_CODE 77)
endforeach()

# The overhead benchmark binary (bench/runtime_overhead.sh runs it); a short smoke
# run keeps it working.
include(${PROJECT_SOURCE_DIR}/bench/runtime_overhead.cmake)
add_test(NAME runtime.bench_smoke COMMAND sh ${PROJECT_SOURCE_DIR}/bench/runtime_overhead.sh
         ${CMAKE_BINARY_DIR} 20000 2)
set_tests_properties(runtime.bench_smoke PROPERTIES TIMEOUT 60)
