# runtime/fingerprint.h: the comparison's field order and the class list, which the docs
# and fixtures must not contradict.
add_executable(ls_fingerprint_test ${CMAKE_CURRENT_SOURCE_DIR}/fingerprint/fingerprint_test.c)
target_include_directories(ls_fingerprint_test PRIVATE ${PROJECT_SOURCE_DIR}/runtime)
target_compile_options(ls_fingerprint_test PRIVATE ${LOCKSTEP_WARNINGS})
add_test(NAME fingerprint.diff COMMAND ls_fingerprint_test)
set_tests_properties(fingerprint.diff PROPERTIES TIMEOUT 60)
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME fingerprint.classes_in_docs
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/fingerprint/check_classes.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(fingerprint.classes_in_docs PROPERTIES TIMEOUT 60)
endif()
