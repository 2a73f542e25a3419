# runtime/fingerprint.h: the comparison's field order and the class list, which the docs
# and fixtures must not contradict.
ls_program(ls_fingerprint_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fingerprint/fingerprint_test.c
  INCLUDES ${PROJECT_SOURCE_DIR}/runtime)
ls_test(fingerprint.diff COMMAND ls_fingerprint_test TIMEOUT 60)
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  ls_test(fingerprint.classes_in_docs
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fingerprint/check_classes.py ${PROJECT_SOURCE_DIR}
    TIMEOUT 60)
endif()
