#!/bin/bash
# precommit_test.sh LOCKSTEP VENV SRCDIR WORKDIR — the repository's .pre-commit-hooks.yaml with
# the real pre-commit framework (PyPI): a throw-away git project lists this repository (a
# clone, pinned to a commit) in its .pre-commit-config.yaml; committing a file lint flags is
# refused with the diagnostic in the output, committing a clean one goes through; the same for
# an MPI project with doc/INTEGRATION.md's hook entry, and without it (does not compile: refused).
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

# An MPI project, with doc/INTEGRATION.md's hook entry taken from the document so the two
# cannot part. Without MPI's include dirs a divergent MPI file does not compile: refused
# (while compile errors passed, it went in); with them its finding refuses it, and a clean
# MPI file goes through.
hook=$(python3 - "$src/doc/INTEGRATION.md" <<'PY'
import re, sys
blocks = re.findall(r"```yaml\n(.*?)```", open(sys.argv[1]).read(), re.S)
print(next(b for b in blocks if "openmpi" in b), end="")
PY
)
doc_dirs=$(grep -o -- '-I[^,]*' <<<"$hook" | sed 's/^-I//' | tr -d ']' | tr '\n' ' ')
if [ "$doc_dirs" != "$(mpicc --showme:incdirs) " ]; then
  echo "FAIL: doc/INTEGRATION.md's MPI dirs ($doc_dirs) are not what mpicc --showme:incdirs prints"; fail=1
fi
config() { # the hooks entry (its lines, indented as under hooks:)
  { printf 'repos:\n  - repo: %s\n    rev: %s\n    hooks:\n' "$work/hooks" "$rev"; printf '%s\n' "$1"; } \
    >.pre-commit-config.yaml
  gitc add .pre-commit-config.yaml
}
cp "$src/fixtures/mpi/op_mismatch.c" mpi_bad.c
mline=$(grep -n "expected-warning{{rank-divergent-collective}}" mpi_bad.c | cut -d: -f1)
config "      - id: lockstep-lint"
gitc add mpi_bad.c
out=$(gitc commit -m "MPI, no include dirs" 2>&1); rc=$?
if [ $rc -eq 0 ] || ! grep -q "lockstep lint\.*Failed" <<<"$out" || ! grep -q "'mpi.h' file not found" <<<"$out" ||
   ! grep -q "1 of 1 TU did not compile" <<<"$out"; then
  echo "FAIL: an MPI file that does not compile was not refused (rc=$rc)"; echo "$out"; fail=1
else echo "ok: MPI file without its include dirs refused: $(grep -m1 'did not compile' <<<"$out" | cut -c1-60)"; fi
config "$hook"
out=$(gitc commit -m "MPI, the document's include dirs" 2>&1); rc=$?
if [ $rc -eq 0 ] || ! grep -Eq "mpi_bad\.c:$mline:5: warning: .*\[rank-divergent-collective\]" <<<"$out" ||
   grep -q "did not compile" <<<"$out"; then
  echo "FAIL: with the document's MPI dirs the finding did not refuse the commit (rc=$rc)"; echo "$out"; fail=1
else echo "ok: MPI finding refused the commit: $(grep -m1 'warning:' <<<"$out" | cut -c1-60)"; fi
gitc rm -q --cached mpi_bad.c
cp "$src/fixtures/mpi/clean_agree.c" mpi_good.c
gitc add mpi_good.c
out=$(gitc commit -m "clean MPI file" 2>&1); rc=$?
if [ $rc -ne 0 ] || ! grep -q "lockstep lint\.*Passed" <<<"$out"; then
  echo "FAIL: the clean MPI commit did not pass (rc=$rc)"; echo "$out"; fail=1
else echo "ok: clean MPI commit passed"; fi
exit $fail
