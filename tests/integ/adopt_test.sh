#!/bin/bash
# adopt_test.sh LOCKSTEP SRCDIR WORKDIR — adopting lint on an existing codebase:
# `lockstep rules` / `explain`, --baseline (write, compare, stable when lines move, rewrite,
# bad file), --warnings-as-errors, --enable / --disable, and their usage errors.
set -u
ls=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$src"
inc=(-- -I/usr/local/cuda/include -I"$src/fixtures/nccl")
ex=(fixtures/examples/local_flag.c fixtures/examples/op_order.c fixtures/examples/error_in_group.c)
fail=0
t() { # NAME WANT_RC -- CMD... ; output in $out (stdout) and $err (stderr)
  local name=$1 want=$2; shift 3
  "$@" >"$work/out" 2>"$work/err"; rc=$?
  out=$(cat "$work/out"); err=$(cat "$work/err"); cur=$name
  if [ $rc -ne "$want" ]; then bad "exit $rc, wanted $want"; return 1; fi
  return 0
}
bad() { echo "FAIL $cur: $*"; echo "--- stdout"; echo "$out"; echo "--- stderr"; echo "$err"; fail=1; }
has() { grep -Eq -- "$2" <<<"$1" || bad "no match for /$2/"; }
hasnt() { ! grep -Eq -- "$2" <<<"$1" || bad "unexpected match for /$2/"; }

# rules and explain read the same documentation as SARIF
if t rules 0 -- "$ls" rules; then
  ndoc=$(python3 -c "import json;print(len(json.load(open('rules/docs/lint_rules.json'))['rules']))")
  [ "$(wc -l <<<"$out")" = "$ndoc" ] || bad "want $ndoc rules (one per documented rule)"
  for r in rank-divergent-collective unbalanced-group rank-dependent-argument ungrouped-p2p; do has "$out" "^$r +[^ ]"; done
fi
for r in rank-divergent-collective unbalanced-group rank-dependent-argument ungrouped-p2p; do
  if t "explain $r" 0 -- "$ls" explain $r; then
    has "$out" "^$r: "; has "$out" "^Bad:"; has "$out" "^Good:"; has "$out" "^How to fix:"
    short=$(python3 -c "import json,sys;print([r['short'] for r in json.load(open('rules/docs/lint_rules.json'))['rules'] if r['id']=='$r'][0])")
    grep -qF -- "$r: $short" <<<"$out" || bad "explain does not show the documented short description"
  fi
done
t explain_unknown 2 -- "$ls" explain no-such-rule && has "$err" "unknown rule 'no-such-rule'"
t explain_noarg 2 -- "$ls" explain && has "$err" "usage: lockstep explain"

# baseline: absent -> written, exit 0; then compared
b=$work/base.json
if t baseline_write 0 -- "$ls" lint --baseline "$b" "${ex[@]}" "${inc[@]}"; then
  has "$err" "wrote 3 findings to the baseline"
  [ -z "$out" ] || bad "accepted findings are not printed"
  [ "$(grep -c '"fingerprint"' "$b")" = 3 ] || bad "baseline should hold 3 fingerprints"
fi
if t baseline_same 0 -- "$ls" lint --baseline "$b" "${ex[@]}" "${inc[@]}"; then
  has "$err" "3 findings suppressed by the baseline .*; 0 new; 0 baseline entries no longer found"
  [ -z "$out" ] || bad "nothing new to print"
fi
if t baseline_new 1 -- "$ls" lint --baseline "$b" "${ex[@]}" fixtures/nccl/rank_skip.c "${inc[@]}"; then
  has "$out" "rank_skip.c:[0-9]+:[0-9]+: warning: .*\[rank-divergent-collective\]"
  hasnt "$out" "local_flag.c"; has "$err" "3 findings suppressed.*; 1 new"
fi
if t baseline_fixed 0 -- "$ls" lint --baseline "$b" fixtures/examples/local_flag.c "${inc[@]}"; then
  has "$err" "1 finding suppressed.*; 2 baseline entries no longer found"
