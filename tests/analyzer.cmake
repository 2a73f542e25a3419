# tests/analyzer.cmake — lockstep lint: unit tests of the CFG and the taint analysis, the
# input-error contract (message + exit 2), output formats, suppression and -p.
if(LOCKSTEP_ANALYZER AND TARGET lockstep)
  set(_an ${CMAKE_CURRENT_SOURCE_DIR}/analyzer)
  set(_in ${_an}/inputs)
  set(_expect bash ${_an}/expect.sh)
  set(_cuda -- -I/usr/local/cuda/include)

  ls_program(test_analyzer SOURCES ${_an}/test_analyzer.c LIBS lockstep_analyzer)
  ls_test(analyzer.unit.cfg_taint TIMEOUT 120 LABELS analyzer
          COMMAND test_analyzer ${PROJECT_SOURCE_DIR}/rules ${LIBCLANG_RESOURCE_DIR} ${_an}/cfg_cases.c)

  macro(lint_test name rc regex)
    ls_test(analyzer.${name} COMMAND ${_expect} ${rc} "${regex}" -- $<TARGET_FILE:lockstep> lint ${ARGN}
            TIMEOUT 60 LABELS analyzer)
  endmacro()
  lint_test(help 0 "usage: lockstep lint" --help)
  lint_test(no_input 2 "no input files")
  lint_test(bad_option 2 "unknown option '--bogus'" --bogus x.c)
  lint_test(bad_format 2 "unknown format 'xml'" --format=xml ${_in}/clean.c)
  lint_test(missing_file 2 "nope\\.c: error: No such file" ${_in}/nope.c)
  lint_test(unparsable_file 2 "garbage\\.c: error: cannot be parsed" ${_in}/garbage.c)
  lint_test(rules_syntax 2 "bad_syntax\\.json:4:40: error: invalid JSON" --rules ${_in}/bad_syntax.json ${_in}/clean.c)
  lint_test(rules_type 2 "bad_type\\.json: error: functions.0.: \"name\" must be a non-empty string"
            --rules ${_in}/bad_type.json ${_in}/clean.c)
  lint_test(rules_missing 2 "bad_missing\\.json: error: functions.0.: missing required key \"name\""
            --rules ${_in}/bad_missing.json ${_in}/clean.c)
  lint_test(rules_shape 2 "bad_shape\\.json: error: \"functions\" must be an array" --rules ${_in}/bad_shape.json ${_in}/clean.c)
  lint_test(rules_source 2 "bad_source\\.json: error: rank_sources.0.: \"arg\" needs \"values\""
            --rules ${_in}/bad_source.json ${_in}/clean.c)
  lint_test(rules_toplevel 2 "bad_toplevel\\.json: error: top level must be a JSON object"
            --rules ${_in}/bad_toplevel.json ${_in}/clean.c)
  lint_test(rules_variant 2 "bad_variant\\.json: error: functions.0.: \"variant\" names \"shrnk\", which the recorder does not know"
            --rules ${_in}/bad_variant.json ${_in}/clean.c)
  lint_test(rules_enum 2 "bad_enum\\.json: error: enums\\.result\\.xHalf: must be an integer"
            --rules ${_in}/bad_enum.json ${_in}/clean.c)
  lint_test(rules_empty 2 "bad_empty\\.json:1:1: error: invalid JSON" --rules ${_in}/bad_empty.json ${_in}/clean.c)
  lint_test(rules_unreadable 2 "nothere\\.json: error: cannot read rules file" --rules ${_in}/nothere.json ${_in}/clean.c)
  lint_test(clean_exit0 0 "^$" ${_in}/clean.c ${_cuda})
  # lint parses with -w: a database's -Werror does not turn warnings into errors that fail the
  # run as an incomplete analysis, while errors that are warnings by name stay errors
  # a function with an error inside its body is not checked, and the run says which; the
  # others keep their findings (--verify: exactly intact's), in text, JSON and the summary
  if(LS_MPICC)
    set(_mpi_inc ${LS_MPI_INCLUDE_FLAGS})
    lint_test(parse_error_skip_verify 0 "verified [(]1 expected warning[)]"
              --verify --allow-errors ${_in}/parse_error_function.c -- ${_mpi_inc})
    lint_test(parse_error_skip_said 1 "1 function not checked, an error is inside it: broken [(].*parse_error_function\\.c:6[)]"
              --allow-errors ${_in}/parse_error_function.c -- ${_mpi_inc})
    lint_test(parse_error_skip_summary 1 "1 finding [(]rank-divergent-collective: 1[)], 1 function not checked [(]parse errors[)]"
              --allow-errors --summary ${_in}/parse_error_function.c -- ${_mpi_inc})
    lint_test(parse_error_skip_json 1 "\"function\":[[:space:]]*\"broken\""
              --allow-errors --format=json ${_in}/parse_error_function.c -- ${_mpi_inc})
  endif()
  # host min/max overloads nvcc provides: the function parses and keeps its finding
  lint_test(cuda_host_minmax 0 "verified [(]1 expected warning[)]" --verify ${_in}/cuda_host_minmax.cu ${_cuda})
  lint_test(werror_not_incomplete 0 "^$" ${_in}/warns.c ${_cuda} -Wall -Wextra -Werror)
  lint_test(default_error_kept 2 "implicit_decl\\.c: error: 1 compile error, the analysis is incomplete"
            ${_in}/implicit_decl.c ${_cuda} -Werror)
  lint_test(text_format 1 "cdb_b\\.c:9:3: warning: .*.rank-divergent-collective." ${_in}/cdb_a.c ${_in}/cdb_b.c ${_cuda})
  lint_test(json_format 1 "\"fingerprint\":[ \t]*\"[0-9a-f]{16}\"" --format=json ${_in}/cdb_a.c ${_in}/cdb_b.c ${_cuda})
  lint_test(suppression 0 "^$" ${_in}/suppressed.c ${_cuda})
  # the fixture checker and the rule documentation read checks.def's table of rules
  lint_test(verify_unknown_rule 1 "unknown_rule\\.c:8: error: unknown rule 'rank-divergent-colective' in annotation"
            --verify ${_in}/unknown_rule.c ${_cuda})
  ls_test(analyzer.docs_table COMMAND ${_expect} 2 "lint_rules\\.json: error: rule 'ungrouped-p2p' is not documented"
          -- $<TARGET_FILE:lockstep> rules
          TIMEOUT 60 LABELS analyzer ENV LOCKSTEP_RULES_DIR=${_in}/docs_partial)
  lint_test(verify_mismatch 1 "cdb_b\\.c:9:3: error: unexpected warning .rank-divergent-collective."
            --verify ${_in}/cdb_a.c ${_in}/cdb_b.c ${_cuda})
  # a return inside a function's second group names that group's start, not the first one's
  lint_test(notes_group_opener 1 "group_opener\\.c:7:3: note: group opened here"
            ${_in}/group_opener.c ${_cuda})
  # the notes of a side that issues its collectives only sometimes say what decides it
  lint_test(notes_nested_if 1 "nested_sides\\.c:9:7: note: one side issues: ncclAllReduce [(]depending on the condition at line 10[)]"
            ${_in}/nested_sides.c ${_cuda})
  lint_test(notes_loop 1 "nested_sides\\.c:19:7: note: one side issues: ncclBroadcast, ncclAllReduce [(]these 2 repeated by the loop at line 20[)]"
            ${_in}/nested_sides.c ${_cuda})
  lint_test(notes_same_line 1 "nested_sides\\.c:32:7: note: one side issues: ncclAllReduce [(]depending on the condition at line 32, column 17[)]"
            ${_in}/nested_sides.c ${_cuda})
  # a rank value's way between functions, retraced step by step in the notes
  ls_test(analyzer.notes_origin_chain TIMEOUT 60 LABELS analyzer
           COMMAND bash ${_an}/notes_test.sh $<TARGET_FILE:lockstep> ${_in}/origin_chain.c
                   ${_in}/origin_chain.expected -I/usr/local/cuda/include)
  lint_test(flow_verify 0 "flow\\.c: verified .2 expected warnings." --verify ${_in}/flow.c ${_cuda})
  # rank values through C library calls (rules/host.json value_flows) and a pointer alias
  lint_test(outparams_verify 0 "outparams\\.c: verified .6 expected warnings." --verify ${_in}/outparams.c ${_cuda})
  lint_test(rules_flow 2 "bad_flow\\.json: error: value_flows.1.: \"into_rest\" must hold argument indices 0..63"
            --rules ${_in}/bad_flow.json ${_in}/clean.c)
  # error paths: the JSON field, SARIF's level and property, the summary, --error-paths and
  # its bad values, --verify's {{error-path}} marker (errpath.c's pair: two CHECK returns in
  # one group are one tagged finding; `maybe`'s return is on the normal path)
  lint_test(errpath_one_per_scope 1 "errpath\\.c:9:3: note: another return inside the same group on an error path leaves it open here"
            ${_in}/errpath.c ${_cuda})
  lint_test(errpath_text 1 "errpath\\.c:8:3: warning: .* [(]error path[)] .unbalanced-group.$" ${_in}/errpath.c ${_cuda})
  lint_test(errpath_count_line 1 "^2 warnings generated [(]1 on an error path[)][.]$" ${_in}/errpath.c ${_cuda})
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  ls_test(analyzer.errpath_formats TIMEOUT 120 LABELS analyzer
           COMMAND ${Python3_EXECUTABLE} ${_an}/errpath_test.py $<TARGET_FILE:lockstep> ${_in}/errpath.c
                   -- -I/usr/local/cuda/include)
  lint_test(errpath_summary 1 "2 findings [(]unbalanced-group: 2[)], 1 on error paths, "
            --summary ${_in}/errpath.c ${_cuda})
  lint_test(errpath_hide 1 "1 error-path finding hidden [(]--error-paths=show lists it[)]"
            --error-paths=hide ${_in}/errpath.c ${_cuda})
  lint_test(errpath_hide_quiet 1 "1 error-path finding hidden" -q --error-paths hide ${_in}/errpath.c ${_cuda})
  lint_test(errpath_bad_value 2 "--error-paths wants 'show' or 'hide', not 'maybe'" --error-paths=maybe ${_in}/errpath.c)
  lint_test(errpath_no_value 2 "--error-paths needs an argument" ${_in}/errpath.c --error-paths)
  lint_test(errpath_twice 2 "--error-paths given twice" --error-paths=show --error-paths=hide ${_in}/errpath.c)
  lint_test(errpath_verify_hide 2 "--error-paths=hide does not apply to it" --verify --error-paths=hide ${_in}/errpath.c)
  lint_test(errpath_verify_marker 1 "errpath\\.c:8:3: error: warning .unbalanced-group. is on an error path, its annotation says normal path"
            --verify ${_in}/errpath.c ${_cuda})
  ls_test(analyzer.compile_commands TIMEOUT 120 LABELS analyzer
           COMMAND bash ${_an}/cdb_test.sh $<TARGET_FILE:lockstep> ${_in} ${CMAKE_CURRENT_BINARY_DIR}/analyzer_cdb)
  # one 5,600-line function (800 expected findings): past convert.c's T_BIG its statements are
  # converted one at a time
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  ls_test(analyzer.big_function TIMEOUT 60 LABELS analyzer
           COMMAND ${Python3_EXECUTABLE} ${_an}/big_function.py $<TARGET_FILE:lockstep>
                   ${CMAKE_CURRENT_BINARY_DIR}/big_function.c)
endif()
