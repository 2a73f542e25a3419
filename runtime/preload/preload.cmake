# runtime/preload/preload.cmake — liblockstep.so, the LD_PRELOAD recorder.
# Its NCCL wrappers are generated at build time from rules/nccl.json by ls_gen (a host
# tool that links the rules library and cJSON); the library itself links only libc/libdl/libpthread:
# no cJSON, no libclang, no CUDA, no nccl.h (types come from nccl_abi.h).
add_executable(ls_gen ${CMAKE_CURRENT_LIST_DIR}/../gen/ls_gen.c)
target_compile_options(ls_gen PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(ls_gen PRIVATE lockstep_rules)

set(LS_NCCL_WRAPPERS ${CMAKE_CURRENT_BINARY_DIR}/nccl_wrappers.c)
add_custom_command(
  OUTPUT ${LS_NCCL_WRAPPERS}
  COMMAND ls_gen --rules ${PROJECT_SOURCE_DIR}/rules/nccl.json --family NCCL --hooks ls_nccl
          --soname libnccl.so.2 --missing-rc ncclSystemError
          --include nccl_abi.h --include nccl_hooks.h -o ${LS_NCCL_WRAPPERS}
  DEPENDS ls_gen ${PROJECT_SOURCE_DIR}/rules/nccl.json
  COMMENT "Generating NCCL wrappers from rules/nccl.json"
  VERBATIM)

# The recorder core as objects, shared by the library and its unit test.
add_library(lockstep_recorder_obj OBJECT
  ${CMAKE_CURRENT_LIST_DIR}/recorder.c
  ${CMAKE_CURRENT_LIST_DIR}/config.c
  ${CMAKE_CURRENT_LIST_DIR}/core.c
  ${CMAKE_CURRENT_LIST_DIR}/callstack.c
  ${CMAKE_CURRENT_LIST_DIR}/device.c
  ${CMAKE_CURRENT_LIST_DIR}/watchdog.c
  ${CMAKE_CURRENT_LIST_DIR}/online/channel.c
  ${CMAKE_CURRENT_LIST_DIR}/online/shm.c
  ${CMAKE_CURRENT_LIST_DIR}/online/log.c
  ${CMAKE_CURRENT_LIST_DIR}/online/check.c
  ${CMAKE_CURRENT_LIST_DIR}/online/pause.c
  ${CMAKE_CURRENT_LIST_DIR}/online/siphash.c
  ${CMAKE_CURRENT_LIST_DIR}/index.c
  ${CMAKE_CURRENT_LIST_DIR}/../trace_index.c
  ${CMAKE_CURRENT_LIST_DIR}/nccl_hooks.c)
set_target_properties(lockstep_recorder_obj PROPERTIES POSITION_INDEPENDENT_CODE ON
  C_VISIBILITY_PRESET hidden)
target_include_directories(lockstep_recorder_obj PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                           ${CMAKE_CURRENT_LIST_DIR}/..)
target_compile_options(lockstep_recorder_obj PRIVATE ${LOCKSTEP_WARNINGS} -fno-omit-frame-pointer)

add_library(lockstep_preload SHARED $<TARGET_OBJECTS:lockstep_recorder_obj> ${LS_NCCL_WRAPPERS})
set_target_properties(lockstep_preload PROPERTIES
  OUTPUT_NAME lockstep
  C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/runtime)
target_include_directories(lockstep_preload PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                           ${CMAKE_CURRENT_LIST_DIR}/.. ${CMAKE_CURRENT_BINARY_DIR})
target_compile_options(lockstep_preload PRIVATE ${LOCKSTEP_WARNINGS} -fno-omit-frame-pointer)
target_link_libraries(lockstep_preload PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
target_link_options(lockstep_preload PRIVATE -Wl,-z,defs)
install(TARGETS lockstep_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
