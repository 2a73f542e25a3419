#!/bin/bash
# notes_test.sh LOCKSTEP INPUT EXPECTED [FLAGS...]: the warning and note lines that
# `lockstep lint INPUT -- FLAGS` prints (paths cut to their file name, in order) must be
# exactly the lines of EXPECTED. For notes whose order and wording matter.
lockstep=$1 input=$2 expected=$3
shift 3
out=$("$lockstep" lint "$input" -- "$@" 2>&1)
rc=$?
[ "$rc" -eq 1 ] || { printf 'FAIL: exit %s, wanted 1\n%s\n' "$rc" "$out"; exit 1; }
got=$(grep -E '^[^ ].*: (warning|note): ' <<<"$out" | sed -E 's|^[^:]*/||')
if ! diff <(cat "$expected") <(printf '%s\n' "$got"); then
  echo "FAIL: the lines above differ (< expected, > got)"
  exit 1
fi
echo "ok: $(wc -l < "$expected") lines as expected"
