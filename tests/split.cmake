# tests/split.cmake — a split of a non-blocking parent (NCCL 2.28.3 hands the child out only
# when the parent's state leaves ncclInProgress): compare's not-ready on real traces of
# tests/split/split_prog.c under `lockstep run` against the stand-in NCCL, and lint's
# nonblocking-not-ready driven by rules/nccl.json's nonblocking.parent_settles_child.
if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  ls_test(split.lint.cases TIMEOUT 60 LABELS analyzer nonblocking
           COMMAND $<TARGET_FILE:lockstep> lint --verify ${CMAKE_CURRENT_SOURCE_DIR}/split/lint_cases.c
                   -- -I${LOCKSTEP_CUDA_INCLUDE_DIR})
  if(Python3_Interpreter_FOUND)
    ls_test(split.lint.rules TIMEOUT 120 LABELS analyzer nonblocking
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/split/check_split_lint.py
                     $<TARGET_FILE:lockstep> ${PROJECT_SOURCE_DIR} ${LOCKSTEP_CUDA_INCLUDE_DIR})
  endif()
endif()
ls_standin_test(split.compare SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/split/split.sh
  PROGRAM ls_split_prog SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/split/split_prog.c
  WORK ${CMAKE_CURRENT_BINARY_DIR}/split_work CLASSES not-ready)
