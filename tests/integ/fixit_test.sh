#!/bin/bash
# fixit_test.sh LOCKSTEP VENV SRCDIR WORKDIR — fix-it hints: shown as notes in the text
# output, carried as SARIF `fixes` (schema-valid), and correct: applying them to copies of
# tests/data/fixit/*.c leaves sources that lint accepts and that still parse cleanly.
set -u
ls=$1; py=$2/bin/python; src=$3; work=$4
rm -rf "$work"; mkdir -p "$work/copy"; cd "$src"
cp tests/data/fixit/*.c "$work/copy/"
inc=(-- -I/usr/local/cuda/include)
fail=0
out=$("$ls" lint "$work"/copy/*.c "${inc[@]}" 2>&1)
grep -q "early_return.c:9:5: note: fix-it: replace 'return rc;' with '{ ncclGroupEnd(); return rc; }'" <<<"$out" ||
  { echo "FAIL: text fix-it for the early return"; fail=1; }
grep -q "exchange.c:8:5: note: fix-it: insert 'ncclGroupStart();' before line 8 and 'ncclGroupEnd();' after line 9" <<<"$out" ||
  { echo "FAIL: text fix-it for the ungrouped pair"; fail=1; }
# a CHECK macro that returns inside a group: no plain return to rewrite, so no fix
out=$("$ls" lint fixtures/examples/error_in_group.c "${inc[@]}" 2>&1)
grep -q "fix-it" <<<"$out" && { echo "FAIL: a fix-it for a return hidden in a macro"; fail=1; }
(cd "$work/copy" && "$ls" lint --format=sarif *.c "${inc[@]}" >"$work/fix.sarif" 2>/dev/null)
"$py" "$src/tests/integ/check_sarif.py" "$src/tests/data/sarif-schema-2.1.0.json" "$work/fix.sarif" results=2 ||
  { echo "FAIL: SARIF with fixes"; fail=1; }
n=$("$py" "$src/tests/integ/apply_sarif_fixes.py" "$work/fix.sarif" "$work/copy")
[ "$n" = 3 ] || { echo "FAIL: want 3 edits from 2 fixes, applied $n"; fail=1; }
out=$("$ls" lint "$work"/copy/*.c "${inc[@]}" 2>&1); rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: the fixed sources still have findings or do not parse (rc=$rc)"; echo "$out"; fail=1; fi
gcc -fsyntax-only -I/usr/local/cuda/include "$work"/copy/*.c || { echo "FAIL: the fixed sources do not compile"; fail=1; }
if [ $fail = 0 ]; then echo "ok: fix-its shown, in SARIF, and applying them fixes the findings:"; cat "$work"/copy/*.c | grep -n "ncclGroup"; fi
exit $fail
