#!/bin/bash
# expect.sh RC REGEX -- CMD... : runs CMD, fails unless it exits with RC and its output
# (stdout + stderr) matches the extended regex REGEX. Used by tests/analyzer.cmake.
want_rc=$1; regex=$2; shift 3
out=$("$@" 2>&1); rc=$?
if [ "$rc" != "$want_rc" ]; then
  printf 'FAIL: exit %s, wanted %s\n--- output\n%s\n' "$rc" "$want_rc" "$out"; exit 1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  printf 'FAIL: output does not match /%s/\n--- output\n%s\n' "$regex" "$out"; exit 1
fi
printf 'ok: exit %s, output matches /%s/\n' "$rc" "$regex"
