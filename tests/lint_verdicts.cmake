# tests/lint_verdicts.cmake — lint's verdicts that must not say "fine" when they are not:
# a TU with compile errors fails the run (--allow-errors opts out), a damaged
# compile_commands.json is named at its line and column, conflicting options are usage
# errors, and the version is where a user or a SARIF consumer looks for it.
if(NOT LOCKSTEP_ANALYZER OR NOT TARGET lockstep)
  return()
endif()
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(_lv ${CMAKE_CURRENT_SOURCE_DIR}/lint_verdicts)
set(_lv_expect bash ${CMAKE_CURRENT_SOURCE_DIR}/analyzer/expect.sh)
set(_lv_clean ${CMAKE_CURRENT_SOURCE_DIR}/analyzer/inputs/clean.c)

add_test(NAME lint_verdicts.compile_errors
         COMMAND ${Python3_EXECUTABLE} ${_lv}/compile_errors.py $<TARGET_FILE:lockstep> ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/lint_verdicts_ce)
add_test(NAME lint_verdicts.cdb_damaged
         COMMAND ${Python3_EXECUTABLE} ${_lv}/cdb_damaged.py $<TARGET_FILE:lockstep>
                 ${CMAKE_CURRENT_SOURCE_DIR}/analyzer/inputs ${CMAKE_CURRENT_BINARY_DIR}/lint_verdicts_cdb)
set_tests_properties(lint_verdicts.compile_errors lint_verdicts.cdb_damaged PROPERTIES TIMEOUT 180 LABELS lint)

# lv_test(NAME RC REGEX LINT-ARGS...): lint's exit status and a line of its output
macro(lv_test name rc regex)
  add_test(NAME lint_verdicts.${name} COMMAND ${_lv_expect} ${rc} "${regex}" -- $<TARGET_FILE:lockstep> ${ARGN})
  set_tests_properties(lint_verdicts.${name} PROPERTIES TIMEOUT 60 LABELS lint)
endmacro()
set(_lv_in ${_lv_clean} -- -I${LOCKSTEP_CUDA_INCLUDE_DIR})
lv_test(enable_disable_same 2 "--enable and --disable both name 'unbalanced-group'"
        lint --enable=rank-divergent-collective,unbalanced-group --disable=unbalanced-group ${_lv_in})
lv_test(enable_disable_all 2 "--disable=all turns off every rule --enable=unbalanced-group names"
        lint --enable=unbalanced-group --disable=all ${_lv_in})
lv_test(werror_disabled 2 "--warnings-as-errors names 'ungrouped-p2p', which --disable turns off"
        lint --disable=ungrouped-p2p --warnings-as-errors=ungrouped-p2p ${_lv_in})
lv_test(werror_not_enabled 2 "--warnings-as-errors names 'ungrouped-p2p', which --enable .by not naming it. turns off"
        lint --enable=unbalanced-group --warnings-as-errors=ungrouped-p2p ${_lv_in})
lv_test(format_twice 2 "--format given twice .'json', then 'sarif'." lint --format=json --format sarif ${_lv_in})
lv_test(format_twice_same 2 "--format given twice .'json', then 'json'." lint --format json --format=json ${_lv_in})
lv_test(p_twice 2 "-p given twice .'a', then 'b'." lint -p a -pb)
lv_test(cuda_path_twice 2 "--cuda-path given twice" lint --cuda-path=/a --cuda-path /b ${_lv_in})
lv_test(baseline_twice 2 "--baseline given twice .'a.json', then 'b.json'." lint --baseline a.json --baseline=b.json ${_lv_in})
lv_test(enable_twice 2 "--enable given twice .'unbalanced-group', then 'ungrouped-p2p'.; give one comma-separated list"
        lint --enable=unbalanced-group --enable=ungrouped-p2p ${_lv_in})
lv_test(disable_twice 2 "--disable given twice" lint --disable=unbalanced-group --disable ungrouped-p2p ${_lv_in})
lv_test(werror_twice 2 "--warnings-as-errors given twice" lint --warnings-as-errors=all --warnings-as-errors=all ${_lv_in})
lv_test(jobs_twice 2 "-j given twice .'2', then '3'." lint -j2 --jobs=3 ${_lv_in})
lv_test(baseline_write_alone 2 "--baseline-write needs --baseline FILE" lint --baseline-write ${_lv_in})
lv_test(quiet_summary 2 "--quiet and --summary contradict each other" lint -q --summary ${_lv_in})
lv_test(verify_sarif 2 "--verify checks every finding against the FILEs' annotations; --format=sarif does not apply"
        lint --verify --format=sarif ${_lv_in})
lv_test(verify_baseline 2 "--baseline does not apply to it" lint --verify --baseline x.json ${_lv_in})
lv_test(verify_disable 2 "--disable does not apply to it" lint --verify --disable=unbalanced-group ${_lv_in})
# what stays allowed: all but some, and promoting a rule that is reported
lv_test(enable_all_but 0 "^$" lint --enable=all --disable=unbalanced-group ${_lv_in})
lv_test(werror_enabled 0 "^$" lint --enable=unbalanced-group,ungrouped-p2p --warnings-as-errors=ungrouped-p2p ${_lv_in})

# the version: `lockstep --version`, `lockstep lint --version`, each --help names it
lv_test(version 0 "^lockstep ${PROJECT_VERSION}$" --version)
lv_test(lint_version 0 "^lockstep ${PROJECT_VERSION}$" lint --version)
lv_test(help_version 0 "lockstep --version. prints" --help)
lv_test(lint_help_version 0 "^  --version +print lockstep's version" lint --help)
lv_test(lint_help_allow_errors 0 "^  --allow-errors +a FILE with compile errors does not fail the run" lint --help)
