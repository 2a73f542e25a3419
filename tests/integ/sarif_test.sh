#!/bin/bash
# sarif_test.sh LOCKSTEP VENV SRCDIR WORKDIR — `lint --format=sarif` on the bundled examples,
# a clean file, a baseline run, promoted rules, an unparsable file and one with compile errors
# (with and without --allow-errors); every document is validated against the OASIS SARIF
# 2.1.0 schema (tests/data) with PyPI's jsonschema and the properties code scanning relies
# on are checked (tests/integ/check_sarif.py).
set -u
ls=$1; py=$2/bin/python; src=$3; work=$4
rm -rf "$work"; mkdir -p "$work"; cd "$src"
schema=tests/data/sarif-schema-2.1.0.json
check=tests/integ/check_sarif.py
inc=(-- -I/usr/local/cuda/include)
ex=(fixtures/examples/local_flag.c fixtures/examples/op_order.c fixtures/examples/error_in_group.c)
fail=0
run() { # NAME WANT_RC EXPECT... -- LINT-ARGS...
  local name=$1 want=$2; shift 2
  local exp=()
  while [ "$1" != "--" ]; do exp+=("$1"); shift; done; shift
  "$ls" lint --format=sarif "$@" >"$work/$name.sarif" 2>"$work/$name.err"; local rc=$?
  if [ $rc -ne "$want" ]; then
    echo "FAIL $name: exit $rc, wanted $want"; cat "$work/$name.err"; fail=1; return
  fi
  if ! "$py" "$check" "$schema" "$work/$name.sarif" "${exp[@]}" >"$work/$name.check" 2>&1; then
    echo "FAIL $name:"; cat "$work/$name.check"; fail=1; return
  fi
  echo "ok $name: $(head -1 "$work/$name.check")"
}
ver=$("$ls" --version | sed 's/^lockstep //')
run examples 1 results=3 version="$ver" execution=true related\>=4 "related-msg=rank-dependent value from ncclCommUserRank" \
  "related-msg=one side issues: ncclBroadcast, ncclAllReduce" "related-msg=group opened here" \
  level:rank-divergent-collective=warning -- "${ex[@]}" "${inc[@]}"
run clean 0 results=0 notifications=0 -- tests/analyzer/inputs/clean.c "${inc[@]}"
run baseline_write 0 results=3 suppressed=3 -- --baseline "$work/base.json" "${ex[@]}" "${inc[@]}"
run baseline_cmp 0 results=3 suppressed=3 state=unchanged -- --baseline "$work/base.json" "${ex[@]}" "${inc[@]}"
run baseline_new 1 results=4 suppressed=3 -- --baseline "$work/base.json" "${ex[@]}" fixtures/nccl/rank_skip.c "${inc[@]}"
run werror 1 results=3 level:unbalanced-group=error level:rank-divergent-collective=warning \
  -- --warnings-as-errors=unbalanced-group "${ex[@]}" "${inc[@]}"
run unparsable 2 results=0 notifications=1 execution=false notification-level=error -- tests/analyzer/inputs/garbage.c
# a finding in a TU with compile errors: reported, and the run failed; --allow-errors accepts it
run compile_errors 2 results=1 notifications=1 execution=false notification-level=error \
  -- tests/lint_verdicts/inputs/missing_header.c "${inc[@]}"
run compile_errors_allowed 1 results=1 notifications=1 execution=true notification-level=warning \
  -- --allow-errors tests/lint_verdicts/inputs/missing_header.c "${inc[@]}"
# the fingerprints are the finding's stable ones (the same as --format=json)
"$ls" lint --format=json "${ex[@]}" "${inc[@]}" >"$work/examples.json" 2>/dev/null
if ! "$py" - "$work/examples.json" "$work/examples.sarif" <<'PY'; then fail=1; fi
import json, sys
j = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
a = sorted(f["fingerprint"] for f in j["findings"])
b = sorted(r["partialFingerprints"]["lockstepFingerprint/v1"] for r in s["runs"][0]["results"])
print(("ok" if a == b else "FAIL") + " fingerprints: json %s sarif %s" % (a, b))
sys.exit(a != b)
PY
exit $fail
