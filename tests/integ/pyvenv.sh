#!/bin/bash
# pyvenv.sh DIR PKG... — a Python virtual environment in the build tree holding PKGs from
# PyPI (the real jsonschema and pre-commit, not look-alikes). Idempotent: an existing venv
# is reused and only missing packages are installed. Run once as a ctest fixture setup.
set -eu
dir=$1; shift
py=${LOCKSTEP_PYTHON:-python3}
if [ ! -x "$dir/bin/python" ]; then
  rm -rf "$dir"
  "$py" -m venv "$dir" || { echo "cannot create a venv with $py (Debian: apt-get install python3-venv)"; exit 1; }
fi
missing=()
for p in "$@"; do
  "$dir/bin/python" -m pip show -q "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "${missing[@]}"
fi
"$dir/bin/python" -m pip show "$@" | grep -E '^(Name|Version):'