fi
# fingerprints do not contain line numbers: moving the code keeps it accepted
mkdir -p "$work/moved"; cp fixtures/nccl/rank_skip.c "$work/moved/"
t moved_write 0 -- "$ls" lint --baseline "$work/b2.json" "$work/moved/rank_skip.c" "${inc[@]}"
{ printf '/* a new header comment\n * pushes every line down */\n\n'; cat fixtures/nccl/rank_skip.c; } >"$work/moved/rank_skip.c"
t moved_cmp 0 -- "$ls" lint --baseline "$work/b2.json" "$work/moved/rank_skip.c" "${inc[@]}" &&
  has "$err" "1 finding suppressed"
t rewrite 0 -- "$ls" lint --baseline "$work/b2.json" --baseline-write "${ex[@]}" "${inc[@]}" &&
  has "$err" "wrote 3 findings"
# the --format=json report has the baseline's shape: saving it is adopting a baseline
"$ls" lint --format=json "${ex[@]}" "${inc[@]}" >"$work/report.json"
t json_as_baseline 0 -- "$ls" lint --baseline "$work/report.json" "${ex[@]}" "${inc[@]}" &&
  has "$err" "3 findings suppressed by the baseline .*; 0 new"
cmp -s <(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['findings'])" "$b") \
  <(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['findings'])" "$work/report.json") ||
  bad "a written baseline's entries should be the --format=json findings"
echo '{"findings": [' >"$work/broken.json"
t baseline_broken 2 -- "$ls" lint --baseline "$work/broken.json" "${ex[@]}" "${inc[@]}" &&
  has "$err" "broken.json:2:1: error: invalid JSON in the baseline"
echo '{"findings": [{"rule": "x"}]}' >"$work/shape.json"
t baseline_shape 2 -- "$ls" lint --baseline "$work/shape.json" "${ex[@]}" "${inc[@]}" &&
  has "$err" "shape.json: error: findings\[0\]: \"fingerprint\" must be a string"

# warnings-as-errors: printed as errors, and not excused by the baseline
if t werror 1 -- "$ls" lint --warnings-as-errors=unbalanced-group "${ex[@]}" "${inc[@]}"; then
  has "$out" "error_in_group.c:12:3: error: .*\[unbalanced-group\]"
  has "$out" "local_flag.c:18:5: warning: .*\[rank-divergent-collective\]"
  has "$err" "2 warnings and 1 error generated"
fi
if t werror_baseline 1 -- "$ls" lint --baseline "$b" --warnings-as-errors=unbalanced-group "${ex[@]}" "${inc[@]}"; then
  has "$out" "error_in_group.c:12:3: error: "; hasnt "$out" "local_flag.c"
fi
t werror_all 1 -- "$ls" lint --warnings-as-errors=all "${ex[@]}" "${inc[@]}" && has "$err" "^3 errors generated"

# per-rule selection
if t enable 1 -- "$ls" lint --enable=unbalanced-group "${ex[@]}" "${inc[@]}"; then
  has "$out" "\[unbalanced-group\]"; hasnt "$out" "\[rank-divergent-collective\]"
fi
if t disable 1 -- "$ls" lint --disable unbalanced-group "${ex[@]}" "${inc[@]}"; then
  hasnt "$out" "\[unbalanced-group\]"; has "$out" "\[rank-divergent-collective\]"
fi
t disable_both 0 -- "$ls" lint --disable=rank-divergent-collective,unbalanced-group "${ex[@]}" "${inc[@]}" &&
  { [ -z "$out$err" ] || bad "want no output"; }
t enable_unknown 2 -- "$ls" lint --enable=rank-divergent "${ex[@]}" "${inc[@]}" &&
  has "$err" "--enable: unknown rule 'rank-divergent'"
t werror_empty 2 -- "$ls" lint --warnings-as-errors= "${ex[@]}" "${inc[@]}" && has "$err" "needs a comma-separated list"
t baseline_noarg 2 -- "$ls" lint "${ex[0]}" --baseline && has "$err" "--baseline needs an argument"
t jobs_bad 2 -- "$ls" lint -j 0 "${ex[@]}" && has "$err" "-j wants a number"
[ $fail = 0 ] && echo "ok: rules, explain, baseline, warnings-as-errors, enable/disable"
exit $fail
