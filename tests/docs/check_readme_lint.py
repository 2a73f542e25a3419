#!/usr/bin/env python3
"""check_readme_lint.py — the README's lint example must be what `lockstep lint` prints.

The README pastes the output of `lockstep lint fixtures/examples/*.c -- -I<cuda>/include`
(README command 1). This runs that command and compares the finding lines
(`file:line:col: warning|error: ... [rule-id]`) and their `note:` lines with those in the README's code block, in order,
so the front page cannot silently go stale when a message, a location or a rule changes.

usage: check_readme_lint.py LOCKSTEP README EXAMPLES_DIR CUDA_INCLUDE_DIR   (run from the source root)
"""
import glob
import os
import re
import subprocess
import sys

FINDING = re.compile(r"^(\S+):(\d+):(\d+): (warning|error): .* \[[a-z0-9-]+\]$")
# Notes (rank source, condition, each side's calls, fix-its) are part of what the README shows.
NOTE = re.compile(r"^(\S+):(\d+):(\d+): note: ")


def readme_block(path):
    """Lines of the fenced block whose first line is the `$ ... lint fixtures/examples/...` command."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("```") and i + 1 < len(lines):
            first = lines[i + 1]
            if first.startswith("$ ") and "lint fixtures/examples/" in first:
                block = []
                for body in lines[i + 2:]:
                    if body.startswith("```"):
                        return block
                    block.append(body)
    sys.exit(f"{path}: no fenced block starting with `$ ... lint fixtures/examples/*.c ...`")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    lockstep, readme, examples, cuda_inc = sys.argv[1:]
    files = sorted(os.path.relpath(p) for p in glob.glob(os.path.join(examples, "*.c")))
    if not files:
        sys.exit(f"{examples}: no *.c examples")
    run = subprocess.run([lockstep, "lint", *files, "--", f"-I{cuda_inc}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=240)
    if run.returncode not in (0, 1):
        sys.exit(f"lockstep lint exited {run.returncode}:\n{run.stderr}")
    def diag(lines):
        return [l for l in lines if FINDING.match(l) or NOTE.match(l)]

    got = diag(run.stdout.splitlines())
    want = diag(readme_block(readme))
    if not any(FINDING.match(l) for l in want):
        sys.exit(f"{readme}: the lint example block has no finding lines")
    if got != want:
        print(f"{readme}: the lint example is stale; paste the current output of README command 1.")
        for l in want:
            if l not in got:
                print(f"  only in the README: {l}")
        for l in got:
            if l not in want:
                print(f"  only in lint's output: {l}")
        if sorted(got) == sorted(want):
            print("  (same lines, different order)")
        return 1
    print(f"ok: {len(got)} finding and note lines of the README match `lockstep lint` on {len(files)} examples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
