# bench/synth/synth.cmake — the synthetic trace generator (bench/synth/gen_traces.c), used by
# bench/compare_scale.sh and checked against the recorder by tests/scale.cmake.
add_executable(ls_gen_traces ${CMAKE_CURRENT_LIST_DIR}/gen_traces.c ${PROJECT_SOURCE_DIR}/runtime/trace_index.c)
set_target_properties(ls_gen_traces PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
target_include_directories(ls_gen_traces PRIVATE ${PROJECT_SOURCE_DIR}/runtime ${CMAKE_CURRENT_LIST_DIR})
target_compile_options(ls_gen_traces PRIVATE ${LOCKSTEP_WARNINGS} -O2)
