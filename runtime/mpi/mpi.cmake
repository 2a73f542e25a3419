# runtime/mpi/mpi.cmake — the PMPI half of liblockstep.so (LOCKSTEP_MPI=ON).
# The MPI wrappers are generated from rules/mpi.json by the recorder's ls_gen and
# compiled into the same library as the NCCL ones, so one LD_PRELOAD records both.
# Only MPI's headers are used: the library does not link libmpi (PMPI_* are found
# with dlsym at first use), so processes without MPI (mpirun, torchrun) are unaffected.
if(NOT LOCKSTEP_MPI OR NOT TARGET lockstep_preload OR NOT TARGET ls_gen)
  return()
endif()

# The soname the real library is loaded under, for ls_real_lookup's RTLD_LOCAL fallback.
set(LS_MPI_SONAME "libmpi.so")
foreach(lib ${MPI_C_LIBRARIES})
  get_filename_component(_name "${lib}" NAME)
  if(_name MATCHES "^libmpi\\.so")
    get_filename_component(_real "${lib}" REALPATH)
    get_filename_component(_dir "${_real}" DIRECTORY)
    file(GLOB _cands "${_dir}/libmpi.so.[0-9]*")
    foreach(cand ${_cands})
      get_filename_component(_cname "${cand}" NAME)
      if(_cname MATCHES "^libmpi\\.so\\.[0-9]+$")
        set(LS_MPI_SONAME "${_cname}")
      endif()
    endforeach()
  endif()
endforeach()

set(LS_MPI_WRAPPERS ${CMAKE_CURRENT_BINARY_DIR}/mpi_wrappers.c)
add_custom_command(
  OUTPUT ${LS_MPI_WRAPPERS}
  COMMAND ls_gen --rules ${PROJECT_SOURCE_DIR}/rules/mpi.json --family MPI --hooks ls_mpi
          --soname ${LS_MPI_SONAME} --real-prefix P --missing-rc MPI_ERR_INTERN
          --include mpi_hooks.h --role-macros -o ${LS_MPI_WRAPPERS}
  DEPENDS ls_gen ${PROJECT_SOURCE_DIR}/rules/mpi.json
  COMMENT "Generating PMPI wrappers from rules/mpi.json"
  VERBATIM)

target_sources(lockstep_preload PRIVATE ${CMAKE_CURRENT_LIST_DIR}/mpi_hooks.c ${LS_MPI_WRAPPERS})
target_include_directories(lockstep_preload PRIVATE ${CMAKE_CURRENT_LIST_DIR} ${MPI_C_INCLUDE_DIRS})
target_compile_definitions(lockstep_preload PRIVATE LOCKSTEP_MPI_SONAME="${LS_MPI_SONAME}")
