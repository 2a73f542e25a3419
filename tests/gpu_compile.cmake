# gpu_tests/ programs must keep compiling on the CPU machine (CI has nvcc and NCCL's
# headers, no GPU); the run itself happens on the GPU machine (gpu_tests/README.md).
add_test(NAME gpu_tests.compile
         COMMAND ${PROJECT_SOURCE_DIR}/gpu_tests/run_all.sh --compile-only ${CMAKE_CURRENT_BINARY_DIR}/gpu_tests_bin)
set_tests_properties(gpu_tests.compile PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
