#!/bin/bash
# precommit_test.sh LOCKSTEP VENV SRCDIR WORKDIR — the repository's .pre-commit-hooks.yaml with
# the real pre-commit framework (PyPI): a throw-away git project lists this repository (a
# clone, pinned to a commit) in its .pre-commit-config.yaml; committing a file lint flags is
# refused with the diagnostic in the output, committing a clean one goes through.
set -u
ls=$1; venv=$2; src=$3; work=$4
rm -rf "$work"; mkdir -p "$work"
export PRE_COMMIT_HOME=$work/cache PATH="$(dirname "$ls"):$venv/bin:$PATH"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
gitc() { git -c user.name=lockstep-test -c user.email=test@lockstep.invalid -c init.defaultBranch=main \
           -c commit.gpgsign=false "$@"; }
fail=0
# the hook repository: this repository at HEAD, plus the working tree's hooks file if it differs
if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  gitc clone -q "$src" "$work/hooks" || { echo "FAIL: cannot clone $src"; exit 1; }
else
  mkdir -p "$work/hooks"; gitc -C "$work/hooks" init -q
fi
cp "$src/.pre-commit-hooks.yaml" "$work/hooks/"
if [ -n "$(git -C "$work/hooks" status --porcelain)" ]; then
  gitc -C "$work/hooks" add .pre-commit-hooks.yaml
  gitc -C "$work/hooks" commit -qm "hooks file of the working tree under test"
fi
rev=$(git -C "$work/hooks" rev-parse HEAD)
proj=$work/proj
mkdir -p "$proj"; cd "$proj"; gitc init -q
cat >.pre-commit-config.yaml <<YAML
repos:
  - repo: $work/hooks
    rev: $rev
    hooks:
      - id: lockstep-lint
        args: [--extra-arg=-I/usr/local/cuda/include, --extra-arg=-I$src/fixtures/nccl]
YAML
gitc add .pre-commit-config.yaml
pre-commit install >"$work/install.log" 2>&1 || { echo "FAIL: pre-commit install"; cat "$work/install.log"; exit 1; }
pre-commit --version
cp "$src/fixtures/nccl/rank_skip.c" bad.c
gitc add bad.c
line=$(grep -n "expected-warning{{rank-divergent-collective}}" bad.c | cut -d: -f1)
out=$(gitc commit -m "adds a rank skip" 2>&1); rc=$?
if [ $rc -eq 0 ] || ! grep -q "lockstep lint\.*Failed" <<<"$out" ||
   ! grep -Eq "bad\.c:$line:5: warning: .*\[rank-divergent-collective\]" <<<"$out" || git rev-parse -q --verify HEAD >/dev/null; then
  echo "FAIL: the flagged commit was not refused with the diagnostic (rc=$rc)"; echo "$out"; fail=1
else echo "ok: flagged commit refused:"; grep -E "Failed|warning:" <<<"$out"; fi
gitc rm -q --cached bad.c
cp "$src/fixtures/clean/ordered.c" good.c
cp "$src/fixtures/nccl/rank_skip.c" notes.txt # not C: the hook must not look at it
gitc add good.c notes.txt
out=$(gitc commit -m "adds a clean file" 2>&1); rc=$?
if [ $rc -ne 0 ] || ! grep -q "lockstep lint\.*Passed" <<<"$out" || ! git rev-parse -q --verify HEAD >/dev/null; then
  echo "FAIL: the clean commit did not pass (rc=$rc)"; echo "$out"; fail=1
else echo "ok: clean commit passed: $(grep Passed <<<"$out")"; fi
exit $fail
