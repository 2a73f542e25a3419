# bench/mpi_overhead.cmake — the PMPI-layer overhead benchmark (bench/mpi_overhead.sh runs
# it); tests/mpi.cmake includes this and keeps it working with a short smoke run.
add_executable(mpi_overhead ${CMAKE_CURRENT_LIST_DIR}/mpi_overhead.c)
set_target_properties(mpi_overhead PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
target_compile_options(mpi_overhead PRIVATE ${LOCKSTEP_WARNINGS})
target_link_libraries(mpi_overhead PRIVATE MPI::MPI_C)
