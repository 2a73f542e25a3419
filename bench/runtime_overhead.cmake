# bench/runtime_overhead.cmake — the recorder's host-overhead benchmark binary, linked
# against the stand-in libnccl.so.2 from tests/runtime. Run bench/runtime_overhead.sh.
if(TARGET ls_standin_nccl)
  add_executable(ls_runtime_overhead ${CMAKE_CURRENT_LIST_DIR}/runtime_overhead.c)
  set_target_properties(ls_runtime_overhead PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  target_include_directories(ls_runtime_overhead PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload)
  target_compile_options(ls_runtime_overhead PRIVATE ${LOCKSTEP_WARNINGS} -Wno-missing-prototypes)
  target_link_libraries(ls_runtime_overhead PRIVATE ls_standin_nccl)
  # its `group` mode is what bench/recorder_instr.sh counts per GroupStart / AllReduce / GroupEnd
endif()
# The GPU's within-process A/B benchmark (gpu_tests step ab) built against the stand-in
# too, so its CPU path is tested (runtime.hostcost_ab).
if(TARGET ls_standin_nccl)
  add_executable(ls_gpu_hostcost_ab ${CMAKE_CURRENT_LIST_DIR}/gpu_hostcost_ab.c)
  set_target_properties(ls_gpu_hostcost_ab PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
  target_include_directories(ls_gpu_hostcost_ab PRIVATE ${PROJECT_SOURCE_DIR}/runtime/preload)
  target_compile_options(ls_gpu_hostcost_ab PRIVATE ${LOCKSTEP_WARNINGS} -Wno-missing-prototypes)
  target_link_libraries(ls_gpu_hostcost_ab PRIVATE ls_standin_nccl Threads::Threads ${CMAKE_DL_LIBS})
endif()
