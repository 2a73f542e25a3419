# tests/realcode_regress.cmake — reduced inputs from the real-code run (bench/realcode.sh:
# pytorch, xgboost, mpich, hdf5, lammps from Debian sources), each checked with
# `lockstep lint --verify` against its inline expectations: the real findings stay reported,
# the correct real-world patterns stay quiet. Crash or hang reductions go here as well.

if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  # the include folders the fixtures use (mpi.h: tests/CMakeLists.txt)
  set(_rc_flags -I${LOCKSTEP_CUDA_INCLUDE_DIR})
  find_program(_rc_mpicxx mpicxx)
  list(APPEND _rc_flags ${LS_MPI_INCLUDE_FLAGS})

  file(GLOB _rc_inputs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/realcode/*.c
       ${PROJECT_SOURCE_DIR}/tests/realcode/*.cpp)
  foreach(_in ${_rc_inputs})
    get_filename_component(_name ${_in} NAME)
    get_filename_component(_case ${_in} NAME_WLE)
    set(_std)
    if(_name MATCHES "\\.cpp$")
      set(_std -std=c++17)
    endif()
    ls_test(realcode.verify.${_case} TIMEOUT 60 LABELS realcode lint
            COMMAND $<TARGET_FILE:lockstep> lint --verify ${_in} -- ${_std} ${_rc_flags})
    # each reduction stays a real program: the MPI wrapper compiler accepts it
    set(_cc ${LS_MPICC})
    if(_name MATCHES "\\.cpp$")
      set(_cc ${_rc_mpicxx})
    endif()
    if(_cc)
      add_test(NAME realcode.compile.${_case}
               COMMAND ${_cc} -fsyntax-only ${_std} -I${LOCKSTEP_CUDA_INCLUDE_DIR} ${_in})
      set_tests_properties(realcode.compile.${_case} PROPERTIES TIMEOUT 60 LABELS "realcode;compile")
    endif()
  endforeach()

  # rules `derived_dtypes` decides it: without the key mpich_coll_signatures.c's derived types
  # are compared as written again (its first Scatter reported), and an `untyped` name must be
  # one of enums.dtype
  set(_rc_sig ${PROJECT_SOURCE_DIR}/tests/realcode/mpich_coll_signatures.c)
  string(REPLACE ";" " " _rc_flags_s "${_rc_flags}")
  ls_test(realcode.derived_dtypes_key TIMEOUT 60 LABELS realcode lint
          COMMAND sh -c "d=${CMAKE_CURRENT_BINARY_DIR}/realcode_dd && mkdir -p $d && grep -v '\"derived_dtypes\"' ${PROJECT_SOURCE_DIR}/rules/mpi.json > $d/mpi.json && $<TARGET_FILE:lockstep> lint -q --rules $d/mpi.json --rules ${PROJECT_SOURCE_DIR}/rules/host.json ${_rc_sig} -- ${_rc_flags_s} 2>&1 | grep -q 'mpich_coll_signatures.c:40:7: warning: .*rank-divergent-collective'")
  ls_test(realcode.derived_dtypes_untyped TIMEOUT 60 LABELS realcode lint
          COMMAND bash ${PROJECT_SOURCE_DIR}/tests/analyzer/expect.sh 2
                  "bad_derived_dtypes\\.json: error: derived_dtypes: .untyped. must hold only names of .enums...dtype."
                  -- $<TARGET_FILE:lockstep> lint --rules ${PROJECT_SOURCE_DIR}/tests/realcode/bad_derived_dtypes.json ${_rc_sig})

  # -p with a GCC + mpicc database (hdf5's shape): unknown flags dropped with a note, the
  # wrapper's include dirs asked from it
  add_test(NAME realcode.cdb_gcc_flags
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/realcode/cdb_gcc_flags.sh $<TARGET_FILE:lockstep>
                   ${PROJECT_SOURCE_DIR}/tests/realcode/mpich_coll2_participants.c
                   ${CMAKE_CURRENT_BINARY_DIR}/realcode_cdb)
  set_tests_properties(realcode.cdb_gcc_flags PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77 LABELS "realcode;lint")
endif()
